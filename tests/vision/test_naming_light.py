"""A cube's name that hangs on light the floor behind it cannot give is reported as a guess."""

from __future__ import annotations

import numpy as np

from vision.colours import FLOOR_ALBEDO, ColourModel, cube_colour, linear_from_lab
from vision.reading import COLOURS

MODEL = ColourModel.default()
OPEN = ["black", "red", "yellow", "white"]


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


def _frame(last: str, behind: float) -> list[dict]:
    floor = (0.3, 0.45, 0.6)
    cubes = [_reading(c, floor, seed=i) for i, c in enumerate(OPEN)]
    cubes.append(_reading(last, floor, behind=behind, seed=9))
    MODEL.name_cubes(cubes)
    return cubes


def test_a_brown_before_a_shadow_edge_is_a_guess():
    """Behind a brown cube the floor runs from its light into a shadow five times darker: the
    light on the cube may be anywhere in that range, and so may black's or red's. The open
    cubes' names are not in question."""
    cubes = _frame("brown", behind=0.2)
    assert cubes[-1]["light_unsure"]
    assert not any(c["light_unsure"] for c in cubes[:-1])


def test_an_evenly_lit_brown_or_a_blue_anywhere_is_not():
    """The same brown on an even floor, and a blue (no other colour within a factor of two of
    its light) before the shadow edge, keep their names within the light left open."""
    assert not _frame("brown", behind=1.0)[-1]["light_unsure"]
    cubes = _frame("blue", behind=0.2)
    assert COLOURS[int(np.argmax(cubes[-1]["p"]))] == "blue"
    assert not cubes[-1]["light_unsure"]
