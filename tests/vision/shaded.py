"""A drawn cube's pixels and the floor behind them, for the colour-naming tests."""

from __future__ import annotations

import numpy as np

from vision.colours import FLOOR_ALBEDO, ColourModel, cube_colour, linear_from_lab

MODEL = ColourModel.default()


def cube_reading(colour: str, floor_bgr, behind: float = 1.0, n: int = 200, seed: int = 0):
    """A cube lit like ``floor_bgr`` (linear); the floor the camera sees behind half of its
    pixels is ``behind`` times that (a shadow edge behind the cube, as under a tower's mouth)."""
    rng = np.random.default_rng(seed)
    floor = np.asarray(floor_bgr, np.float32)
    paint = np.maximum(linear_from_lab(np.array(MODEL.refs[colour]))[0], 1e-4)
    px = np.clip(paint / FLOOR_ALBEDO * floor * rng.uniform(0.85, 1.0, (n, 1)), 0, 1)
    fl = np.tile(floor, (n, 1)) * rng.uniform(0.98, 1.02, (n, 1))
    fl[: n // 2] *= behind
    return dict(cube_colour(px.astype(np.float32), np.clip(fl, 0, 1).astype(np.float32)))
