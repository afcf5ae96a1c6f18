"""Projected cube models fitted to a blob: how many cubes it holds and where they stand.

Why: a blob's area undercounts cubes that hide parts of each other and overcounts halos and
shadows; a 1 cm cube seen through the view's pinhole camera (its top, the sides the camera sees,
the halo) is a template whose union over the blob says what the blob is. The counter asks it
about blobs it cannot count with certainty (heard only when decisive) and at the tower's mouth,
where only a cube nearer the camera can hide another and a cube's base says whether it stands on
the floor or still on the ramp (README, counter and tray sections).
"""

from __future__ import annotations

import cv2
import numpy as np

from vision.tray import TrayView, view_from_corners

# A cube's outline in the picture is widened by blur, JPEG and its contact shadow by about this
# much (rectified px, i.e. 0.075 cm) all round.
HALO_PX = 1.5

# Cube models: a projected 1 cm cube (its top, the sides the camera sees, and the halo) is tried
# at this many yaws (a square repeats every 90 degrees).
FIT_YAWS = (0.0, 22.5, 45.0, 67.5)
# A cube model is added to a blob's explanation when at least this share of its footprint inside
# the view falls on blob pixels no earlier model explains: a shadow's remnant or a halo is less
# than half a cube, a cube hidden half behind another or cut by the view's edge is more.
FIT_NEW_SHARE = 0.5
# Without the empty tray, at the tower's mouth a model is judged over at least this share of its
# footprint, what the view leaves unjudged (beyond the tower's side, hidden by a cube in front)
# counting as unexplained: a cube shows at least a quarter of its footprint (FIT_NEW_SHARE of
# this; as SIDE_CUBE_SHARE, the least of a cube continued beyond a side). Beyond the side the
# pixels only differ from the mouth's own row floor (lip, ramp, the shadow's edge differ too),
# and inside it a strip along the side from the floor estimate: a crumb of them is no cube.
# With the reference a cube hidden behind another shows less and is real (s004/drop04, drop08).
FIT_JUDGED_MIN = 0.5
# Two cubes cannot interpenetrate: their base centres are at least 1 cm apart (exactly 1 cm
# face to face); a little less is allowed for the grid the positions are tried on.
FIT_APART_CM = 0.9
# The fit is asked only about blobs the counter is unsure of, and heard only when it is
# decisive: every model it added covered at least FIT_NEW_SHARE + FIT_DECISIVE of new blob and
# the best one it left out at most FIT_NEW_SHARE - FIT_DECISIVE (half-way from the bar to
# all or nothing). Measured: 0.15 / 0.25 / 0.35 gave 57 / 57 / 56 of 65 with the reference and
# 44 / 45 / 44 without.
FIT_DECISIVE = 0.25
# With the empty tray (a steady camera), the view reaches MOUTH_VIEW_CM further beyond the
# tower's side, enough to hold a cube standing there whole (its top and the sides the camera
# sees). Clusters there are split by the cube models, and a model counts only when its base
# centre lies at most MOUTH_BASE_CM beyond the side: a cube on the floor has its centre half a
# cube inside the crease (more when leaning on the lip, less when the side is found a little
# short), one still on the ramp stands higher and, fitted on the floor plane, lands further out
# by parallax (README, tray section: in-tray at most 0.28 cm, ramp at least 0.62 cm beyond).
MOUTH_VIEW_CM = 1.0
MOUTH_BASE_CM = 0.5


def fitted(b, origin, view, tops, centroid, cube_area: float, bare=None) -> np.ndarray | None:
    """The footprint centres (view px) of the cube models fitted to a cropped blob
    (``_fit_cubes``), or None when the fit is not decisive: every model added covered at
    least ``FIT_DECISIVE`` more than ``FIT_NEW_SHARE`` of new blob and the best one left out
    at least that much less, and at least one cube was fitted. Its top faces are given to the
    fit; the models are grown to the frame's cube size (``cube_area`` over the geometry's).

    ``bare`` (optional) is asked about a near miss (the best model left out, between the
    decisive share and the bar): given the blob no model explains under it (a view-px mask
    and its top-left corner), True when that is bare floor (floor enclosed by the cubes and
    the rim, or by a lamp's hard shadow edge): then the miss is no cube at all and the fit is
    decisive."""
    faces, scale = _fit_inputs(b, origin, view, tops, centroid, cube_area)
    fit = _CubeFit(b.mask, origin, view, scale)
    for fx, fy in faces:
        fit.add_face(fx, fy)
    miss, weakest = fit.grow()
    centres = fit.centres()
    if len(centres) == 0 or weakest < FIT_NEW_SHARE + FIT_DECISIVE:
        return None
    near_miss = miss > FIT_NEW_SHARE - FIT_DECISIVE
    if near_miss and (bare is None or fit.near is None or not bare(*fit.near_piece())):
        return None
    return centres


