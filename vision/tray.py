"""Find the tray's inner floor in a frame and map it to a top-down view.

Why: a cube has a known physical size (1 cm) only on the tray's floor plane. Once the floor is
mapped by a homography to a canvas of fixed pixels-per-centimetre, the segmenter can use that size
(instead of thresholds in image pixels, which change with the camera's height and angle), and
"is this cube in the tray?" becomes "is its footprint inside the canvas?".

How the floor is found without help: the floor is the largest smoothly shaded region near the
middle of the frame. It is grown from several seeds with a floating-range flood fill on a small
copy of the frame (so gentle vignetting and light gradients are followed, while the sharp crease
where floor meets wall stops it). Pieces that are the same paint in a shadow (same chromaticity,
darker) are merged. The convex hull of what was grown is reduced to the four-sided polygon that
best covers it. Cubes on the floor are holes in the grown region and disappear in the hull;
cubes on the table are outside the walls and never touch it.

A manual override (four corners, e.g. tapped on a snapshot) skips all of that.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from vision.errors import VisionError

TRAY_CM = (16.0, 10.0)  # inner floor, long side x short side
PX_PER_CM = 20.0  # resolution of the rectified floor: a cube's top is 20 x 20 px

_WORK_WIDTH = 288  # the floor is found on a copy this wide


@dataclass(frozen=True)
class TrayView:
    """The tray floor in a frame: its corners and the homographies to and from the top-down view.

    ``corners`` are in input-image pixels, ordered so that corner 0 -> 1 is a long side.
    ``to_rect`` maps image pixels to rectified pixels, ``to_image`` the reverse.
    """

    corners: np.ndarray  # (4, 2) float32
    to_rect: np.ndarray  # (3, 3)
    to_image: np.ndarray  # (3, 3)
    size: tuple[int, int]  # rectified (width, height) in px
    px_per_cm: float
    auto: bool = True

    def rectify(self, image: np.ndarray, interpolation: int = cv2.INTER_LINEAR) -> np.ndarray:
        return cv2.warpPerspective(
            image, self.to_rect, self.size, flags=interpolation, borderMode=cv2.BORDER_REPLICATE
        )

    def rect_to_image(self, pts: np.ndarray) -> np.ndarray:
        pts = np.asarray(pts, np.float64).reshape(-1, 1, 2)
        return cv2.perspectiveTransform(pts, self.to_image).reshape(-1, 2)

    def image_to_rect(self, pts: np.ndarray) -> np.ndarray:
        pts = np.asarray(pts, np.float64).reshape(-1, 1, 2)
        return cv2.perspectiveTransform(pts, self.to_rect).reshape(-1, 2)


def order_corners(pts: np.ndarray) -> np.ndarray:
    """Order four points clockwise (in image coordinates) starting so that 0 -> 1 is a long side."""
    pts = np.asarray(pts, np.float32).reshape(4, 2)
    c = pts.mean(axis=0)
    ang = np.arctan2(pts[:, 1] - c[1], pts[:, 0] - c[0])
    pts = pts[np.argsort(ang)]  # clockwise on screen (y points down)
    # start at the top-left-most point for stability
    start = int(np.argmin(pts[:, 0] + pts[:, 1]))
    pts = np.roll(pts, -start, axis=0)
    side = [np.linalg.norm(pts[(i + 1) % 4] - pts[i]) for i in range(4)]
    if side[0] + side[2] < side[1] + side[3]:
        pts = np.roll(pts, -1, axis=0)
    return pts


def view_from_corners(corners, *, px_per_cm: float = PX_PER_CM, auto: bool = False) -> TrayView:
    """Build the top-down mapping from four floor corners (any order) in image pixels."""
    try:
        pts = np.asarray(corners, np.float32).reshape(4, 2)
    except (ValueError, TypeError) as exc:
        raise VisionError("tray corners must be four (x, y) points") from exc
    if not np.all(np.isfinite(pts)):
        raise VisionError("tray corners must be finite numbers")
    pts = order_corners(pts)
    if cv2.contourArea(pts.reshape(-1, 1, 2)) < 100:
        raise VisionError("tray corners enclose almost no area")
    w = round(TRAY_CM[0] * px_per_cm)
    h = round(TRAY_CM[1] * px_per_cm)
    dst = np.float32([[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1]])
    to_rect = cv2.getPerspectiveTransform(pts, dst)
    to_image = cv2.getPerspectiveTransform(dst, pts)
    return TrayView(pts, to_rect, to_image, (w, h), px_per_cm, auto)


def _grow_floor(small: np.ndarray) -> np.ndarray:
    """Mask of the floor on the small frame: union of flood fills that look like one paint.

    Seeds near the middle; pieces of the same paint in shadow (same chromaticity, darker) are
    merged; regions that reach the frame's edge are table, not floor.
    """
    h, w = small.shape[:2]
    blur = cv2.GaussianBlur(small, (5, 5), 0)
    flags = 4 | cv2.FLOODFILL_MASK_ONLY | (255 << 8)
    regions = []
    taken = np.zeros((h, w), np.uint8)
    for fy in (0.5, 0.4, 0.6, 0.3, 0.7, 0.2, 0.8):
        for fx in (0.5, 0.4, 0.6, 0.3, 0.7, 0.2, 0.8):
            x, y = int(w * fx), int(h * fy)
            if taken[y, x]:
                continue
            mask = np.zeros((h + 2, w + 2), np.uint8)
            cv2.floodFill(blur, mask, (x, y), 0, (2, 2, 2), (2, 2, 2), flags)
            region = mask[1:-1, 1:-1]
            area = int(np.count_nonzero(region))
            taken |= region
            border = (
                region[0].any() or region[-1].any() or region[:, 0].any() or region[:, -1].any()
            )
            if area > 0.01 * h * w and not border:
                regions.append(region)
    if not regions:
        raise VisionError("tray not found: no large even floor in the middle of the frame")
    regions.sort(key=lambda r: -int(np.count_nonzero(r)))
    main = regions[0].copy()
    f = blur.astype(np.float32) + 1.0
    chroma = f / f.sum(axis=2, keepdims=True)

    def stats(r):
        sel = r > 0
        return chroma[sel].mean(axis=0), f[sel].sum(axis=1).mean()

    main_c, main_l = stats(main)
    kernel = np.ones((5, 5), np.uint8)
    changed = True
    rest = regions[1:]
    while changed:
        changed = False
        grown = cv2.dilate(main, kernel)
        keep = []
        for r in rest:
            c, lum = stats(r)
            touching = np.count_nonzero(grown & r) > 0
            same_paint = np.abs(c - main_c).max() < 0.04 and 0.15 < lum / main_l < 6.0
            if touching and same_paint:
                main |= r
                changed = True
            else:
                keep.append(r)
        rest = keep
    return main


def _edge_score(grad: np.ndarray, quad: np.ndarray) -> float:
    """Mean gradient magnitude along a quad's outline: trays are outlined by sharp edges."""
    h, w = grad.shape
    total, n = 0.0, 0
    for i in range(4):
        a, b = quad[i], quad[(i + 1) % 4]
        k = max(2, int(np.linalg.norm(b - a)))
        t = np.linspace(0, 1, k)
        xs = np.clip((a[0] + (b[0] - a[0]) * t).round().astype(int), 0, w - 1)
        ys = np.clip((a[1] + (b[1] - a[1]) * t).round().astype(int), 0, h - 1)
        total += float(grad[ys, xs].sum())
        n += k
    return total / max(n, 1)


