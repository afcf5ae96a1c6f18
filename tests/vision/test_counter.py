"""``count_cubes``: what it makes of the detector's candidates (a fake detector with handmade
detections: ``tests/fake_detector.py``), and the packaged model on the shipped renders."""

from __future__ import annotations

import json
import re
from pathlib import Path

import cv2
import numpy as np
import pytest
from fake_detector import FakeDetector, cube, detections
from hypothesis import given, settings
from hypothesis import strategies as st

from vision.calibration import Calibration
from vision.counter import (
    DOUBT_SHARE,
    count_cubes,
    load_image,
    packaged_detector,
    without_colour,
)
from vision.errors import VisionError
from vision.reading import COLOURS, DOUBT_TEXTS, PLACES, Doubt, TrayReading

MINI = Path(__file__).resolve().parents[1] / "fixtures" / "vision" / "trays-mini"
W, H = 640, 360
FRAME = np.full((H, W, 3), (96, 110, 128), np.uint8)  # a brownish table: a colour picture
FLOOR = [[120, 60], [520, 60], [520, 300], [120, 300]]  # the tray's floor as found


def read(*cands, corners=FLOOR, frame=FRAME, **kw) -> TrayReading:
    return count_cubes(frame, detector=FakeDetector(detections(cands, corners)), **kw)


# -- the packaged model on the shipped renders -----------------------------------------------

@pytest.mark.parametrize("name", sorted(
    x["file"] for x in json.loads((MINI / "labels.json").read_text())["images"]))
def test_every_mini_render_reads_as_valid_cubes_inside_the_picture(name):
    image = load_image(MINI / name)
    h, w = image.shape[:2]
    ref = load_image(MINI / name.split("/")[0] / "empty.jpg")
    for reading in (count_cubes(image), count_cubes(image, ref)):
        assert set(reading.counts) == set(COLOURS)
        assert reading.total == sum(reading.counts.values()) == len(reading.cubes)
        for c in reading.cubes:
            assert c.colour in COLOURS
            assert 0 <= c.x < w and 0 <= c.y < h
            assert 0.0 <= c.confidence <= 1.0
            assert c.uncertain == (c.confidence < packaged_detector().config.unsure_below)
        if reading.tray_corners is not None:
            assert len(reading.tray_corners) == 4
        assert all(isinstance(x, str) and x for x in reading.warnings)
        assert reading.warnings == tuple(d.text for d in reading.doubts)
        json.dumps(reading.to_dict())


# -- what is counted ---------------------------------------------------------------------------

def test_sure_cubes_on_the_tray_are_counted_with_their_colour_and_place():
    reading = read(cube(200, 100, "red"), cube(400, 250, "blue", score=0.9, sure=0.9))
    assert reading.counts == {**dict.fromkeys(COLOURS, 0), "red": 1, "blue": 1}
    red = next(c for c in reading.cubes if c.colour == "red")
    assert (red.x, red.y) == (200, 100)
    assert red.confidence == pytest.approx(0.95 * 0.95, abs=1e-3)
    assert not reading.uncertain and reading.warnings == ()
    assert sorted(reading.tray_corners) == sorted(map(tuple, map(tuple, FLOOR)))


def test_candidates_below_the_models_threshold_are_not_counted_but_may_be_a_doubt():
    threshold = FakeDetector().config.cube_threshold
    doubt = cube(300, 200, "green", score=threshold * (DOUBT_SHARE + 1) / 2)
    nothing = cube(200, 200, "white", score=threshold * DOUBT_SHARE * 0.5)
    reading = read(cube(200, 100, "red"), doubt, nothing)
    assert reading.total == 1 and reading.counts["red"] == 1
    assert reading.uncertain
    assert reading.warnings == ("there may be one more cube (green?) at the middle of the picture",)


def test_cubes_the_model_places_outside_the_tray_are_never_counted():
    reading = read(cube(200, 100, "red"), cube(600, 340, "yellow", outside=True))
    assert reading.counts["red"] == 1 and reading.total == 1
    assert reading.warnings == ()