def _fit_inputs(b, origin, view, tops, centroid, cube_area: float):
    """The top faces (view px) inside a cropped blob and the models' growth in area (the
    frame's cube size ``cube_area`` over the geometry's), for the cube-model fit."""
    faces = np.zeros((0, 2))
    if tops is not None and len(tops):
        h, w = b.mask.shape
        ix = np.round(tops).astype(int)
        ok = (ix[:, 0] >= 0) & (ix[:, 0] < w) & (ix[:, 1] >= 0) & (ix[:, 1] < h)
        faces = tops[ok][b.mask[ix[ok][:, 1], ix[ok][:, 0]]] + np.asarray(origin, np.float64)
    f = view.cube_footprint(*centroid)
    scale = 1.0 if f is None else cube_area / (f + HALO_PX * 4.0 * np.sqrt(f))
    return faces, scale


def _past_side(view, pts: np.ndarray) -> np.ndarray:
    """How far (cm) view points lie beyond the tower's side (``TrayView.hidden``); negative
    inside."""
    x0, y0, x1, y1 = view.floor_box
    pts = np.asarray(pts, np.float64).reshape(-1, 2)
    d = [y0 - pts[:, 1], pts[:, 0] - x1, pts[:, 1] - y1, x0 - pts[:, 0]][view.hidden]
    return d / view.px_per_cm


def mouth_fit(b, origin, view, tops, centroid, cube_area: float, one_light: bool = False):
    """Cube models fitted to a cropped blob at the tower's mouth: their footprint centres
    (view px, (k, 2)) and which of them are in the tray, or None when none fits.

    Area cannot count a cluster there (part of it lies beyond the view or on the ramp), the
    models can: each is a whole cube on the floor plane. A cube still on the ramp stands higher,
    so its model (fitted as if on the floor) lands further out by parallax; one whose base
    centre lies more than ``MOUTH_BASE_CM`` beyond the tower's side is not on the floor."""
    faces, scale = _fit_inputs(b, origin, view, tops, centroid, cube_area)
    fit = _CubeFit(b.mask, origin, view, scale)
    fit.unknown_beyond_side(view)
    if one_light:
        fit.judged_at_least(FIT_JUDGED_MIN)
    else:
        # with the empty tray the blob at the mouth is what differs from it; without, what
        # differs from the mouth's row floor (lip, ramp, a shadow's edge differ too), and
        # claims made on it added a phantom cube (s004/drop07; errors 23 -> 25)
        fit.front_claims = True
    for fx, fy in faces:
        fit.add_face(fx, fy)
    fit.grow()
    if not fit.models:
        return None
    keep = _past_side(view, fit.bases()) <= MOUTH_BASE_CM
    return fit.centres(), keep


def on_one_side(cy: np.ndarray, cx: np.ndarray, origin: tuple[int, int], view: TrayView):
    """A piece's pixels (box px) on the side of the tower's side where most of them lie.

    Without a reference the floor behind a cube is the floor estimate's, the lit floor's (it
    repeats the lit floor's edge beyond the side), while the picture beyond the side is the
    mouth's shadow: a cube stands in one light or the other, but its picture may cross the
    side (a lit cube's top, higher than the floor, lands further out by parallax; a mouth
    cube's near face reaches in). Measured over both at once, its brighter half mixes two
    lights (on all 65 frames without it: wrong colours 5 -> 6).
    (The mouth's own floor, ``mouth_floor``, is no reference for naming: the floor at the back
    of the mouth is far darker than a cube's top standing 1 cm above it; named against it,
    with ``one_light``, wrong colours 5 -> 8.)"""
    past = _past_side(view, np.stack([cx + origin[0], cy + origin[1]], axis=1)) > 0
    sel = past if 2 * np.count_nonzero(past) > len(past) else ~past
    return cy[sel], cx[sel]


