"""Without the empty tray: a lone bar of side and shadow is a cube (vision.counter._side_bar).

A cube whose top reads like the floor (a white cube on a pale print, a cube in a glare) shows
only its shaded side and its shadow, a bar thinner than a cube; the counter used to drop it as
a sliver. Far from every other blob (a shadow's reach) and clear of the sides it is counted.
"""

from __future__ import annotations

import numpy as np
import synth

import vision.counter as counter
from vision.counter import count_cubes


def _with_masks(monkeypatch, draw):
    """Count an empty drawn tray whose cube mask is ``draw(floor_box, px_per_cm, shape)``."""

    def fake(rect, bg_lin, px_per_cm, floor_box, **kw):
        strong = draw(floor_box, px_per_cm, rect.shape[:2]).astype(np.uint8)
        return strong, np.zeros_like(strong)

    monkeypatch.setattr(counter, "cube_masks", fake)
    img, _ = synth.render(synth.Scene(cubes=[]), with_cubes=False)
    return count_cubes(img)


def _bar_and_cube(gap_cm):
    def draw(box, ppc, shape):
        x0, y0 = box[:2]
        m = np.zeros(shape, bool)
        cx, cy = x0 + round(5 * ppc), y0 + round(5 * ppc)
        m[cy: cy + round(1.2 * ppc), cx: cx + round(1.2 * ppc)] = True  # a lone cube's blob
        bx = cx + round((1.2 + gap_cm) * ppc)
        m[cy: cy + round(0.35 * ppc), bx: bx + round(1.0 * ppc)] = True  # a side and shadow
        return m
    return draw


def test_a_lone_bar_of_side_and_shadow_is_a_cube(monkeypatch):
    reading = _with_masks(monkeypatch, _bar_and_cube(4.0))
    assert reading.total == 2
    assert any("sides and shadow" in w for w in reading.warnings)  # always said


def test_a_bar_within_a_shadows_reach_of_a_cube_is_not_counted_but_said(monkeypatch):
    # a lamp's hard shadow of the cube beside it looks the same
    reading = _with_masks(monkeypatch, _bar_and_cube(0.8))
    assert reading.total == 1
    assert any("bar of side and shadow" in w for w in reading.warnings)


def test_a_bar_along_a_side_is_the_crease_not_a_cube(monkeypatch):
    def draw(box, ppc, shape):
        m = np.zeros(shape, bool)
        x0, y1 = box[0], box[3]
        m[y1 - round(0.35 * ppc): y1, x0 + 100: x0 + 100 + round(1.0 * ppc)] = True
        return m
    assert _with_masks(monkeypatch, draw).total == 0
