"""The camera's tone curve: a frame whose camera spreads the cubes' lightness further apart than
the references (another gamma) is still named right."""

from __future__ import annotations

import numpy as np
import pytest

from vision.colours import FLOOR_ALBEDO, ColourModel, linear_from_lab, toned
from vision.reading import COLOURS

MODEL = ColourModel.default()


def _frame(colours, contrast: float, print_gain: float) -> list[dict]:
    """Cubes of these colours as a camera of this contrast (relative to the assumed gamma 2.2)
    reads their ratios to a print ``print_gain`` times darker than assumed."""
    lin = np.maximum(linear_from_lab(np.array([MODEL.refs[c] for c in colours])), 1e-4)
    ratios = FLOOR_ALBEDO * (lin / FLOOR_ALBEDO * print_gain) ** contrast
    return [{"ratio": r.astype(np.float32)} for r in ratios]


def _names(cubes):
    MODEL.name_cubes(cubes)
    return [COLOURS[int(np.argmax(c["p"]))] for c in cubes]


@pytest.mark.parametrize(("colours", "contrast", "print_gain"), [
    # a flat camera (gamma about 3.7) over a pale print: blue, black and white all read as
    # dim greys, and one lightness factor made all three black
    (("blue", "black", "white"), 0.6, 0.5),
    # a steep camera (gamma about 1.4) over a dark print: black read far too dark against red,
    # green and white, which one lightness factor could not all match (green came out yellow)
    (("black", "red", "green", "white"), 1.6, 3.0),
])
def test_a_camera_of_another_contrast_names_every_colour(colours, contrast, print_gain):
    cubes = _frame(colours, contrast, print_gain)
    assert _names(cubes) == list(colours)
    assert np.log(cubes[0]["contrast"]) == pytest.approx(-np.log(contrast), abs=0.2)


def test_toned_keeps_the_floor_and_raises_the_ratio_to_the_contrast():
    r = np.array([[FLOOR_ALBEDO] * 3, [FLOOR_ALBEDO * 4] * 3], np.float32)
    out = toned(r, 0.5)
    assert out[0] == pytest.approx([FLOOR_ALBEDO] * 3)
    assert out[1] == pytest.approx([FLOOR_ALBEDO * 2] * 3, rel=1e-4)


@pytest.mark.parametrize("colours", [("green", "green"), ("red", "green")])
def test_cubes_on_a_very_dark_print_are_named(colours):
    # a print of about 6 % albedo (black felt, dark-stained wood) makes every ratio 10 times
    # the pale print's: beyond the lightness factor's old range (5 x, 7 x refined), two greens
    # read yellow
    cubes = _frame(colours, 1.0, 10.0)
    assert _names(cubes) == list(colours)


def test_a_name_another_plausible_fit_changes_brings_the_second_colour_near():
    # one brown cube read by the chosen fit; another fit of the frame (a steeper contrast,
    # darker) that fits about as well would call it black: black's distance must come within
    # a spread of brown's (the counter's "between" flag), brown's own stays as it was
    brown = np.maximum(linear_from_lab(np.array([MODEL.refs["brown"]])), 1e-4)
    black = np.maximum(linear_from_lab(np.array([MODEL.refs["black"]])), 1e-4)
    ratios = brown.astype(np.float32)
    dist = MODEL.shaded_distances(ratios, np.ones(3, np.float32))
    gains = (brown / black)[0].astype(np.float32)  # this fit reads the brown as black
    low = np.zeros((1, 3), bool)
    over = np.ones((1, 3), np.float32)
    near = MODEL._other_fits(ratios, low, over, [(1.0, gains)], dist)
    b, k = COLOURS.index("brown"), COLOURS.index("black")
    assert dist[0].argmin() == b and dist[0, k] > dist[0, b] + 1.0
    assert near[0, b] == dist[0, b]
    assert near[0, k] < near[0, b] + 1.0


def test_a_calibrated_session_keeps_its_camera_contrast(tmp_path):
    # a calibration drop was read through this session's camera: its references hold the
    # camera's contrast, so a frame is not refitted with another one (and it survives saving)
    import synth

    from vision.calibration import Calibration, calibrate_from_drop

    scene = synth.Scene(cubes=synth.scatter(list(COLOURS), seed=9))
    frame, truth = synth.render(scene)
    ref, _ = synth.render(scene, with_cubes=False)
    cal = calibrate_from_drop(frame, synth.counts(truth), ref)
    assert not cal.colours.fit_contrast
    cal.save(tmp_path / "c.json")
    back = Calibration.load(tmp_path / "c.json").colours
    assert not back.fit_contrast
    cubes = _frame(("black", "red", "green", "white"), 1.6, 3.0)
    back.name_cubes(cubes)
    assert cubes[0]["contrast"] == 1.0
    assert ColourModel.default().fit_contrast
