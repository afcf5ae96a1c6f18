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

from vision.colours import ColourModel, floor_over, lab_from_linear, linear_from_lab
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
        if not isinstance(d, dict):
            raise VisionError("a calibration must be a JSON object")
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
        except VisionError as exc:
            raise VisionError(f"calibration file is not valid: {path} ({exc})") from exc
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise VisionError(f"calibration file is not valid: {path}") from exc


# Once a calibration drop has measured this session's print and light, a frame may still
# differ from it by the light's drift over the evening (the empty tray's tone matching takes out
# the camera's exposure and white balance): the per-frame fit is held this close (log sds).
CALIBRATED_LIGHT_SIGMA = 0.4
CALIBRATED_TINT_SIGMA = 0.15


# A drop pins the session's print and light (three factors) only with cubes of at least this
# many colours; with fewer (one red cube, say) the fit has too little to go on and the drop is
# refused (learning from it made later frames worse).
PIN_COLOURS = 3


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
    return ColourModel(refs, dict(model.spread), model.light_sigma, model.tint_sigma)


def rebased(model: ColourModel, gains, veil: float = 0.0) -> ColourModel:
    """The model with every reference moved by per-channel factors ``gains`` (B, G, R) on the
    cube/floor ratio and the sheen ``veil`` added (see ``ColourModel.fit_frame``): what each
    colour reads as on this session's print in this light, so that a frame of the session needs
    no print fit of its own (factors near 1, no sheen)."""
    lin = linear_from_lab(model.matrix())
    white = np.maximum(lin[COLOURS.index("white")], 0.0)
    lin = (lin + veil * white) * np.asarray(gains, np.float32).reshape(1, 3)
    labs = lab_from_linear(lin)
    refs = {c: tuple(float(v) for v in labs[i]) for i, c in enumerate(COLOURS)}
    return ColourModel(refs, dict(model.spread), model.light_sigma, model.tint_sigma)


def calibrate_from_drop(
    image,
    contents: dict[str, int],
    reference=None,
    *,
    calibration: Calibration | None = None,
    weight: float = 0.8,
) -> Calibration:
    """Learn this session's colour references from a drop whose contents the players confirm.

    ``contents`` maps colour -> how many cubes of it are in the tray (e.g. one of each for a
    calibration drop, or the set-up drop). The drop's print and light are fitted to its cubes
    (as for any frame) and every reference is moved into this session's reading (``rebased``);
    the cubes found are matched to the confirmed colours so that the total likelihood is
    highest, respecting the counts; each colour seen (with no clipped channel) then moves
    ``weight`` of the way to what was measured, and the per-frame fit is held near the
    session's (``CALIBRATED_*_SIGMA``). Raises VisionError when the drop holds fewer than
    ``PIN_COLOURS`` colours or the number of cubes found differs from ``contents`` (the drop is
    no good for calibrating: ask again rather than learn from a miscount).
    """
    from vision.counter import measure_cubes

    cal = calibration or Calibration()
    unknown = set(contents) - set(COLOURS)
    if unknown:
        raise VisionError(f"unknown colour in the drop's contents: {sorted(unknown)}")
    _, cubes, _ = measure_cubes(image, reference, calibration=cal)
    want = sum(int(v) for v in contents.values())
    if len(cubes) != want:
        raise VisionError(
            f"found {len(cubes)} cubes but the drop held {want}: not used for calibration"
        )
    if not cubes:
        return cal
    seen = sorted(c for c, n in contents.items() if int(n) > 0)
    if len(seen) < PIN_COLOURS:
        raise VisionError(
            f"the drop held cubes of {len(seen)} colour(s) ({', '.join(seen) or 'none'}): at "
            f"least {PIN_COLOURS} colours are needed to learn this tray's colours"
        )
    model = cal.colours
    model.name_cubes(cubes)
    loglik = np.array([c["d"] for c in cubes]) ** 2 * -0.5  # (N, 7)
    # greedy assignment with capacities, most confident pairs first
    left = {c: int(contents.get(c, 0)) for c in COLOURS}
    order = np.dstack(np.unravel_index(np.argsort(-loglik, axis=None), loglik.shape))[0]
    taken: dict[int, str] = {}
    for i, j in order:
        colour = COLOURS[j]
        if i in taken or left[colour] <= 0:
            continue
        taken[int(i)] = colour
        left[colour] -= 1
    # with the colours known, the drop's print, light and sheen are fitted to them alone
    # (clipped floors bounded by the floor's colour, as for any frame)
    idx = sorted(taken)
    known = [cubes[i] for i in idx]
    high = np.array([c.get("high", (False,) * 3) for c in known], bool).reshape(-1, 3)
    gains, veil = model.fit_frame(
        np.array([c["ratio"] for c in known]),
        low=np.array([c.get("low", (False,) * 3) for c in known], bool).reshape(-1, 3),
        high=floor_over(known, high),
        names=[COLOURS.index(taken[i]) for i in idx],
    )
    samples: dict[str, list] = {c: [] for c in COLOURS}
    for i, colour in taken.items():
        c = cubes[i]
        if np.any(c.get("low", False)) or np.any(c.get("high", False)):
            continue  # a clipped reading is only a bound
        samples[colour].append(lab_from_linear(np.asarray(c["ratio"], np.float32)[None])[0])
    new = refine_colours(rebased(model, gains, veil), samples, weight)
    new.light_sigma = min(model.light_sigma, CALIBRATED_LIGHT_SIGMA)
    new.tint_sigma = min(model.tint_sigma, CALIBRATED_TINT_SIGMA)
    # the drop's cubes were read through this session's camera: its contrast is in the
    # references now, and a frame of few cubes fitting another would only trade it for colour
    new.fit_contrast = False
    return Calibration(cal.corners, new)
