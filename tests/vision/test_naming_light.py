"""A cube's name that hangs on light the floor behind it cannot give is reported as a guess."""

from __future__ import annotations

import numpy as np
from shaded import MODEL, cube_reading

from vision.reading import COLOURS

OPEN = ["black", "red", "yellow", "white"]


def _frame(last: str, behind: float) -> list[dict]:
    floor = (0.3, 0.45, 0.6)
    cubes = [cube_reading(c, floor, seed=i) for i, c in enumerate(OPEN)]
    cubes.append(cube_reading(last, floor, behind=behind, seed=9))
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
