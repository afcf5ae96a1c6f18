"""Colour naming against the floor, the per-frame print fit, and calibration files."""

from __future__ import annotations

import json

import numpy as np
import pytest

from vision.calibration import Calibration, refine_colours
from vision.colours import (
    DEFAULT_REFS,
    ColourModel,
    lab_from_linear,
    to_linear,
)
from vision.errors import VisionError
from vision.reading import COLOURS


def _linear_for(lab: tuple[float, float, float]) -> np.ndarray:
    """Find linear BGR whose Lab is ``lab`` (Gauss-Newton, tests only)."""
    x = np.full(3, 0.3)
    target = np.asarray(lab, float)
    for _ in range(50):
        f0 = lab_from_linear(x[None])[0]
        J = np.zeros((3, 3))
        for i in range(3):
            dx = np.zeros(3)
            dx[i] = 1e-4
            J[:, i] = (lab_from_linear((x + dx)[None])[0] - f0) / 1e-4
        x = np.maximum(x + np.linalg.lstsq(J, target - f0, rcond=None)[0], 1e-4)
    return x


def test_lab_of_white_and_black():
    assert lab_from_linear(np.array([[1.0, 1.0, 1.0]]))[0] == pytest.approx([100, 0, 0], abs=0.5)
    assert lab_from_linear(np.array([[0.0, 0.0, 0.0]]))[0][0] == pytest.approx(0, abs=0.5)
    # brighter than the reference white is allowed (a cube lighter than the print)
    assert lab_from_linear(np.array([[2.0, 2.0, 2.0]]))[0][0] > 100


def test_to_linear_is_monotonic():
    v = to_linear(np.arange(256, dtype=np.uint8))
    assert np.all(np.diff(v) > 0) and v[0] == 0 and v[-1] == pytest.approx(1.0)


def test_each_reference_is_named_as_itself():
    model = ColourModel.default()
    labs = np.array([DEFAULT_REFS[c] for c in COLOURS])
    p = model.probabilities(labs)
    assert [COLOURS[i] for i in p.argmax(axis=1)] == list(COLOURS)
    assert np.allclose(p.sum(axis=1), 1.0)


def test_print_fit_undoes_a_dark_print():
    """On a print 3x darker than assumed, every cube/floor ratio is 3x larger."""
    model = ColourModel.default()
    ratios = np.array([_linear_for(DEFAULT_REFS[c]) for c in COLOURS])
    gains = model.fit_print(ratios * 3.0)
    assert gains == pytest.approx(np.full(3, 3.0), rel=0.15)
    labs = lab_from_linear(ratios * 3.0 / gains)
    assert [COLOURS[i] for i in model.probabilities(labs).argmax(axis=1)] == list(COLOURS)


def test_print_fit_undoes_a_tinted_print():
    """A bluish print makes every cube look yellower by the same factor."""
    model = ColourModel.default()
    ratios = np.array([_linear_for(DEFAULT_REFS[c]) for c in COLOURS])
    tint = np.array([0.75, 1.0, 1.1])  # B, G, R
    gains = model.fit_print(ratios * tint)
    labs = lab_from_linear(ratios * tint / gains)
    assert [COLOURS[i] for i in model.probabilities(labs).argmax(axis=1)] == list(COLOURS)


def test_print_fit_keeps_defaults_with_one_cube():
    model = ColourModel.default()
    gains = model.fit_print(_linear_for(DEFAULT_REFS["brown"])[None])
    assert gains == pytest.approx(np.ones(3), rel=0.2)


def test_calibration_round_trip(tmp_path):
    cal = Calibration(corners=[(1, 2), (300, 2), (300, 200), (1, 200)])
    cal.colours = refine_colours(cal.colours, {"red": [(60.0, 50.0, 10.0)] * 3})
    path = tmp_path / "cal.json"
    cal.save(path)
    back = Calibration.load(path)
    assert back.corners == [(1.0, 2.0), (300.0, 2.0), (300.0, 200.0), (1.0, 200.0)]
    assert back.colours.refs["red"] == pytest.approx(cal.colours.refs["red"])
    assert json.loads(path.read_text())["colours"]["refs"]["blue"] == list(DEFAULT_REFS["blue"])


def test_refine_moves_only_the_colours_sampled():
    model = ColourModel.default()
    new = refine_colours(model, {"white": [(110.0, 0.0, -20.0)], "purple": [(1, 2, 3)]})
    assert new.refs["white"] != model.refs["white"]
    assert new.refs["black"] == model.refs["black"]


@pytest.mark.parametrize("text", ["{", '{"corners": [[1, 2]]}', "[]"])
def test_bad_calibration_file_is_a_clear_error(tmp_path, text):
    p = tmp_path / "cal.json"
    p.write_text(text)
    with pytest.raises(VisionError, match="calibration"):
        Calibration.load(p)


def test_missing_calibration_file(tmp_path):
    with pytest.raises(VisionError, match="not found"):
        Calibration.load(tmp_path / "nope.json")
