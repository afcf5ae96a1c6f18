"""Find the tray's inner floor in a frame and map it to a top-down view.

Why: a cube has a known physical size (1 cm) only on the tray's floor plane. Once the floor is
mapped by a homography to a canvas of fixed pixels-per-centimetre, the segmenter can use that size
(instead of thresholds in image pixels, which change with the camera's height and angle), and
"is this cube in the tray?" becomes "is its footprint inside the canvas?".

How the floor is found without help: the crease where floor meets wall and the rim standing
against the table are sharp edges (in lightness or colour); shading, vignetting and soft shadows
are not. The largest edge-bounded region in the middle of the frame seeds the floor, what
reaches the frame's edge seeds "not tray", and a watershed settles the pixels in between (see
``_floor_by_edges``). The convex hull of the result is reduced to the four-sided polygon that
best covers it. Cubes on the floor are holes in the region and disappear in the hull; cubes on
the table are beyond the walls and never join it.

A manual override (four corners, e.g. tapped on a snapshot) skips all of that.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import cv2
import numpy as np

from vision.colours import row_medians
from vision.errors import VisionError

TRAY_CM = (16.0, 10.0)  # inner floor, long side x short side
PX_PER_CM = 20.0  # resolution of the rectified floor: a cube's top is 20 x 20 px
MARGIN_CM = 1.0  # band kept around the floor in the rectified view

# A wall's inner face let into the outline: a band differing by more than WALL_STEP (log
# lightness) from the floor, up to WALL_MAX_CM wide, ending in a step sharper than
# WALL_CREASE_CM (the crease; soft shadows fade over more).
WALL_STEP = 0.4
WALL_MAX_CM = 2.5
WALL_CREASE_CM = 0.15

# The tower's side: what lies SURROUND_CM beyond each side; odd by colour or lightness.
SURROUND_CM = (3.0, 5.0)
ODD_AB = 8.0  # CIE a, b units
ODD_LOG_L = 0.5
ODD_FACTOR = 3.0
# A surrounding zone counts when this much of it (cm^2, on the table) is in the frame: enough
# for a median colour, however little of the zone that is (a tower side near the frame's edge
# shows only a corner of its zones).
ZONE_IN_VIEW_CM2 = 2.0
# Kept beyond the tower's side on top of MARGIN_CM. One cube (1.0) keeps the cubes standing in
# the mouth's shadow whole, but also lets the cubes still on the ramp in: with today's counter
# that cost more than it gave (trays-rendered holdout with reference 21 -> 19 of 26), so 0.
HIDDEN_EXTRA_CM = 0.0

# A side past both ends of which the neighbouring sides' lines run on this far is a shadow's
# edge across the floor, not its end (``_past_shadow_edges``): further than a cube at the crease
# could line up with a side.
RUN_ON_CM = 1.0

# The tower's side from its crease's ends (``_tower_side_by_ends``): each end is looked at over
# this stretch of the side (fractions from its corner: the 3 cm beside the wall, where the
# mouth's cubes seldom stand), for lines within END_REACH_CM of the side found (sides found
# along the mouth have been up to 1.3 cm off the crease).
END_STRETCH = (0.02, 0.2)
END_REACH_CM = 2.0
# An outline whose shape is within this of a 16 x 10 rectangle seen through a pinhole camera
# (``_aspect_misfit``: about a log aspect ratio) is left as found: 0.04 is a side about 0.4 cm
# off on the 10 cm sides; the tower's side is re-found only for outlines further off, and only
# a re-found side that brings the shape within it is kept.
SHAPE_TOL = 0.04

_WORK_WIDTH = 576  # the floor is found on a copy this wide


@dataclass(frozen=True)
class TrayView:
    """The tray floor in a frame: its corners and the homographies to and from the top-down view.

    ``corners`` are in input-image pixels, ordered so that corner 0 -> 1 is a long side.
    ``to_rect`` maps image pixels to rectified pixels, ``to_image`` the reverse.
    """

    corners: np.ndarray  # (4, 2) float32
    to_rect: np.ndarray  # (3, 3)
    to_image: np.ndarray  # (3, 3)
    size: tuple[int, int]  # rectified (width, height) in px, floor plus margin all round
    px_per_cm: float
    auto: bool = True
    margin: int = 0  # px of wall/rim band kept around the floor in the rectified view
    image_size: tuple[int, int] | None = None  # (width, height) of the frame, when known
    # px kept beyond each side (top = corner 0 -> 1, right, bottom, left); None: ``margin`` all
    # round. A side hidden by an occluder keeps more (``hidden``).
    pads: tuple[int, int, int, int] | None = None
    hidden: int | None = None  # the side (0-3, as ``pads``) whose floor runs under an occluder

    @property
    def pad(self) -> tuple[int, int, int, int]:
        return self.pads if self.pads is not None else (self.margin,) * 4

    def camera(self) -> tuple[np.ndarray, np.ndarray] | None:
        """Pinhole camera (K, 3x4 [R|t] in cm) implied by the floor's outline, if sensible.

        Principal point at the frame's centre, square pixels; the focal length is the one that
        makes the outline a rectangle (``rectangle_aspect``), or a typical lens when the view
        is too straight-on to tell. World: floor corner 0 at the origin, X along the long side,
        Z up towards the camera, in cm. Worked out once per view (every blob asks).
        """
        return self._camera

    @cached_property
    def _camera(self) -> tuple[np.ndarray, np.ndarray] | None:
        if self.image_size is None:
            return None
        w, h = self.image_size
        centre = (w / 2.0, h / 2.0)
        _, f = rectangle_aspect(self.corners, centre)
        if f is None or not 0.3 * w < f < 5 * w:
            f = 1.6 * centre[0]
        K = np.array([[f, 0, centre[0]], [0, f, centre[1]], [0, 0, 1.0]])
        ppc, (mt, _, _, ml) = self.px_per_cm, self.pad
        cm_to_rect = np.array([[ppc, 0, ml], [0, ppc, mt], [0, 0, 1.0]])
        M = np.linalg.inv(K) @ self.to_image @ cm_to_rect
        lam = 2.0 / (np.linalg.norm(M[:, 0]) + np.linalg.norm(M[:, 1]))
        r1, r2, t = M[:, 0] * lam, M[:, 1] * lam, M[:, 2] * lam
        if (r1 * 8 + r2 * 5 + t)[2] < 0:  # the floor's middle must be in front of the camera
            r1, r2, t = -r1, -r2, -t
        r3 = np.cross(r1, r2)
        R = np.stack([r1, r2, r3], axis=1)
        if (-(R.T @ t))[2] < 0:  # +Z must point from the floor towards the camera
            R[:, 2] = -r3
        Rt = np.hstack([R, t[:, None]])
        K.setflags(write=False)  # shared by every caller of this view
        Rt.setflags(write=False)
        return K, Rt

    def cube_footprint(self, x: float, y: float) -> float | None:
        """Area (rectified px) that a 1 cm cube standing at rectified (x, y) covers when its
        picture is mapped onto the floor plane: its top and the sides the camera sees."""
        cam = self.camera()
        if cam is None:
            return None
        K, Rt = cam
        mt, _, _, ml = self.pad
        X, Y = (x - ml) / self.px_per_cm, (y - mt) / self.px_per_cm
        areas = []
        for deg in (0.0, 45.0):
            a = np.radians(deg)
            c, s_ = np.sqrt(0.5) * np.cos(a), np.sqrt(0.5) * np.sin(a)  # half a diagonal
            base = [(X + c, Y + s_), (X - s_, Y + c), (X - c, Y - s_), (X + s_, Y - c)]
            pts3 = np.array([(px, py, z, 1.0) for px, py in base for z in (0.0, 1.0)]).T
            img = K @ Rt @ pts3
            if np.any(img[2] <= 0):
                return None
            uv = (img[:2] / img[2]).T.reshape(-1, 1, 2)
            rect = cv2.perspectiveTransform(uv, self.to_rect).reshape(-1, 2).astype(np.float32)
            areas.append(cv2.contourArea(cv2.convexHull(rect)))
        return float(np.mean(areas))

    @property
    def floor_box(self) -> tuple[int, int, int, int]:
        """The floor proper in rectified pixels: x0, y0, x1, y1."""
        w, h = self.size
        mt, mr, mb, ml = self.pad
        return ml, mt, w - mr, h - mb

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


def view_from_corners(
    corners,
    *,
    px_per_cm: float = PX_PER_CM,
    auto: bool = False,
    margin_cm: float = MARGIN_CM,
    image_size: tuple[int, int] | None = None,
    hidden_at=None,
    hidden_cm: float = 0.0,
) -> TrayView:
    """Build the top-down mapping from four floor corners (any order) in image pixels.

    The rectified view keeps ``margin_cm`` around the floor: a cube against a wall, seen from
    the side, reaches past the crease in the picture and must not be cut in half. The side
    nearest the image point ``hidden_at`` (if given) is one an occluder hides the floor's end
    beyond: there ``hidden_cm`` is kept beyond the side instead (see ``hidden_side``).
    """
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
    m = round(margin_cm * px_per_cm)
    pads, hidden = None, None
    if hidden_at is not None:
        mids = (pts + np.roll(pts, -1, axis=0)) / 2
        hidden = int(np.argmin(np.linalg.norm(mids - np.asarray(hidden_at, np.float32), axis=1)))
        pads = [m] * 4
        pads[hidden] = max(m, round(hidden_cm * px_per_cm))
        pads = tuple(pads)
    mt, mr, mb, ml = pads if pads is not None else (m,) * 4
    dst = np.float32([[ml, mt], [ml + w - 1, mt], [ml + w - 1, mt + h - 1], [ml, mt + h - 1]])
    to_rect = cv2.getPerspectiveTransform(pts, dst)
    to_image = cv2.getPerspectiveTransform(dst, pts)
    size = (w + ml + mr, h + mt + mb)
    return TrayView(pts, to_rect, to_image, size, px_per_cm, auto, m, image_size, pads, hidden)


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


def _blurred(small: np.ndarray) -> np.ndarray:
    """The working copy blurred (5 x 5 Gaussian): what edges and the watershed look at."""
    return cv2.GaussianBlur(small, (5, 5), 0)


def _edges(small: np.ndarray, blur: np.ndarray | None = None) -> np.ndarray:
    """Sharp edges in lightness or colour (Canny on each Lab channel of a blurred copy;
    ``blur``: that copy, when already made)."""
    lab = cv2.cvtColor(_blurred(small) if blur is None else blur, cv2.COLOR_BGR2Lab)
    lum, a, b = cv2.split(lab)  # (contiguous planes: Canny is slower on strided ones)
    e = cv2.Canny(lum, 20, 50)
    e |= cv2.Canny(a, 20, 50)
    e |= cv2.Canny(b, 20, 50)
    return e


def _core(free: np.ndarray, r: float) -> np.ndarray:
    """The pixels of ``free`` farther than ``r`` from every pixel outside it, distance as
    ``cv2.distanceTransform(free, cv2.DIST_L2, 3)`` measures it: the same pixels as
    ``distanceTransform(...) > r``, several times faster at the small radii tried first.

    That distance is a chamfer metric (a sum of fixed steps along and across), so "farther
    than r from every outside pixel" is ``free`` eroded by the ball of radius r in that
    metric; the ball is measured by the same transform from one outside pixel. The frame's
    edge counts as far, as it does for the transform."""
    n = int(np.ceil(r)) + 2  # (a step along is just under 1: the ball fits well inside)
    probe = np.ones((2 * n + 1, 2 * n + 1), np.uint8)
    probe[n, n] = 0
    ball = (cv2.distanceTransform(probe, cv2.DIST_L2, 3) <= r).astype(np.uint8)
    rows, cols = np.flatnonzero(ball.any(axis=1)), np.flatnonzero(ball.any(axis=0))
    ball = ball[rows[0]: rows[-1] + 1, cols[0]: cols[-1] + 1]  # (symmetric: centre kept)
    return cv2.erode(free, ball, borderType=cv2.BORDER_CONSTANT, borderValue=1)


def _floor_by_edges(small: np.ndarray, edges: np.ndarray,
                    blur: np.ndarray | None = None) -> list[np.ndarray]:
    """The floor as the large edge-bounded region in the middle of the frame, holes filled.

    Walls meet the floor in a crease and the rim stands against the table: both are sharp
    edges; shading, vignetting and soft shadows are not. The edge-free pixels are shrunk by a
    few pixels so that small gaps in an outline cannot join floor and table; the central piece
    (and pieces of the same paint beside it, e.g. in a shadow) seeds the floor, every other piece
    and the frame's edge seed "not floor", and a watershed on the colour image decides the
    pixels in between.

    Returns one or two masks: the second is a second opinion in which large inner pieces beside
    the floor count as floor too (a hard shadow across the tray splits the floor in two).
    """
    h, w = small.shape[:2]
    e = cv2.dilate(edges, np.ones((3, 3), np.uint8))
    free = (e == 0).astype(np.uint8)
    blur = _blurred(small) if blur is None else blur
    for r in (4.0, 7.0, 11.0):
        core = _core(free, r)
        # (labels and a count: OpenCV's version with statistics is several times slower)
        n, labels = cv2.connectedComponents(core, connectivity=4)
        areas = np.bincount(labels.ravel(), minlength=n)
        if n <= 1:
            continue
        central = np.bincount(labels[h // 4: 3 * h // 4, w // 4: 3 * w // 4].ravel(),
                              minlength=n)
        border = np.zeros(n, int)
        for edge in (labels[0], labels[-1], labels[:, 0], labels[:, -1]):
            border += np.bincount(edge.ravel(), minlength=n)
        # the best-scoring large piece not running along the frame's edge (the first of
        # equals, as a loop over the labels would take)
        score = np.where((areas >= 0.02 * h * w) & (border <= 0.1 * (w + h)),
                         central + 0.25 * areas, 0.0)
        score[0] = 0.0
        best = int(np.argmax(score))
        if score[best] > 0.0:
            break
    else:
        raise VisionError("tray not found: no large region enclosed by edges in the middle")
    # Only the central piece is sure to be floor and only what reaches the frame's edge is sure
    # not to be; the watershed gives everything else (the floor in a shadow, walls, cubes) to
    # whichever side it is joined to by the weaker edge.
    # (seeds by a look-up per label: one pass over the frame)
    seed = np.where(border > 0, 1, 0).astype(np.int32)
    seed[0], seed[best] = 0, 2
    markers = np.take(seed, labels)  # (np.take: faster than indexing, the same values)
    markers[0, :] = markers[-1, :] = markers[:, 0] = markers[:, -1] = 1
    opinions = [markers]
    extra = (areas > 0.015 * h * w) & (border == 0)  # large inner pieces...
    extra[[0, best]] = False
    if extra.any():  # ... beside the floor's (only looked for when there are any)
        near = cv2.dilate((labels == best).view(np.uint8), np.ones((int(4 * r) + 9,) * 2))
        extra &= np.bincount(labels[near > 0], minlength=n) > 0
    if extra.any():
        seed[extra] = 2
        second = np.take(seed, labels)
        second[0, :] = second[-1, :] = second[:, 0] = second[:, -1] = 1
        opinions.append(second)
    out = []
    for mk in opinions:
        cv2.watershed(blur, mk)
        region = (mk == 2).astype(np.uint8)
        contours, _ = cv2.findContours(region, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        if not contours:
            continue
        filled = np.zeros_like(region)
        cv2.drawContours(filled, [max(contours, key=cv2.contourArea)], -1, 1, cv2.FILLED)
        out.append(filled)
    if not out:
        raise VisionError("tray not found")
    return out


def rectangle_aspect(
    quad: np.ndarray, centre: tuple[float, float], f_assumed: float | None = None
) -> tuple[float, float | None]:
    """Long/short aspect of the rectangle whose perspective image is ``quad``, and the focal
    length that implies (None when the view is too nearly straight-on to tell).

    Pinhole camera, square pixels, principal point at ``centre``: the images h1, h2 of the
    rectangle's two axes must be orthogonal once the focal length is divided out, which fixes
    the focal length; then their lengths give the aspect.
    """
    q = np.asarray(quad, np.float64).reshape(4, 2) - np.asarray(centre, np.float64)
    unit = np.float32([[0, 0], [1, 0], [1, 1], [0, 1]])
    H = cv2.getPerspectiveTransform(unit, q.astype(np.float32)).astype(np.float64)
    h1, h2 = H[:, 0], H[:, 1]
    num = -(h1[0] * h2[0] + h1[1] * h2[1])
    den = h1[2] * h2[2]
    f = None
    if abs(den) > 1e-12 and num / den > 0:
        f = float(np.sqrt(num / den))
    # undetermined (no perspective along one axis): assume a lens, by default ~64 degrees across
    ff = f if f is not None else (f_assumed or 1.6 * float(centre[0]))
    v1 = np.array([h1[0] / ff, h1[1] / ff, h1[2]])
    v2 = np.array([h2[0] / ff, h2[1] / ff, h2[2]])
    r = float(np.linalg.norm(v1) / max(np.linalg.norm(v2), 1e-12))
    return max(r, 1 / max(r, 1e-12)), f


def _aspect_misfit(quad: np.ndarray, centre, width: float) -> float:
    """How far a quad is from a 16 x 10 rectangle seen through some plausible pinhole lens.

    When the outline fixes the focal length, that one; when it does not (perspective along one
    axis only), the best of a range of lenses from very wide to long.
    """
    want = TRAY_CM[0] / TRAY_CM[1]
    aspect, f = rectangle_aspect(quad, centre)
    if f is not None:
        miss = abs(np.log(aspect / want))
        return miss + (0.0 if 0.3 * width < f < 5 * width else 0.5)
    q = np.asarray(quad, np.float64).reshape(4, 2) - np.asarray(centre, np.float64)
    unit = np.float32([[0, 0], [1, 0], [1, 1], [0, 1]])
    H = cv2.getPerspectiveTransform(unit, q.astype(np.float32)).astype(np.float64)
    fs = np.geomspace(0.4 * width, 4 * width, 12)[:, None]
    n1 = np.hypot(np.hypot(H[0, 0] / fs, H[1, 0] / fs), H[2, 0])
    n2 = np.hypot(np.hypot(H[0, 1] / fs, H[1, 1] / fs), H[2, 1])
    r = n1 / np.maximum(n2, 1e-12)
    r = np.maximum(r, 1 / np.maximum(r, 1e-12))
    return float(np.min(np.abs(np.log(r / want))))


def _intersect_sides(lines, fallback: np.ndarray) -> np.ndarray:
    out = []
    for i in range(4):
        p1, p2 = lines[(i - 1) % 4]
        p3, p4 = lines[i]
        d1, d2 = p2 - p1, p4 - p3
        den = d1[0] * d2[1] - d1[1] * d2[0]
        if abs(den) < 1e-9:
            out.append(fallback[i])
            continue
        s_ = ((p3[0] - p1[0]) * d2[1] - (p3[1] - p1[1]) * d2[0]) / den
        out.append(p1 + s_ * d1)
    return np.array(out, np.float32)


def _along_border(a: np.ndarray, b: np.ndarray, w: int, h: int) -> bool:
    """Whether the segment a-b runs along one of the frame's edges (the region touched it: the
    watershed's "not floor" seeds hold only the outermost pixels)."""
    tol = 3.0
    return any(
        max(abs(a[k] - edge), abs(b[k] - edge)) < tol
        for k, size in ((0, w), (1, h)) for edge in (0.0, size - 1.0)
    )


