"""What the counter reports about one tray picture.

Kept free of OpenCV and of any game rules so that the companion and firmware can pass readings
around as plain data (``to_dict``) without importing the vision pipeline.
"""

from __future__ import annotations

from dataclasses import dataclass, field

COLOURS: tuple[str, ...] = ("blue", "black", "red", "brown", "green", "yellow", "white")

# Where on the picture, in thirds: the key a program reads, and the words a player reads. The
# picture's own directions are what a player sees on the phone, whatever the mount.
PLACES: dict[str, str] = {
    "top-left": "the top left of the picture",
    "top": "the top of the picture",
    "top-right": "the top right of the picture",
    "left": "the left of the picture",
    "middle": "the middle of the picture",
    "right": "the right of the picture",
    "bottom-left": "the bottom left of the picture",
    "bottom": "the bottom of the picture",
    "bottom-right": "the bottom right of the picture",
}

# What the counter can doubt, each as the English words it is said in. A program that speaks
# another language (the phone app) says the same ``kind`` with the same values in its own words.
DOUBT_TEXTS: dict[str, str] = {
    "colour": "a cube at {place} may be {colour} or {other}",
    "not_a_cube": "a {colour} cube at {place} may not be a cube",
    "one_more": "there may be one more cube ({colour}?) at {place}",
    "too_many": "more {colour} cubes read than the tower can hold",
    "too_many_read_as": "more {colour} cubes read than the tower can hold: the least sure one is "
                        "read as {other}",
    "no_outline": "the tray's outline was not found: are the tray's corners in view?",
    "no_colour": "the picture has no colour (a black-and-white camera?): the cubes' colours "
                 "cannot be told",
}


@dataclass(frozen=True)
class Cube:
    """One cube found in the tray, in the pixel coordinates of the input image."""

    colour: str
    x: float
    y: float
    confidence: float
    uncertain: bool = False

    def to_dict(self) -> dict:
        return {
            "colour": self.colour,
            "x": round(float(self.x), 1),
            "y": round(float(self.y), 1),
            "confidence": round(float(self.confidence), 3),
            **({"uncertain": True} if self.uncertain else {}),
        }


@dataclass(frozen=True)
class Doubt:
    """One thing the counter was unsure of, as data: its ``kind`` (a key of ``DOUBT_TEXTS``),
    the colours involved, the ``place`` (a key of ``PLACES``) and how many ``times`` the same
    doubt came up. ``text`` is the English warning.

    Why data besides the words: the reading is shown on phones in other languages, and vision
    knows nothing of the app or its translations; the app says each kind in its own words.
    """

    kind: str
    colour: str | None = None
    other: str | None = None
    place: str | None = None
    times: int = 1

    def __post_init__(self) -> None:
        if self.kind not in DOUBT_TEXTS:
            raise ValueError(f"unknown kind of doubt: {self.kind!r}")
        if self.place is not None and self.place not in PLACES:
            raise ValueError(f"unknown place: {self.place!r}")

    @property
    def text(self) -> str:
        words = DOUBT_TEXTS[self.kind].format(
            colour=self.colour, other=self.other,
            place=PLACES[self.place] if self.place else None)
        if self.times == 1:
            return words
        return f"{words} ({'twice' if self.times == 2 else f'{self.times} times'})"

    def to_dict(self) -> dict:
        out: dict = {"kind": self.kind}
        for key in ("colour", "other", "place"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        out["times"] = self.times
        return out


def merged(doubts: list[Doubt]) -> tuple[Doubt, ...]:
    """The same doubt once, with how often it came up (in the order first seen)."""
    times: dict[Doubt, int] = {}
    for d in doubts:
        times[d] = times.get(d, 0) + d.times
    return tuple(Doubt(d.kind, d.colour, d.other, d.place, n) for d, n in times.items())


@dataclass(frozen=True)
class TrayReading:
    """The cubes in the tray. ``warnings`` says, in words, what the counter was unsure of;
    ``doubts`` says the same as data (one each, in the same order) when the counter made them.

    ``tray_corners``: the tray floor's four corners in input-image pixels, when known, ordered
    clockwise on screen (image y points down) starting at the corner nearest the image's
    top-left, so that corner 0 -> 1 runs along a long (16 cm) side. They are the corners the
    counter used (found, or from a calibration), ready for ``vision.overlay.draw_overlay(...,
    tray_corners=...)`` and ``vision.settle.SettleDetector.set_tray(...)``.
    """

    cubes: tuple[Cube, ...] = ()
    warnings: tuple[str, ...] = field(default_factory=tuple)
    tray_corners: tuple[tuple[float, float], ...] | None = None
    doubts: tuple[Doubt, ...] = ()

    @classmethod
    def of(cls, cubes, doubts, tray_corners=None) -> TrayReading:
        """A reading whose warnings are its doubts' words."""
        doubts = tuple(doubts)
        return cls(tuple(cubes), tuple(d.text for d in doubts), tray_corners, doubts)

    @property
    def counts(self) -> dict[str, int]:
        counts = dict.fromkeys(COLOURS, 0)
        for cube in self.cubes:
            counts[cube.colour] += 1
        return counts

    @property
    def total(self) -> int:
        return len(self.cubes)

    @property
    def uncertain(self) -> bool:
        return bool(self.warnings) or any(c.uncertain for c in self.cubes)

    def to_dict(self) -> dict:
        out = {
            "counts": self.counts,
            "total": self.total,
            "cubes": [c.to_dict() for c in self.cubes],
            "uncertain": self.uncertain,
            "warnings": list(self.warnings),
        }
        if self.doubts:
            out["doubts"] = [d.to_dict() for d in self.doubts]
        if self.tray_corners is not None:
            out["tray_corners"] = [[round(float(x), 1), round(float(y), 1)]
                                   for x, y in self.tray_corners]
        return out
