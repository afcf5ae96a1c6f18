"""A stand-in for ``vision.detector.CubeDetector``: handmade detections, no network.

Why: the counter's own logic (bounds, tapped corners, warnings, calibration) and the device
around it (session, service) must be tested whatever the packaged model reads. ``count_cubes``
and ``calibrate_from_drop`` take ``detector=``, and use only its ``config`` and ``detect``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from vision.detector import Candidate, Detections, ModelConfig
from vision.reading import COLOURS

CONFIG = ModelConfig(
    input_width=384,
    input_height=224,
    stride=4,
    labels=COLOURS,
    heads=("cube", "outside", "corner", *(f"colour:{i}" for i in range(len(COLOURS))), "dx", "dy"),
)


def probs(colour: str, sure: float = 0.95, second: str | None = None) -> np.ndarray:
    """Colour probabilities: ``sure`` on ``colour``, the rest on ``second`` (or spread evenly)."""
    p = np.zeros(len(COLOURS))
    k = COLOURS.index(colour)
    p[k] = sure
    if second is None:
        rest = [j for j in range(len(COLOURS)) if j != k]
        p[rest] = (1 - sure) / len(rest)
    else:
        p[COLOURS.index(second)] = 1 - sure
    return p


def cube(x: float, y: float, colour: str, score: float = 0.95, sure: float = 0.95,
         second: str | None = None, outside: bool = False) -> Candidate:
    return Candidate(float(x), float(y), float(score), probs(colour, sure, second), outside)


def row_of_cubes(counts: Mapping[str, int], x0: float = 100.0, y0: float = 100.0,
                 step: float = 40.0, per_row: int = 8) -> list[Candidate]:
    """Sure cubes of these counts laid out in rows (picture pixels)."""
    out = []
    for colour in COLOURS:
        for _ in range(int(counts.get(colour, 0))):
            i = len(out)
            out.append(cube(x0 + step * (i % per_row), y0 + step * (i // per_row), colour))
    return out


def detections(candidates: Sequence[Candidate] = (), corners=None) -> Detections:
    c = None if corners is None else np.asarray(corners, np.float32).reshape(4, 2)
    return Detections(tuple(sorted(candidates, key=lambda k: -k.score)), c)


def fingerprint(image: np.ndarray) -> str:
    return hashlib.sha1(np.ascontiguousarray(image).tobytes()).hexdigest()


class FakeDetector:
    """Answers every picture with ``answer`` (Detections, or a function of image and reference);
    ``by_image`` maps a picture's ``fingerprint`` to its own Detections first. ``calls`` keeps
    (image, reference) of every call."""

    def __init__(self, answer: Detections | Callable | None = None, *,
                 by_image: Mapping[str, Detections] | None = None,
                 config: ModelConfig = CONFIG):
        self.config = config
        self.answer = answer if answer is not None else detections()
        self.by_image = dict(by_image or {})
        self.calls: list[tuple[np.ndarray, np.ndarray | None]] = []

    def detect(self, image: np.ndarray, reference: np.ndarray | None = None) -> Detections:
        self.calls.append((image, reference))
        known = self.by_image.get(fingerprint(image))
        if known is not None:
            return known
        return self.answer(image, reference) if callable(self.answer) else self.answer


# What the fake model "finds" in each demo picture (firmware/demo): sure cubes by colour, and
# cubes it takes for yellow but is not sure of (yellow 0.6, white 0.4): the ones a warm lamp
# makes of white cubes, which the players correct and the device learns from. The tray's floor
# is found at DEMO_CORNERS in every picture.
DEMO_CORNERS = [[423, 115], [830, 243], [740, 535], [329, 404]]
DEMO_READS: dict[str, tuple[dict[str, int], int]] = {
    "empty.jpg": ({}, 0),
    "drop01.jpg": ({"blue": 1, "red": 2, "green": 1}, 0),
    "drop02.jpg": ({"black": 2, "brown": 1}, 0),
    "drop03.jpg": ({"blue": 2, "yellow": 1, "white": 1}, 0),
    "drop04.jpg": ({"black": 2, "red": 3, "green": 1}, 1),
    "drop05.jpg": ({"red": 1, "brown": 2, "white": 2}, 0),
    "drop06.jpg": ({"blue": 2, "black": 1, "red": 1, "brown": 2, "green": 1}, 2),
    "drop07.jpg": ({"green": 3, "yellow": 1}, 0),
    "drop08.jpg": ({"blue": 1, "black": 1, "white": 1}, 0),
    "drop09.jpg": ({"red": 2, "brown": 1, "green": 1, "yellow": 2}, 0),
    "drop10.jpg": ({"black": 3, "white": 1}, 0),
    "drop11.jpg": ({"blue": 2, "red": 2, "yellow": 1}, 0),
    "drop12.jpg": ({"brown": 1, "green": 2, "white": 1}, 0),
}


def demo_cubes(name: str) -> list[Candidate]:
    """The fake model's cubes in a demo picture, all on the tray (inside DEMO_CORNERS): each
    colour at its own spot (more cubes of it a few pixels apart), so that the pixels under a
    colour's cubes are alike in every picture, as a real cube's are (the device learns a
    table's colours from them, ``vision.cube_colour``)."""
    counts, whitish = DEMO_READS[name]
    cubes = [cube(470.0 + 30 * k, 270.0 + 4 * j, colour)
             for k, colour in enumerate(COLOURS) for j in range(int(counts.get(colour, 0)))]
    for i in range(whitish):
        cubes.append(cube(500.0 + 40 * i, 380.0, "yellow", sure=0.6, second="white"))
    return cubes


def demo_detector(folder=None) -> FakeDetector:
    """A FakeDetector that knows every demo picture as DEMO_READS says; any other picture is an
    empty tray with its floor at DEMO_CORNERS."""
    from firmware.sources import DEMO_DIR
    from vision.counter import load_image

    folder = folder or DEMO_DIR
    known = {fingerprint(load_image(folder / name)): detections(demo_cubes(name), DEMO_CORNERS)
             for name in DEMO_READS}
    return FakeDetector(detections((), DEMO_CORNERS), by_image=known)


def demo_counts(name: str) -> dict[str, int]:
    """The counts the fake model reads in a demo picture (whitish cubes as yellow)."""
    counts, whitish = DEMO_READS[name]
    out = {c: int(counts.get(c, 0)) for c in COLOURS}
    out["yellow"] += whitish
    return out