def _sample_grid(px: np.ndarray, py: np.ndarray, w: int, h: int):
    """Pixel indices of sample points (nearest pixel, clamped to the frame) and which points
    lie in the frame; None for the latter when all do, as they mostly do (the sides sweep the
    frame's middle), which spares the clamps and the tests."""
    xr, yr = np.round(px), np.round(py)
    if px.min() >= 0 and py.min() >= 0 and xr.max() <= w - 1 and yr.max() <= h - 1:
        return xr.astype(int), yr.astype(int), None
    xs = np.minimum(np.maximum(xr.astype(int), 0), w - 1)
    ys = np.minimum(np.maximum(yr.astype(int), 0), h - 1)
    return xs, ys, (px >= 0) & (px < w) & (py >= 0) & (py < h)


def _runs(flags: np.ndarray) -> list[tuple[int, int]]:
    """(first, last) index of each run of True in a 1-D boolean array, in order.

    Why (speed only): ``_refine_sides`` looked for its runs of good offsets one offset at a
    time in Python, some hundreds per side; the runs' ends are two array comparisons."""
    step = np.diff(np.concatenate(([0], flags.astype(np.int8), [0])))
    return list(zip(np.flatnonzero(step == 1).tolist(), (np.flatnonzero(step == -1) - 1).tolist(),
                    strict=True))


