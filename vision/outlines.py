"""Cubes by their outlines: sharp, straight edges all round, whatever their paint.

Why a module of its own: the cue needs no floor model (no empty tray, no estimate), so it is
what both modes share: a cube is bounded by sharp straight edges all round and between its
faces; the print, shading and the soft side of a shadow are gentle. ``Outlines`` finds the
edges (against the frame's own noise at each lightness), the edge-free pieces they enclose (a
cube's faces) and, among them, whole top faces. The small mask helpers here serve
``vision.segment`` too.
"""

from __future__ import annotations

import cv2
import numpy as np

from vision.colours import LUMA_BGR

# Without a reference, cube outlines: a change of log light steeper than EDGE_PER_CM (per cm)
# and EDGE_SIGMAS times the frame's typical gradient at that lightness; the pieces of floor
# they enclose up to EDGE_FACE_CM2 (a cube's faces; the bare floor is one large piece) are
# filled; then anything thinner than EDGE_OPEN_CM (lines: creases, hard shadow edges, grain)
# is dropped.
EDGE_PER_CM = 1.6
EDGE_SIGMAS = 5.0
# Beyond the frame the rectified view repeats its last row: rows that differ from the one above by
# less than this share of their light (the picture's noise is larger) are out of view, when all
# rows below them are too (``in_view_rows``).
VIEW_REPEAT = 0.02
EDGE_FACE_CM2 = 2.0
EDGE_FACE_MIN_CM2 = 0.15
EDGE_OPEN_CM = 0.45
# A straight edge at least this long (cm) is a shadow's or a crease, not a cube's (two cubes
# side by side make 2 cm).
STRAIGHT_CM = 2.5
# Linear-light offset in the log for edges: twice NOISE_FLOOR (a dark channel's sensor noise
# would otherwise edge a dark cube's whole face).
EDGE_LOG_OFFSET = 0.02
# A cube's top face inside its edges (edges eat a rim of it): area (cm^2), shorter side (cm),
# longer over shorter side, area over hull.
TOP_AREA_CM2 = (0.35, 1.3)
# A top face whose outline has a gap (its paint meets a floor of nearly its light there) joins
# the bare floor through a neck; necks up to 2 x NECK_CM across (after the edges' closing) are
# cut when what they cut off is shaped like a top face (``_cut_necks``).
NECK_CM = 0.15
TOP_SIDE_CM = 0.55
# An enclosed piece bounded over this share of its outline by long straight edges is a strip
# along a line, not a cube's face (a face in a row of cubes has two opposite sides of four on
# such lines, never three)
LINE_BOUND_SHARE = 0.75
TOP_ASPECT = 1.35
TOP_SOLID = 0.85
# Linear-light offset in the log ratios: keeps sensor noise in dark corners from looking like
# change (a few grey levels out of 255 in the dark).
NOISE_FLOOR = 0.01


def _log(a: np.ndarray) -> np.ndarray:
    """Natural log of a float32 image (OpenCV's, faster than numpy's; same to 1e-6)."""
    return cv2.log(np.ascontiguousarray(a, np.float32))


def _components(mask: np.ndarray, connectivity: int = 8):
    """(n, labels, area per label): connected pieces (OpenCV's version with statistics is
    several times slower than labelling and counting)."""
    n, labels = cv2.connectedComponents(mask, connectivity=connectivity)
    return n, labels, np.bincount(labels.ravel(), minlength=n)


def _present(labels: np.ndarray, n: int) -> np.ndarray:
    """Which of the labels 0 .. n - 1 occur in ``labels`` (bool, n): a count, where
    np.unique would sort every pixel (0.3 ms a frame over the view's large selections)."""
    return np.bincount(labels.ravel(), minlength=n)[:n] > 0


def _bbox(mask: np.ndarray) -> tuple[int, int, int, int]:
    """(x, y, w, h) of a non-empty mask (for a few pieces this is several times cheaper than
    OpenCV's labelling with statistics over the whole view)."""
    ys = np.flatnonzero(mask.any(axis=1))
    xs = np.flatnonzero(mask.any(axis=0))
    return int(xs[0]), int(ys[0]), int(xs[-1] - xs[0] + 1), int(ys[-1] - ys[0] + 1)


