"""The network's input: the device's reusing ``InputMaker`` feeds exactly what training feeds."""

from __future__ import annotations

import numpy as np
import pytest

from vision.detector import CubeDetector
from vision.netinput import InputMaker, network_input

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