def _refine_sides(quad: np.ndarray, edges: np.ndarray, gray: np.ndarray) -> np.ndarray:
    """Move the sides of a rough quad onto the long straight edges near them.

    The rough quad may run along the rim, along the crease where floor meets wall, or stop at
    a hard shadow's edge. Per side, the candidates are long straight lines parallel to it (most
    of their middle stretch on edge pixels whose gradient runs across the side; a row of cubes
    is never that straight). Of all combinations, the one kept is the one whose shape is most
    like the tray's known 16 x 10 proportions seen through a pinhole camera, preferring the
    innermost lines (the floor is inside the walls) when shapes are alike.
    """
    h, w = edges.shape
    gx = cv2.Sobel(gray, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(gray, cv2.CV_32F, 0, 1, ksize=3)
    centre = quad.mean(axis=0)
    diag = float(np.hypot(h, w))
    offsets = np.arange(-0.01 * diag, 0.08 * diag, 1.0)
    tilts = np.array([-4.0, -2.0, 0.0, 2.0, 4.0])
    t = np.linspace(0.12, 0.88, 48)
    options = []  # per side: list of (line, rank) with rank 0 = innermost
    for i in range(4):
        a, b = quad[i].astype(np.float64), quad[(i + 1) % 4].astype(np.float64)
        u = b - a
        n = np.array([-u[1], u[0]]) / max(np.linalg.norm(u), 1e-6)
        if np.dot(centre - (a + b) / 2, n) < 0:
            n = -n
        offs, border = offsets, None
        if _along_border(a, b, w, h):
            border = (a, b)
            # a side on the frame's edge is no side of the tray: the region ran out of the
            # frame (over the tower's body, say); the side lies further in, about parallel to
            # the opposite one
            c_, d_ = quad[(i + 2) % 4].astype(np.float64), quad[(i + 3) % 4].astype(np.float64)
            v = (d_ - c_) if np.dot(d_ - c_, u) > 0 else (c_ - d_)
            v = v / max(np.linalg.norm(v), 1e-6) * np.linalg.norm(u)
            mid_ = (a + b) / 2
            a, b = mid_ - v / 2, mid_ + v / 2
            u = b - a
            n = np.array([-u[1], u[0]]) / max(np.linalg.norm(u), 1e-6)
            if np.dot(centre - mid_, n) < 0:
                n = -n
            offs = np.arange(-0.01 * diag, 0.3 * diag, 1.0)
        # shift (O, T, S): offset, tilt, sample
        shift = offs[:, None, None] + tilts[None, :, None] * (2 * t[None, None, :] - 1)
        # (x and y apart: the same arithmetic as on (..., 2) points, several times faster)
        px = (a[0] + t * u[0]) + shift * n[0]
        py = (a[1] + t * u[1]) + shift * n[1]
        xs, ys, inside = _sample_grid(px, py, w, h)
        # edge pixels whose gradient runs across this side (a side's edge, not a cube's), only
        # in the band the candidate lines sweep (one pixel more for the dilation)
        bx0, by0 = max(0, int(xs.min()) - 1), max(0, int(ys.min()) - 1)
        bx1, by1 = min(w, int(xs.max()) + 2), min(h, int(ys.max()) + 2)
        gxb, gyb = gx[by0:by1, bx0:bx1], gy[by0:by1, bx0:bx1]
        mag = np.sqrt(gxb * gxb + gyb * gyb) + 1e-6  # (in the band only)
        across = np.abs(gxb * n[0] + gyb * n[1]) > 0.85 * mag
        e = cv2.dilate(((edges[by0:by1, bx0:bx1] > 0) & across).astype(np.uint8),
                       np.ones((3, 3), np.uint8)) > 0
        hit = np.take(e.ravel(), (ys - by0) * e.shape[1] + (xs - bx0))  # (flat: faster)
        on = hit if inside is None else hit & inside
        # (O, T): the share of samples on edge; counted as bytes (at most 48), the same
        # quotients as numpy's mean of booleans, in half the time
        support = on.view(np.uint8).sum(axis=2, dtype=np.uint8) / on.shape[2]
        best_tilt = support.argmax(axis=1)
        best = support[np.arange(len(offs)), best_tilt]
        good = best >= max(0.5, 0.6 * best.max())
        # one candidate per run of good offsets (an edge band is a few px wide): its peak
        cands = []
        for j, k in _runs(good):
            peak = j + int(np.argmax(best[j: k + 1]))
            d, tilt = offs[peak], tilts[best_tilt[peak]]
            cands.append((a + (d - tilt) * n, b + (d + tilt) * n))
        if not cands:
            cands = [(a, b)]
        cands = cands[::-1][:3]  # innermost first, at most three
        if border is not None and all(np.any(c[0] != border[0]) for c in cands):
            # or the floor does run out of the frame there: the shape decides
            cands.append(border)
        options.append(cands)
    best_choice, best_score = None, np.inf
    small_centre = (w / 2.0, h / 2.0)
    area0 = cv2.contourArea(quad.reshape(-1, 1, 2))
    for choice in np.ndindex(*[len(o) for o in options]):
        lines = [options[i][c] for i, c in enumerate(choice)]
        cand = _intersect_sides(lines, quad)
        c2 = cand.reshape(-1, 1, 2)
        if not cv2.isContourConvex(c2) or cv2.contourArea(c2) < 0.4 * area0:
            continue
        score = _aspect_misfit(cand, small_centre, w) + 0.1 * sum(choice)
        if score < best_score:
            best_choice, best_score = choice, score
    if best_choice is None:
        return quad
    return _past_shadow_edges(list(best_choice), options, quad, edges, gx, gy)


def _corner_runs_on(p: np.ndarray, d: np.ndarray, run: float, edges: np.ndarray,
                    gx: np.ndarray, gy: np.ndarray) -> bool:
    """Whether a straight edge runs on from corner ``p`` along unit direction ``d`` for ``run``
    px (most of that stretch on edge pixels whose gradient runs across it)."""
    h, w = edges.shape
    steps = np.arange(1.0, max(run, 1.0) + 1.0)
    px, py = p[0] + steps * d[0], p[1] + steps * d[1]
    xs, ys, inside = _sample_grid(px, py, w, h)
    if inside is not None and inside.mean() < 0.5:
        return False
    gxs, gys = gx[ys, xs], gy[ys, xs]
    across = np.abs(gxs * d[1] - gys * d[0]) > 0.85 * (np.hypot(gxs, gys) + 1e-6)
    hit = (edges[ys, xs] > 0) & across
    if inside is not None:
        hit &= inside
    return bool(hit.mean() >= 0.5)


def _runs_past(cand: np.ndarray, i: int, near: np.ndarray, gx: np.ndarray,
               gy: np.ndarray) -> bool:
    """Whether the lines of both sides beside side i of ``cand`` run on past its ends for
    ``RUN_ON_CM`` (each side's px per cm from its own length: 16 or 10 cm)."""
    lengths = [float(np.linalg.norm(cand[(k + 1) % 4] - cand[k])) for k in range(4)]
    long_pair = 0 if lengths[0] + lengths[2] >= lengths[1] + lengths[3] else 1
    ends = ((i, (i - 1) % 4, (i - 1) % 4), ((i + 1) % 4, (i + 2) % 4, (i + 1) % 4))
    for corner, other, k in ends:  # (the corner, the far end of side k beside it)
        cm = TRAY_CM[0] if k % 2 == long_pair else TRAY_CM[1]
        d = cand[corner].astype(np.float64) - cand[other].astype(np.float64)
        size = float(np.linalg.norm(d))
        if not _corner_runs_on(cand[corner].astype(np.float64), d / max(size, 1e-6),
                               RUN_ON_CM * size / cm, near, gx, gy):
            return False
    return True


def _past_shadow_edges(choice: list[int], options, quad: np.ndarray, edges: np.ndarray,
                       gx: np.ndarray, gy: np.ndarray) -> np.ndarray:
    """The chosen quad, each side that is a shadow's edge moved out onto the floor's end.

    The floor ends where its sides meet: at a corner the creases of the two sides end. A
    shadow's edge across the floor (a wall's, parallel to it) is a straight edge too, but the
    creases of the sides beside it run on past it to the true corners, through the shadow. So
    a side past both of whose ends the neighbouring sides' lines run on for ``RUN_ON_CM`` more
    (further than a cube standing at the crease could line up with it) is no end of the floor:
    the next candidate line outward is tried, until one is an end. When none is, the
    side stays where it was found: a line part-way into the shadow would only let a strip of
    shadow in.
    """
    near = cv2.dilate(edges, np.ones((3, 3), np.uint8))
    found = list(choice)
    settled = [False] * 4
    for _ in range(sum(len(o) for o in options) + 4):
        cand = _intersect_sides([options[i][c] for i, c in enumerate(choice)], quad)
        side = next((i for i in range(4)
                     if not settled[i] and _runs_past(cand, i, near, gx, gy)), None)
        if side is None:
            return cand
        if choice[side] + 1 < len(options[side]):
            choice[side] += 1
        else:
            choice[side], settled[side] = found[side], True
    return cand



def _plausible(quad: np.ndarray) -> float:
    """How far the quad's corners are from what a rectangle seen from above can look like.

    0 when every corner angle is within 55-125 degrees; grows with the worst excess.
    """
    worst = 0.0
    for i in range(4):
        a, b, c = quad[i - 1], quad[i], quad[(i + 1) % 4]
        u, v = a - b, c - b
        cosang = float(np.dot(u, v) / max(np.linalg.norm(u) * np.linalg.norm(v), 1e-9))
        ang = np.degrees(np.arccos(np.clip(cosang, -1, 1)))
        worst = max(worst, 55 - ang, ang - 125)
    return max(0.0, worst)


def _short_median(x: np.ndarray) -> float:
    """``float(np.median(x))`` of a short 1-D float array without NaN, the same bits, several
    times faster: numpy's median of a few values is mostly its own overhead. An even length's
    middle pair is summed in the array's type and halved (exact), as numpy's mean of it."""
    s = np.sort(x)
    k = len(s) // 2
    return float(s[k]) if len(s) % 2 else float((s[k - 1] + s[k]) / 2)


def _band_width(profile: np.ndarray, px_per_cm: float) -> int:
    """Width (px) of a wall band at the start of a lightness profile taken inward from a side,
    or 0.

    ``profile`` is the log lightness, row by row from the side inward. A wall's inner face
    seen beyond the crease is a band that differs clearly (``WALL_STEP``) from the floor next
    to it and ends in a sharp step (the crease: within ``WALL_CREASE_CM``) onto floor that is
    level for half a centimetre; shading and the soft shadows of walls and tower fade instead.
    """
    step = int(np.ceil(WALL_CREASE_CM * px_per_cm))
    stay = int(0.5 * px_per_cm)
    start = max(1, int(0.1 * px_per_cm))
    best = 0
    for d in range(int(0.25 * px_per_cm), min(len(profile) - step - stay,
                                              int(WALL_MAX_CM * px_per_cm))):
        if abs(profile[d - 1] - profile[d + step]) < 0.75 * WALL_STEP:
            continue  # no step here (cheap test first)
        after = profile[d + step: d + step + stay]
        level = _short_median(after)
        band = _short_median(profile[start:d])
        jump = abs(band - level)
        # the whole step within ``step`` px: band level just before it, floor level just after
        if (jump < WALL_STEP
                or abs(profile[d - 1] - band) > 0.25 * jump
                or abs(profile[d + step] - level) > 0.25 * jump
                or float(after.max() - after.min()) > 0.5 * WALL_STEP):
            continue
        best = d + step // 2
    return best


def _log_lightness(gray: np.ndarray) -> np.ndarray:
    """Log of the light (8-bit values taken as light ** (1 / 2.2)), kept off zero: what wall
    bands are told by. Only the strips along the sides need it, not the whole view."""
    lum = gray.astype(np.float32) / 255.0
    return np.log(lum**2.2 + 0.01)


def _row_log_medians(strip: np.ndarray) -> np.ndarray:
    """``row_medians(_log_lightness(strip))`` of an 8-bit strip, the same bits, faster.

    The log lightness rises with the 8-bit value, so a row's middle elements are the log
    lightness of its middle 8-bit values: the rows are partitioned as bytes (not as floats
    made from every pixel first) and only the one or two middle values per row looked up in
    the 256-entry table; an even row's pair is averaged as ``row_medians`` averages it."""
    table = _log_lightness(np.arange(256, dtype=np.uint8))
    part = np.array(strip, np.float32, order="C")  # (a copy: partition works in place)
    if part.ndim != 2 or part.shape[1] == 0:
        return row_medians(_log_lightness(strip))
    k = part.shape[1] // 2
    part.partition(k, axis=1)
    upper = table[part[:, k].astype(np.intp)]
    if part.shape[1] % 2:
        return upper
    lower = table[part[:, :k].max(axis=1).astype(np.intp)]
    return np.mean(np.stack([lower, upper], axis=1), axis=1)


def trim_walls(view: TrayView, image: np.ndarray) -> TrayView:
    """Move each side of the floor's outline in past a wall band it let in.

    An outline found on the rim or the wall's top rather than the crease takes the wall's inner
    face for floor. On the rectified view, per side, the median lightness of each row inward
    (over the middle 80 % of the side, so cubes along it do not count) shows such a face as a
    band with a sharp step at the crease (``_band_width``); the side is moved onto the step and
    the view rebuilt from the new corners. An outline given by hand is left alone.
    """
    gray = cv2.cvtColor(view.rectify(image), cv2.COLOR_BGR2GRAY)
    x0, y0, x1, y1 = view.floor_box
    ppc = view.px_per_cm
    n = int((WALL_MAX_CM + 1.5) * ppc)
    w10, h10 = (x1 - x0) // 10, (y1 - y0) // 10
    strips = {
        "top": gray[y0: y0 + n, x0 + w10: x1 - w10],
        "bottom": gray[y1 - n: y1, x0 + w10: x1 - w10][::-1],
        "left": gray[y0 + h10: y1 - h10, x0: x0 + n].T,
        "right": gray[y0 + h10: y1 - h10, x1 - n: x1].T[::-1],
    }
    cut = {side: _band_width(_row_log_medians(strip), ppc)
           for side, strip in strips.items()}
    if not any(cut.values()):
        return view
    box = np.array([
        [x0 + cut["left"], y0 + cut["top"]], [x1 - 1 - cut["right"], y0 + cut["top"]],
        [x1 - 1 - cut["right"], y1 - 1 - cut["bottom"]], [x0 + cut["left"], y1 - 1 - cut["bottom"]],
    ], np.float64)
    corners = view.rect_to_image(box)
    return view_from_corners(corners, px_per_cm=ppc, auto=view.auto,
                             margin_cm=view.margin / ppc, image_size=view.image_size)


def _surroundings(image: np.ndarray, view: TrayView, scale: float = 1.0
                  ) -> list[np.ndarray | None]:
    """Median CIE Lab of what lies SURROUND_CM beyond each side (top, right, bottom, left, as
    ``TrayView.pads``) over the middle 80 % of the side; None where less than
    ``ZONE_IN_VIEW_CM2`` of it is in the frame.
    ``image`` may be a copy of the frame scaled by ``scale``."""
    ppc = 10.0  # coarse: only a median colour is wanted
    near, far = SURROUND_CM
    big = view_from_corners(view.corners * scale, px_per_cm=ppc, margin_cm=far)
    x0, y0, x1, y1 = big.floor_box
    a, b = round(near * ppc), round(far * ppc)
    w10, h10 = (x1 - x0) // 10, (y1 - y0) // 10
    zones = [  # (left, top, right, bottom) in the big view
        (x0 + w10, y0 - b, x1 - w10, y0 - a),
        (x1 + a, y0 + h10, x1 + b, y1 - h10),
        (x0 + w10, y1 + a, x1 - w10, y1 + b),
        (x0 - b, y0 + h10, x0 - a, y1 - h10),
    ]
    whole = np.full(image.shape[:2], 255, np.uint8)
    out = []
    for zx0, zy0, zx1, zy1 in zones:
        # only the zone is looked at, so only the zone is mapped (a fifth of the big view)
        to_zone = np.array([[1.0, 0, -zx0], [0, 1.0, -zy0], [0, 0, 1.0]]) @ big.to_rect
        size = (zx1 - zx0, zy1 - zy0)
        m = cv2.warpPerspective(whole, to_zone, size, flags=cv2.INTER_NEAREST) > 0
        if m.sum() > ZONE_IN_VIEW_CM2 * ppc * ppc:
            rect = cv2.warpPerspective(image, to_zone, size, flags=cv2.INTER_LINEAR,
                                       borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0))
            lab = cv2.cvtColor(rect, cv2.COLOR_BGR2Lab)
            out.append(row_medians(lab[m].astype(np.float32).T))
        else:
            out.append(None)
    return out


