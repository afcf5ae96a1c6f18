"""Cube models fitted to a blob (vision.counter._fit_cubes, fitted) on drawn masks.

A straight-down view without a known lens: each model is a 1 cm base square (20 px) plus the
halo, so the expected answers follow from the drawing alone.
"""

from __future__ import annotations

import cv2
import numpy as np
import synth
from flat_blobs import PPC, blob_of, flat_view

from vision.counter import count_cubes
from vision.cubefit import _fit_cubes, fitted


def _mask(view, *boxes):
    """A blob of axis-aligned boxes (x0, y0, x1, y1), rectified px, ends exclusive."""
    w, h = view.size
    m = np.zeros((h, w), bool)
    for x0, y0, x1, y1 in boxes:
        m[max(0, y0):y1, max(0, x0):x1] = True
    return m


def _fit(view, mask, faces=()):
    return _fit_cubes(mask, (0, 0), view, np.array(faces, np.float64).reshape(-1, 2))


CUBE = 23  # px: the 1 cm base plus the halo on both sides


def test_a_shadow_remnant_is_no_cube_but_a_half_hidden_cube_is():
    view = flat_view()
    # a cube and a strip of its shadow a fifth of a cube wide beside it
    shadow = _mask(view, (100, 100, 100 + CUBE, 100 + CUBE), (123, 100, 128, 100 + CUBE))
    centres, miss, _ = _fit(view, shadow)
    assert len(centres) == 1 and miss < 0.25
    # a second cube 0.7 of it showing beside the first (the rest hidden behind it)
    hidden = _mask(view, (100, 100, 100 + CUBE, 100 + CUBE), (123, 100, 139, 100 + CUBE))
    centres, _, weakest = _fit(view, hidden)
    assert len(centres) == 2 and weakest >= 0.5


def test_a_cube_cut_by_the_views_edge_is_judged_by_what_the_view_shows():
    view = flat_view()
    # a strip 9 px deep (0.4 of a cube) at the view's top edge: the rest of that cube lies
    # beyond the view, so what the view shows of it is all blob
    strip = (120, 0, 120 + CUBE, 9)
    centres, _, weakest = _fit(view, _mask(view, strip))
    assert len(centres) == 1 and weakest > 0.75  # decisively one cube
    assert centres[0, 1] < 9  # the footprint's centre in the view
    # the same strip in the middle of the view: a shadow's or a halo's size, not a cube
    centres, miss, _ = _fit(view, _mask(view, (120, 100, 120 + CUBE, 109)))
    assert len(centres) == 0 and miss < 0.5


def test_top_faces_place_their_cubes():
    view = flat_view()
    pair = _mask(view, (150, 120, 150 + 2 * CUBE, 120 + CUBE))  # two cubes side by side
    faces = [(161.5, 131.5), (184.5, 131.5)]
    centres, _, _ = _fit(view, pair, faces)
    assert len(centres) == 2
    for fx, fy in faces:
        assert np.hypot(centres[:, 0] - fx, centres[:, 1] - fy).min() < 3


def test_the_fit_is_heard_only_when_decisive():
    view = flat_view()
    area = float(CUBE * CUBE)
    clear = _mask(view, (100, 100, 100 + CUBE, 100 + CUBE), (123, 100, 128, 100 + CUBE))
    b = blob_of(clear)
    fit = fitted(b, (0, 0), view, None, b.centroid, area)
    assert fit is not None and len(fit) == 1
    # a remnant of 0.45 of a cube: near the bar, so the fit says nothing
    near = _mask(view, (100, 100, 100 + CUBE, 100 + CUBE), (123, 100, 133, 100 + CUBE))
    b = blob_of(near)
    assert fitted(b, (0, 0), view, None, b.centroid, area) is None


# --- a part brighter than the floor beside a dark top face is another cube (vision.counter) ---

def _scene(other: float):
    """A black cube's top (face at (20, 20)) and, beyond its reach, a strip of ``other``
    (linear light) on a floor of 0.5: rectified crops as ``_cubes_in`` sees them."""
    mask = np.zeros((40, 60), bool)
    mask[8:32, 8:32] = True  # the black cube's top and sides
    mask[8:32, 32:44] = True  # what lies beside it, 0.6 cm wide
    rect = np.full((40, 60, 3), 0.5, np.float32)
    rect[8:32, 8:32] = 0.03
    rect[8:32, 32:44] = other
    return mask, rect, np.full((40, 60, 3), 0.5, np.float32)


