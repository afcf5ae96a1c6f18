"""Which labelled cubes a picture does not show (``vision.train.unseen``): a cube that changed
nothing near its centre against the empty tray, such as one in a dark set-up's deep shadow."""

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.reading import COLOURS
from vision.train import unseen
from vision.train.data import LabelledCube, Sample, load_samples

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


def test_training_leaves_a_cube_in_the_dark_unasked_only_when_told(tmp_path):
    pytest.importorskip("torch")
    from vision.train.batches import cache_samples

    (tmp_path / "s000").mkdir()
    empty, drop = _noisy_dark_tray(0), _noisy_dark_tray(1)
    drop[140:156, 92:108] = (200, 200, 210)
    cv2.imwrite(str(tmp_path / "s000" / "empty.jpg"), empty, [cv2.IMWRITE_JPEG_QUALITY, 95])
    cv2.imwrite(str(tmp_path / "s000" / "drop01.jpg"), drop, [cv2.IMWRITE_JPEG_QUALITY, 95])
    cubes = [{"colour": "black", "in_tray": False, "xy": [20, 20], "visible_px": 200},
             {"colour": "white", "in_tray": True, "xy": [100, 148], "visible_px": 200},
             {"colour": "black", "in_tray": True, "xy": [300, 150], "visible_px": 200}]
    counts = dict.fromkeys(COLOURS, 0) | {"white": 1, "black": 1}
    (tmp_path / "labels.json").write_text(json.dumps({"images": [
        {"file": "s000/empty.jpg", "session": "s000", "counts": dict.fromkeys(COLOURS, 0),
         "cubes": []},
        {"file": "s000/drop01.jpg", "session": "s000", "counts": counts, "cubes": cubes}]}))
    samples = [s for s in load_samples(tmp_path) if not s.is_empty_frame]
    keep = 4  # the cached cubes' column: 1 = asked for (clearly visible)
    asked = cache_samples(samples, (256, 160))[0].cubes[:, keep].tolist()
    assert asked == [1.0, 1.0, 1.0]
    told = cache_samples(samples, (256, 160), unshown_either_way=True)[0].cubes[:, keep].tolist()
    assert told == [1.0, 1.0, 0.0]  # the outside cube is not judged, the dark one left unasked
