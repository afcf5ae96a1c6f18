"""Property tests (hypothesis) for the small pure pieces."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from vision.counter import _apply_bounds
from vision.reading import COLOURS
from vision.tray import order_corners, view_from_corners

coord = st.floats(-50, 50, allow_nan=False)


@given(st.permutations(range(4)), st.floats(100, 400), st.floats(60, 250), coord, coord)
def test_order_corners_any_order_same_quad_long_side_first(perm, w, h, dx, dy):
    rect = np.array([[0, 0], [w, 0], [w, h], [0, h]], float) + np.array([dx + 300, dy + 300])
    q = order_corners(rect[list(perm)])

    def rows(a):
        return np.array(sorted(map(tuple, np.asarray(a, float))))

    assert np.allclose(rows(q), rows(rect), atol=1e-3)
    assert np.linalg.norm(q[1] - q[0]) >= np.linalg.norm(q[2] - q[1]) - 1e-6


@given(st.permutations(range(4)))
def test_view_maps_its_corners_back(perm):
    pts = np.array([[120, 80], [900, 110], [860, 560], [150, 520]], float)
    view = view_from_corners(pts[list(perm)])
    assert np.allclose(view.rect_to_image(view.image_to_rect(pts)), pts, atol=1e-3)


@settings(max_examples=60)
@given(
    st.lists(st.lists(st.floats(0.01, 1.0), min_size=7, max_size=7), min_size=1, max_size=12),
    st.lists(st.integers(0, 4), min_size=7, max_size=7),
)
def test_bounds_are_met_whenever_they_can_be(probs, limits):
    cubes = [{"p": np.array(p) / np.sum(p)} for p in probs]
    bounds = dict(zip(COLOURS, limits, strict=True))
    warnings: list[str] = []
    _apply_bounds(cubes, bounds, warnings)
    counts = dict.fromkeys(COLOURS, 0)
    for c in cubes:
        counts[COLOURS[int(np.argmax(c["p"]))]] += 1
    if len(cubes) <= sum(limits):
        assert all(counts[c] <= bounds[c] for c in COLOURS) or warnings
    else:
        assert warnings  # more cubes than the game allows: said so
