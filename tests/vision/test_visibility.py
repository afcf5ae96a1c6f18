"""``blind_patches``: parts of the tray floor that glare or darkness leave without detail, and the
doubt a reading says for them."""

from __future__ import annotations

import numpy as np
import pytest
from fake_detector import FakeDetector, cube, detections

from vision.counter import count_cubes
from vision.visibility import FLOOR_CUBES, blind_patches

W, H = 640, 360
FLOOR = [[120, 60], [520, 60], [520, 300], [120, 300]]  # 400 px long: a cube edge is 25 px
CUBE = 400 / FLOOR_CUBES


def picture(patch=None, value=255, size=2 * CUBE):
    """A mid-grey tray with one square patch of ``value`` (every channel), centred at ``patch``."""
    image = np.full((H, W, 3), 128, np.uint8)
    if patch is not None:
        x, y = patch
        half = size / 2
        image[round(y - half):round(y + half), round(x - half):round(x + half)] = value
    return image


def test_a_blown_out_patch_on_the_floor_is_glare_with_its_centre_and_size():
    [patch] = blind_patches(picture((300, 150)), FLOOR, [])
    assert patch.kind == "glare"
    assert patch.x == pytest.approx(300, abs=1) and patch.y == pytest.approx(150, abs=1)
    assert patch.faces == pytest.approx(4, rel=0.1)


def test_a_black_patch_is_dark_and_a_merely_dim_one_is_not():
    [patch] = blind_patches(picture((300, 150), value=5), FLOOR, [])
    assert patch.kind == "dark"
    assert blind_patches(picture((300, 150), value=60), FLOOR, []) == []


def test_one_clipped_channel_is_not_glare():
    image = picture()
    image[125:175, 275:325, 2] = 255  # a saturated red, not a blown-out white
    assert blind_patches(image, FLOOR, []) == []


@pytest.mark.parametrize("where", [(60, 150), (580, 330)])
def test_glare_off_the_floor_hides_no_cube_on_it(where):
    assert blind_patches(picture(where), FLOOR, []) == []


def test_a_counted_cube_explains_its_own_clipped_face():
    # a white cube in a lamp's light is itself clipped; the reading found it, nothing is hidden
    assert blind_patches(picture((300, 150), size=CUBE), FLOOR, [(300, 150)]) == []
    assert blind_patches(picture((300, 150), size=0.8 * CUBE), FLOOR, []) == []  # under a face
    assert blind_patches(picture((300, 150), size=3 * CUBE), FLOOR, [(300, 150)]) != []


def test_a_thin_highlight_hides_nothing():
    image = picture()
    image[100:104, 150:500] = 255  # a wall edge's highlight, 4 px wide and 14 cubes long
    assert blind_patches(image, FLOOR, []) == []


def test_no_outline_no_patches_and_an_outline_off_the_picture_is_safe():
    assert blind_patches(picture((300, 150)), None, []) == []
    assert blind_patches(picture(), [[-900, -900], [-100, -900], [-100, -400], [-900, -400]],
                         []) == []


def test_the_reading_says_where_glare_may_hide_a_cube_and_counts_what_it_sees():
    image = picture((200, 100))
    reading = count_cubes(image, detector=FakeDetector(detections([cube(400, 250, "red")],
                                                                  FLOOR)))
    assert reading.counts["red"] == 1 and reading.total == 1
    assert reading.uncertain
    assert [d.to_dict() for d in reading.doubts] == [
        {"kind": "glare", "place": "top-left", "times": 1}]
    assert reading.warnings == ("glare at the top left of the picture may hide a cube: dim or "
                                "move the lamp",)


def test_a_dark_corner_is_said_in_words_too():
    reading = count_cubes(picture((480, 280), value=0), detector=FakeDetector(detections([],
                                                                                       FLOOR)))
    assert [d.kind for d in reading.doubts] == ["dark"]
    assert "too dark at the bottom right of the picture" in reading.warnings[0]
