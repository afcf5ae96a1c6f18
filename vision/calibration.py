"""What a session knows beyond one frame: tapped tray corners and how this table shows colours.

Why: a device is set up once per evening. Four tapped corners fix the tray when the network's
outline is wrong, and every drop the players confirm tells which colour each cube found really
was. From those confirmed cubes a per-colour bias on the network's colour scores is fitted (a
table whose warm lamp makes the network lean from white to yellow gets its yellow score moved
back), kept small by a prior towards no bias. Saved as plain JSON so the device can keep it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from vision.errors import VisionError
from vision.reading import COLOURS

# How many confirmed cubes the bias is fitted to (the most recent), and how strongly it is
# held towards zero (a Gaussian prior on each colour's bias, in log-odds, with this precision).
KEEP_SAMPLES = 300
PRIOR_PRECISION = 2.0
# A drop teaches only when its cubes are of at least this many colours (one red cube tells
# nothing about the other six).
PIN_COLOURS = 2


@dataclass
class Calibration:
    """Optional session knowledge for ``count_cubes``.

    ``corners``: four (x, y) image points of the tray's floor, any order (they override the
    network's outline, and cubes outside them are not counted). ``samples``: confirmed cubes as
    (the network's colour probabilities, the confirmed colour's index)."""

    corners: list[tuple[float, float]] | None = None
    samples: list[tuple[tuple[float, ...], int]] = field(default_factory=list)

    def bias(self) -> np.ndarray | None:
        """Per-colour log-score offsets fitted to the confirmed cubes (None before any)."""
        if not self.samples:
            return None
        probs = np.array([p for p, _ in self.samples], np.float64)
        truth = np.array([y for _, y in self.samples], int)
        return fit_bias(probs, truth)

    def learned_from(self) -> int:
        return len(self.samples)

    def to_dict(self) -> dict:
        return {
            "corners": None if self.corners is None
            else [[float(x), float(y)] for x, y in self.corners],
            "samples": [[[round(float(v), 5) for v in p], int(y)] for p, y in self.samples],
        }

    @classmethod
    def from_dict(cls, d: dict) -> Calibration:
        if not isinstance(d, dict):
            raise VisionError("a calibration must be a JSON object")
        corners = d.get("corners")
        if corners is not None:
            if not isinstance(corners, list) or len(corners) != 4:
                raise VisionError("a calibration needs exactly four tray corners")
            corners = [(float(x), float(y)) for x, y in corners]
        samples = []
        for item in d.get("samples", []):  # files of older versions have none: that is fine
            p, y = item
            p = tuple(float(v) for v in p)
            if len(p) != len(COLOURS) or not 0 <= int(y) < len(COLOURS):
                raise VisionError("a calibration sample needs seven scores and a colour")
            samples.append((p, int(y)))
        return cls(corners, samples[-KEEP_SAMPLES:])

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


def fit_bias(probs: np.ndarray, truth: np.ndarray, steps: int = 60) -> np.ndarray:
    """The bias b maximising sum log softmax(log p + b)[truth] - PRIOR_PRECISION/2 |b|^2
    (Newton steps on a convex problem; a few dozen samples settle it)."""
    logp = np.log(np.clip(probs, 1e-9, 1.0))
    onehot = np.eye(len(COLOURS))[truth]
    b = np.zeros(len(COLOURS))
    for _ in range(steps):
        z = logp + b
        q = np.exp(z - z.max(axis=1, keepdims=True))
        q /= q.sum(axis=1, keepdims=True)
        grad = (q - onehot).sum(axis=0) + PRIOR_PRECISION * b
        hess = np.diag(q.sum(axis=0)) - q.T @ q + PRIOR_PRECISION * np.eye(len(COLOURS))
        delta = np.linalg.solve(hess, grad)
        b -= delta
        if np.abs(delta).max() < 1e-6:
            break
    return b


def calibrate_from_drop(image, contents: dict[str, int], reference=None, *,
                        calibration: Calibration | None = None, detector=None) -> Calibration:
    """Learn from a drop whose contents the players confirmed.

    The cubes found are matched to the confirmed colours so that the total likelihood is
    highest within the counts, and kept as samples for the bias. Raises VisionError when the
    number of cubes found differs from the confirmed one (a miscount teaches wrong colours) or
    the drop holds fewer than ``PIN_COLOURS`` colours."""
    from vision.counter import find_cubes

    cal = calibration or Calibration()
    unknown = set(contents) - set(COLOURS)
    if unknown:
        raise VisionError(f"unknown colour in the drop's contents: {sorted(unknown)}")
    cubes = find_cubes(image, reference, calibration=cal, detector=detector).counted
    want = sum(int(v) for v in contents.values())
    if len(cubes) != want:
        raise VisionError(f"found {len(cubes)} cubes but the drop held {want}: "
                          "not used to learn colours")
    seen = sorted(c for c, n in contents.items() if int(n) > 0)
    if len(seen) < PIN_COLOURS:
        raise VisionError(f"the drop held cubes of {len(seen)} colour(s): at least "
                          f"{PIN_COLOURS} are needed to learn this table's colours")
    loglik = np.log(np.clip(np.array([c.colour_probs for c in cubes]), 1e-9, 1.0))
    left = {c: int(contents.get(c, 0)) for c in COLOURS}
    taken: dict[int, int] = {}
    for flat in np.argsort(-loglik, axis=None):
        i, j = divmod(int(flat), len(COLOURS))
        if i in taken or left[COLOURS[j]] <= 0:
            continue
        taken[i] = j
        left[COLOURS[j]] -= 1
    samples = [(tuple(float(v) for v in cubes[i].colour_probs), j)
               for i, j in sorted(taken.items())]
    return Calibration(cal.corners, (cal.samples + samples)[-KEEP_SAMPLES:])
