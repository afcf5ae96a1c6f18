"""Each cube's top has its own share of the light: the names need not keep the lightness order."""

from __future__ import annotations

import numpy as np

from vision.colours import ColourModel
from vision.reading import COLOURS

# Cube / floor ratios (B, G, R) as a render on a dark wood print shows them: every cube reads
# about three times lighter and bluer than on the pale print. One black top reads lighter
# than the others (L 55 against 31-38), lighter than the brown one.
FRAME = [
    ("black", (0.623, 0.304, 0.157)), ("blue", (4.972, 0.77, 0.139)),
    ("black", (1.398, 0.707, 0.373)), ("green", (1.711, 1.983, 0.388)),
    ("green", (1.109, 1.837, 0.21)), ("black", (0.434, 0.199, 0.106)),
    ("green", (1.389, 1.865, 0.321)), ("green", (1.101, 1.908, 0.255)),
    ("blue", (4.38, 0.94, 0.205)), ("brown", (0.616, 0.509, 0.585)),
]


def test_a_light_black_does_not_make_a_darker_brown_black():
    """The brown's ratio is as high in red as in blue, the blacks' a quarter: it is no black.
    Names that had to keep the measured lightness order (no cube named black lighter than one
    named brown) made it black."""
    cubes = [{"ratio": np.array(r, np.float32)} for _, r in FRAME]
    ColourModel.default().name_cubes(cubes)
    names = [COLOURS[int(np.argmax(c["p"]))] for c in cubes]
    assert names == [c for c, _ in FRAME]