def hidden_side(image: np.ndarray, view: TrayView, scale: float = 1.0) -> int | None:
    """The side (0-3 as ``TrayView.pads``) the tower stands over, or None.

    The tray stands on the table; the tower stands over one of its sides and hides the floor's
    end there (its body and mouth: the outline stops at the mouth's shadow or the body's
    edge, and cubes lie beyond it, under the mouth). Three sides have the table around them,
    the tower's side has the tower: the side whose surroundings (``SURROUND_CM`` out) differ
    clearly from those of the others, which agree with each other, is the tower's. Clearly:
    by more than ``ODD_AB`` in colour (CIE a, b) or ``ODD_LOG_L`` in log lightness, and by
    ``ODD_FACTOR`` times the others' own spread. No verdict from fewer than three sides seen,
    or when the others disagree among themselves as much (a lamp's gradient across the table).
    """
    zones = _surroundings(image, view, scale)
    seen = [k for k, z in enumerate(zones) if z is not None]
    if len(seen) < 3:
        return None
    odd = []
    for k in seen:
        others = np.array([zones[j] for j in seen if j != k])
        mid = np.median(others, axis=0)
        d_ab = float(np.hypot(*(zones[k][1:] - mid[1:])))
        d_l = abs(float(np.log((zones[k][0] + 10) / (mid[0] + 10))))
        s_ab = max(float(np.hypot(*(o[1:] - mid[1:]))) for o in others)
        s_l = max(abs(float(np.log((o[0] + 10) / (mid[0] + 10)))) for o in others)
        if ((d_ab > ODD_AB and d_ab > ODD_FACTOR * s_ab)
                or (d_l > ODD_LOG_L and d_l > ODD_FACTOR * s_l)):
            odd.append(k)
    return odd[0] if len(odd) == 1 else None