def test_a_cube_of_doubtful_colour_is_counted_and_said_to_be_unsure():
    reading = read(cube(200, 100, "yellow", sure=0.55, second="white"))
    [c] = reading.cubes
    assert c.colour == "yellow" and c.uncertain
    assert reading.warnings == ("a cube at the top left of the picture may be yellow or white",)


def test_a_faint_cube_of_clear_colour_is_said_maybe_not_a_cube():
    reading = read(cube(200, 100, "black", score=0.55, sure=0.99))
    assert reading.cubes[0].uncertain
    assert reading.warnings == ("a black cube at the top left of the picture may not be a cube",)


def test_the_same_doubt_twice_is_said_once_with_how_often():
    reading = read(cube(150, 80, "yellow", sure=0.55, second="white"),
                   cube(160, 90, "yellow", sure=0.55, second="white"))
    assert reading.warnings == (
        "a cube at the top left of the picture may be yellow or white (twice)",)


def test_no_outline_found_is_said():
    reading = read(cube(200, 100, "red"), corners=None)
    assert reading.total == 1 and reading.tray_corners is None
    assert reading.warnings == (
        "the tray's outline was not found: are the tray's corners in view?",)


def test_an_outline_that_cannot_be_a_tray_is_not_used():
    tiny = [[300, 150], [320, 150], [320, 160], [300, 160]]
    reading = read(cube(200, 100, "red"), corners=tiny)
    assert reading.tray_corners is None and reading.total == 1
    assert any("outline was not found" in w for w in reading.warnings)


# -- bounds ----------------------------------------------------------------------------------

def test_bounds_rename_the_least_sure_cube_of_a_colour_beyond_its_bound():
    reading = read(
        cube(150, 100, "red", sure=0.95),
        cube(250, 100, "red", sure=0.6, second="brown"),  # the least sure red
        cube(350, 100, "red", sure=0.9, second="yellow"),
        bounds={"red": 2},
    )
    assert reading.counts["red"] == 2 and reading.counts["brown"] == 1
    assert next(c for c in reading.cubes if c.colour == "brown").x == 250
    assert reading.warnings[0] == (
        "more red cubes read than the tower can hold: the least sure one is read as brown")


def test_bounds_send_a_cube_to_its_next_colour_that_has_room():
    reading = read(
        cube(150, 100, "red"),
        cube(250, 100, "red", sure=0.6, second="brown"),
        bounds={"red": 1, "brown": 0},
    )
    assert reading.counts["red"] == 1 and reading.counts["brown"] == 0
    assert reading.total == 2  # the cube is still counted, as some colour with room


def test_bounds_that_cannot_be_met_are_said():
    reading = read(cube(150, 100, "red"), cube(250, 100, "blue"),
                   bounds=dict.fromkeys(COLOURS, 0))
    assert reading.total == 2
    assert any("than the tower can hold" in w for w in reading.warnings)


def test_an_unknown_colour_in_the_bounds_is_refused():
    with pytest.raises(VisionError, match="unknown colour in bounds: 'purple'"):
        read(cube(150, 100, "red"), bounds={"purple": 1})


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(st.floats(0.01, 1.0), min_size=7, max_size=7), min_size=1, max_size=12),
    st.lists(st.integers(0, 4), min_size=7, max_size=7),
)
def test_bounds_are_met_whenever_they_can_be(scores, limits):
    cands = [cube(100 + 30 * i, 150, "red") for i in range(len(scores))]
    cands = [type(c)(c.x, c.y, c.score, np.array(p) / np.sum(p)) for c, p in zip(
        cands, scores, strict=True)]
    bounds = dict(zip(COLOURS, limits, strict=True))
    reading = read(*cands, bounds=bounds)
    assert reading.total == len(cands)
    if len(cands) <= sum(limits):
        assert all(reading.counts[c] <= bounds[c] for c in COLOURS) or reading.warnings
    else:
        assert any("than the tower can hold" in w for w in reading.warnings)


