"""The frame's print and light are fitted to the cubes whose floor reading is their own light."""

from __future__ import annotations

import numpy as np

from vision.colours import FLOOR_ALBEDO, ColourModel, cube_colour, linear_from_lab
from vision.reading import COLOURS

MODEL = ColourModel.default()


def _reading(colour: str, floor_bgr, behind: float = 1.0, n: int = 200, seed: int = 0):
    """A cube lit like ``floor_bgr`` (linear); the floor the camera sees behind half of its
    pixels is ``behind`` times that (a shadow edge behind the cube, as under a tower's mouth)."""
    rng = np.random.default_rng(seed)
    floor = np.asarray(floor_bgr, np.float32)
    paint = np.maximum(linear_from_lab(np.array(MODEL.refs[colour]))[0], 1e-4)
    px = np.clip(paint / FLOOR_ALBEDO * floor * rng.uniform(0.85, 1.0, (n, 1)), 0, 1)
    fl = np.tile(floor, (n, 1)) * rng.uniform(0.98, 1.02, (n, 1))
    fl[: n // 2] *= behind
    return dict(cube_colour(px.astype(np.float32), np.clip(fl, 0, 1).astype(np.float32)))


def test_cubes_over_a_shadow_edge_do_not_set_the_frames_light():
    """Three cubes in the open on an even floor, five at the tower's mouth where the floor
    behind them (what the camera sees past their tops) lies in the mouth's deep shadow, five
    times darker than the light on the cubes: their ratios read several times too light. Fitted
    to all eight, the frame's light factor follows the five and the open cubes' names go."""
    floor = (0.3, 0.45, 0.6)
    open_ = ["black", "brown", "red", "black"]
    mouth = ["blue", "red", "yellow", "brown", "black"]
    cubes = [_reading(c, floor, seed=i) for i, c in enumerate(open_)]
    cubes += [_reading(c, floor, behind=0.2, seed=10 + i) for i, c in enumerate(mouth)]
    assert all(c["floor_spread"] > np.log(2.0) for c in cubes[len(open_):])
    MODEL.name_cubes(cubes)
    names = [COLOURS[int(np.argmax(c["p"]))] for c in cubes]
    assert names[: len(open_)] == open_
    assert np.allclose(cubes[0]["gains"], 1.0, rtol=0.25)