def _bboxes(labels: np.ndarray, which: np.ndarray) -> list[tuple[int, int, int, int]]:
    """(x, y, w, h) of each label in ``which`` (non-empty labels of ``labels``), from their
    pixels alone: for a few small pieces far cheaper than statistics over every label."""
    if len(which) == 0:
        return []
    sel = np.zeros(int(labels.max()) + 1, bool)
    sel[which] = True
    ys, xs = np.nonzero(sel[labels])
    lab = labels[ys, xs]
    order = np.argsort(lab, kind="stable")
    ys, xs, lab = ys[order], xs[order], lab[order]
    starts = np.searchsorted(lab, which)
    x0, x1 = np.minimum.reduceat(xs, starts), np.maximum.reduceat(xs, starts)
    y0, y1 = np.minimum.reduceat(ys, starts), np.maximum.reduceat(ys, starts)
    return [(int(a), int(b), int(c - a + 1), int(d - b + 1))
            for a, b, c, d in zip(x0, y0, x1, y1, strict=True)]


def _straight(edge: np.ndarray, px_per_cm: float, scale: int = 1) -> np.ndarray:
    """The long straight runs of ``edge`` (``STRAIGHT_CM`` or more, any direction), widened
    by 2 px: shadow edges and creases, never one cube's outline. ``scale`` 2: searched on the
    edges at half resolution (a quarter of the pixels: the search costs as many as it is
    given), drawn at full."""
    small = edge if scale == 1 else cv2.dilate(edge, np.ones((scale, scale), np.uint8))[
        ::scale, ::scale]
    ppc = px_per_cm / scale
    length = STRAIGHT_CM * ppc
    lines = cv2.HoughLinesP(small, 1, np.pi / 180, threshold=round(0.6 * length),
                            minLineLength=length, maxLineGap=max(1.0, 0.2 * ppc))
    out = np.zeros_like(edge)
    if lines is not None:
        off = 0.5 * (scale - 1)
        for xa, ya, xb, yb in np.asarray(lines).reshape(-1, 4) * scale + off:
            cv2.line(out, (round(xa), round(ya)), (round(xb), round(yb)), 1, 5)
    return out


def _beyond_noise_robust(typical: np.ndarray, level: np.ndarray, grad: np.ndarray,
                         members: list[np.ndarray], overall: float) -> np.ndarray:
    """Each lightness band's typical gradient, re-estimated robustly where noise cannot
    explain it. ``level``: each band's typical lightness; ``members``: its samples of ``grad``.

    Noise in log light grows at most as 1 / light (read noise; shot noise and JPEG's steps
    more slowly), on ``_gradient``'s offset log: a band's typical gradient above the next
    brighter band's times the ratio of their lightness is not noise. On a bright, even print
    the darkest band holds the cubes' shaded sides, shadows and outlines more than floor, its
    median is their edges, and the bar set from it hid those very edges (a white cube on a
    pale print found no edge at all). There, the band's lower quartile (still floor while up
    to three quarters of the band are edges), scaled to a median by the ratio the whole floor
    shows (mostly bare; ``overall`` its median), is taken instead, never above the median.
    When that ratio is undefined (most of the floor clipped by a bright exposure: no gradient
    at all), the bar is what noise can explain (the brighter band's, scaled by lightness).
    """
    out = typical.astype(np.float32).copy()
    shape = None
    for b in range(len(out) - 1):
        if not members[b].any():
            continue
        cap = out[b + 1] * (level[b + 1] + EDGE_LOG_OFFSET) / (level[b] + EDGE_LOG_OFFSET)
        if out[b] > EDGE_SIGMAS * cap:  # its median pixel an edge: the band is mostly edges
            if shape is None:
                q_all = float(np.quantile(grad, 0.25))
                shape = overall / q_all if q_all > 0 else 0.0
            if shape > 0:
                out[b] = min(out[b], shape * float(np.quantile(grad[members[b]], 0.25)))
            else:
                # most of the floor has no gradient at all (clipped by a bright exposure):
                # no shape to scale by; the band's bar is what noise can explain there
                out[b] = min(out[b], cap)
    return out


