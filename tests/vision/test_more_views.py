"""Reading the other views only when the plain view is unsure (``more_views_below``): which
readings count as sure, that the detector then keeps the plain view's reading or averages every
view, and how training chooses the level."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from fake_detector import CONFIG, cube, detections

from vision.detector import (
    DOUBT_SHARE,
    MODEL_DIR,
    CubeDetector,
    ModelConfig,
    decode,
    from_view,
    sure,
)
from vision.reading import COLOURS
from vision.train import calibrate
from vision.train.data import LabelledCube, Sample

W, H = 640, 360
FLOOR = [[120, 60], [520, 60], [520, 300], [120, 300]]
LEVEL = dataclasses.replace(CONFIG, cube_threshold=0.5, more_views_below=0.9)


def test_confident_cubes_on_a_found_tray_are_sure():
    found = detections([cube(200, 150, "red", 0.99, 0.99), cube(300, 150, "blue", 0.98, 0.99)],
                       FLOOR)
    assert sure(found, LEVEL, W, H)
    assert sure(detections([], FLOOR), LEVEL, W, H)  # an empty tray, seen clearly


@pytest.mark.parametrize("why, found", [
    ("a cube below the level", detections([cube(200, 150, "red", 0.99, 0.6, "brown")], FLOOR)),
    ("a candidate just below the count",
     detections([cube(200, 150, "red", 0.5 * (DOUBT_SHARE + 1) / 2, 0.99)], FLOOR)),
    ("no outline", detections([cube(200, 150, "red", 0.99, 0.99)])),
    ("an outline no tray has", detections([], [[0, 0], [5, 0], [5, 5], [0, 5]])),
])
def test_a_doubtful_first_pass_is_not_sure(why, found):
    assert not sure(found, LEVEL, W, H), why


def test_faint_candidates_and_cubes_outside_the_tray_do_not_matter():
    found = detections([cube(200, 150, "red", 0.99, 0.99),
                        cube(400, 150, "red", 0.5 * DOUBT_SHARE * 0.5, 0.4),
                        cube(600, 20, "green", 0.55, 0.5, outside=True)], FLOOR)
    assert sure(found, LEVEL, W, H)


def test_without_a_level_nothing_is_sure():
    found = detections([cube(200, 150, "red", 0.99, 0.99)], FLOOR)
    assert not sure(found, dataclasses.replace(LEVEL, more_views_below=None), W, H)


def _model(folder: Path, **changes) -> CubeDetector:
    folder.mkdir()
    shutil.copy(MODEL_DIR / "model.onnx", folder / "model.onnx")
    config = json.loads((MODEL_DIR / "model.json").read_text())
    (folder / "model.json").write_text(json.dumps({**config, **changes}))
    return CubeDetector(folder)


def test_the_detector_keeps_a_sure_first_pass_and_averages_an_unsure_one(tmp_path,
                                                                          monkeypatch):
    picture = np.random.default_rng(3).integers(0, 256, (324, 576, 3), dtype=np.uint8)
    always = _model(tmp_path / "always", views=["plain", "turned"], more_views_below=None)
    averaged_maps, scale = always.maps(picture, None)
    valid = (576 * scale, 324 * scale)
    once = _model(tmp_path / "once", views=["plain"], more_views_below=None)
    first_maps, _ = once.maps(picture, None)
    first = decode(first_maps, once.config, scale, valid)
    both = decode(averaged_maps, always.config, scale, valid)
    assert not _same(first, both)
    turned_maps = from_view(_turned_pass(once, picture), "turned", once.config.heads)
    np.testing.assert_allclose(averaged_maps, (first_maps + turned_maps) / 2, atol=1e-4)
    cascade = _model(tmp_path / "cascade", views=["plain", "turned"], more_views_below=0.5)
    # noise shows no tray outline: never sure, so both passes, as the always-averaging model
    assert _same(cascade.detect(picture, None), both)
    assert cascade.last_passes == 2
    asked = []
    monkeypatch.setattr("vision.detector.sure", lambda found, config, w, h: not asked.append(
        (_same(found, first), config.more_views_below, w, h)))
    assert _same(cascade.detect(picture, None), first)
    assert asked == [(True, 0.5, 576, 324)]
    assert cascade.last_passes == 1


def test_an_unsure_plain_view_reads_the_other_views_too(tmp_path):
    picture = np.random.default_rng(4).integers(0, 256, (324, 576, 3), dtype=np.uint8)
    every = ["plain", "turned", "mirrored", "flipped"]
    always = _model(tmp_path / "always", views=every, more_views_below=None)
    cascade = _model(tmp_path / "cascade", views=every, more_views_below=0.5)
    # noise shows no tray outline: never sure, so the plain view's pass and then the other
    # three give what reading all four at once gives, frame after frame (OpenCV 4.11 once
    # failed here when the three went through as one batch after a batch of one)
    for _ in range(2):
        assert _same(cascade.detect(picture, None), always.detect(picture, None))
        assert cascade.last_passes == always.last_passes == 4


def _turned_pass(detector: CubeDetector, picture: np.ndarray) -> np.ndarray:
    maps, _ = detector.maps(np.ascontiguousarray(picture[::-1, ::-1]), None)
    return maps


def _same(a, b) -> bool:
    return (len(a.candidates) == len(b.candidates)
            and all(abs(x.score - y.score) < 1e-5 and abs(x.x - y.x) < 1e-3
                    for x, y in zip(a.candidates, b.candidates, strict=True)))


def _validation(first_wrong_when_sure: bool, strength: float):
    """Two validation trays of one red cube each: the averaged maps read both right; the
    first pass reads the first tray with a red colour logit of ``strength`` (right, or with a
    second cube too when ``first_wrong_when_sure``) and the second at confidence ~0.4 (right,
    never sure)."""
    config = dataclasses.replace(CONFIG, input_width=128, input_height=96, cube_threshold=0.5,
                                 candidate_threshold=0.2)
    heads = config.heads
    gh, gw = 24, 32

    def maps(cubes):
        m = np.zeros((len(heads), gh, gw), np.float32)
        m[[heads.index("cube"), heads.index("outside"), heads.index("corner")]] = -8.0
        for r, c in ((2, 2), (2, 29), (21, 29), (21, 2)):
            m[heads.index("corner"), r, c] = 6.0
        for (r, c), strength in cubes:
            m[heads.index("cube"), r, c] = 9.0
            m[heads.index("colour:2"), r, c] = strength
        return m

    samples, items, averaged, once = [], [], [], []
    for i, logit in enumerate((strength, 1.5)):
        counts = dict.fromkeys(COLOURS, 0)
        counts["red"] = 1
        samples.append(Sample(Path(f"s{i}/drop01.jpg"), f"s{i}", counts,
                              (LabelledCube(2, 42.0, 42.0, True, 5000),), None, None, (128, 96)))
        items.append(SimpleNamespace(image=np.zeros((96, 128, 3), np.uint8), scale=1.0))
        averaged.append(maps([((10, 10), 6.0)]))
        extra = [((15, 20), logit)] if i == 0 and first_wrong_when_sure else []
        once.append(maps([((10, 10), logit), *extra]))
    return config, samples, items, {True: averaged}, {True: once}


def _chosen(wrong: bool, strength: float,
            max_more: float | None = None) -> tuple[float | None, str]:
    config, samples, items, averaged, once = _validation(wrong, strength)
    said = []
    chosen = calibrate.views_level(config, samples, items, averaged, once, log=said.append,
                                   max_more=max_more)
    assert isinstance(chosen, ModelConfig)
    return chosen.more_views_below, said[0]


def test_training_keeps_the_lowest_level_that_loses_no_validation_tray():
    # the first tray's first pass is right at confidence ~0.94: kept alone up to 0.9
    level, said = _chosen(False, 4.6)
    assert level == calibrate.VIEW_LEVELS[0]
    assert "0.9:2,1" in said and "0.95:2,2" in said  # both trays exact; one or two more
    # right at ~0.94 but wrong with it (a cube too many): 0.9 would lose it, 0.95 does not
    assert _chosen(True, 4.6)[0] == 0.95


def test_training_reads_both_always_when_every_level_loses_a_tray():
    # a wrong first pass surer than the highest level
    level, said = _chosen(True, 9.0)
    assert level is None
    assert "below None" in said


def test_a_level_that_sends_too_many_readings_to_more_views_gives_way_to_one_within_budget():
    # wrong at ~0.94 alone: only 0.95 and up lose no tray, and they send both trays (100 %) to
    # more views; within half, every level reads one tray exactly: the lowest of them
    level, said = _chosen(True, 4.6, max_more=0.5)
    assert level == calibrate.VIEW_LEVELS[0]
    assert "0.95 would read more views for over 50%" in said
    assert said.endswith(f"so {level}, the most exact within that")
    # always every view (no level loses none) is over the budget too
    assert _chosen(True, 9.0, max_more=0.5)[0] == calibrate.VIEW_LEVELS[0]


def test_a_level_within_budget_is_kept_and_no_level_within_it_gives_the_fewest_more_views():
    level, said = _chosen(True, 4.6, max_more=1.0)  # both trays: within a budget of all
    assert level == 0.95 and "would read" not in said
    level, said = _chosen(False, 4.6, max_more=0.25)  # the unsure tray needs more at any level
    assert level == calibrate.VIEW_LEVELS[0]
    assert said.endswith("the fewest tried")


def test_training_keeps_to_the_speed_budget_by_default():
    """The default budget is the one the speed target sets: under half the readings."""
    assert 0 < calibrate.MAX_MORE_VIEWS < 0.5
    level, _ = _chosen(False, 4.6, max_more=calibrate.MAX_MORE_VIEWS)
    assert level == calibrate.VIEW_LEVELS[0]  # one of two trays is already over 40 %


def test_a_counting_threshold_at_an_end_of_the_range_tried_is_warned_of():
    from vision.train.calibrate import THRESHOLDS, threshold_warning

    assert threshold_warning(0.5, 7) is None
    for end in (THRESHOLDS[0], THRESHOLDS[-1]):
        warning = threshold_warning(end, 7)
        assert warning and f"threshold {end}" in warning and "7 validation set-ups" in warning
