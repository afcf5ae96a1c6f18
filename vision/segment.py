"""Separating cubes from the tray floor, and splitting touching cubes.

Why this way: on the rectified floor (see ``vision.tray``) a cube's footprint has a known size,
so the number of cubes in a blob follows from its area and a cube's area, not from thresholds in
image pixels. Cubes are found as pixels whose colour differs from a floor model: the empty-tray
frame when there is one (the best model: same light, same print), otherwise an estimate of the
bare floor made from the frame itself by masking out what stands out (``estimate_floor``).

Differences are per-channel log ratios of linear light. A shadow scales all three channels alike
(a uniform negative log ratio), so a moderate, colourless darkening is taken to be floor in
shadow, not a cube; a cube changes the colour, or the brightness by a large factor. That misses
cubes painted like the print (white on a pale print, brown on wood, black in a deep shadow), so
a second, weaker test looks for compact cube-sized regions of any change that are not attached
to a strong blob (a strong blob's faint fringe is its own shadow and shaded sides).

The walls around the floor are the same paint as the floor, lit differently: in the margin
band, without a reference, only a change of colour counts.
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
# The weak test: any change of lightness by this factor, or of colour by this log ratio.
WEAK_LIGHT = 1.22
WEAK_CHROMA = 0.08
# Linear light above which a channel of the floor model is taken as saturated (sRGB ~245).
SATURATED = 0.9
# Linear-light offset in the log ratios: keeps sensor noise in dark corners from looking like
# change (a few grey levels out of 255 in the dark).
NOISE_FLOOR = 0.01


@dataclass
class Blob:
    """One connected group of cube pixels on the rectified floor."""

    mask: np.ndarray  # bool, rectified size, only this blob
    area: float  # px
    centroid: tuple[float, float]
    bbox: tuple[int, int, int, int]
    weak: bool = False  # found only by the weak test
    edge: bool = False  # partly beyond the floor's outline
    expected: float = 0.0  # area one cube standing here would cover, px


def shadow_direction(bg_lin: np.ndarray, floor_box: tuple[int, int, int, int]) -> np.ndarray:
    """How the floor's colour changes from lit to shadowed, as a log-ratio direction (mean 1).

    A shadow is the floor lit by the room alone; when the room's light has another colour
    than the lamp's, shadows are tinted, not grey. The floor model itself shows lit and
    shadowed floor, so the main direction along which its log colour varies is the shadow's
    tint. A floor with little variation gives grey (1, 1, 1).
    """
    x0, y0, x1, y1 = floor_box
    v = np.log(bg_lin[y0:y1:4, x0:x1:4].reshape(-1, 3) + NOISE_FLOOR)
    v = v - v.mean(axis=0)
    cov = v.T @ v / max(len(v), 1)
    evals, evecs = np.linalg.eigh(cov)
    d = evecs[:, -1]
    if d.sum() < 0:
        d = -d
    # Only trust a clear, mostly-lightness direction (a strong shadow or a gradient).
    if evals[-1] < 0.01 or d.sum() / np.sqrt(3) < 0.8:
        return np.ones(3, np.float32)
    return (d / d.mean()).astype(np.float32)


def _log_change(
    rect_lin: np.ndarray,
    bg_lin: np.ndarray,
    shade: np.ndarray | None = None,
    clipped: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(lightness change, colour change) of frame over floor, in log ratios.

    Lightness change is measured along the shadow direction ``shade`` (grey if None): a
    shadow is pure lightness change; colour change is what is left, largest channel. A channel
    that is saturated in both frame and floor (``clipped``) says nothing and counts as unchanged.
    """
    lr = np.log(rect_lin + NOISE_FLOOR) - np.log(bg_lin + NOISE_FLOOR)
    if clipped is not None:
        lr[clipped] = 0.0
    d = np.ones(3, np.float32) if shade is None else shade
    t = (lr @ d) / float(d @ d)
    chroma = np.abs(lr - t[..., None] * d).max(axis=2)
    return t, chroma


def _difference(rect_lin: np.ndarray, bg_lin: np.ndarray) -> np.ndarray:
    m, chroma = _log_change(rect_lin, bg_lin)
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


def _fill_holes(mask: np.ndarray) -> np.ndarray:
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    out = np.zeros_like(mask)
    cv2.drawContours(out, contours, -1, 1, thickness=cv2.FILLED)
    return out


def floor_model(
    rect: np.ndarray,
    ref_rect: np.ndarray | None,
    px_per_cm: float,
    floor_box: tuple[int, int, int, int] | None = None,
) -> np.ndarray:
    """The bare floor (and walls) in linear light, from the reference or from the frame."""
    if ref_rect is not None:
        rect_lin = to_linear(rect)
        ref_lin = to_linear(ref_rect)
        ratio = (rect_lin[::3, ::3] + NOISE_FLOOR) / (ref_lin[::3, ::3] + NOISE_FLOOR)
        gain = np.median(ratio.reshape(-1, 3), axis=0)  # exposure / white-balance drift
        return ref_lin * gain
    return estimate_floor(rect, px_per_cm, floor_box)