def widened(view: TrayView, extra_cm: float) -> TrayView:
    """The view with ``extra_cm`` more kept beyond the tower's side (the outline unchanged)."""
    c, side, ppc = view.corners, view.hidden, view.px_per_cm
    margin_cm = view.margin / ppc
    return view_from_corners(c, px_per_cm=ppc, auto=view.auto, margin_cm=margin_cm,
                             image_size=view.image_size,
                             hidden_at=(c[side] + c[(side + 1) % 4]) / 2,
                             hidden_cm=view.pad[side] / ppc + extra_cm)


def _cube_template(view, cam, x: float, y: float, deg: float, scale: float = 1.0,
                   step: int = 1):
    """A 1 cm cube's footprint on the floor plane when its base centre stands at rectified
    (x, y) at yaw ``deg``: its top and the sides the camera sees, through the view's pinhole
    camera (without one: the base square alone), grown by ``scale`` in area (the frame's lone
    cubes: shadow, blur) and by the halo. Returns the kernel (float32, one cell per ``step``
    px), its anchor (the base centre) and the top face's centre relative to the base, in
    cells."""
    ppc = view.px_per_cm
    mt, _, _, ml = view.pad
    a = np.radians(deg)
    c, s_ = np.sqrt(0.5) * np.cos(a), np.sqrt(0.5) * np.sin(a)  # half a diagonal
    X, Y = (x - ml) / ppc, (y - mt) / ppc
    base = [(X + c, Y + s_), (X - s_, Y + c), (X - c, Y - s_), (X + s_, Y - c)]
    if cam is None:
        pts = np.array([((bx - X) * ppc, (by - Y) * ppc) for bx, by in base], np.float64)
        top = np.zeros(2)
    else:
        K, Rt = cam
        p3 = np.array([(bx, by, z, 1.0) for bx, by in [*base, (X, Y)] for z in (0.0, 1.0)]).T
        im = K @ Rt @ p3
        uv = (im[:2] / im[2]).T.reshape(-1, 1, 2)
        pts = cv2.perspectiveTransform(uv, view.to_rect).reshape(-1, 2) - np.array([x, y])
        pts, top = pts[:-2], pts[-1]
    pts = cv2.convexHull(pts.astype(np.float32)).reshape(-1, 2)
    mid = pts.mean(axis=0)
    # grown by the frame's scale and by the halo all round
    pts = (mid + (pts - mid) * np.sqrt(scale)).astype(np.float32)
    pts = mid + (pts - mid) * (1.0 + HALO_PX / max(0.5 * np.sqrt(cv2.contourArea(pts)), 1.0))
    pts, top = pts / step, top / step
    r = int(np.ceil(np.abs(pts).max())) + 1
    k = np.zeros((2 * r + 1, 2 * r + 1), np.uint8)
    cv2.fillPoly(k, [np.round(pts + r).astype(np.int32)], 1)
    return k.astype(np.float32), (r, r), top


def _fit_cubes(mask: np.ndarray, origin: tuple[int, int], view, faces: np.ndarray,
               scale: float = 1.0) -> tuple[np.ndarray, float, float]:
    """Cube models that explain a blob: their footprints' centres (rectified px, (k, 2)), the
    share of new blob the best model left out would have explained and the smallest share
    among the models added (see ``_CubeFit``).

    ``mask`` is the blob on a box whose top-left corner is ``origin`` in the view; ``faces``
    and the centres returned are in the view's pixels."""
    fit = _CubeFit(mask, origin, view, scale)
    for fx, fy in faces:
        fit.add_face(fx, fy)
    miss, weakest = fit.grow()
    return fit.centres(), miss, weakest