# -- tapped corners and what the table taught ------------------------------------------------

def test_tapped_corners_drop_the_cubes_outside_them():
    tapped = [(300, 80), (600, 80), (600, 340), (300, 340)]  # the right part of the floor
    reading = read(
        cube(450, 200, "red"),  # inside
        cube(290, 200, "blue"),  # just beyond a side: a cube leaning on the wall
        cube(150, 200, "green"),  # far outside
        calibration=Calibration(corners=tapped),
    )
    assert reading.counts == {**dict.fromkeys(COLOURS, 0), "red": 1, "blue": 1}
    assert sorted(reading.tray_corners) == sorted(tapped)  # the tapped ones, not the model's


def test_tapped_corners_need_no_outline_from_the_model():
    tapped = [(120, 60), (520, 60), (520, 300), (120, 300)]
    reading = read(cube(200, 100, "red"), corners=None, calibration=Calibration(corners=tapped))
    assert reading.total == 1 and reading.warnings == ()


def test_what_the_table_taught_moves_a_doubtful_colour():
    whitish = cube(200, 100, "yellow", sure=0.6, second="white")
    assert read(whitish).counts["yellow"] == 1
    taught = Calibration(samples=[(tuple(whitish.colour_probs), COLOURS.index("white"))] * 4)
    reading = read(whitish, calibration=taught)
    assert reading.counts["white"] == 1 and reading.counts["yellow"] == 0
    # a sure cube of another colour keeps its colour
    assert read(cube(200, 100, "red"), calibration=taught).counts["red"] == 1


# -- the pictures it accepts ------------------------------------------------------------------

def test_a_grey_picture_is_read_as_bgr_and_its_colours_are_said_to_be_guesses():
    fake = FakeDetector(detections([cube(200, 100, "red")], FLOOR))
    reading = count_cubes(np.full((H, W), 90, np.uint8), detector=fake)
    assert reading.total == 1
    image, _ = fake.calls[-1]
    assert image.shape == (H, W, 3) and image.dtype == np.uint8
    assert reading.doubts == (Doubt("no_colour"),) and reading.cubes[0].uncertain
    assert reading.warnings == ("the picture has no colour (a black-and-white camera?): the "
                                "cubes' colours cannot be told",)