def _looked_up(index: np.ndarray, table: np.ndarray) -> np.ndarray:
    """``table[index]`` for a uint8 ``index`` (a short table: each pixel's band), the same
    values by OpenCV's look-up, twice as fast as numpy's indexing over the whole view."""
    full = np.zeros(256, table.dtype)
    full[: len(table)] = table
    return cv2.LUT(index, full)


def _gradient(rect_lin: np.ndarray) -> np.ndarray:
    """Steepest change of log light over the three channels, per rectified px (the log offset
    larger than elsewhere: a dark channel's noise is large in log terms)."""
    lg = _log(rect_lin + EDGE_LOG_OFFSET)
    g2 = None
    for c in range(3):
        gx = cv2.Scharr(lg[..., c], cv2.CV_32F, 1, 0)
        gy = cv2.Scharr(lg[..., c], cv2.CV_32F, 0, 1)
        m = gx * gx + gy * gy
        g2 = m if g2 is None else np.maximum(g2, m)
    return np.sqrt(g2) / 32.0


def in_view_rows(band_lin: np.ndarray) -> np.ndarray:
    """Where a band turned as for ``edges_across`` is in the camera's view (bool). Out of it
    the rectified view repeats the frame's last row, each row barely differing from the one
    above (``VIEW_REPEAT`` of its light: only the interpolation along the row moves), from
    there down to the band's end; inside it, light changes from row to row by the picture's
    own noise, and a flat patch of clipped light is followed by other light before the band
    ends."""
    diff = np.abs(band_lin[1:] - band_lin[:-1])
    light = band_lin[1:]
    # (per channel, as ``np.maximum``: numpy's reductions over a last axis of three are slow)
    d = np.maximum(np.maximum(diff[..., 0], diff[..., 1]), diff[..., 2])
    top = np.maximum(np.maximum(light[..., 0], light[..., 1]), light[..., 2])
    same = np.zeros(band_lin.shape[:2], bool)
    same[1:] = d <= VIEW_REPEAT * (top + NOISE_FLOOR)
    out = np.minimum.accumulate(same[::-1], axis=0)[::-1]
    return ~out


def edges_across(band_lin: np.ndarray, px_per_cm: float,
                 seen: np.ndarray | None = None) -> np.ndarray:
    """Sharp edges crossing a band beyond a side (uint8), the band turned so that its rows run
    along the side and outward goes down: changes of log light along the side steeper than
    ``EDGE_PER_CM`` and ``EDGE_SIGMAS`` times the band's typical change along the side (as for
    the floor's edges), steeper along the side than across it, continued by hysteresis down
    to half that. Pixels out of the view (``in_view_rows``, or ``seen`` if given) are never
    edge.

    Why: the rim and walls beyond a side are flat surfaces whose own edges (the crease, the
    rim's outer edge, a wall's top) run along the side; a cube leaning on the wall shows its
    faces there with edges crossing the band (its sides' outlines, the line between a lit
    and a shaded face), whatever its paint against the rim's.
    """
    lg = _log(band_lin + EDGE_LOG_OFFSET)
    along = across = None
    for c in range(3):
        gx = np.abs(cv2.Scharr(lg[..., c], cv2.CV_32F, 1, 0)) / 32.0
        gy = np.abs(cv2.Scharr(lg[..., c], cv2.CV_32F, 0, 1)) / 32.0
        along = gx if along is None else np.maximum(along, gx)
        across = gy if across is None else np.maximum(across, gy)
    seen = in_view_rows(band_lin) if seen is None else seen
    # (the typical change along the side: across it, the crease and the rim's edges run)
    g = along[seen]
    if g.size == 0:
        return np.zeros(seen.shape, np.uint8)
    bar = max(EDGE_PER_CM / px_per_cm, EDGE_SIGMAS * float(np.median(g)))
    # hysteresis down to half the bar, as on the floor (a cube's shaded side is soft-edged)
    lo = ((along > 0.5 * bar) & (along > across) & seen).astype(np.uint8)
    n, labels = cv2.connectedComponents(lo, connectivity=8)
    keep = _present(labels[lo.astype(bool) & (along > bar)], n)
    keep[0] = False
    return keep[labels].astype(np.uint8)


