"""The network's input: the device's reusing ``InputMaker`` feeds exactly what training feeds."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.detector import CubeDetector
from vision.netinput import EXPOSURE_GAIN_RANGE, InputMaker, network_input

W, H = 96, 64


def pictures(seed: int, n: int, shape=(90, 160, 3)) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 256, shape, dtype=np.uint8) for _ in range(n)]


def test_the_reusing_maker_gives_network_inputs_values_frame_after_frame():
    make = InputMaker(W, H)
    frame_a, frame_b, reference = pictures(0, 3)
    for frame, ref in ((frame_a, reference), (frame_b, reference), (frame_a, None),
                       (frame_b, reference)):
        want, want_scale = network_input(frame, ref, W, H)
        got, scale = make(frame, ref)
        assert scale == want_scale
        assert np.array_equal(got, want)


def test_a_reference_changed_in_place_is_fitted_again():
    make = InputMaker(W, H)
    frame, reference = pictures(1, 2)
    before = make(frame, reference)[0].copy()
    reference[:45] = 255  # the same array, now another picture (e.g. a new empty tray)
    after = make(frame, reference)[0]
    assert not np.array_equal(after[0, 3:6], before[0, 3:6])
    assert np.array_equal(after, network_input(frame, reference, W, H)[0])


def test_a_reference_of_another_size_is_fitted_anew():
    make = InputMaker(W, H)
    frame = pictures(2, 1)[0]
    small, large = pictures(3, 1, (45, 80, 3))[0], pictures(4, 1, (180, 320, 3))[0]
    for ref in (small, large, small):
        assert np.array_equal(make(frame, ref)[0], network_input(frame, ref, W, H)[0])


@pytest.mark.parametrize("with_reference", [True, False])
def test_the_detector_reads_a_frame_alike_however_many_frames_came_before(with_reference):
    detector = CubeDetector()
    first, other, reference = pictures(5, 3, (324, 576, 3))
    ref = reference if with_reference else None
    fresh, _ = CubeDetector().maps(first, ref)
    detector.maps(other, reference)
    detector.maps(other, None)
    again, _ = detector.maps(first, ref)
    assert np.array_equal(again, fresh)


def scene(seed: int, shape=(90, 160, 3)) -> np.ndarray:
    """A smooth picture in mid greys (nothing clipped at x0.6 or x1.4 of it)."""
    rng = np.random.default_rng(seed)
    small = rng.integers(60, 170, (9, 16, 3), dtype=np.uint8)
    return cv2.resize(small, shape[1::-1], interpolation=cv2.INTER_LINEAR)


def times(picture: np.ndarray, gain: float) -> np.ndarray:
    return np.clip(picture * np.float32(gain) + 0.5, 0, 255).astype(np.uint8)


@pytest.mark.parametrize("with_reference", [True, False])
@pytest.mark.parametrize("gain", [0.6, 1.4])
def test_a_levelled_picture_darkened_or_brightened_reads_as_the_original(gain, with_reference):
    frame, reference = scene(10), scene(11)
    ref = reference if with_reference else None
    want = network_input(frame, ref, W, H, exposure_level=110)[0]
    got = network_input(times(frame, gain), None if ref is None else times(ref, gain), W, H,
                        exposure_level=110)[0]
    unlevelled = network_input(times(frame, gain), None if ref is None else times(ref, gain),
                               W, H)[0]
    assert np.abs(got - want).max() <= 3 / 255  # rounding of the two gains, no more
    assert np.abs(unlevelled - network_input(frame, ref, W, H)[0]).max() > 20 / 255


def test_the_picture_takes_the_references_gain_so_bright_cubes_do_not_dim_the_tray():
    reference = scene(12)
    frame = reference.copy()
    frame[20:70, 40:120] = 250  # a pile of white cubes: the picture's own meter would darken it
    got = network_input(frame, reference, W, H, exposure_level=140)[0]
    own = network_input(frame, None, W, H, exposure_level=140)[0]
    untouched = (slice(None), slice(0, 3), slice(0, 5), slice(0, 5))  # a corner of bare tray
    assert np.allclose(got[untouched], got[0, 3:6, :5, :5], atol=1 / 255)
    assert not np.allclose(got[untouched], own[untouched], atol=4 / 255)


def test_a_black_picture_is_brightened_no_more_than_the_gain_allows():
    dark = np.full((90, 160, 3), 10, np.uint8)
    got = network_input(dark, None, W, H, exposure_level=120)[0]
    covered = got[0, :3, :54]  # 160 x 90 fitted into 96 x 64: the rest is padding
    assert np.allclose(covered, 10 * max(EXPOSURE_GAIN_RANGE) / 255 - 0.5, atol=1 / 255)


def test_the_reusing_maker_levels_as_network_input_does():
    make = InputMaker(W, H, exposure_level=100)
    frame_a, frame_b, reference = scene(13), scene(14), scene(15, (45, 80, 3))
    for frame, ref in ((frame_a, reference), (frame_b, None), (frame_b, reference)):
        assert np.array_equal(make(frame, ref)[0],
                              network_input(frame, ref, W, H, exposure_level=100)[0])
