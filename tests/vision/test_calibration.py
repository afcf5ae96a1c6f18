"""What a session learns: the colour bias fitted to confirmed cubes, kept as plain JSON."""

from __future__ import annotations

import json

import numpy as np
import pytest
from fake_detector import FakeDetector, cube, detections, probs

from vision.calibration import KEEP_SAMPLES, Calibration, calibrate_from_drop, fit_bias
from vision.errors import VisionError
from vision.reading import COLOURS

YELLOW, WHITE, RED = (COLOURS.index(c) for c in ("yellow", "white", "red"))
FRAME = np.full((360, 640, 3), 128, np.uint8)
CORNERS = [(120.0, 60.0), (520.0, 60.0), (520.0, 300.0), (120.0, 300.0)]


def _fit(samples):
    return fit_bias(np.array([p for p, _ in samples]), np.array([y for _, y in samples]))


# -- the bias ----------------------------------------------------------------------------------

def test_no_samples_no_bias():
    assert Calibration().bias() is None
    assert Calibration(corners=CORNERS).learned_from() == 0


def test_the_bias_moves_towards_the_confirmed_colour():
    whitish = probs("yellow", 0.6, "white")
    b = _fit([(whitish, WHITE)] * 5)
    assert b[WHITE] > 0 > b[YELLOW]
    moved = np.log(whitish + 1e-12) + b
    assert int(np.argmax(moved)) == WHITE  # five such cubes are enough to read it white


def test_the_bias_stays_small_with_few_samples():
    whitish = probs("yellow", 0.6, "white")
    one = _fit([(whitish, WHITE)])
    many = _fit([(whitish, WHITE)] * 100)
    assert np.abs(one).max() < 0.5  # the prior holds one cube's say small
    assert np.abs(one).max() < np.abs(many).max()
    # a lone cube that the network was sure of the other way cannot flip a sure reading
    sure_yellow = probs("yellow", 0.98)
    b = _fit([(sure_yellow, WHITE)])
    assert int(np.argmax(np.log(sure_yellow) + b)) == YELLOW


def test_cubes_the_network_named_right_leave_the_bias_near_zero():
    samples = [(probs(c, 0.9), k) for k, c in enumerate(COLOURS)] * 3
    assert np.abs(_fit(samples)).max() < 0.1


def test_the_calibrations_bias_is_the_fit_of_its_samples():
    samples = [(tuple(probs("yellow", 0.6, "white")), WHITE), (tuple(probs("red")), RED)]
    cal = Calibration(CORNERS, samples)
    assert cal.learned_from() == 2
    assert np.allclose(cal.bias(), _fit(samples))


# -- the file ----------------------------------------------------------------------------------

def test_to_dict_and_from_dict_round_trip():
    samples = [(tuple(float(v) for v in probs("yellow", 0.6, "white")), WHITE),
               (tuple(float(v) for v in probs("red", 0.8)), RED)]
    cal = Calibration(CORNERS, samples)
    body = json.loads(json.dumps(cal.to_dict()))
    again = Calibration.from_dict(body)
    assert again.corners == CORNERS
    assert [s[1] for s in again.samples] == [WHITE, RED]
    assert np.allclose([s[0] for s in again.samples], [p for p, _ in samples], atol=1e-5)
    assert Calibration.from_dict(Calibration().to_dict()) == Calibration()


def test_save_and_load(tmp_path):
    cal = Calibration(CORNERS, [(tuple(probs("red").tolist()), RED)])
    path = tmp_path / "cal.json"
    cal.save(path)
    again = Calibration.load(path)
    assert again.corners == CORNERS and again.learned_from() == 1


def test_an_old_file_with_a_colour_model_loads_its_corners_and_no_samples():
    old = {"corners": [list(p) for p in CORNERS],
           "colours": {"refs": {c: [50.0, 0.0, 0.0] for c in COLOURS},
                       "spread": {c: 6.0 for c in COLOURS}}}
    cal = Calibration.from_dict(old)
    assert cal.corners == CORNERS and cal.samples == [] and cal.bias() is None
    assert Calibration.from_dict({"colours": {}}) == Calibration()


