"""The default references agree with one another: each is read in the light the others set."""

from __future__ import annotations

import numpy as np
import pytest

from vision.colours import ColourModel, lab_from_linear, linear_from_lab
from vision.fitcolours import left_out
from vision.reading import COLOURS

MODEL = ColourModel.default()

# s001/drop02 of trays-rendered with its empty tray (cube / floor ratios, B G R): two greens, a
# yellow, a white and a brown on the wood print, unclipped. The white was the frame's only
# measure of the print's tint and its reference called the wood untinted: the brown read black.
DROP02 = [
    ("white", (7.513, 4.319, 2.232)),
    ("green", (0.971, 1.693, 0.173)),
    ("yellow", (1.447, 3.052, 2.604)),
    ("green", (1.946, 2.074, 0.437)),
    ("brown", (0.885, 0.644, 0.656)),
]


def test_a_brown_on_the_wood_print_beside_a_white_is_brown():
    cubes = [{"ratio": np.array(r, np.float32)} for _, r in DROP02]
    MODEL.name_cubes(cubes)
    assert [COLOURS[int(np.argmax(c["p"]))] for c in cubes] == [n for n, _ in DROP02]


def _session(tint, seed: int) -> list[tuple[int, list[tuple[str, dict]]]]:
    """Frames of one session on a print of log tint ``tint`` (B, G, R): every cube's ratio is
    its colour's reference times the print's factors, a little noise on top."""
    rng = np.random.default_rng(seed)
    gain = np.exp(np.asarray(tint, np.float32))
    frames = []
    for i in range(6):
        colours = list(rng.choice(COLOURS, 5))
        frame = []
        for c in colours:
            ratio = linear_from_lab(np.array(MODEL.refs[c]))[0] * gain
            ratio = ratio * rng.uniform(0.95, 1.05, 3).astype(np.float32)
            frame.append((str(c), {"ratio": ratio.astype(np.float32), "low": np.zeros(3, bool),
                                   "high": np.zeros(3, bool)}))
        frames.append((i, frame))
    return frames


@pytest.mark.parametrize("tint", [(1.2, 0.9, 0.5), (0.0, 0.3, 0.6)])
def test_a_colour_is_read_in_the_light_its_sessions_other_colours_set(tint):
    """A white reference that carries a print's tint reads that print as untinted wherever a
    white helps fit the frame, and so measures itself back; read in the light the other
    colours of its session set, it comes out as the others' paint says."""
    biased = dict(MODEL.refs)
    white = linear_from_lab(np.array(MODEL.refs["white"]))[0] * np.exp(
        np.asarray(tint, np.float32) - tint[1])  # the print's tint kept, not its lightness
    biased["white"] = tuple(float(x) for x in lab_from_linear(white[None])[0])
    frames = _session(tint, seed=1)
    refs = left_out(frames, ["s"] * len(frames), ColourModel(biased))
    # within a spread (MIN_SPREAD: 7 in a and b) of the white the other colours imply
    assert np.linalg.norm(np.subtract(refs["white"][1:], MODEL.refs["white"][1:])) < 7.0
    # read in frames fitted with itself, the biased white stays near where it started
    selfread = []
    model = ColourModel(biased)
    for _, frame in frames:
        cubes = [dict(c) for _, c in frame]
        model.name_cubes(cubes)
        selfread += [lab_from_linear((c["ratio"] / c["gains"])[None])[0]
                     for (n, _), c in zip(frame, cubes, strict=True) if n == "white"]
    assert selfread, "the drawn session holds a white"
    far = np.linalg.norm(np.median(selfread, axis=0)[1:] - np.array(MODEL.refs["white"][1:]))
    assert far > 7.0