class _CubeFit:
    """Projected cube models (``_cube_template``) placed over one blob, on a 0.1 cm grid.

    Each whole top face is one cube, its model placed so that its top is the face. Then cubes
    are added one at a time where a model covers most blob pixels no earlier model explains,
    less the floor it would cover, while at least ``FIT_NEW_SHARE`` of its footprint inside
    the view is such new blob: a shadow's remnant or the halo between cubes is less than half
    a cube, a cube half hidden behind another or cut by the view's edge is more. Pixels beyond
    the view are unknown, not floor; one cube may hide part of another; two cubes' bases stay
    ``FIT_APART_CM`` apart. (Tried: after each addition, re-placing every free model given the
    others, so that one put astride two cubes moves onto one: the fit's own per-blob count
    was no better, 8 / 19 blobs wrong with / without a reference either way, and slower.)
    """

    def __init__(self, mask: np.ndarray, origin: tuple[int, int], view, scale: float):
        ppc = view.px_per_cm
        self.step = step = max(1, round(0.1 * ppc))
        ys, xs = np.nonzero(mask)
        ys, xs = ys + origin[1], xs + origin[0]
        pad = int(ppc) + 2 * step
        self.x0, self.y0 = x0, y0 = xs.min() - pad, ys.min() - pad
        cw = -(-(xs.max() + pad + 1 - x0) // step) * step
        ch = -(-(ys.max() + pad + 1 - y0) // step) * step
        W, H = view.size
        seen = np.zeros((ch, cw), np.float32)
        blob = np.zeros((ch, cw), np.float32)
        sx0, sy0, sx1, sy1 = max(0, x0), max(0, y0), min(W, x0 + cw), min(H, y0 + ch)
        seen[sy0 - y0: sy1 - y0, sx0 - x0: sx1 - x0] = 1.0
        blob[ys - y0, xs - x0] = 1.0
        self.shape = (ch // step, cw // step)
        self.seen = cv2.resize(seen, self.shape[::-1], interpolation=cv2.INTER_AREA)
        # the view itself (``seen`` may leave out parts it shows but cannot judge)
        self.in_view = self.seen
        self.blob = cv2.resize(blob, self.shape[::-1], interpolation=cv2.INTER_AREA)
        cam = view.camera()
        self.temps = [_cube_template(view, cam, xs.mean(), ys.mean(), d, scale, step)
                      for d in FIT_YAWS]
        self.gy, self.gx = np.mgrid[0:self.shape[0], 0:self.shape[1]].astype(np.float32)
        self.apart = FIT_APART_CM * ppc / step
        self.slack = 0.2 * ppc / step
        self.models: list[tuple[int, int, bool]] = []  # (cell index, yaw, placed by a face)
        self.count = np.zeros(self.shape, np.float32)  # how many models cover each cell
        # whether a model's footprint under earlier models is left out of its share
        # (``unknown_beyond_side``)
        self.hidden_ok = False
        # the least share of a model's footprint it is judged over (``judged_at_least``)
        self.judged_min = 0.0
        # whether a model nearer the camera may claim blob placed models cover
        # (``_in_front_share``; needs ``unknown_beyond_side``)
        self.front_claims = False
        # the best placement left out when growing stopped (cell index, yaw), or None
        self.near: tuple[int, int] | None = None
        self._prepare()

    def unknown_beyond_side(self, view) -> None:
        """Treat what lies beyond the tower's side as unknown, not floor: the picture shows
        the mouth's dark floor, the lip, the ramp and the tower there, where a cube's dark
        parts need not differ from what the empty tray showed, so a model reaching there is
        not judged by the blob missing there."""
        _, Rt = view.camera()
        mt, _, _, ml = view.pad
        eye = -Rt[:, :3].T @ Rt[:, 3]  # the camera's centre, floor cm
        self.eye = (eye[0] * view.px_per_cm + ml, eye[1] * view.px_per_cm + mt)  # view px
        self.ppc = view.px_per_cm
        xs = self.x0 + (self.gx + 0.5) * self.step - 0.5
        ys = self.y0 + (self.gy + 0.5) * self.step - 0.5
        past = _past_side(view, np.stack([xs.ravel(), ys.ravel()], axis=1)).reshape(self.shape)
        self.seen = np.where(past > 0, 0.0, self.seen).astype(np.float32)
        self.hidden_ok = True
        self._prepare()

    def judged_at_least(self, share: float) -> None:
        """Judge each model as if at least ``share`` of its footprint were seen."""
        self.judged_min = share

    def _prepare(self) -> None:
        """Per yaw: each placement's footprint in view, the floor it would cover, and whether
        enough of it is in view to be judged."""
        if self.seen.min() > 0.0:  # wholly inside the view (most blobs): every footprint seen
            self.inview = [np.full(self.shape, float(t[0].sum()), np.float32)
                           for t in self.temps]
        else:
            self.inview = [self._conv(self.seen, t) for t in self.temps]
        # the floor a model would cover: what it sees of the view less the blob under it
        self.floors = [iv - self._conv(self.blob, t)
                       for iv, t in zip(self.inview, self.temps, strict=True)]
        # a model mostly beyond the view is not judged (too little of it to tell)
        self.ok_view = [iv >= 0.3 * float(t[0].sum())
                        for iv, t in zip(self.inview, self.temps, strict=True)]

    @staticmethod
    def _conv(src, t):
        return cv2.filter2D(src, -1, t[0], anchor=t[1], borderType=cv2.BORDER_CONSTANT)

    def _cover(self, j: int, i: int) -> np.ndarray:
        py, px = divmod(j, self.shape[1])
        k, (ax, ay), _ = self.temps[i]
        cover = np.zeros(self.shape, np.float32)
        tx, ty = px - ax, py - ay
        a0, b0 = max(0, tx), max(0, ty)
        a1, b1 = min(self.shape[1], tx + k.shape[1]), min(self.shape[0], ty + k.shape[0])
        cover[b0:b1, a0:a1] = k[b0 - ty: b1 - ty, a0 - tx: a1 - tx]
        return cover

    def _free(self) -> np.ndarray:
        """Where a base may stand: apart from every model's base."""
        free = np.ones(self.shape, bool)
        for j, _, _ in self.models:
            py, px = divmod(j, self.shape[1])
            free &= (self.gx - px) ** 2 + (self.gy - py) ** 2 >= self.apart ** 2
        return free

    def _best(self, where: np.ndarray):
        """(score, cell index, yaw, new blob, footprint in view) of the best placement."""
        left = self.blob * (self.count == 0)  # blob no model explains
        best = None
        for i, t in enumerate(self.temps):
            ok = where & self.ok_view[i]
            if not ok.any():
                continue
            new = self._conv(left, t)
            score = np.where(ok, new - self.floors[i], -np.inf)
            j = int(np.argmax(score))
            if best is None or score.flat[j] > best[0]:
                judged = float(self.inview[i].flat[j])
                if self.hidden_ok:  # what cubes in front cover may hide this one: not judged
                    judged -= float((self.seen * self._cover(j, i) * self._in_front(j)).sum())
                best = (float(score.flat[j]), j, i, float(new.flat[j]), judged)
        return best

    def _in_front(self, j: int) -> np.ndarray:
        """Where the models standing nearer the camera than a base at cell ``j`` cover (only
        they can hide it)."""
        out = np.zeros(self.shape, bool)
        if not self.models:
            return out
        reach = self._reach(np.array([j] + [m[0] for m in self.models]))
        for (jm, im, _), r in zip(self.models, reach[1:], strict=True):
            if r < reach[0]:
                out |= self._cover(jm, im) > 0
        return out

    def _reach(self, cells: np.ndarray) -> np.ndarray:
        """Horizontal distance (cm) from the camera's foot to bases at the given cells."""
        py, px = np.divmod(cells, self.shape[1])
        x = self.x0 + (px + 0.5) * self.step - 0.5
        y = self.y0 + (py + 0.5) * self.step - 0.5
        return np.hypot(x - self.eye[0], y - self.eye[1]) / self.ppc

    def _near(self, x: float, y: float, r: float) -> np.ndarray:
        return (self.gx - x) ** 2 + (self.gy - y) ** 2 <= r * r

    def _put(self, j: int, i: int, face: bool) -> None:
        self.models.append((j, i, face))
        self.count += self._cover(j, i) > 0

    def add_face(self, fx: float, fy: float) -> None:
        """One cube whose top is the face at view (fx, fy)."""
        top = self.temps[0][2]  # the top's offset from the base does not depend on the yaw
        bx = (fx - self.x0) / self.step - top[0]
        by = (fy - self.y0) / self.step - top[1]
        best = self._best(self._near(bx, by, self.slack) & self._free())
        if best is not None:
            self._put(best[1], best[2], True)

    def grow(self) -> tuple[float, float]:
        """Add cubes while they explain enough; (near miss, weakest added share)."""
        weakest = 1.0
        while True:
            best = self._best(self._free())
            if best is None:
                self.near = None
                return 0.0, weakest
            share = best[3] / max(best[4], self.judged_min * self.footprint(best[2]), 1e-6)
            if share < FIT_NEW_SHARE and best[0] > 0 and self.front_claims:
                share = self._in_front_share(best[1], best[2], best[4]) or share
            if share < FIT_NEW_SHARE or best[0] <= 0:
                self.near = (best[1], best[2]) if best[0] > 0 else None
                return share, weakest
            weakest = min(weakest, share)
            self._put(best[1], best[2], False)

    def _share(self, k: int) -> float:
        """Model ``k``'s share of new blob given every other model: blob under it no other
        model covers, over its judged footprint less what the models nearer the camera cover
        of it."""
        j, i, _ = self.models[k]
        mine = self._cover(j, i) > 0
        others = self.count - mine > 0
        new = float((self.blob * mine * ~others).sum())
        judged = float((self.seen * mine).sum() - (self.seen * mine * self._in_front(j)).sum())
        return new / max(judged, self.judged_min * self.footprint(i), 1e-6)

    def _in_front_share(self, j: int, i: int, judged: float) -> float | None:
        """The share of new blob of a placement standing nearer the camera than models
        already placed, when it claims the blob it shares with those behind it; None when the
        claim is not decisive or a model behind it would then fall under ``FIT_NEW_SHARE``.

        Through a pinhole a cube nearer the camera is seen whole and hides part of those
        behind it, never the reverse: where its footprint and a farther model's overlap, the
        pixels are the nearer cube's. Placed by score, a cube behind (its part beyond the
        tower's side unjudged) took that overlap first and left the one in front under the
        bar (s004/drop10: 0.46). Overruling a placed model, the claim must be decisive (at
        least ``FIT_NEW_SHARE + FIT_DECISIVE`` of its judged footprint, counted over the
        judged part only; at the bar itself s004/drop04 and drop07 gained phantom cubes
        astride real ones), and both must then stand: the one behind is judged on what is
        left of it (its part hidden by the nearer one not judged)."""
        if not self.models:
            return None
        mine = self._cover(j, i) > 0
        reach = self._reach(np.array([j] + [m[0] for m in self.models]))
        front = self._in_front(j)
        behind = np.zeros(self.shape, bool)
        for (jm, im, _), r in zip(self.models, reach[1:], strict=True):
            if r > reach[0]:
                behind |= self._cover(jm, im) > 0
        claim = mine & ~front & ((self.count == 0) | behind)
        share = float((self.blob * self.seen * claim).sum()) / max(
            judged, self.judged_min * self.footprint(i), 1e-6)
        if share < FIT_NEW_SHARE + FIT_DECISIVE:
            return None  # overruling a placed model must be decisive
        self._put(j, i, False)
        ok = all(self._share(k) >= FIT_NEW_SHARE
                 for k, r in enumerate(reach[1:]) if r > reach[0]
                 and (self._cover(*self.models[k][:2]) > 0)[mine].any())
        self.models.pop()
        self.count -= mine
        return share if ok else None

    def near_piece(self) -> tuple[np.ndarray, tuple[int, int]]:
        """The blob no model explains under the best model left out (``near``), as a view-px
        mask (uint8) and its top-left corner in the view."""
        j, i = self.near
        cells = (self._cover(j, i) > 0) & (self.blob > 0.5) & (self.count == 0)
        m = np.kron(cells.astype(np.uint8), np.ones((self.step, self.step), np.uint8))
        return m, (int(self.x0), int(self.y0))

    def footprint(self, i: int) -> float:
        """A whole model's footprint (grid cells) at yaw ``i``."""
        return float(self.temps[i][0].sum())

    def bases(self) -> np.ndarray:
        """Each model's base centre, view px (k, 2)."""
        out = []
        for j, _, _ in self.models:
            py, px = divmod(j, self.shape[1])
            out.append((self.x0 + (px + 0.5) * self.step - 0.5,
                        self.y0 + (py + 0.5) * self.step - 0.5))
        return np.array(out, np.float64).reshape(-1, 2)

    def centres(self) -> np.ndarray:
        """Each model's footprint centre (what of it the view shows, judged or not: the
        pixels of a cube leaning behind another at the tower's mouth lie mostly beyond the
        side, and a centre over its judged part alone gave the front cube's top to it), view
        px."""
        out = []
        for j, i, _ in self.models:
            my, mx = np.nonzero((self._cover(j, i) > 0) & (self.in_view > 0))
            if len(mx) == 0:
                py, px = divmod(j, self.shape[1])
                my, mx = np.array([py]), np.array([px])
            out.append((self.x0 + (mx.mean() + 0.5) * self.step - 0.5,
                        self.y0 + (my.mean() + 0.5) * self.step - 0.5))
        return np.array(out, np.float64).reshape(-1, 2)


