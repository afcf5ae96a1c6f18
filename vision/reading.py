"""What the counter reports about one tray picture.

Kept free of OpenCV and of any game rules so that the companion and firmware can pass readings
around as plain data (``to_dict``) without importing the vision pipeline.
"""

from __future__ import annotations

from dataclasses import dataclass, field

COLOURS: tuple[str, ...] = ("blue", "black", "red", "brown", "green", "yellow", "white")


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
class TrayReading:
    """The cubes in the tray. ``warnings`` says, in words, what the counter was unsure of."""

    cubes: tuple[Cube, ...] = ()
    warnings: tuple[str, ...] = field(default_factory=tuple)

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
        return {
            "counts": self.counts,
            "total": self.total,
            "cubes": [c.to_dict() for c in self.cubes],
            "uncertain": self.uncertain,
            "warnings": list(self.warnings),
        }