def _top_shaped(m: np.ndarray, area: float, px_per_cm: float) -> tuple[float, float] | None:
    """The centre (in ``m``'s pixels) of a piece (uint8 mask) shaped like a cube's top face:
    its smallest enclosing rectangle at least ``TOP_SIDE_CM`` across and within ``TOP_ASPECT``
    of square, and solid (``TOP_SOLID`` of its hull); else None."""
    cnts, _ = cv2.findContours(m, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    if not cnts:
        return None
    c = max(cnts, key=cv2.contourArea)
    (cx, cy), (rw, rh), _ = cv2.minAreaRect(c)
    hull = cv2.contourArea(cv2.convexHull(c))
    short, long_ = min(rw, rh), max(rw, rh)
    if (short >= TOP_SIDE_CM * px_per_cm and long_ <= TOP_ASPECT * short
            and area >= TOP_SOLID * hull):
        return cx, cy
    return None


class Outlines:
    """The sharp edges on the floor and the edge-free pieces they enclose (no floor model).

    A cube is bounded by sharp, straight edges all round (and between its faces), whatever its
    colour against the print; the print's own changes, shading and the soft side of a shadow
    are gentle. Edges are changes of log light steeper than ``EDGE_PER_CM`` and than
    ``EDGE_SIGMAS`` times the typical gradient at that lightness (dark parts are noisier in
    log terms; a grained print raises its own bar), continued by hysteresis down to half that.
    Only the floor proper is looked at: walls and rim have edges of their own. Pieces touching
    the outline's sides are floor between a crease and the outline, never faces.
    """

    def __init__(self, rect_lin: np.ndarray, px_per_cm: float,
                 floor_box: tuple[int, int, int, int], footprint=None):
        self.shape = rect_lin.shape[:2]
        # (x, y) in the rectified view -> the area (rectified px) one cube standing there
        # covers, top and seen sides (``TrayView.cube_footprint``), or None if unknown
        self.footprint = footprint
        self.lin = rect_lin  # kept for ``cube_masks`` (read only)
        self.px_per_cm = px_per_cm
        self.box = floor_box
        x0, y0, x1, y1 = floor_box
        lin = rect_lin[y0:y1, x0:x1]
        g = _gradient(lin)
        lum = cv2.blur(lin @ LUMA_BGR, (5, 5))
        bins = 6
        ls, gs = lum[::2, ::2].ravel(), g[::2, ::2].ravel()
        # the bands' cuts, and their middles (each band's typical lightness)
        # (of the sorted samples: the same values, the quantiles' partition then much faster)
        qs = np.quantile(np.sort(ls), np.linspace(0, 1, 2 * bins + 1))
        cuts, middle = qs[::2].copy(), qs[1::2]
        cuts[0], cuts[-1] = -np.inf, np.inf
        idx = np.clip(np.searchsorted(cuts, ls, side="right") - 1, 0, bins - 1)
        # A band of lightness speaks for the floor only when it holds its share of the floor:
        # on a flat, noiseless floor the quantiles collapse, and the band below the floor's one
        # value then holds the cubes alone, whose own texture would set the bar above their
        # outlines. Such a band takes the floor's overall typical gradient.
        share = np.bincount(idx, minlength=bins)
        overall = float(np.median(gs))
        members = [idx == b for b in range(bins)]
        # (each band's samples are a fresh copy: its median may partition it in place)
        typical = np.array([np.median(gs[members[b]], overwrite_input=True)
                            if share[b] >= 0.5 * ls.size / bins
                            else overall for b in range(bins)], np.float32)
        typical = _beyond_noise_robust(typical, middle, gs, members, overall)
        # each pixel's band: how many inner cuts lie at or below its lightness (as searchsorted,
        # several times faster on the whole view)
        pix = sum((lum >= c).astype(np.uint8) for c in cuts[1:bins])
        thresh = _looked_up(pix, np.maximum(EDGE_PER_CM / px_per_cm, EDGE_SIGMAS * typical))
        # hysteresis: weaker edges count where they continue a strong one (a cube's outline
        # against a floor of nearly its own light)
        hi = (g > thresh).astype(np.uint8)
        lo = (g > 0.5 * thresh).astype(np.uint8)
        n, labels = cv2.connectedComponents(lo, connectivity=8)
        keep = _present(labels[hi > 0], n)
        keep[0] = False
        self.edge = np.take(keep.astype(np.uint8), labels)  # (np.take: faster, same values)
        self.faint = lo  # steeper than half the bar: what hysteresis would continue
        self.closed = cv2.morphologyEx(self.edge, cv2.MORPH_CLOSE, np.ones((5, 5), np.uint8))
        # (labels and areas only: OpenCV's statistics cost twice the labelling)
        n, self.labels, self.area = _components(1 - self.closed, connectivity=4)
        self.inner = np.ones(n, bool)
        self.inner[0] = False
        for side in (self.labels[0], self.labels[-1], self.labels[:, 0], self.labels[:, -1]):
            self.inner[side] = False
        self._cut_necks()

    def _cut_necks(self) -> None:
        """Top faces joined to the open floor through a narrow gap in their outline become
        enclosed pieces of their own (new labels).

        Why: where a cube's paint meets a floor of nearly its light (a white top on a pale
        print, a pink-lit brown on a pink print) a stretch of its outline is too faint to be
        an edge, and the top runs into the floor: neither a face nor outlined. The free space
        opened by a disc ``NECK_CM`` across splits there; a piece it cuts off from the open
        floor (one not touching the view's sides) shaped like a top face (``_top_shaped``),
        grown back within the free space, is taken as enclosed. A neck between cubes opens
        onto a pocket of floor, which the shape test rarely passes.
        """
        free = (self.labels > 0) & ~np.take(self.inner, self.labels)  # (np.take: faster)
        if not free.any():
            return
        r = max(1, round(NECK_CM * self.px_per_cm))
        k = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1, 2 * r + 1))
        free8 = free.astype(np.uint8)
        n, lab = cv2.connectedComponents(cv2.erode(free8, k), connectivity=4)
        if n <= 2:
            return  # the open floor alone (no piece cut off: most frames)
        inner = np.ones(n, bool)
        inner[0] = False
        for side in (lab[0], lab[-1], lab[:, 0], lab[:, -1]):
            inner[side] = False
        cube_px = self.px_per_cm ** 2
        lo, hi = TOP_AREA_CM2
        cand = np.nonzero(inner)[0]
        for i, (x, y, w, h) in zip(cand, _bboxes(lab, cand), strict=True):
            x0, y0 = max(0, x - r), max(0, y - r)
            x1, y1 = min(lab.shape[1], x + w + r), min(lab.shape[0], y + h + r)
            m = cv2.dilate((lab[y0:y1, x0:x1] == i).astype(np.uint8), k) & free8[y0:y1, x0:x1]
            area = int(m.sum())
            if not lo * cube_px <= area <= hi * cube_px or not _top_shaped(m, area, self.px_per_cm):
                continue
            if not self._unlike_floor_beside(m, (x0, y0), free8):
                continue  # a pocket of floor among cubes, joined to the floor by their gaps
            self.labels[y0:y1, x0:x1][m > 0] = len(self.inner)
            self.inner = np.append(self.inner, True)
        if len(self.inner) > len(self.area):
            self.area = np.bincount(self.labels.ravel(), minlength=len(self.inner))

    def _unlike_floor_beside(self, m: np.ndarray, corner: tuple[int, int],
                             free: np.ndarray) -> bool:
        """Whether a piece (``m`` on a box at ``corner`` of the floor box) is painted unlike
        the open floor within 1 cm around it, or is brighter than it.

        Why: a gap in the edges cuts off a cube's top where its paint meets a floor of nearly
        its light, but equally a pocket of floor among cubes, bounded by their outlines and
        joined to the floor through the gaps between them (s001: the floor between four
        cubes read as a fifth). The pocket is the floor's paint, at most in their shade (a
        shadow only darkens); a top is a cube's paint. (Black or white on a floor of their
        own tint stays out: their gaps are not cut.)"""
        from vision.segment import BRIGHT_CEIL, CHROMA_STEP  # (segment builds on this module)

        x0, y0 = corner
        h, w = m.shape
        r = max(1, round(self.px_per_cm))
        X0, Y0 = max(0, x0 - r), max(0, y0 - r)
        X1, Y1 = min(free.shape[1], x0 + w + r), min(free.shape[0], y0 + h + r)
        piece = np.zeros((Y1 - Y0, X1 - X0), np.uint8)
        piece[y0 - Y0: y0 - Y0 + h, x0 - X0: x0 - X0 + w] = m
        around = free[Y0:Y1, X0:X1] & (piece ^ 1)
        if np.count_nonzero(around) < np.count_nonzero(piece) // 4:
            return False
        bx, by = self.box[:2]
        lin = self.lin[by + Y0: by + Y1, bx + X0: bx + X1]
        logs = _log(lin + NOISE_FLOOR)
        a = np.median(logs[piece > 0], axis=0)
        b = np.median(logs[around > 0], axis=0)
        d = a - b
        return bool(np.abs(d - d.mean()).max() > CHROMA_STEP or d.mean() > np.log(BRIGHT_CEIL))

    def _full(self, crop: np.ndarray) -> np.ndarray:
        x0, y0, x1, y1 = self.box
        out = np.zeros(self.shape, np.uint8)
        out[y0:y1, x0:x1] = crop
        return out

    def edges(self) -> np.ndarray:
        """The sharp edges (uint8, rectified view)."""
        return self._full(self.edge)

    def faint_edges(self) -> np.ndarray:
        """Changes steeper than half the edge bar (uint8, rectified view): the level down to
        which a sharp edge is continued."""
        return self._full(self.faint)

    def solid(self) -> np.ndarray:
        """Things found by their outlines alone: enclosed pieces the size of a cube's faces
        (``EDGE_FACE_MIN_CM2`` to ``EDGE_FACE_CM2``; the bare floor is one large piece) with the
        edges around them; lines thinner than ``EDGE_OPEN_CM`` (creases, a hard shadow's
        edge, grain) opened away."""
        ppc = self.px_per_cm
        cube_px = ppc * ppc
        area = self.area
        face = self.inner & (area < EDGE_FACE_CM2 * cube_px) & (area >= EDGE_FACE_MIN_CM2 * cube_px)
        face &= ~self._along_lines(face)
        face &= ~self._beyond_one_cube(face)
        faces = np.take(face.astype(np.uint8), self.labels)  # (np.take: faster, same values)
        # a thing is its faces and the edges around them (edges alone: a crease, noise, grain)
        rim = max(1, round(0.15 * ppc))
        near = cv2.dilate(faces, np.ones((2 * rim + 1, 2 * rim + 1), np.uint8))
        solid = faces | (self.closed & near)
        r = max(1, round(0.5 * EDGE_OPEN_CM * ppc))
        k = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1, 2 * r + 1))
        return self._full(cv2.morphologyEx(solid, cv2.MORPH_OPEN, k))

    def _beyond_one_cube(self, face: np.ndarray) -> np.ndarray:
        """Per label, whether a candidate ``face`` piece covers more of the floor plane than a
        whole cube standing at its centre would (``footprint``: its top and every side the
        camera sees).

        Why: an edge-free piece is one cube's faces (the edges between them lost at most),
        so it lies inside that cube's picture; bare floor enclosed by several cubes' outlines
        and a shadow's edge has no such bound (s004: 1.12 footprints of lit floor between two
        reds, a green, a yellow and the tower's shade, counted as a brown; real faces reach
        0.81 at most on the renders). Only pieces over 1 cm^2 are asked: a top at a cube's
        height maps onto the floor magnified, so no cube's footprint is smaller."""
        out = np.zeros_like(face)
        if self.footprint is None:
            return out
        big = np.nonzero(face & (self.area > self.px_per_cm ** 2))[0]
        x0, y0 = self.box[:2]
        for i, (x, y, w, h) in zip(big, _bboxes(self.labels, big), strict=True):
            ys, xs = np.nonzero(self.labels[y:y + h, x:x + w] == i)
            f = self.footprint(xs.mean() + x + x0, ys.mean() + y + y0)
            out[i] = f is not None and self.area[i] > f
        return out

    def _along_lines(self, face: np.ndarray) -> np.ndarray:
        """Per label, whether a candidate ``face`` piece is bounded mostly (over
        ``LINE_BOUND_SHARE`` of its outline) by long straight edges (``_straight``): a strip
        between a crease and a line of the print, or along a shadow's edge, cut into face-sized
        pieces where the lines meet (drawn trays: such strips along the sides were read as
        black cubes). A cube's face has at most two opposite sides on lines longer than a cube
        (a row of cubes): half its outline, a little more at the corners the lines' width
        reaches."""
        out = np.zeros_like(face)
        if not face.any():
            return out
        lines = _straight(self.edge, self.px_per_cm, scale=2)
        if not lines.any():
            return out
        n = len(face)
        pieces = np.take(face.astype(np.uint8), self.labels)  # (np.take: faster, same values)
        rim = pieces & (cv2.erode(pieces, np.ones((3, 3), np.uint8)) ^ 1)
        near = lines > 0  # (drawn 5 px wide: the edge's own blur either side)
        total = np.bincount(self.labels[rim > 0], minlength=n)
        on = np.bincount(self.labels[(rim > 0) & near], minlength=n)
        out = face & (on > LINE_BOUND_SHARE * np.maximum(total, 1))
        return out

    def _tops(self) -> list[tuple[int, float, float]]:
        """(label, x, y in the floor box) of the enclosed pieces shaped like a top face."""
        if getattr(self, "_top_cache", None) is not None:
            return self._top_cache
        ppc = self.px_per_cm
        cube_px = ppc * ppc
        area = self.area
        lo, hi = TOP_AREA_CM2
        cand = np.nonzero(self.inner & (area >= lo * cube_px) & (area <= hi * cube_px))[0]
        boxes = _bboxes(self.labels, cand)
        out = []
        for i, (x, y, w, h) in zip(cand, boxes, strict=True):
            m = (self.labels[y:y + h, x:x + w] == i).astype(np.uint8)
            centre = _top_shaped(m, area[i], ppc)
            if centre is not None:
                out.append((int(i), centre[0] + x, centre[1] + y))
        self._top_cache = out
        return out

    def top_faces(self) -> np.ndarray:
        """Centres (rectified px, (k, 2)) of enclosed pieces shaped like a cube's top face: a
        solid, nearly square piece whose shorter side is at least ``TOP_SIDE_CM`` and whose area
        (inside its edges) is ``TOP_AREA_CM2``. A side face seen from above is narrower than
        that; two faces one piece only where the edge between them is lost."""
        x0, y0 = self.box[:2]
        return np.array([(x + x0, y + y0) for _, x, y in self._tops()],
                        np.float64).reshape(-1, 2)

    def top_mask(self) -> np.ndarray:
        """The top faces' pieces with the edges around them (uint8, rectified view)."""
        sel = np.zeros(len(self.area), bool)
        sel[[i for i, _, _ in self._tops()]] = True
        faces = np.take(sel.astype(np.uint8), self.labels)  # (np.take: faster, same values)
        rim = max(1, round(0.1 * self.px_per_cm))
        k = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * rim + 1, 2 * rim + 1))
        return self._full(cv2.dilate(faces, k))