def with_hidden_side(view: TrayView, image: np.ndarray, extra_cm: float = HIDDEN_EXTRA_CM,
                     small: np.ndarray | None = None) -> TrayView:
    """The view told which side the tower stands over (``hidden_side``, ``TrayView.hidden``),
    with ``extra_cm`` more kept beyond that side.

    Beyond that side the floor runs on under the tower's mouth (the outline stops at the
    mouth's shadow or the body's edge): with ``extra_cm`` of 1 a cube standing there is not cut
    off by the rectified view's edge; whether a cube there is in the tray stays the counter's
    call (share of it over the floor; partly beyond: flagged). The floor's outline itself is not
    moved: how far the floor runs under the tower cannot be told from the picture (README).
    """
    if small is not None:  # a smaller copy of the frame does as well, and faster
        side = hidden_side(small, view, small.shape[1] / image.shape[1])
    else:
        side = hidden_side(image, view)
    if side is None:
        return view
    c = view.corners
    mid = (c[side] + c[(side + 1) % 4]) / 2
    ppc = view.px_per_cm
    margin_cm = view.margin / ppc
    return view_from_corners(c, px_per_cm=ppc, auto=view.auto, margin_cm=margin_cm,
                             image_size=view.image_size, hidden_at=mid,
                             hidden_cm=margin_cm + extra_cm)


