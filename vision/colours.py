"""Naming the seven cube colours.

Why this space: the camera's white balance and exposure drift, and the light may be a warm lamp.
Dividing a cube's linear RGB by the linear RGB of the bare floor under it (von Kries adaptation
with the tray as the grey reference) cancels the light's colour, its strength, vignetting and
large-scale shading. What is left is the cube's paint relative to the tray's paint; it is then
put into CIE Lab so that distances are roughly perceptual. Black, brown and red are told apart
mostly by lightness and chroma; white and yellow along the blue-yellow (b) axis.

A print of unusual colour (a dark wood tray, say) shifts every cube the same way; a calibration
(see ``vision.calibration``) replaces the default references with measured ones.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from vision.reading import COLOURS

# The floor is taken to reflect this share of the light (a pale print); cube/floor ratios are
# scaled by it before conversion to Lab, so a white cube lands near L = 100.
FLOOR_ALBEDO = 0.6

# Default references, in floor-normalised Lab (L 0..100, a and b signed). Painted-wood colours
# as seen on a pale print; measured on the development sessions only (s000-s002).
DEFAULT_REFS: dict[str, tuple[float, float, float]] = {
    "blue": (72.0, 0.0, -40.0),
    "black": (48.0, 2.0, -12.0),
    "red": (64.0, 44.0, 5.0),
    "brown": (66.0, 12.0, 8.0),
    "green": (78.0, -36.0, 12.0),
    "yellow": (96.0, -14.0, 52.0),
    "white": (98.0, -2.0, -3.0),
}
# How much each axis is trusted: lightness depends on the print's own lightness and the cube's
# tilt to the light, so it is scaled down relative to chroma.
AXIS_SCALE = np.array([14.0, 9.0, 9.0], np.float32)

_LIN_LUT = (np.arange(256, dtype=np.float32) / 255.0) ** 2.2


def to_linear(bgr_u8: np.ndarray) -> np.ndarray:
    """Approximate linear light from 8-bit camera values (gamma 2.2)."""
    return _LIN_LUT[bgr_u8]


def normalised_lab(pixels_lin: np.ndarray, floor_lin: np.ndarray) -> np.ndarray:
    """Lab of linear BGR pixels divided by the linear BGR of the floor behind them (N x 3)."""
    ratio = pixels_lin / np.maximum(floor_lin, 1e-3) * FLOOR_ALBEDO
    enc = np.clip(ratio, 0.0, 1.0) ** (1 / 2.2)
    lab = cv2.cvtColor(enc.reshape(1, -1, 3).astype(np.float32), cv2.COLOR_BGR2Lab)
    return lab.reshape(-1, 3)


@dataclass
class ColourModel:
    """One reference per colour (floor-normalised Lab) and the per-axis scale of distances."""

    refs: dict[str, tuple[float, float, float]]
    scale: tuple[float, float, float] = tuple(AXIS_SCALE.tolist())

    @classmethod
    def default(cls) -> ColourModel:
        return cls(dict(DEFAULT_REFS))

    def matrix(self) -> np.ndarray:
        return np.array([self.refs[c] for c in COLOURS], np.float32)

    def distances(self, lab: np.ndarray) -> np.ndarray:
        """Scaled distance of each Lab row to each colour, shape (N, 7)."""
        lab = np.asarray(lab, np.float32).reshape(-1, 3)
        d = (lab[:, None, :] - self.matrix()[None]) / np.asarray(self.scale, np.float32)
        return np.sqrt((d * d).sum(axis=2))

    def probabilities(self, lab: np.ndarray) -> np.ndarray:
        """A soft assignment (N, 7): a Gaussian likelihood per colour, normalised."""
        d = self.distances(lab)
        logit = -0.5 * d * d
        logit -= logit.max(axis=1, keepdims=True)
        p = np.exp(logit)
        return p / p.sum(axis=1, keepdims=True)

    def to_dict(self) -> dict:
        return {"refs": {k: list(map(float, v)) for k, v in self.refs.items()},
                "scale": list(map(float, self.scale))}

    @classmethod
    def from_dict(cls, d: dict) -> ColourModel:
        refs = {k: tuple(float(x) for x in d["refs"][k]) for k in COLOURS}
        scale = tuple(float(x) for x in d.get("scale", AXIS_SCALE.tolist()))
        return cls(refs, scale)