def test_a_black_and_white_camera_saved_as_colour_jpeg_has_no_colour_but_a_colour_one_has():
    colour = load_image(MINI / "s000" / "drop11.jpg")  # nine cubes
    grey = cv2.cvtColor(cv2.cvtColor(colour, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR)
    ok, jpeg = cv2.imencode(".jpg", grey, [cv2.IMWRITE_JPEG_QUALITY, 70])
    assert ok
    assert without_colour(cv2.imdecode(jpeg, cv2.IMREAD_COLOR))
    assert not without_colour(colour)
    # a colour picture of a dim, nearly grey table is still a colour picture
    assert not without_colour((colour * 0.25 + 80).astype(np.uint8))
    reading = count_cubes(grey)
    assert reading.total > 0 and reading.doubts[0] == Doubt("no_colour")  # said first
    assert "no_colour" not in {d.kind for d in count_cubes(colour).doubts}


def test_an_empty_grey_picture_raises_no_colour_doubt():
    """Nothing to name: a grey picture of an empty tray is just an empty tray."""
    fake = FakeDetector(detections([], FLOOR))
    assert count_cubes(np.full((H, W, 3), 90, np.uint8), detector=fake).doubts == ()


def test_a_bgra_picture_is_read_as_bgr():
    fake = FakeDetector(detections([cube(200, 100, "red")], FLOOR))
    bgra = np.zeros((H, W, 4), np.uint8)
    bgra[..., 2], bgra[..., 3] = 200, 255
    count_cubes(bgra, bgra, detector=fake)
    image, ref = fake.calls[-1]
    assert image.shape == ref.shape == (H, W, 3)
    assert image[0, 0].tolist() == [0, 0, 200]


def test_a_reference_of_the_same_shape_but_another_size_is_scaled_to_the_picture():
    fake = FakeDetector()
    small = cv2.resize(FRAME, (W // 2, H // 2))
    count_cubes(FRAME, small, detector=fake)
    _, ref = fake.calls[-1]
    assert ref.shape == FRAME.shape


def test_a_reference_of_another_aspect_ratio_is_refused():
    with pytest.raises(VisionError, match="same camera"):
        count_cubes(FRAME, np.full((H, H, 3), 128, np.uint8), detector=FakeDetector())


@pytest.mark.parametrize("shape", [(10, 10, 3), (63, 640, 3), (640, 20, 3)])
def test_a_tiny_picture_is_refused(shape):
    with pytest.raises(VisionError, match="too small"):
        count_cubes(np.zeros(shape, np.uint8), detector=FakeDetector())


def test_warnings_are_in_words_without_pixel_coordinates():
    reading = read(
        cube(150, 80, "yellow", sure=0.55, second="white"),
        cube(620, 340, "black", score=0.55, sure=0.99),
        cube(330, 190, "green", score=0.4),
        cube(160, 300, "red"), cube(250, 300, "red", sure=0.7, second="blue"),
        corners=None, bounds={"red": 1},
    )
    assert len(reading.warnings) >= 4
    for w in reading.warnings:
        assert re.fullmatch(r"[a-z][a-z ,:'()?]+", w), w  # no digits at all
        assert "px" not in w and "pixel" not in w


# -- the same doubts as data (for the phone app, which says them in the phone's language) -------

def test_each_warning_has_its_doubt_as_data_in_the_same_order():
    reading = read(
        cube(150, 80, "yellow", sure=0.55, second="white"),
        cube(160, 90, "yellow", sure=0.55, second="white"),
        cube(620, 340, "black", score=0.55, sure=0.99),
        cube(160, 300, "red"), cube(250, 300, "red", sure=0.7, second="blue"),
        cube(330, 190, "green", score=FakeDetector().config.cube_threshold * 0.8),
        corners=None, bounds={"red": 1},
    )
    assert reading.doubts == (
        Doubt("too_many_read_as", "red", "blue"),
        Doubt("colour", "yellow", "white", "top-left", times=2),
        # the renamed red, now an unsure blue; every other colour is at 0: the first of them
        Doubt("colour", "blue", "black", "bottom"),
        Doubt("not_a_cube", "black", place="bottom-right"),
        Doubt("one_more", "green", place="middle"),
        Doubt("no_outline"),
    )
    assert reading.warnings == tuple(d.text for d in reading.doubts)
    assert reading.warnings[1] == (
        "a cube at the top left of the picture may be yellow or white (twice)")
    out = reading.to_dict()
    assert out["doubts"][1] == {"kind": "colour", "colour": "yellow", "other": "white",
                                "place": "top-left", "times": 2}
    assert out["doubts"][-1] == {"kind": "no_outline", "times": 1}
    assert len(out["doubts"]) == len(out["warnings"])
    json.dumps(out)


def test_a_sure_reading_has_no_doubts_field():
    reading = read(cube(200, 100, "red"))
    assert reading.doubts == () and "doubts" not in reading.to_dict()


def test_every_kind_and_place_has_words_and_unknown_ones_are_refused():
    for kind in DOUBT_TEXTS:
        for place in PLACES:
            text = Doubt(kind, "red", "blue", place).text
            assert "{" not in text and "None" not in text
            assert (PLACES[place] in text) == ("{place}" in DOUBT_TEXTS[kind])
    assert Doubt("too_many", "red", times=3).text == (
        "more red cubes read than the tower can hold (3 times)")
    with pytest.raises(ValueError, match="kind"):
        Doubt("glare")
    with pytest.raises(ValueError, match="place"):
        Doubt("one_more", "red", place="front")