def _end_peaks(a: np.ndarray, u: np.ndarray, n: np.ndarray, ts: np.ndarray, reach: float,
               near: np.ndarray, gx: np.ndarray, gy: np.ndarray) -> list[float]:
    """Offsets (px along ``n``) of straight edges across a side's stretch ``ts`` (fractions of
    ``u`` from ``a``) within ``reach`` px either way: the peak of each run of offsets where
    most of the stretch lies on edge pixels whose gradient runs across the side."""
    h, w = near.shape
    offs = np.arange(-reach, reach + 1.0)
    px = a[0] + ts[None, :] * u[0] + offs[:, None] * n[0]
    py = a[1] + ts[None, :] * u[1] + offs[:, None] * n[1]
    xs, ys, inside = _sample_grid(px, py, w, h)
    g1, g2 = gx[ys, xs], gy[ys, xs]
    across = np.abs(g1 * n[0] + g2 * n[1]) > 0.85 * (np.hypot(g1, g2) + 1e-6)
    hit = (near[ys, xs] > 0) & across
    if inside is not None:
        hit &= inside
    support = hit.mean(axis=1)
    good = support >= 0.5
    peaks, j = [], 0
    while j < len(offs):
        if good[j]:
            k = j
            while k + 1 < len(offs) and good[k + 1]:
                k += 1
            peaks.append(float(offs[j + int(np.argmax(support[j: k + 1]))]))
            j = k + 1
        else:
            j += 1
    return peaks