def test_a_bright_part_beside_a_dark_top_is_another_cube():
    from vision.counter import _brighter_beyond
    mask, rect, floor = _scene(0.8)  # a white cube's part, brighter than the floor
    got = _brighter_beyond(mask, (20.0, 20.0), rect, floor, PPC)
    assert got is not None and got[0] > 32
    # the same part as dark as a shadow, or lit like the floor: nothing but a cube's own
    for other in (0.25, 0.52):
        mask, rect, floor = _scene(other)
        assert _brighter_beyond(mask, (20.0, 20.0), rect, floor, PPC) is None


def test_a_cubes_own_lit_side_is_not_another_cube():
    from vision.counter import _brighter_beyond
    mask, rect, floor = _scene(0.7)
    rect[8:32, 8:32] = (0.4, 0.45, 0.3)  # a pale top: its side may well be brighter than the floor
    assert _brighter_beyond(mask, (20.0, 20.0), rect, floor, PPC) is None


# --- a lamp's hard, cube-wide shadow beside a lone cube (end to end, drawn scene) ---

def _with_hard_shadow(scene, dx_cm: float, dy_cm: float, dark: float):
    """The scene's frame with its one cube's hard shadow (a point lamp) drawn on the floor:
    the cube's base swept by (dx, dy) cm, the floor there darkened to ``dark``."""
    frame, truth = synth.render(scene)
    ref, _ = synth.render(scene, with_cubes=False)
    _, x, y, deg = scene.cubes[0]
    x0, y0 = synth.TRAY_ORIGIN_CM
    sq = synth._square((x0 + x) * synth.S, (y0 + y) * synth.S, deg, 0.5 * synth.S)
    swept = np.vstack([sq, sq + np.array([dx_cm, dy_cm]) * synth.S]).astype(np.float32)
    hull = cv2.convexHull(swept).reshape(-1, 1, 2)
    px = cv2.perspectiveTransform(hull, synth._camera(scene)).reshape(-1, 2)
    m = np.zeros(frame.shape[:2], np.uint8)
    cv2.fillPoly(m, [np.round(px).astype(np.int32)], 1)
    floor = np.abs(frame.astype(int) - ref.astype(int)).max(axis=2) < 25  # not the cube
    sh = (m > 0) & floor
    frame[sh] = (frame[sh] * dark).astype(np.uint8)
    return frame, ref, truth


def test_a_hard_shadow_read_as_a_black_cube_says_so():
    scene = synth.Scene(cubes=[("red", 8.0, 5.0, 15.0)])
    frame, ref, truth = _with_hard_shadow(scene, 0.9, 0.5, 0.35)
    reading = count_cubes(frame, ref)
    assert reading.counts["red"] == 1
    if reading.counts != synth.counts(truth):
        # as dark as black paint and as wide as a cube: it may be counted, never quietly
        assert reading.uncertain
        assert any("shadow" in w for w in reading.warnings)


def test_a_blob_whose_area_and_cube_models_agree_is_not_flagged():
    """Oblique drawn trays where a blob's area is off its count (sides seen at a slant) but the
    projected cube models decisively give the same count: two independent counts agree, so
    the reading does not ask the players about that blob."""
    for colours, seed in ((["yellow", "yellow", "blue", "black", "brown", "brown"], 17),
                          (["yellow", "black", "blue", "red", "red", "yellow"], 2)):
        scene = synth.Scene(cubes=synth.scatter(colours, seed=seed), oblique=True, seed=seed)
        image, truth = synth.render(scene)
        empty, _ = synth.render(scene, with_cubes=False)
        reading = count_cubes(image, empty)
        assert reading.counts == synth.counts(truth)
        assert not [w for w in reading.warnings if "could not be split" in w]


def test_under_two_thirds_of_a_cube_counted_as_one_says_so():
    """A white cube on the pale print: its top looks like the floor, only its shaded side and
    shadow differ, under two thirds of a cube. Counted as one and flagged, the players are
    told that only part of a cube shows there, not that a blob could not be split (nothing
    was)."""
    scene = synth.Scene(cubes=[("white", 5.0, 4.0, 10.0), ("red", 11.0, 6.0, 30.0)],
                        print_rgb=synth.PRINTS_RGB["pale"], seed=1)
    image, _ = synth.render(scene)
    empty, _ = synth.render(scene, with_cubes=False)
    reading = count_cubes(image, empty)
    assert sum(reading.counts.values()) == 2
    assert reading.uncertain
    assert any(w.startswith("only part of a cube shows near") for w in reading.warnings)
    assert not [w for w in reading.warnings if "could not be split" in w]
