"""The floor under the tower's mouth, without an empty-tray reference.

Why: the tower hides the floor's far end in its shadow; the floor estimate of the lit floor
does not know that shadow (darker, and not the lit floor's colour either), so without a
reference the mouth's floor gets its own estimate, row by row along the tower's side, and what
differs from it in colour or is brighter than it is a cube (README, counter section).
"""

from __future__ import annotations

import cv2
import numpy as np

from vision.outlines import NOISE_FLOOR, Outlines, _log, _present
from vision.segment import BRIGHT_CEIL, CHROMA_STEP, _channel_max, _channel_mean, _clean

# At the tower's mouth (no reference): the floor beyond the tower's side lies in the tower's
# shadow, lit by the room alone. Its own floor is estimated row by row along the side, over
# this run (three cubes, as the floor estimate's median: a lone cube is a third of it).
MOUTH_RUN_CM = 3.0
# The floor just inside the tower's side, which a side found short of the crease leaves
# running on beyond it, is looked at over this depth (a cube's width).
MOUTH_FLOOR_IN_CM = 1.0
# A piece beyond the side narrower than this everywhere is no cube (as the counter's slivers).
MOUTH_THIN_CM = 0.45
# A piece joined to a wall or a leg is opened by a disc this wide: a cube at the side shows
# at least about half of itself beyond it (0.5 cm, widened by the band's 5-px blur), the
# walls' and legs' edges are thinner (``MOUTH_THIN_CM``).
MOUTH_CUBE_OPEN_CM = 0.6


def _side_band(a: np.ndarray, floor_box: tuple[int, int, int, int], side: int) -> np.ndarray:
    """The part of ``a`` beyond the floor box's ``side`` (0-3: top, right, bottom, left), over
    the floor's extent along it, turned so that the side runs along the rows and the last row
    is the one next to the floor (a view: writing to it writes to ``a``)."""
    x0, y0, x1, y1 = floor_box
    return _turned([a[:y0, x0:x1], a[y0:y1, x1:], a[y1:, x0:x1], a[y0:y1, :x0]][side], side)


def _turned(part: np.ndarray, side: int) -> np.ndarray:
    """A part of the view along the floor box's ``side`` turned so that the side runs along
    its rows, as seen from beyond the top side (a view, not a copy)."""
    return [part, part.swapaxes(0, 1)[::-1], part[::-1], part.swapaxes(0, 1)][side]


def _like_floor(lg: np.ndarray, floor: np.ndarray) -> np.ndarray:
    """Band pixels (log light) of the floor's colour next to them inside the side and no
    brighter than it (a shadow only darkens and leaves the paint's colour alone)."""
    d = lg - floor[None]
    t = _channel_mean(d)
    return (_channel_max(np.abs(d - t[..., None])) < CHROMA_STEP) & (t < np.log(BRIGHT_CEIL))


