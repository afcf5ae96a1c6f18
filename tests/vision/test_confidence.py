"""The counted cubes' confidence: fitted on validation cubes so that a confidence p is right
about p of the time (``vision.train.calibrate.platt``), carried in ``model.json`` and used by
``count_cubes``."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from fake_detector import CONFIG, FakeDetector, cube, detections

from vision.counter import count_cubes
from vision.detector import ModelConfig
from vision.reading import COLOURS
from vision.train import calibrate
from vision.train.calibrate import platt
from vision.train.data import LabelledCube, Sample

FRAME = np.full((360, 640, 3), (96, 110, 128), np.uint8)  # a colour picture
FLOOR = [[120, 60], [520, 60], [520, 300], [120, 300]]


def _logit(p):
    return np.log(p / (1 - p))


def _sigmoid(z):
    return 1 / (1 + np.exp(-z))


def test_platt_finds_the_map_that_made_the_outcomes():
    rng = np.random.default_rng(3)
    raw = rng.uniform(0.3, 0.99, 40_000)
    right = rng.random(raw.size) < _sigmoid(2.5 * _logit(raw) + 0.4)
    scale, shift = platt(raw, right)
    assert scale == pytest.approx(2.5, abs=0.15)
    assert shift == pytest.approx(0.4, abs=0.15)
    fitted = _sigmoid(scale * _logit(raw) + shift)
    for lo, hi in ((0.5, 0.8), (0.8, 0.95), (0.95, 1.0)):  # reliability within 3 points
        band = (fitted >= lo) & (fitted < hi)
        assert abs(right[band].mean() - fitted[band].mean()) < 0.03


def test_an_under_confident_product_is_made_surer_and_stays_finite_when_all_are_right():
    raw = np.linspace(0.6, 0.95, 200)
    scale, shift = platt(raw, np.ones(raw.size, bool))
    assert np.isfinite([scale, shift]).all()
    config = dataclasses.replace(CONFIG, confidence_scale=scale, confidence_shift=shift)
    assert config.confidence(0.7) > 0.9


def test_a_fit_that_would_turn_the_order_round_is_refused():
    raw = np.linspace(0.3, 0.99, 400)
    assert platt(raw, raw < 0.6) == (1.0, 0.0)  # the surer, the more often wrong


def test_the_confidence_map_is_the_identity_unless_model_json_says_otherwise():
    assert CONFIG.confidence(0.37) == pytest.approx(0.37, abs=1e-6)
    d = CONFIG.to_dict()
    assert ModelConfig.from_dict(d).confidence(0.8) == pytest.approx(0.8, abs=1e-6)
    surer = ModelConfig.from_dict({**d, "confidence_scale": 2.0, "confidence_shift": 0.5})
    assert surer.confidence(0.8) == pytest.approx(_sigmoid(2 * _logit(0.8) + 0.5), abs=1e-6)


def test_count_cubes_reports_the_calibrated_confidence_and_flags_by_it():
    cands = (cube(200, 100, "red", score=0.7, sure=0.8), cube(400, 250, "blue", score=0.9))
    plain = count_cubes(FRAME, detector=FakeDetector(detections(cands, FLOOR)))
    surer_config = dataclasses.replace(CONFIG, confidence_scale=3.0, confidence_shift=0.0)
    surer = count_cubes(FRAME, detector=FakeDetector(detections(cands, FLOOR),
                                                     config=surer_config))
    red_plain = next(c for c in plain.cubes if c.colour == "red")
    red_surer = next(c for c in surer.cubes if c.colour == "red")
    assert red_plain.confidence == pytest.approx(0.56, abs=1e-3)
    assert red_surer.confidence == pytest.approx(_sigmoid(3 * _logit(0.56)), abs=1e-3)
    assert red_plain.confidence < CONFIG.unsure_below and red_plain.uncertain and plain.uncertain
    assert red_surer.confidence >= CONFIG.unsure_below and not red_surer.uncertain
    assert not surer.uncertain


def test_calibrating_on_validation_maps_makes_the_counted_confidence_honest():
    """Synthetic validation maps whose colour heads are too timid (a cube read right 9 times in
    10 says ~0.5): after ``fit`` the counted cubes' mean confidence is their share right."""
    rng = np.random.default_rng(5)
    gh, gw, stride = 24, 32, 4
    heads = CONFIG.heads
    config = dataclasses.replace(CONFIG, input_width=gw * stride, input_height=gh * stride)
    samples, items, maps_list = [], [], []
    for i in range(40):
        maps = np.zeros((len(heads), gh, gw), np.float32)
        maps[[heads.index("cube"), heads.index("outside"), heads.index("corner")]] = -8.0
        cubes, counts = [], dict.fromkeys(COLOURS, 0)
        for r, c in {(int(rng.integers(2, gh - 2)), int(rng.integers(2, gw - 2)))
                     for _ in range(6)}:
            if any(abs(r - r2) < 3 and abs(c - c2) < 3 for r2, c2 in
                   [(int(k.y // stride), int(k.x // stride)) for k in cubes]):
                continue
            shown = int(rng.integers(7))
            truth = shown if rng.random() < 0.9 else (shown + 1) % 7
            maps[heads.index("cube"), r, c] = 4.0
            maps[heads.index(f"colour:{shown}"), r, c] = 1.8
            x, y = (c + 0.5) * stride, (r + 0.5) * stride
            cubes.append(LabelledCube(truth, x, y, True, 5000))
            counts[COLOURS[truth]] += 1
        samples.append(Sample(Path(f"s{i}/drop01.jpg"), f"s{i}", counts, tuple(cubes), None,
                              None, (gw * stride, gh * stride)))
        items.append(SimpleNamespace(image=np.zeros((gh * stride, gw * stride, 3), np.uint8),
                                     scale=1.0))
        maps_list.append(maps)
    per_mode = {True: maps_list}
    before_raw, right = calibrate._counted(config, samples, items, per_mode)
    assert 0.8 < right.mean() < 0.97 and before_raw.mean() < right.mean() - 0.2
    fitted = calibrate.fit(config, samples, items, per_mode, log=lambda line: None)
    assert fitted.confidence_scale != 1.0
    after = np.array([fitted.confidence(p) for p in
                      calibrate._counted(fitted, samples, items, per_mode)[0]])
    assert abs(after.mean() - right.mean()) < 0.03
    trays = [t for m in per_mode.values() for t in calibrate._trays(fitted, samples, items, m)]
    wrong = [(low, near) for exact, low, near in trays if not exact]
    assert len(wrong) >= calibrate.MIN_WRONG_FOR_LEVEL
    caught = sum(near or low < fitted.unsure_below for low, near in wrong)
    assert caught >= calibrate.UNSURE_CATCH * len(wrong)


def _trays(wrong_lowest, right_lowest, near_miss_wrong=0):
    return ([(False, low, False) for low in wrong_lowest]
            + [(False, 0.999, True)] * near_miss_wrong
            + [(True, low, False) for low in right_lowest])


def test_the_unsure_level_is_the_lowest_that_catches_four_wrong_trays_in_five():
    wrong = [0.55, 0.65, 0.72, 0.78, 0.82, 0.84, 0.86, 0.88, 0.91, 0.99]
    level, table = calibrate.unsure_level(_trays(wrong, [0.97] * 50))
    # 0.5-0.85 catch 0, 1, 2, 3, 4, 6 of 10; 0.9 catches 8
    assert level == 0.9
    assert table[0.85] == (6, 10, 0, 50) and table[0.9] == (8, 10, 0, 50)
    assert table[0.99] == (9, 10, 50, 50)


def test_a_doubted_near_miss_counts_as_caught_at_every_level():
    level, table = calibrate.unsure_level(
        _trays([0.72, 0.99, 0.99], [0.97] * 20, near_miss_wrong=7))
    assert level == 0.75  # the 7 near misses and the 0.72 tray: 8 of 10
    assert table[0.5][0] == 7


def test_too_few_wrong_trays_keep_the_default_and_none_catching_takes_the_highest():
    assert calibrate.unsure_level(_trays([0.6] * 3, [0.9] * 30))[0] is None
    assert calibrate.unsure_level(_trays([0.999] * 12, [0.9] * 30))[0] == max(
        calibrate.UNSURE_LEVELS)


def test_the_unsure_level_is_the_models():
    cands = (cube(200, 100, "red", score=0.95, sure=0.9),)  # 0.855
    lax = count_cubes(FRAME, detector=FakeDetector(detections(cands, FLOOR)))
    strict = count_cubes(FRAME, detector=FakeDetector(
        detections(cands, FLOOR), config=dataclasses.replace(CONFIG, unsure_below=0.9)))
    assert not lax.uncertain and lax.cubes[0].confidence == pytest.approx(0.855, abs=1e-3)
    assert strict.uncertain and strict.cubes[0].uncertain
    assert strict.doubts[0].kind == "not_a_cube"
