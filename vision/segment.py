"""Separating cubes from the tray floor, and splitting touching cubes.

Why this way: on the rectified floor (see ``vision.tray``) a cube's footprint has a known size,
so the number of cubes in a blob follows from its area and a cube's area, not from thresholds in
image pixels. Cubes are found as pixels whose colour differs from the floor model, where the
floor model is the empty-tray frame when there is one (the best model: same light, same print)
or otherwise an estimate of the bare floor made by filling in everything that stands out.

Differences are measured as per-channel log ratios of linear light. A shadow scales all three
channels alike (a uniform negative log ratio), so a moderate, colourless darkening is taken to be
floor in shadow, not a cube; a cube changes the colour, or the brightness by a large factor.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from vision.colours import to_linear

# A colourless darkening to more than this share of the floor's light is shadow, not a cube.
SHADOW_FLOOR = 0.35
# Brightening beyond this factor is a cube (a white cube on a grey print, say).
BRIGHT_CEIL = 1.35
# A change of colour (log ratio between channels) beyond this is a cube.
CHROMA_STEP = 0.22


@dataclass
class Blob:
    """One connected group of cube pixels on the rectified floor."""

    mask: np.ndarray  # bool, rectified size, only this blob
    area: float  # px
    centroid: tuple[float, float]
    bbox: tuple[int, int, int, int]


def _difference(rect_lin: np.ndarray, bg_lin: np.ndarray) -> np.ndarray:
    eps = 0.01  # linear light; keeps sensor noise in dark corners from looking like change
    lr = np.log(rect_lin + eps) - np.log(bg_lin + eps)
    m = lr.mean(axis=2)
    chroma = np.abs(lr - m[..., None]).max(axis=2)
    fg = (chroma > CHROMA_STEP) | (m < np.log(SHADOW_FLOOR)) | (m > np.log(BRIGHT_CEIL))
    return fg.astype(np.uint8)


def _clean(fg: np.ndarray, min_area: float) -> np.ndarray:
    k3 = np.ones((3, 3), np.uint8)
    fg = cv2.morphologyEx(fg, cv2.MORPH_OPEN, k3)
    fg = cv2.morphologyEx(fg, cv2.MORPH_CLOSE, k3)
    n, labels, stats, _ = cv2.connectedComponentsWithStats(fg, connectivity=8)
    keep = np.zeros(n, np.uint8)
    keep[1:] = stats[1:, cv2.CC_STAT_AREA] >= min_area
    return keep[labels]


def floor_and_cubes(
    rect: np.ndarray, ref_rect: np.ndarray | None, px_per_cm: float
) -> tuple[np.ndarray, np.ndarray]:
    """Return (floor model in linear light, cube mask) for a rectified frame."""
    rect_lin = to_linear(rect)
    min_area = 0.2 * px_per_cm * px_per_cm
    if ref_rect is not None:
        ref_lin = to_linear(ref_rect)
        ratio = (rect_lin + 1e-3) / (ref_lin + 1e-3)
        gain = np.median(ratio.reshape(-1, 3), axis=0)  # exposure / white-balance drift
        bg_lin = ref_lin * gain
        fg = _clean(_difference(rect_lin, bg_lin), min_area)
        return bg_lin, fg
    bg_lin = estimate_floor(rect, px_per_cm)
    fg = _clean(_difference(rect_lin, bg_lin), min_area)
    return bg_lin, fg


def _smooth_masked(img: np.ndarray, mask: np.ndarray, sigma: float) -> np.ndarray:
    """Normalised convolution: a Gaussian average of ``img`` over the pixels in ``mask`` only."""
    m = mask.astype(np.float32)
    num = cv2.GaussianBlur(img * m[..., None], (0, 0), sigma)
    den = cv2.GaussianBlur(m, (0, 0), sigma)[..., None]
    return num / np.maximum(den, 1e-4)


def estimate_floor(rect: np.ndarray, px_per_cm: float) -> np.ndarray:
    """The bare floor under everything, from one frame (no empty-tray reference); linear light.

    Works on a 4x smaller copy (the floor's light changes slowly). A median about three cubes
    wide gives a first floor that follows shading and shadow edges and ignores scattered cubes;
    what differs from it is masked out, and a masked Gaussian average (normalised convolution)
    of the rest fills in under the cubes. Two rounds, so that clusters which fooled the median
    are masked the second time.
    """
    h, w = rect.shape[:2]
    f = 4
    small_u8 = cv2.resize(rect, (w // f, h // f), interpolation=cv2.INTER_AREA)
    small = to_linear(small_u8)
    k = int(3 * px_per_cm / f) | 1
    bg = to_linear(cv2.medianBlur(small_u8, k))
    sigma = 1.0 * px_per_cm / f
    grow = np.ones((3, 3), np.uint8)
    for _ in range(2):
        fg = cv2.dilate(_difference(small, bg), grow)
        keep = fg == 0
        if keep.sum() < 0.2 * keep.size:
            break
        smooth = _smooth_masked(small, keep, sigma)
        den = cv2.GaussianBlur(keep.astype(np.float32), (0, 0), sigma)
        bg = np.where((den > 0.05)[..., None], smooth, bg)
    return cv2.resize(bg, (w, h), interpolation=cv2.INTER_LINEAR)


def blobs(fg: np.ndarray) -> list[Blob]:
    n, labels, stats, cents = cv2.connectedComponentsWithStats(fg, connectivity=8)
    out = []
    for i in range(1, n):
        x, y, w, h, a = stats[i]
        out.append(Blob(labels == i, float(a), (float(cents[i][0]), float(cents[i][1])),
                        (int(x), int(y), int(w), int(h))))
    return out


def split_blob(blob: Blob, n: int, seed: int = 0) -> list[np.ndarray]:
    """Split a blob into ``n`` pieces (k-means on pixel positions); returns boolean masks."""
    if n <= 1:
        return [blob.mask]
    ys, xs = np.nonzero(blob.mask)
    pts = np.stack([xs, ys], axis=1).astype(np.float32)
    if len(pts) < n:
        return [blob.mask]
    crit = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 20, 0.5)
    cv2.setRNGSeed(seed)
    _, lab, _ = cv2.kmeans(pts, n, None, crit, 3, cv2.KMEANS_PP_CENTERS)
    lab = lab.ravel()
    masks = []
    for j in range(n):
        m = np.zeros_like(blob.mask)
        m[ys[lab == j], xs[lab == j]] = True
        masks.append(m)
    return masks
