"""What a session knows beyond a single frame: tray corners, the empty tray, the colour model.

Why: a device is set up once per evening. Four tapped corners fix the tray when the automatic
finder is fooled; the empty-tray frame is the best possible floor model (same light, same
camera); and a calibration drop (one cube of each colour, or a drop whose contents the players
confirm) turns the default colour references into measured ones for this tray print and light.
Saved as plain JSON so the companion can keep it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from vision.colours import ColourModel
from vision.errors import VisionError
from vision.reading import COLOURS


@dataclass
class Calibration:
    """Optional session knowledge for ``count_cubes``.

    ``corners``: four (x, y) image points of the tray's inner floor, any order (overrides the
    automatic finder). ``colours``: the colour model to name cubes with.
    """

    corners: list[tuple[float, float]] | None = None
    colours: ColourModel = field(default_factory=ColourModel.default)

    def to_dict(self) -> dict:
        return {
            "corners": None
            if self.corners is None
            else [list(map(float, p)) for p in self.corners],
            "colours": self.colours.to_dict(),
        }

    @classmethod
    def from_dict(cls, d: dict) -> Calibration:
        corners = d.get("corners")
        if corners is not None:
            if len(corners) != 4:
                raise VisionError("a calibration needs exactly four tray corners")
            corners = [(float(x), float(y)) for x, y in corners]
        colours = ColourModel.from_dict(d["colours"]) if d.get("colours") else ColourModel.default()
        return cls(corners, colours)

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=2))

    @classmethod
    def load(cls, path: str | Path) -> Calibration:
        try:
            return cls.from_dict(json.loads(Path(path).read_text()))
        except FileNotFoundError as exc:
            raise VisionError(f"calibration file not found: {path}") from exc
        except (ValueError, KeyError, TypeError) as exc:
            raise VisionError(f"calibration file is not valid: {path}") from exc


def refine_colours(
    model: ColourModel, samples: dict[str, list], weight: float = 0.8
) -> ColourModel:
    """Move each colour's reference towards measured floor-normalised Lab samples.

    ``samples`` maps colour -> list of Lab triples (e.g. the cubes of a calibration drop whose
    contents the players confirmed). Colours without samples keep their reference.
    """
    refs = dict(model.refs)
    for colour, labs in samples.items():
        if colour not in COLOURS or not labs:
            continue
        m = np.median(np.asarray(labs, np.float32).reshape(-1, 3), axis=0)
        old = np.asarray(refs[colour], np.float32)
        refs[colour] = tuple(float(v) for v in (1 - weight) * old + weight * m)
    return ColourModel(refs, model.scale)
