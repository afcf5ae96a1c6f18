"""Without a reference: where the floor estimate from the frame errs, and what the masks then
do (``vision.segment.cube_masks`` with ``have_reference=False`` and a floor model given)."""

from __future__ import annotations

import cv2
import numpy as np

from vision.colours import to_linear
from vision.segment import cube_masks

PX = 20  # px per cm, as in the counter
BOX = (20, 20, 340, 220)  # floor box of a 360 x 240 canvas
LIT = np.array((150, 180, 210), np.float32)
SHADE = np.array((0.55, 0.45, 0.4), np.float32)  # the room's light only: tinted


def _edge_y(xx, shift: int = 0):
    """Where a shadow's edge runs: diagonally, crenellated (a railing's shadow, say), so that
    no straight-edge rule can tell it from a cube's outline."""
    teeth = 8.0 * (np.abs(((xx / 30.0) % 1.0) - 0.5) * 2.0)
    return 40 + shift + 0.45 * (xx - 20) + teeth


def _lit_and_shadowed(shift: int) -> np.ndarray:
    """A floor under a lamp whose hard shadow edge lies ``shift`` px further down."""
    yy, xx = np.mgrid[:240, :360]
    img = np.empty((240, 360, 3), np.float32)
    img[:] = LIT
    img[yy < _edge_y(xx, shift)] *= SHADE
    return img


def _noisy(img, seed=0, sd=2.0):
    rng = np.random.default_rng(seed)
    return np.clip(img + rng.normal(0, sd, img.shape), 0, 255).astype(np.uint8)


def _white_cube(img, cx, cy):
    box = cv2.boxPoints(((cx + 3, cy + 4), (PX, PX), 20.0)).astype(np.int32)
    cv2.fillConvexPoly(img, box, (150, 150, 150), cv2.LINE_AA)
    box = cv2.boxPoints(((cx, cy), (PX, PX), 20.0)).astype(np.int32)
    cv2.fillConvexPoly(img, box, (250, 252, 252), cv2.LINE_AA)


def test_lit_floor_the_estimate_calls_shadow_is_not_a_cube_but_a_white_cube_is():
    # the estimate put the lamp's shadow edge 0.3 cm too low (it is only as sharp as its
    # fill's reach): a band of lit floor read against shadowed floor is a strong brightening
    frame = _lit_and_shadowed(0)
    _white_cube(frame, 250, 190)  # in the lit part, away from the edge
    frame = _noisy(frame)
    bg = to_linear(_lit_and_shadowed(6).astype(np.uint8))
    strong, _ = cube_masks(frame, bg, PX, BOX, have_reference=False)
    yy, xx = np.mgrid[:240, :360]
    band = (yy < _edge_y(xx)) ^ (yy < _edge_y(xx, 6))
    band[:, :40] = band[:, 320:] = False
    assert np.count_nonzero(strong[band]) < 0.05 * np.count_nonzero(band)
    assert strong[190, 250]
