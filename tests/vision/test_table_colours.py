"""Learning what each colour looks like at this table: pixel colours of confirmed cubes
(``vision.cube_colour``) weighed against the network's colour scores (``vision.calibration``)."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest
from fake_detector import FakeDetector, cube, detections, probs

from vision.calibration import Calibration, calibrate_from_drop
from vision.counter import count_cubes
from vision.cube_colour import FLOOR_CUBES, cube_edge_px, lab_colours
from vision.errors import VisionError
from vision.reading import COLOURS

BLACK, BROWN, RED = (COLOURS.index(c) for c in ("black", "brown", "red"))
CORNERS = [(120.0, 60.0), (520.0, 60.0), (520.0, 300.0), (120.0, 300.0)]  # a cube: 25 px
BLACK_BGR, BROWN_BGR = (40, 40, 45), (30, 60, 110)


def lab_of(bgr) -> np.ndarray:
    return cv2.cvtColor(np.uint8([[bgr]]), cv2.COLOR_BGR2LAB)[0, 0].astype(float)


def table(cubes: list[tuple[float, float, tuple]]) -> np.ndarray:
    """A pale tray with square cubes of these BGR colours at these centres (a colour picture:
    a grey one is read as having no colour, ``vision.counter.without_colour``)."""
    image = np.full((360, 640, 3), (140, 150, 160), np.uint8)
    for x, y, bgr in cubes:
        image[int(y) - 12:int(y) + 13, int(x) - 12:int(x) + 13] = bgr
    return image


# -- the pixels ----------------------------------------------------------------------------

def test_a_cube_edge_is_the_floors_long_side_over_sixteen_or_a_share_of_the_width():
    assert cube_edge_px(640, CORNERS) == pytest.approx(400 / FLOOR_CUBES)
    assert cube_edge_px(640) == pytest.approx(16.0)


def test_the_colour_is_the_windows_median_even_at_the_pictures_edge():
    image = table([(200, 100, BROWN_BGR)])
    image[100, 200] = (255, 255, 255)  # one glint on the face does not move the median
    labs = lab_colours(image, [(200, 100), (0, 0), (639.7, 359.9)], 25.0)
    assert np.allclose(labs[0], lab_of(BROWN_BGR))
    assert np.allclose(labs[1], lab_of((140, 150, 160))) and np.allclose(labs[2], labs[1])


# -- what is learned ----------------------------------------------------------------------------

def read_brown(x, y, sure=0.9):
    return cube(x, y, "brown", sure=sure, second="black")


def test_a_table_where_black_reads_brown_learns_it_from_one_confirmed_drop():
    first = table([(200, 100, BLACK_BGR), (260, 100, BLACK_BGR), (320, 100, BROWN_BGR),
                   (380, 100, BROWN_BGR), (440, 100, (40, 40, 200))])
    # the network reads all four brown, the black ones a little less surely
    found = [read_brown(200, 100, 0.8), read_brown(260, 100, 0.8), read_brown(320, 100, 0.95),
             read_brown(380, 100, 0.95), cube(440, 100, "red")]
    fake = FakeDetector(detections(found, CORNERS))
    assert count_cubes(first, detector=fake).counts["brown"] == 4  # the network's mistake
    # the players confirm two black, two brown and one red
    cal = calibrate_from_drop(first, {"black": 2, "brown": 2, "red": 1}, detector=fake)
    assert cal.knows_looks() and len(cal.samples) == 5
    assert sorted((s[1], s[2]) for s in cal.samples)[:2] == [(BLACK, tuple(lab_of(BLACK_BGR)))] * 2

    # the next drop: a brown and a black cube, both read brown as surely as each other
    second = table([(250, 220, BROWN_BGR), (330, 220, BLACK_BGR)])
    fake2 = FakeDetector(detections([read_brown(250, 220), read_brown(330, 220)], CORNERS))
    assert count_cubes(second, detector=fake2).counts["brown"] == 2
    reading = count_cubes(second, calibration=cal, detector=fake2)
    assert {(c.x, c.colour) for c in reading.cubes} == {(250, "brown"), (330, "black")}
    # the pixels named it; the network did not: the players are asked to look at that cube
    renamed = next(c for c in reading.cubes if c.x == 330)
    assert renamed.uncertain and not next(c for c in reading.cubes if c.x == 250).uncertain
    assert [d.to_dict() for d in reading.doubts] == [
        {"kind": "colour", "colour": "black", "other": "brown", "place": "middle", "times": 1}]


def test_the_looks_name_black_and_brown_by_their_pixels():
    looks = [(tuple(probs("brown", 0.9, "black")), BLACK, tuple(lab_of(BLACK_BGR)))] * 3 + \
            [(tuple(probs("brown", 0.9, "black")), BROWN, tuple(lab_of(BROWN_BGR)))] * 3
    cal = Calibration(CORNERS, looks)
    read = cal.colour_probs(np.array([probs("brown", 0.9, "black")] * 2),
                            np.array([lab_of(BLACK_BGR), lab_of(BROWN_BGR)]))
    assert read[0].argmax() == BLACK and read[1].argmax() == BROWN
    assert np.allclose(read.sum(axis=1), 1.0)


def test_a_colour_the_table_has_not_shown_is_left_to_the_network():
    cal = Calibration(CORNERS, [(tuple(probs("brown")), BROWN, tuple(lab_of(BROWN_BGR)))] * 3)
    # a red cube, far from every brown one seen: red was never confirmed, so nothing says
    # against it, and the network's red stands
    red = cal.colour_probs(np.array([probs("red", 0.8, "brown")]),
                           np.array([lab_of((40, 40, 200))]))
    assert red[0].argmax() == RED


def test_odd_pixels_cannot_outvote_a_network_that_is_very_sure():
    cal = Calibration(CORNERS, [(tuple(probs("black")), BLACK, tuple(lab_of(BLACK_BGR)))] * 5
                      + [(tuple(probs("brown")), BROWN, tuple(lab_of(BROWN_BGR)))] * 5)
    # brown pixels (a shadow, a glint) under a cube the network is all but certain is black
    sure = cal.colour_probs(np.array([probs("black", 0.9995)]), np.array([lab_of(BROWN_BGR)]))
    assert sure[0].argmax() == BLACK


def test_old_samples_without_pixels_keep_only_the_bias():
    old = Calibration(CORNERS, [(tuple(probs("brown", 0.6, "black")), BLACK)] * 4)
    assert not old.knows_looks()
    p = np.array([probs("brown", 0.6, "black")])
    assert np.allclose(old.colour_probs(p, None), old.colour_probs(p, np.zeros((1, 3))))


# -- the file ----------------------------------------------------------------------------------

def test_the_pixels_are_saved_and_an_older_file_without_them_loads():
    cal = Calibration(CORNERS, [(tuple(probs("red")), RED, (81.234, 170.5, 160.0)),
                                (tuple(probs("brown")), BROWN)])
    again = Calibration.from_dict(json.loads(json.dumps(cal.to_dict())))
    assert again.samples[0][2] == pytest.approx((81.23, 170.5, 160.0))
    assert again.samples[1][2] is None
    older = {"samples": [[list(probs("red")), RED]]}
    assert Calibration.from_dict(older).samples[0][2] is None


@pytest.mark.parametrize("lab", [[1, 2], [1, 2, "x"], [1, 2, float("nan")]])
def test_a_sample_with_a_broken_pixel_colour_is_refused(lab):
    with pytest.raises((VisionError, ValueError)):
        Calibration.from_dict({"samples": [[list(probs("red")), RED, lab]]})
