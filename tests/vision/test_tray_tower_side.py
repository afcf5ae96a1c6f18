"""The tower's side re-found from its crease's ends (``tray._tower_side_by_ends``).

Cubes in the tower's mouth stand along that side and hide the middle of its crease; the side
found from its middle may lie on another straight edge (the rim, the tower's body) and the
outline is then no 16 x 10 rectangle in shape. The crease's ends at the walls stay in view.
"""

from __future__ import annotations

import cv2
import numpy as np

from vision.tray import SHAPE_TOL, _aspect_misfit, _edges, _tower_side_by_ends

PPC = 20  # px per cm, straight down
X0, TOP = 100, 120  # the floor's top-left corner
X1, Y1 = X0 + 16 * PPC, TOP + 10 * PPC


def _mouth_frame() -> tuple[np.ndarray, np.ndarray]:
    """A straight-down tray with the tower beyond its top side: the tower's body ends in a
    straight edge 0.7 cm beyond the crease, a row of dark cubes stands across the crease along
    the middle of the side, the crease shows only near the walls. Returns the frame and its
    grey copy (blurred as the finder blurs it)."""
    frame = np.empty((Y1 + 80, X1 + 100, 3), np.uint8)
    frame[:] = (60, 70, 95)  # table
    cv2.rectangle(frame, (X0 - 14, TOP - 14), (X1 + 13, Y1 + 13), (200, 215, 225), -1)  # rim
    cv2.rectangle(frame, (0, 0), (frame.shape[1] - 1, TOP - 14), (90, 60, 70), -1)  # tower
    cv2.rectangle(frame, (X0, TOP), (X1 - 1, Y1 - 1), (172, 208, 228), -1)  # floor
    for k in range(7):  # cubes in the mouth, across the crease, in the side's middle
        x = X0 + round(4.5 * PPC) + k * round(1.1 * PPC)
        y = TOP - 6 + (k % 2) * 4
        cv2.rectangle(frame, (x, y), (x + PPC - 1, y + PPC - 1), (40, 45, 50), -1)
    rng = np.random.default_rng(0)
    frame = np.clip(frame + rng.normal(0, 2.0, frame.shape), 0, 255).astype(np.uint8)
    gray = cv2.GaussianBlur(cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY), (5, 5), 0)
    return frame, gray


def _truth() -> np.ndarray:
    return np.float32([[X0, TOP], [X1 - 1, TOP], [X1 - 1, Y1 - 1], [X0, Y1 - 1]])


def test_a_tower_side_found_off_the_crease_is_moved_onto_its_ends():
    frame, gray = _mouth_frame()
    found = _truth().copy()
    found[:2, 1] -= 14  # on the tower's edge, 0.7 cm beyond the crease: a 16 x 10.7 outline
    assert _aspect_misfit(found, (frame.shape[1] / 2, frame.shape[0] / 2),
                          frame.shape[1]) > SHAPE_TOL
    got = _tower_side_by_ends(found, 0, _edges(frame), gray)
    assert got is not None
    assert np.abs(got - _truth()).max() < 3.0  # onto the crease at both ends


def test_an_outline_of_the_right_shape_is_left_as_found():
    frame, gray = _mouth_frame()
    assert _tower_side_by_ends(_truth(), 0, _edges(frame), gray) is None


def test_without_a_crease_at_the_ends_the_side_stays_as_found():
    # the floor's paint runs on under the tower (no crease, no rim): no line to move onto
    frame, _ = _mouth_frame()
    cv2.rectangle(frame, (X0, 0), (X1 - 1, TOP + 10), (172, 208, 228), -1)
    gray = cv2.GaussianBlur(cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY), (5, 5), 0)
    found = _truth().copy()
    found[:2, 1] -= 14
    assert _tower_side_by_ends(found, 0, _edges(frame), gray) is None