def _row_floor(lg: np.ndarray, px_per_cm: float) -> np.ndarray:
    """Each row's running median along it over ``MOUTH_RUN_CM`` (log light): windows every
    half run, each its row's median over every 2nd px, interpolated between (the light
    changes slowly along the side; a sliding median is several times slower)."""
    w = lg.shape[1]
    run = max(2, round(MOUTH_RUN_CM * px_per_cm))
    starts = np.unique(np.clip(np.arange(-run // 2, w, max(1, run // 2)), 0, max(w - run, 0)))
    centres = starts + min(run, w) / 2.0
    meds = np.stack([np.median(lg[:, s0:s0 + run:2], axis=1) for s0 in starts], axis=1)
    # linear interpolation between the windows' centres, the same weights for every row
    weights = np.stack([np.interp(np.arange(w), centres, np.eye(len(starts))[j])
                        for j in range(len(starts))], axis=1).astype(np.float32)
    return np.matmul(weights[None], meds.astype(np.float32))


def _inside_strip(a: np.ndarray, floor_box: tuple[int, int, int, int], side: int,
                  depth: int) -> np.ndarray:
    """The ``depth`` rows of ``a`` just inside the floor box's ``side``, over the floor's
    extent along it, turned as ``_side_band`` (the side along the rows)."""
    x0, y0, x1, y1 = floor_box
    return _turned([a[y0:y0 + depth, x0:x1], a[y0:y1, x1 - depth:x1], a[y1 - depth:y1, x0:x1],
                    a[y0:y1, x0:x0 + depth]][side], side)


def floor_inside(rect_lin: np.ndarray, cubes: np.ndarray, px_per_cm: float,
                  floor_box: tuple[int, int, int, int], side: int) -> np.ndarray | None:
    """The floor just inside the tower's side (log light, (w, 3): one per position along it),
    or None when too little of it shows.

    Over ``MOUTH_FLOOR_IN_CM`` inside the side, in windows of ``MOUTH_RUN_CM`` along it every
    half run (interpolated between, as ``_row_floor``), the median of the pixels the floor's
    own pass did not take for cubes (``cubes``); a window showing less than a cube's top of
    floor (1 cm^2) is left out (a crowded mouth)."""
    depth = max(2, round(MOUTH_FLOOR_IN_CM * px_per_cm))
    lg = cv2.blur(_log(np.ascontiguousarray(_inside_strip(rect_lin, floor_box, side, depth))
                       + NOISE_FLOOR), (5, 5))
    free = _inside_strip(cubes, floor_box, side, depth) == 0
    w = lg.shape[1]
    run = max(2, round(MOUTH_RUN_CM * px_per_cm))
    starts = np.unique(np.clip(np.arange(-run // 2, w, max(1, run // 2)), 0, max(w - run, 0)))
    centres, meds = [], []
    for s0 in starts:
        ok = free[:, s0:s0 + run]
        if np.count_nonzero(ok) >= px_per_cm * px_per_cm:
            centres.append(s0 + min(run, w) / 2.0)
            meds.append(np.median(lg[:, s0:s0 + run][ok], axis=0))
    if not meds:
        return None
    meds = np.array(meds, np.float32)
    at = np.arange(w)
    return np.stack([np.interp(at, centres, meds[:, c]) for c in range(3)], axis=1)


def _cubes_off_walls(diff: np.ndarray, labels: np.ndarray, joined: np.ndarray,
                     px_per_cm: float) -> np.ndarray:
    """The cube-wide parts of the band's pieces ``joined`` (by label) to a wall or a leg that
    still reach the side on their own and touch neither the band's ends nor its far edge.

    Why: a cube at the side whose picture touches a wall's or a leg's (s004/drop10: a red
    leaning behind another, beside the tower's leg) was dropped with it. Opened by a disc of
    ``MOUTH_CUBE_OPEN_CM`` the thin wall and leg pieces fall away while a cube's face, about
    a cube wide, stays."""
    joined = joined.copy()
    joined[0] = False  # the background
    if not joined.any():
        return np.zeros(diff.shape, bool)
    r = max(1, round(0.5 * MOUTH_CUBE_OPEN_CM * px_per_cm))
    disc = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1,) * 2)
    opened = cv2.morphologyEx(joined[labels].astype(np.uint8), cv2.MORPH_OPEN, disc)
    n, parts = cv2.connectedComponents(opened, connectivity=8)
    keep = _present(parts[-2:], n) & ~(_present(parts[:, 0], n) | _present(parts[:, -1], n)
                                        | _present(parts[0], n))
    keep[0] = False
    return keep[parts]


def _beyond_necks(diff: np.ndarray, px_per_cm: float) -> np.ndarray:
    """The cube-sized parts of the band's pieces (uint8) that reach the side only through a
    neck narrower than ``MOUTH_CUBE_OPEN_CM`` (bool, the band's shape).

    Why: a cube on the floor under the mouth meets the side with a good part of its width (at
    least about half of it shows beyond, ``MOUTH_CUBE_OPEN_CM``); a cube still on the ramp lies
    wholly beyond and reaches the side only through a thin tail (a shadow's edge, a neighbour's
    corner: s004/drop07's two ramp cubes). Opened by that disc, a part of at least half a
    cube's top (0.5 cm^2) that no longer reaches the side is such a cube, and is taken out
    with the disc's width round it."""
    r = max(1, round(0.5 * MOUTH_CUBE_OPEN_CM * px_per_cm))
    disc = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1,) * 2)
    opened = cv2.morphologyEx(diff, cv2.MORPH_OPEN, disc)
    n, parts = cv2.connectedComponents(opened, connectivity=8)
    away = ~_present(parts[-2:], n)
    away &= np.bincount(parts.ravel(), minlength=n) >= 0.5 * px_per_cm * px_per_cm
    away[0] = False
    return cv2.dilate(away[parts].astype(np.uint8), disc) > 0


def mouth_floor(rect_lin: np.ndarray, px_per_cm: float, floor_box: tuple[int, int, int, int],
                side: int, floor_in: np.ndarray | None = None) -> np.ndarray:
    """What differs from the mouth's own floor beyond the tower's ``side`` without a reference
    (uint8, rectified view).

    Why: the floor estimate only knows the lit floor proper; the mouth's floor, many times
    darker and lit by the room alone, reads against it as one dark change, and cubes lying
    there are not segmented. Its light varies across the side (the lip, the mouth's depth)
    but slowly along it, so each row along the side has its own floor: the running median
    over ``MOUTH_RUN_CM`` (``_row_floor``). A cube differs from that floor in colour
    (``CHROMA_STEP``: a shadow leaves the paint's colour alone) or is brighter
    (``BRIGHT_CEIL``: the mouth's floor is the shadowed one, a shadow only darkens). Left
    out: pieces that do not reach the side (a cube on the floor under the mouth does in the
    picture: its centre lies at most 0.3 cm beyond, its near edge half a cube nearer; what
    lies wholly beyond is the ramp or the tower's inside), pieces running into the band's
    ends or across it to its far edge (the walls and the tower's legs: such a cube's picture
    would reach 2 cm beyond the side, its centre at most 0.3 cm beyond) and pieces thinner
    than ``MOUTH_THIN_CM`` everywhere (the legs' lit edges). A cube joined to a wall's or a
    leg's piece is cut off it (``_cubes_off_walls``); a cube-sized part reaching the side only
    through a thin neck is on the ramp (``_beyond_necks``). Given the floor just inside the
    side (``floor_in``, from ``floor_inside``), a pixel of its colour and no brighter than it
    (``_like_floor``) is no cube either: where the side was found short of
    the crease the floor runs on beyond it (as lit, or darker in the tower's penumbra), and
    between cubes at the mouth that strip differs from the mouth's row floor.
    """
    found = np.zeros(rect_lin.shape[:2], np.uint8)
    band = np.ascontiguousarray(_side_band(rect_lin, floor_box, side))
    if band.shape[0] < 2 or band.shape[1] < 8:
        return found
    lg = cv2.blur(_log(band + NOISE_FLOOR), (5, 5))
    med = _row_floor(lg, px_per_cm)
    d = lg - med
    t = _channel_mean(d)
    chroma = _channel_max(np.abs(d - t[..., None]))
    diff = (chroma > CHROMA_STEP) | (t > np.log(BRIGHT_CEIL))
    if floor_in is not None:
        diff &= ~_like_floor(lg, floor_in)
    diff = diff.astype(np.uint8)
    diff = _clean(diff, 0.2 * px_per_cm * px_per_cm)
    n, labels = cv2.connectedComponents(diff, connectivity=8)
    side_hit = _present(labels[-2:], n)  # reaching the side
    # the band's ends and its far edge: the walls and the tower's legs (standing across it)
    across = _present(labels[:, 0], n) | _present(labels[:, -1], n) | _present(labels[0], n)
    keep = side_hit & ~across
    diff = (keep[labels] | _cubes_off_walls(diff, labels, side_hit & across, px_per_cm))
    diff = diff.astype(np.uint8)
    diff[_beyond_necks(diff, px_per_cm)] = 0
    n, labels = cv2.connectedComponents(diff, connectivity=8)
    keep = _present(labels[-2:], n)
    dist = cv2.distanceTransform(diff, cv2.DIST_L2, 3)
    wide = np.zeros(n, bool)
    np.maximum.at(wide, labels.ravel(), (dist >= 0.5 * MOUTH_THIN_CM * px_per_cm).ravel())
    keep &= wide
    keep[0] = False
    _side_band(found, floor_box, side)[:] = keep[labels]
    return found


# How far inside the tower's side the mouth's own top faces are looked for: the floor's own
# outlines leave out every piece touching the side, so a top across it or touching it is
# nobody's; such a top reaches up to its diagonal (1.4 cm) inside, and the box must hold it
# whole with the edges round it (a piece touching the box's sides is no face).
MOUTH_TOPS_IN_CM = 2.0


def _floor_coloured(lin: np.ndarray, floor: np.ndarray) -> bool:
    """Whether pixels (linear, (k, 3)) have, in their median, the colour and the light of the
    floor beside them (log light, (k, 3)) within the colour and bright steps."""
    d = np.median(_log(lin + NOISE_FLOOR) - floor, axis=0)
    t = float(d.mean())
    return bool(np.abs(d - t).max() < CHROMA_STEP and abs(t) < np.log(BRIGHT_CEIL))


def mouth_top_faces(rect_lin: np.ndarray, px_per_cm: float,
                    floor_box: tuple[int, int, int, int], side: int, known: np.ndarray,
                    floor_in: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Top faces (rectified px, (k, 2)) at the tower's mouth that ``known`` (the floor's own
    top faces) lacks, and their pieces with the edges round them (bool, rectified view).

    Why: the floor's outlines look at the floor proper only, and leave out pieces touching
    its sides; a cube under the mouth or leaning on its lip shows its top beyond the side or
    across it. A top face is enclosed by sharp edges whatever its paint against the mouth's
    dark floor (a brown cube in the mouth's shadow differs from it in neither colour nor
    light), so each one is a cube: a start for the mouth's cube models, and blob for them
    where the masks missed it. A top-shaped piece of the colour and light of the floor just
    inside the side (``floor_in``, from ``floor_inside``) is the floor enclosed between cubes
    standing at the side (s004/drop06), not a face (a top painted and lit like that floor
    cannot be told from it). The edges are judged against the band's own gradients per lightness
    (the mouth is darker and noisier than the lit floor). Without a reference only: with the
    empty tray the mouth's blob is already what differs from it, and these tops added a cube
    there (64 -> 63 of 65)."""
    x0, y0, x1, y1 = floor_box
    h, w = rect_lin.shape[:2]
    d = round(MOUTH_TOPS_IN_CM * px_per_cm)
    box = [(x0, 0, x1, min(y1, y0 + d)), (max(x0, x1 - d), y0, w, y1),
           (x0, max(y0, y1 - d), x1, h), (0, y0, min(x1, x0 + d), y1)][side]
    if box[2] - box[0] < 8 or box[3] - box[1] < 8:
        return np.zeros((0, 2)), np.zeros((h, w), bool)
    outlines = Outlines(rect_lin, px_per_cm, box)
    tops = outlines.top_faces()
    if len(known) and len(tops):
        # the same top seen by both passes lies within a fraction of a cube of itself; two
        # cubes' tops lie a cube apart
        near = np.hypot(*(tops[:, None, :] - known[None, :, :]).transpose(2, 0, 1)).min(axis=1)
        tops = tops[near > 0.5 * px_per_cm]
    faces = outlines.top_mask()  # the faces with the edges round them (0.1 cm)
    rim = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * round(0.15 * px_per_cm) + 1,) * 2)
    n, labels = cv2.connectedComponents(cv2.erode(faces, rim), connectivity=8)  # faces apart
    keep = np.ones(len(tops), bool)
    which = np.zeros(n, bool)
    # a disc well inside each face (a face is at least TOP_SIDE_CM across)
    r = max(1, round(0.25 * px_per_cm))
    dy, dx = np.mgrid[-r: r + 1, -r: r + 1].reshape(2, -1)
    disc = dy * dy + dx * dx <= r * r
    for k, (tx, ty) in enumerate(np.round(tops).astype(int)):
        ys, xs = np.clip(dy[disc] + ty, 0, h - 1), np.clip(dx[disc] + tx, 0, w - 1)
        if floor_in is not None:
            along = np.clip((xs - x0) if side in (0, 2) else (ys - y0), 0, len(floor_in) - 1)
            keep[k] = not _floor_coloured(rect_lin[ys, xs], floor_in[along])
        which[labels[ys, xs]] |= keep[k]
    which[0] = False
    pieces = cv2.dilate(which[labels].astype(np.uint8), rim) & faces
    return tops[keep], pieces > 0

