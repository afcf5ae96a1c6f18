"""The tray floor's nearly black share, and when it is too dark for cubes to be seen."""

from pathlib import Path

import numpy as np
import pytest

from vision import count_cubes, load_image
from vision.visibility import DARK_LEVEL, TOO_DARK_SHARE, dark_floor_share, too_dark

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "vision"
CORNERS = [(20, 10), (180, 10), (180, 90), (20, 90)]  # a 160 x 80 floor in a 200 x 100 picture


def floor_with_dark_share(share: float, level: int = DARK_LEVEL) -> np.ndarray:
    image = np.full((100, 200, 3), 200, np.uint8)
    image[:, :20] = image[:, 181:] = 0  # black beyond the floor (x 20-180) counts for nothing
    dark_columns = round(160 * share)
    image[10:91, 20:20 + dark_columns] = level
    return image


@pytest.mark.parametrize("share", [0.0, 0.25, 0.6, 1.0])
def test_the_share_is_the_floors_nearly_black_part(share):
    measured = dark_floor_share(floor_with_dark_share(share), CORNERS)
    assert measured == pytest.approx(share, abs=0.02)


def test_a_pixel_one_level_brighter_is_not_nearly_black():
    assert dark_floor_share(floor_with_dark_share(1.0, DARK_LEVEL + 1), CORNERS) == 0


def test_one_bright_channel_is_enough_to_show_a_cube():
    image = floor_with_dark_share(1.0, level=0)
    image[10:91, 20:180, 2] = 60  # a red floor in dim light: its grey level is 18, yet it shows red
    assert dark_floor_share(image, CORNERS) == 0


def test_too_dark_from_half_the_floor():
    assert too_dark(floor_with_dark_share(TOO_DARK_SHARE + 0.05), CORNERS) == pytest.approx(
        TOO_DARK_SHARE + 0.05, abs=0.02)
    assert too_dark(floor_with_dark_share(TOO_DARK_SHARE - 0.1), CORNERS) is None


def test_without_a_floor_nothing_is_said():
    image = floor_with_dark_share(1.0)
    assert dark_floor_share(image, None) is None and too_dark(image, None) is None
    far = [(500, 500), (600, 500), (600, 560), (500, 560)]  # wholly outside the picture
    assert dark_floor_share(image, far) is None


def test_corners_in_any_order_give_the_same_share():
    image = floor_with_dark_share(0.6)
    shuffled = [CORNERS[2], CORNERS[0], CORNERS[3], CORNERS[1]]
    assert dark_floor_share(image, shuffled) == dark_floor_share(image, CORNERS)


def test_a_tray_in_the_towers_shadow_is_too_dark_and_a_lit_one_is_not():
    """With the packaged model's outline of each empty tray."""
    dark = load_image(FIXTURES / "dark-tray" / "empty.jpg")
    lit = load_image(FIXTURES / "trays-mini" / "s000" / "empty.jpg")
    share = too_dark(dark, count_cubes(dark).tray_corners)
    assert share is not None and share > 0.6
    assert too_dark(lit, count_cubes(lit).tray_corners) is None
