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

from dataclasses import dataclass, field

import numpy as np

from vision.reading import COLOURS

# The floor is taken to reflect this share of the light (a pale print); cube/floor ratios are
# scaled by it before conversion to Lab, so a white cube lands near L = 100.
FLOOR_ALBEDO = 0.6

# Default references, in floor-normalised Lab (L from 0 up, may pass 100 for cubes lighter than
# the print; a and b signed), as seen on a pale print (FLOOR_ALBEDO). Measured by
# ``python -m vision.fitcolours`` on the development sessions only (s000-s002).
DEFAULT_REFS: dict[str, tuple[float, float, float]] = {
    "blue": (81.7, 20.3, -80.9),
    "black": (38.4, 4.9, -17.0),
    "red": (65.2, 45.6, 8.5),
    "brown": (78.7, 12.3, 19.8),
    "green": (65.8, -38.7, 15.6),
    "yellow": (133.5, -26.4, 99.8),
    "white": (120.8, -5.1, -42.9),
}
DEFAULT_SPREAD: dict[str, tuple[float, float, float]] = {c: (14.0, 9.0, 9.0) for c in DEFAULT_REFS}
# No colour is trusted to be tighter than this (noise, JPEG, a cube's tilt).
MIN_SPREAD = np.array([6.0, 4.0, 4.0], np.float32)

_LIN_LUT = (np.arange(256, dtype=np.float32) / 255.0) ** 2.2


def to_linear(bgr_u8: np.ndarray) -> np.ndarray:
    """Approximate linear light from 8-bit camera values (gamma 2.2)."""
    return _LIN_LUT[bgr_u8]


_RGB2XYZ = np.array(
    [[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]], np.float32
)
_WHITE = np.array([0.9505, 1.0, 1.089], np.float32)


def lab_from_linear(bgr_lin: np.ndarray) -> np.ndarray:
    """CIE Lab (D65) of linear BGR rows, without clipping: a ratio above 1 gives L above 100."""
    rgb = np.asarray(bgr_lin, np.float32).reshape(-1, 3)[:, ::-1]
    xyz = rgb @ _RGB2XYZ.T / _WHITE
    f = np.where(xyz > 0.008856, np.cbrt(np.maximum(xyz, 1e-9)), 7.787 * xyz + 16 / 116)
    return np.stack(
        [116 * f[:, 1] - 16, 500 * (f[:, 0] - f[:, 1]), 200 * (f[:, 1] - f[:, 2])], axis=1
    )


def floor_ratio(pixels_lin: np.ndarray, floor_lin: np.ndarray) -> np.ndarray:
    """Linear BGR of pixels divided by the floor behind them, scaled to a pale print's albedo."""
    return pixels_lin / np.maximum(floor_lin, 1e-3) * FLOOR_ALBEDO


def normalised_lab(pixels_lin: np.ndarray, floor_lin: np.ndarray, k: float = 1.0) -> np.ndarray:
    """Lab of linear BGR pixels divided by the linear BGR of the floor behind them (N x 3).

    ``k`` scales the floor's assumed albedo (a dark wood print makes every cube look k times
    lighter than on a pale print; see ``fit_lightness``).
    """
    return lab_from_linear(floor_ratio(pixels_lin, floor_lin) / k)


@dataclass
class ColourModel:
    """Per colour: a reference (floor-normalised Lab) and its spread (one sd per Lab axis).

    The spread says how much that colour's appearance varies (tilt of the cube to the light,
    noise, prints): white and yellow vary a lot in lightness, black hardly in chroma.
    """

    refs: dict[str, tuple[float, float, float]]
    spread: dict[str, tuple[float, float, float]] = field(
        default_factory=lambda: dict(DEFAULT_SPREAD)
    )

    @classmethod
    def default(cls) -> ColourModel:
        return cls(dict(DEFAULT_REFS), dict(DEFAULT_SPREAD))

    def matrix(self) -> np.ndarray:
        return np.array([self.refs[c] for c in COLOURS], np.float32)

    def sds(self) -> np.ndarray:
        return np.maximum(np.array([self.spread[c] for c in COLOURS], np.float32), MIN_SPREAD)

    def distances(self, lab: np.ndarray) -> np.ndarray:
        """Spread-scaled distance of each Lab row to each colour, shape (N, 7)."""
        lab = np.asarray(lab, np.float32).reshape(-1, 3)
        d = (lab[:, None, :] - self.matrix()[None]) / self.sds()[None]
        return np.sqrt((d * d).sum(axis=2))

    def log_likelihood(self, lab: np.ndarray) -> np.ndarray:
        d = self.distances(lab)
        return -0.5 * d * d - np.log(self.sds()).sum(axis=1)[None]

    def probabilities(self, lab: np.ndarray) -> np.ndarray:
        """A soft assignment (N, 7): Gaussian likelihoods, normalised."""
        logit = self.log_likelihood(lab)
        logit -= logit.max(axis=1, keepdims=True)
        p = np.exp(logit)
        return p / p.sum(axis=1, keepdims=True)

    def fit_lightness(self, ratios: np.ndarray, prior_sigma: float = 0.6) -> float:
        """The albedo factor k that best explains a frame's cube colours (floor ratios, N x 3).

        Every cube/floor ratio in a frame is off by the same factor when the print is darker
        or lighter than assumed. With several cubes the frame says which k fits; with few the
        prior (k = 1, log-normal) keeps it near the default.
        """
        ratios = np.asarray(ratios, np.float32).reshape(-1, 3)
        if len(ratios) == 0:
            return 1.0
        best_k, best_cost = 1.0, np.inf
        for k in np.exp(np.linspace(-1.6, 1.6, 33)):
            d = self.distances(lab_from_linear(ratios / k))
            cost = np.minimum(d.min(axis=1) ** 2, 9.0).sum() + (np.log(k) / prior_sigma) ** 2
            if cost < best_cost:
                best_k, best_cost = float(k), cost
        return best_k

    def to_dict(self) -> dict:
        return {
            "refs": {k: [float(x) for x in v] for k, v in self.refs.items()},
            "spread": {k: [float(x) for x in v] for k, v in self.spread.items()},
        }

    @classmethod
    def from_dict(cls, d: dict) -> ColourModel:
        refs = {k: tuple(float(x) for x in d["refs"][k]) for k in COLOURS}
        spread_in = d.get("spread") or {}
        spread = {
            k: tuple(float(x) for x in spread_in.get(k, DEFAULT_SPREAD[k])) for k in COLOURS
        }
        return cls(refs, spread)
