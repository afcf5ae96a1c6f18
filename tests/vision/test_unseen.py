"""Which labelled cubes a picture does not show (``vision.train.unseen``): a cube that changed
nothing near its centre against the empty tray, such as one in a dark set-up's deep shadow."""

from pathlib import Path

import numpy as np

from vision.reading import COLOURS
from vision.train import unseen
from vision.train.data import LabelledCube, Sample

BLACK, WHITE = COLOURS.index("black"), COLOURS.index("white")


def _sample(*cubes: LabelledCube) -> Sample:
    return Sample(Path("s000/drop01.jpg"), "s000", dict.fromkeys(COLOURS, 0), cubes, None, None,
                  (512, 288))


def _noisy_dark_tray(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.clip(18 + rng.normal(0, 4, (288, 512, 3)), 0, 255).astype(np.uint8)


def test_a_cube_that_changed_nothing_near_its_centre_is_unshown_and_noise_is_no_change():
    reference = _noisy_dark_tray(0)
    picture = _noisy_dark_tray(1)  # the same dark tray, other sensor noise
    picture[140:156, 92:108] = (200, 200, 210)  # a white cube the camera shows
    sample = _sample(LabelledCube(WHITE, 100, 148, True, 200),  # shown
                     LabelledCube(BLACK, 300, 150, True, 200),  # in the dark: nothing there
                     LabelledCube(BLACK, 400, 150, True, 10),  # barely visible: either way
                     LabelledCube(BLACK, 20, 20, False, 200),  # outside the tray: not counted
                     LabelledCube(BLACK, 511, 287, True, 200))  # in the dark at the corner
    assert unseen.unshown(sample, picture, reference) == {1, 3}  # in-tray cubes' indices


def test_a_cube_just_off_its_labelled_centre_still_counts_as_shown():
    reference = _noisy_dark_tray(0)
    picture = reference.copy()
    picture[148:152, 303:307] = (60, 60, 140)  # a dim red patch 3-6 px right of the centre
    sample = _sample(LabelledCube(BLACK, 300, 150, True, 200))
    assert unseen.unshown(sample, picture, reference) == set()


def test_without_a_comparable_empty_tray_nothing_can_be_told():
    picture = _noisy_dark_tray(1)
    sample = _sample(LabelledCube(BLACK, 300, 150, True, 200))
    assert unseen.unshown(sample, picture, None) is None
    assert unseen.unshown(sample, picture, picture[:100]) is None