def _tray_blob(small: np.ndarray, tol: int = 3) -> np.ndarray:
    """Mask of the tray on the small frame: everything a flood from the frame's edge cannot reach.

    The table, the tower and the room touch the frame's edge; the tray is an island in them, cut
    off by its rim. A floating-range flood from many seeds along the edge follows the table's light
    gradients but stops at the rim's sharp outline. The largest island is the tray.
    """
    h, w = small.shape[:2]
    blur = cv2.GaussianBlur(small, (5, 5), 0)
    mask = np.zeros((h + 2, w + 2), np.uint8)
    flags = 4 | cv2.FLOODFILL_MASK_ONLY | (255 << 8)
    step = 6
    seeds = [(x, 0) for x in range(0, w, step)] + [(x, h - 1) for x in range(0, w, step)]
    seeds += [(0, y) for y in range(0, h, step)] + [(w - 1, y) for y in range(0, h, step)]
    for x, y in seeds:
        if not mask[y + 1, x + 1]:
            cv2.floodFill(blur, mask, (x, y), 0, (tol,) * 3, (tol,) * 3, flags)
    island = (mask[1:-1, 1:-1] == 0).astype(np.uint8)
    island = cv2.morphologyEx(island, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    n, labels, stats, _ = cv2.connectedComponentsWithStats(island, connectivity=4)
    if n <= 1:
        raise VisionError("tray not found: nothing in the frame stands out from its surroundings")
    k = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    return (labels == k).astype(np.uint8)


def _quad_from_mask(mask: np.ndarray) -> np.ndarray:
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    if not contours:
        raise VisionError("tray not found")
    cnt = max(contours, key=cv2.contourArea)
    hull = cv2.convexHull(cnt)
    peri = cv2.arcLength(hull, True)
    quad = None
    for eps in np.linspace(0.01, 0.1, 19):
        approx = cv2.approxPolyDP(hull, eps * peri, True)
        if len(approx) == 4:
            quad = approx.reshape(4, 2).astype(np.float32)
            break
        if len(approx) < 4:
            break
    if quad is None:
        quad = cv2.boxPoints(cv2.minAreaRect(hull)).astype(np.float32)
    return quad


def find_tray(image: np.ndarray, *, px_per_cm: float = PX_PER_CM) -> TrayView:
    """Find the tray floor automatically; VisionError when nothing tray-like is in view."""
    h, w = image.shape[:2]
    scale = _WORK_WIDTH / w
    small = cv2.resize(image, (_WORK_WIDTH, max(8, round(h * scale))), interpolation=cv2.INTER_AREA)
    gray = cv2.GaussianBlur(cv2.cvtColor(small, cv2.COLOR_BGR2GRAY), (3, 3), 0).astype(np.float32)
    grad = cv2.magnitude(cv2.Sobel(gray, cv2.CV_32F, 1, 0), cv2.Sobel(gray, cv2.CV_32F, 0, 1))
    grad = cv2.dilate(grad, np.ones((3, 3), np.uint8))
    candidates = []
    reasons = []
    for finder in (_tray_blob, _grow_floor):
        try:
            mask = finder(small)
        except VisionError as exc:
            reasons.append(str(exc))
            continue
        if np.count_nonzero(mask) < 0.04 * mask.size:
            reasons.append("tray not found: the largest even region is too small to be the floor")
            continue
        quad = _quad_from_mask(mask)
        frac = cv2.contourArea(quad.reshape(-1, 1, 2)) / mask.size
        if not 0.05 < frac < 0.9:
            reasons.append("tray not found: no tray-sized outline")
            continue
        candidates.append((_edge_score(grad, quad), quad))
    if not candidates:
        raise VisionError(reasons[0] if reasons else "tray not found")
    candidates.sort(key=lambda c: -c[0])
    return view_from_corners(candidates[0][1] / scale, px_per_cm=px_per_cm, auto=True)