def test_only_the_latest_samples_are_kept():
    samples = [[probs("red").tolist(), RED]] * (KEEP_SAMPLES + 20)
    assert Calibration.from_dict({"samples": samples}).learned_from() == KEEP_SAMPLES


@pytest.mark.parametrize("body, words", [
    ([1, 2], "JSON object"),
    ({"corners": [[1, 2], [3, 4], [5, 6]]}, "four tray corners"),
    ({"samples": [[[0.5, 0.5], 1]]}, "seven scores"),
    ({"samples": [[probs("red").tolist(), 7]]}, "seven scores and a colour"),
])
def test_a_calibration_that_cannot_be_is_refused(body, words):
    with pytest.raises(VisionError, match=words):
        Calibration.from_dict(body)


def test_a_missing_or_corrupt_file_is_a_vision_error(tmp_path):
    with pytest.raises(VisionError, match="not found"):
        Calibration.load(tmp_path / "nope.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"corners": [[1, 2]')
    with pytest.raises(VisionError, match="not valid"):
        Calibration.load(bad)
    bad.write_text('{"corners": [[1, 2]]}')
    with pytest.raises(VisionError, match=r"not valid.*four tray corners"):
        Calibration.load(bad)


# -- learning from a drop ----------------------------------------------------------------------

def _drop(*cands):
    return FakeDetector(detections(cands, CORNERS))


def test_a_drop_whose_count_differs_teaches_nothing():
    fake = _drop(cube(200, 100, "red"), cube(300, 100, "blue"), cube(400, 100, "green"))
    with pytest.raises(VisionError, match="found 3 cubes but the drop held 4"):
        calibrate_from_drop(FRAME, {"red": 2, "blue": 1, "green": 1}, detector=fake)


def test_a_drop_of_one_colour_teaches_nothing():
    fake = _drop(cube(200, 100, "red"), cube(300, 100, "red"))
    with pytest.raises(VisionError, match="at least 2 are needed"):
        calibrate_from_drop(FRAME, {"red": 2}, detector=fake)


def test_an_unknown_colour_in_the_contents_is_refused():
    with pytest.raises(VisionError, match="unknown colour"):
        calibrate_from_drop(FRAME, {"pink": 1, "red": 1}, detector=_drop())


def test_the_cubes_are_matched_to_the_confirmed_colours_within_the_counts():
    fake = _drop(
        cube(200, 100, "yellow", sure=0.9, second="white"),  # surely yellow
        cube(300, 100, "yellow", sure=0.6, second="white"),  # the one that is white
        cube(400, 100, "red"),
        cube(500, 100, "green", outside=True),  # beyond the tray: not part of the drop
        cube(250, 250, "blue", score=0.3),  # too faint to count: not part of it either
    )
    cal = calibrate_from_drop(FRAME, {"yellow": 1, "white": 1, "red": 1}, detector=fake)
    by_truth = {y: p for p, y, _ in cal.samples}
    assert sorted(by_truth) == sorted([YELLOW, WHITE, RED])
    assert by_truth[YELLOW][YELLOW] == pytest.approx(0.9)
    assert by_truth[WHITE][YELLOW] == pytest.approx(0.6)
    assert cal.bias()[WHITE] > cal.bias()[YELLOW]


def test_learning_keeps_the_corners_and_adds_to_what_was_learned():
    fake = _drop(cube(200, 100, "red"), cube(300, 100, "blue"))
    first = Calibration(CORNERS, [(tuple(probs("green").tolist()), COLOURS.index("green"))])
    ref = np.full_like(FRAME, 100)
    cal = calibrate_from_drop(FRAME, {"red": 1, "blue": 1}, ref, calibration=first,
                              detector=fake)
    assert cal.corners == CORNERS
    assert cal.learned_from() == 3 and cal.samples[0] == first.samples[0]
    assert first.learned_from() == 1  # the old calibration is left as it was
    _, seen_ref = fake.calls[-1]
    assert np.array_equal(seen_ref, ref)