def _tower_side_by_ends(quad: np.ndarray, side: int, edges: np.ndarray,
                        gray: np.ndarray) -> np.ndarray | None:
    """The quad with the tower's side moved onto the crease as its two ends show it, or None
    when the side stays where it was found.

    Cubes in the tower's mouth stand along that side and hide the middle of its crease, so the
    side found from its middle stretch may be another straight edge near it (the mouth's
    shadow, the tower's body, a row of cubes), and the outline then is no rectangle in shape.
    The crease's ends at the two walls stay in view: each end (``END_STRETCH`` of the side
    next to a corner) gives its own candidate offsets, each pair of them a line, and the line
    kept is the one that makes the outline most like a 16 x 10 rectangle seen through a pinhole
    camera with the other three sides where they are (the crease is parallel to the opposite
    side: a wrong offset or tilt breaks the shape). Only an outline off in shape by more than
    ``SHAPE_TOL`` is looked at again (the shape cannot rank lines within it), and only a line
    that brings it within is taken.
    """
    h, w = edges.shape
    centre = (w / 2.0, h / 2.0)
    if _aspect_misfit(quad, centre, w) <= SHAPE_TOL:
        return None
    near = cv2.dilate(edges, np.ones((3, 3), np.uint8))
    gx = cv2.Sobel(gray, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(gray, cv2.CV_32F, 0, 1, ksize=3)
    q = quad.astype(np.float64)
    a, b = q[side], q[(side + 1) % 4]
    u = b - a
    size = float(np.linalg.norm(u))
    lengths = [float(np.linalg.norm(q[(k + 1) % 4] - q[k])) for k in range(4)]
    long_pair = 0 if lengths[0] + lengths[2] >= lengths[1] + lengths[3] else 1
    ppc = size / (TRAY_CM[0] if side % 2 == long_pair else TRAY_CM[1])
    n = np.array([-u[1], u[0]]) / max(size, 1e-6)
    if np.dot(q.mean(axis=0) - (a + b) / 2, n) < 0:
        n = -n
    lo, hi = END_STRETCH
    ends = (np.linspace(lo, hi, 16), np.linspace(1 - hi, 1 - lo, 16))
    peaks = [_end_peaks(a, u, n, ts, END_REACH_CM * ppc, near, gx, gy) for ts in ends]
    lines = [(q[k], q[(k + 1) % 4]) for k in range(4)]
    best, best_score = None, SHAPE_TOL
    area0 = cv2.contourArea(quad.reshape(-1, 1, 2).astype(np.float32))
    for oa in peaks[0]:
        for ob in peaks[1]:
            pa = a + ends[0].mean() * u + oa * n
            pb = a + ends[1].mean() * u + ob * n
            trial = list(lines)
            trial[side] = (pa, pb)
            cand = _intersect_sides(trial, quad)
            c2 = cand.reshape(-1, 1, 2)
            if not cv2.isContourConvex(c2) or cv2.contourArea(c2) < 0.4 * area0:
                continue
            score = _aspect_misfit(cand, centre, w)
            if score < best_score:
                best, best_score = cand, score
    return best


def find_tray(image: np.ndarray, *, px_per_cm: float = PX_PER_CM) -> TrayView:
    """Find the tray floor automatically; VisionError when nothing tray-like is in view."""
    h, w = image.shape[:2]
    scale = _WORK_WIDTH / w
    small = cv2.resize(image, (_WORK_WIDTH, max(8, round(h * scale))), interpolation=cv2.INTER_AREA)
    blur = _blurred(small)  # (made once: the edges and the watershed both look at it)
    edges = _edges(small, blur)
    gray = cv2.GaussianBlur(cv2.cvtColor(small, cv2.COLOR_BGR2GRAY), (5, 5), 0)
    best = None
    for mask in _floor_by_edges(small, edges, blur):
        quad = _refine_sides(_quad_from_mask(mask), edges, gray)
        frac = cv2.contourArea(quad.reshape(-1, 1, 2)) / mask.size
        if not 0.04 < frac < 0.9:
            continue
        bad = _plausible(quad)
        # prefer plausible shapes, then the larger: the second opinion only ever adds floor
        # that the first left out (a shadowed part), and sides are refined onto creases anyway
        key = (bad, -frac)
        if best is None or key < best[0]:
            best = (key, quad)
    if best is None:
        raise VisionError("tray not found: no tray-sized outline")
    if best[0][0] > 25:
        raise VisionError("tray not found: the outline found is not a tray's shape")
    view = view_from_corners(best[1] / scale, px_per_cm=px_per_cm, auto=True, image_size=(w, h))
    view = with_hidden_side(trim_walls(view, image), image, small=small)
    if view.hidden is None:
        return view
    quad = _tower_side_by_ends(view.corners * scale, view.hidden, edges, gray)
    if quad is None:
        return view
    c = quad / scale
    mid = (c[view.hidden] + c[(view.hidden + 1) % 4]) / 2
    margin_cm = view.margin / view.px_per_cm
    return view_from_corners(c, px_per_cm=px_per_cm, auto=True, margin_cm=margin_cm,
                             image_size=(w, h), hidden_at=mid,
                             hidden_cm=margin_cm + HIDDEN_EXTRA_CM)
