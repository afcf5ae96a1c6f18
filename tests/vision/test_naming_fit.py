"""The frame's print and light are fitted to the cubes whose floor reading is their own light."""

from __future__ import annotations

import numpy as np
from shaded import MODEL, cube_reading

from vision.reading import COLOURS


def test_cubes_over_a_shadow_edge_do_not_set_the_frames_light():
    """Three cubes in the open on an even floor, five at the tower's mouth where the floor
    behind them (what the camera sees past their tops) lies in the mouth's deep shadow, five
    times darker than the light on the cubes: their ratios read several times too light. Fitted
    to all eight, the frame's light factor follows the five and the open cubes' names go."""
    floor = (0.3, 0.45, 0.6)
    open_ = ["black", "brown", "red", "black"]
    mouth = ["blue", "red", "yellow", "brown", "black"]
    cubes = [cube_reading(c, floor, seed=i) for i, c in enumerate(open_)]
    cubes += [cube_reading(c, floor, behind=0.2, seed=10 + i) for i, c in enumerate(mouth)]
    assert all(c["floor_spread"] > np.log(2.0) for c in cubes[len(open_):])
    MODEL.name_cubes(cubes)
    names = [COLOURS[int(np.argmax(c["p"]))] for c in cubes]
    assert names[: len(open_)] == open_
    assert np.allclose(cubes[0]["gains"], 1.0, rtol=0.25)
