"""The tray's geometry: a stable corner order, what four points can be a tray, "on the tray"."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from vision.errors import VisionError
from vision.tray import TAPPED_MARGIN, inside, order_corners, plausible, where

coord = st.floats(-50, 50, allow_nan=False)
W, H = 1152, 648
TRAY = np.array([[300, 150], [800, 150], [800, 460], [300, 460]], np.float32)  # 500 x 310


def _same_corners(a, b, atol):
    """The same four points in any order: each point of one has its own match in the other
    (no sorting, which float32 noise at a rounding edge can turn into a different order)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    left = list(range(len(b)))
    for point in a:
        dist = [np.abs(point - b[j]).max() for j in left]
        best = int(np.argmin(dist))
        if dist[best] > atol:
            return False
        left.pop(best)
    return not left


@given(st.permutations(range(4)), st.floats(100, 400), st.floats(60, 250), coord, coord)
def test_order_corners_any_order_same_quad_long_side_first(perm, w, h, dx, dy):
    rect = np.array([[0, 0], [w, 0], [w, h], [0, h]], float) + np.array([dx + 300, dy + 300])
    q = order_corners(rect[list(perm)])
    assert q.shape == (4, 2)
    assert _same_corners(q, rect, 1e-3)
    assert np.linalg.norm(q[1] - q[0]) >= np.linalg.norm(q[2] - q[1]) - 1e-3
    # the same quad whatever order it came in
    assert np.allclose(q, order_corners(rect), atol=1e-3)


@given(st.permutations(range(4)), st.floats(-60, 60), st.floats(150, 400), st.floats(0.3, 0.9))
def test_order_corners_of_a_turned_rectangle_run_clockwise_on_screen(perm, deg, long, share):
    a = np.radians(deg)
    u, v = np.array([np.cos(a), np.sin(a)]), np.array([-np.sin(a), np.cos(a)])
    half_l, half_s = long / 2, long * share / 2
    rect = np.array([[576, 324] + sx * half_l * u + sy * half_s * v
                     for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1))])
    q = order_corners(rect[list(perm)])
    assert _same_corners(q, rect, 1e-2)
    # clockwise on screen (y down): the shoelace sum is positive
    area2 = sum(q[i][0] * q[(i + 1) % 4][1] - q[(i + 1) % 4][0] * q[i][1] for i in range(4))
    assert area2 > 0
    assert np.linalg.norm(q[1] - q[0]) >= np.linalg.norm(q[2] - q[1]) - 1e-2


@pytest.mark.parametrize("bad", [
    [[0, 0], [1, 0], [1, 1]],
    [[0, 0], [1, 0], [1, 1], [0, 1], [2, 2]],
    "four corners",
    [[0, 0], [1, 0], [1, float("nan")], [0, 1]],
    [[0, 0], [1, 0], [1, float("inf")], [0, 1]],
])
def test_order_corners_refuses_what_is_not_four_points(bad):
    with pytest.raises(VisionError, match="corners"):
        order_corners(bad)


def test_a_tray_seen_from_above_is_plausible():
    assert plausible(TRAY, W, H)
    assert plausible(TRAY[[2, 0, 3, 1]], W, H)  # in any order
    # a camera at an angle: the far side shorter
    assert plausible(np.array([[380, 150], [720, 150], [800, 460], [300, 460]]), W, H)


def test_a_bow_tie_is_read_as_the_quad_its_points_make_and_a_dart_is_not_a_tray():
    # four points given crosswise (a bow-tie) are ordered around their centre: the rectangle
    bow = TRAY[[0, 2, 1, 3]]
    assert plausible(bow, W, H)
    assert np.allclose(order_corners(bow), order_corners(TRAY))
    # one point inside the triangle of the others: no ordering makes that a convex floor
    dart = np.array([[300, 150], [800, 150], [450, 250], [300, 460]], np.float32)
    assert not plausible(dart, W, H)


def test_a_tiny_quad_is_not_a_tray():
    tiny = np.array([[500, 300], [540, 300], [540, 325], [500, 325]], np.float32)
    assert not plausible(tiny, W, H)


def test_a_quad_whose_opposite_sides_differ_too_much_is_not_a_tray():
    wedge = np.array([[300, 150], [800, 150], [575, 460], [525, 460]], np.float32)
    assert not plausible(wedge, W, H)


def test_inside_the_tray_and_a_margin_beyond_it():
    long_side = 500
    assert inside(TRAY, 550, 300)
    assert inside(TRAY, 300, 150)  # on a corner
    just_out = 800 + 0.5 * TAPPED_MARGIN * long_side
    assert inside(TRAY, just_out, 300)
    far_out = 800 + 2 * TAPPED_MARGIN * long_side
    assert not inside(TRAY, far_out, 300)
    assert not inside(TRAY, just_out, 300, margin=0.0)
    assert inside(TRAY, far_out, 300, margin=3 * TAPPED_MARGIN)
    assert not inside(TRAY, 50, 50)


@given(st.permutations(range(4)), st.floats(0, W), st.floats(0, H))
def test_inside_does_not_depend_on_the_corners_order(perm, x, y):
    assert inside(TRAY[list(perm)], x, y) == inside(TRAY, x, y)


@pytest.mark.parametrize("x, y, words", [
    (10, 10, "the top left of the picture"),
    (576, 324, "the middle of the picture"),
    (1100, 324, "the right of the picture"),
    (576, 600, "the bottom of the picture"),
    (1151, 647, "the bottom right of the picture"),
    (W, H, "the bottom right of the picture"),
])
def test_where_is_said_in_thirds_of_the_picture(x, y, words):
    assert where(x, y, W, H) == words
