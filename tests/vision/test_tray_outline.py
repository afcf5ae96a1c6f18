"""The drawn bench's outline diagnostic: how far the counter's floor outline is from the true
floor (``bench_drawn.outline_error``), and the table of right / wrong readings by that error."""

from __future__ import annotations

import bench_drawn
import cv2
import pytest
import synth


def _corners_px(scene, cm):
    pts = cv2.perspectiveTransform((cm * synth.S).reshape(-1, 1, 2), synth._camera(scene))
    return pts.reshape(-1, 2)


def test_outline_error_is_nil_on_the_true_floor():
    scene = bench_drawn.draw_case(0, 0).scene
    o = bench_drawn.outline_error(scene, synth.floor_corners_px(scene))
    assert o["corner_cm"] < 0.01 and o["cut"] < 0.001 and o["extra"] < 0.001
    assert bench_drawn.outline_error(scene, None) is None


def test_outline_error_measures_a_side_moved_in_and_out():
    """A far side 2 cm in (a wall's shadow edge taken for it) cuts a fifth of the floor off; a
    side 1 cm out (the rim's outer edge) takes in a tenth more than the floor."""
    for oblique in (False, True):
        scene = synth.Scene(oblique=oblique)
        cm = synth.floor_corners_cm().copy()
        cm[:2, 1] += 2.0
        o = bench_drawn.outline_error(scene, _corners_px(scene, cm))
        assert o["corner_cm"] == pytest.approx(2.0, abs=0.01)
        assert o["cut"] == pytest.approx(0.2, abs=0.005) and o["extra"] < 0.001
        cm = synth.floor_corners_cm().copy()
        cm[1:3, 0] += 1.0
        o = bench_drawn.outline_error(scene, _corners_px(scene, cm))
        assert o["corner_cm"] == pytest.approx(1.0, abs=0.01)
        assert o["extra"] == pytest.approx(1 / 17, abs=0.005) and o["cut"] < 0.001


def test_outline_table_counts_right_and_wrong_by_outline_error():
    def row(i, exact, corner_cm, oblique):
        factors = {f: "x" for f in bench_drawn.FACTORS}
        factors["oblique"] = oblique
        return {"i": i, "mode": "noref", "exact": exact, "factors": factors,
                "outline": {"corner_cm": corner_cm, "cut": 0.0, "extra": 0.0}}

    rows = [row(0, True, 0.3, "straight"), row(1, False, 2.0, "oblique"),
            row(2, True, 0.7, "oblique")]
    lines = bench_drawn.outline_lines(rows)
    noref = next(ln for ln in lines if ln.strip().startswith("noref"))
    assert "0.25-0.5 cm: 1/0" in noref and "0.5-1 cm: 1/0" in noref and "1-inf cm: 0/1" in noref
    oblique = next(ln for ln in lines if "oblique" in ln and "straight" not in ln
                   and "noref off" in ln)
    assert "noref off 2/2, wrong&off 1/1" in oblique