def cube_masks(
    rect: np.ndarray,
    bg_lin: np.ndarray,
    px_per_cm: float,
    floor_box: tuple[int, int, int, int],
    *,
    have_reference: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """(strong, weak) cube masks on the rectified view.

    Weak: a faint change of colour, away from strong blobs (their fringes are JPEG colour
    bleed, shaded sides and shadows); it is only believed later if cube-shaped.
    """
    rect_lin = to_linear(rect)
    shade = shadow_direction(bg_lin, floor_box)
    clipped = (rect >= 250) & (bg_lin >= SATURATED)
    m, chroma = _log_change(rect_lin, bg_lin, shade, clipped)
    strong = (chroma > CHROMA_STEP) | (m < np.log(SHADOW_FLOOR)) | (m > np.log(BRIGHT_CEIL))
    weak = (chroma > WEAK_CHROMA) | (m > np.log(WEAK_LIGHT))
    darker = m < -np.log(WEAK_LIGHT)
    x0, y0, x1, y1 = floor_box
    band = np.ones(strong.shape, bool)
    band[y0:y1, x0:x1] = False
    if not have_reference:
        # walls: same paint, other light, and no model of them without a reference
        strong &= ~band
    weak &= ~band
    cube_area = px_per_cm * px_per_cm
    strong = _clean(strong.astype(np.uint8), 0.2 * cube_area)
    if not have_reference:
        # the floor estimated from the frame itself is too rough for the weak test
        return strong, np.zeros_like(strong)
    near = cv2.dilate(strong, np.ones((7, 7), np.uint8)) > 0
    weak = _clean((weak & ~near).astype(np.uint8), 0.4 * cube_area)
    # Darkening alone is a shadow, unless it is the L of shaded sides and shadow around a top
    # that matches the print (a white cube on a pale print): such an L joins the weak mask as
    # its convex hull; a solid dark patch does not.
    darker = _clean((darker & ~near & ~band).astype(np.uint8), 0.3 * cube_area)
    contours, _ = cv2.findContours(darker, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    for c in contours:
        hull = cv2.convexHull(c)
        if cv2.contourArea(c) < 0.75 * max(cv2.contourArea(hull), 1.0):
            cv2.fillConvexPoly(weak, hull, 1)
    return strong, weak


def estimate_floor(
    rect: np.ndarray, px_per_cm: float, floor_box: tuple[int, int, int, int] | None = None
) -> np.ndarray:
    """The bare floor under everything, from one frame (no empty-tray reference); linear light.

    Works on a 4x smaller copy (the floor's light changes slowly). A median about three cubes
    wide gives a first floor that follows shading and shadow edges and ignores scattered cubes;
    what differs from it is masked out, and a masked Gaussian average (normalised convolution)
    of the rest fills in under the cubes. Two rounds, so that clusters which fooled the median
    are masked the second time. Only the floor box is used (walls are other light).
    """
    h, w = rect.shape[:2]
    f = 4
    on_floor = np.ones((h // f, w // f), bool)
    if floor_box is not None:
        x0, y0, x1, y1 = (v // f for v in floor_box)
        on_floor[:] = False
        on_floor[y0 + 1: y1 - 1, x0 + 1: x1 - 1] = True
    small_u8 = cv2.resize(rect, (w // f, h // f), interpolation=cv2.INTER_AREA)
    small = to_linear(small_u8)
    k = int(3 * px_per_cm / f) | 1
    bg = to_linear(cv2.medianBlur(small_u8, k))
    sigma = 1.0 * px_per_cm / f
    grow = np.ones((3, 3), np.uint8)
    for _ in range(2):
        fg = cv2.dilate(_difference(small, bg), grow)
        keep = (fg == 0) & on_floor
        if keep.sum() < 0.2 * keep.size:
            break
        mk = keep.astype(np.float32)
        num = cv2.GaussianBlur(small * mk[..., None], (0, 0), sigma)
        den = cv2.GaussianBlur(mk, (0, 0), sigma)[..., None]
        bg = np.where(den > 0.05, num / np.maximum(den, 1e-4), bg)
    return cv2.resize(bg, (w, h), interpolation=cv2.INTER_LINEAR)


def blobs(strong: np.ndarray, weak: np.ndarray | None = None) -> list[Blob]:
    out = []
    for mask, is_weak in ((strong, False), (weak, True)):
        if mask is None:
            continue
        if is_weak:
            mask = _fill_holes(mask)
        n, labels, stats, cents = cv2.connectedComponentsWithStats(mask, connectivity=8)
        for i in range(1, n):
            x, y, w, h, a = stats[i]
            out.append(Blob(labels == i, float(a), (float(cents[i][0]), float(cents[i][1])),
                            (int(x), int(y), int(w), int(h)), is_weak))
    return out


def split_blob(blob: Blob, n: int, seed: int = 0) -> list[np.ndarray]:
    """Split a blob into ``n`` pieces (k-means on pixel positions); returns boolean masks.

    Touching cubes of one colour are compact squares of known size side by side, so the pixel
    positions cluster around their centres. K-means runs on a subsample (speed) and every
    pixel then goes to its nearest centre.
    """
    if n <= 1:
        return [blob.mask]
    ys, xs = np.nonzero(blob.mask)
    pts = np.stack([xs, ys], axis=1).astype(np.float32)
    if len(pts) < n:
        return [blob.mask]
    step = max(1, len(pts) // 600)
    crit = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 15, 0.5)
    cv2.setRNGSeed(seed)
    _, _, centres = cv2.kmeans(pts[::step], n, None, crit, 2, cv2.KMEANS_PP_CENTERS)
    d = ((pts[:, None, :] - centres[None]) ** 2).sum(axis=2)
    lab = d.argmin(axis=1)
    masks = []
    for j in range(n):
        m = np.zeros_like(blob.mask)
        m[ys[lab == j], xs[lab == j]] = True
        masks.append(m)
    return masks

