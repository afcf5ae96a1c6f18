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
    """The cubes in the tray. ``warnings`` says, in words, what the counter was unsure of.

    ``tray_corners``: the tray floor's four corners in input-image pixels, when known, ordered
    clockwise on screen (image y points down) starting at the corner nearest the image's
    top-left, so that corner 0 -> 1 runs along a long (16 cm) side. They are the corners the
    counter used (found, or from a calibration), ready for ``vision.overlay.draw_overlay(...,
    tray_corners=...)`` and ``vision.settle.SettleDetector.set_tray(...)``.
    """

    cubes: tuple[Cube, ...] = ()
    warnings: tuple[str, ...] = field(default_factory=tuple)
    tray_corners: tuple[tuple[float, float], ...] | None = None

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
        if self.tray_corners is not None:
            out["tray_corners"] = [[round(float(x), 1), round(float(y), 1)]
                                   for x, y in self.tray_corners]
        return out
