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

from vision.colours import LUMA_BGR, to_linear
from vision.outlines import (
    EDGE_OPEN_CM,
    NOISE_FLOOR,
    TOP_AREA_CM2,
    Outlines,
    _bbox,
    _bboxes,
    _components,
    _log,
    _present,
    _straight,
    _top_shaped,
    edges_across,
    in_view_rows,
)

# A colourless darkening to more than this share of the floor's light is shadow, not a cube.
SHADOW_FLOOR = 0.35
# Brightening beyond this factor is a cube (a white cube on a grey print, say).
BRIGHT_CEIL = 1.35
# ... than the brightest floor estimate within this reach (cm) without a reference: the estimate
# places a lamp's hard shadow edge only to within its fill's reach (``_brighter_than_near``).
LIT_REACH_CM = 1.0
# A change of colour (log ratio between channels) beyond this is a cube.
CHROMA_STEP = 0.22
# The weak test: a change of colour by this log ratio.
WEAK_CHROMA = 0.08
# Against the empty tray (log ratios after a quarter-centimetre average): a cube's soft shadow
# darkens the floor by less than REF_DARK; brightening of any channel beyond REF_BRIGHT (a
# shadow darkens all three) or a change of colour beyond REF_CHROMA is a cube; and never less
# than REF_SIGMAS times the frame's own noise there.
REF_DARK = 0.25
REF_BRIGHT = 0.12
REF_CHROMA = 0.12
REF_SIGMAS = 4.0
# The weak test against the empty tray: a change of lightness beyond this (log), or of colour
# beyond WEAK_CHROMA (and 3 x the noise), in a compact cube-sized piece away from the strong.
REF_FAINT = 0.15
# A colourless darkened piece larger than this (cm^2, about five cube footprints) on its own is
# a shadow cast by something else, not cubes.
SHADOW_CM2 = 8.0
# A lamp's shadows: searched up to this far (cm) from the cubes; believed when at least this
# share of the cubes' area, moved by one common offset, lands on colourless darkening.
SHADOW_MAX_CM = 1.5
# A blob thinner than this on average (cm, area over length) is a sliver of wall or shadow
# edge, no cube: a cube is 1 cm across from any side (the counter drops such blobs).
SLIVER_CM = 0.45
# A bar of darkening this long (cm: a cube's edge to a top's diagonal plus its shadow), thinner on
# average than SLIVER_CM and further than SHADOW_MAX_CM (a shadow's reach, as for the L without a
# reference) from every coloured piece is the side and shadow of a cube painted like the print
# (``_sides_widened``). Drawn with the reference, seeds 0 / 1: apart 0.25 / 0.5 cm 189 / 173, 1.0
# / 1.5 cm 189 / 172; renders 65/65 at each; with the bar touching cubes allowed (0 cm) a point
# lamp's hard shadows add two blacks (s002).
SIDE_BAR_CM = (0.6, 2.2)
SHADOW_SHARE = 0.15
# Linear light above which a channel of the floor model is taken as saturated (sRGB ~245).
SATURATED = 0.9
# Without a reference, a blob the floor estimate finds is a cube only when confirmed by sharp
# edges (``vision.outlines``): at least EDGE_SUPPORT_CM (cm) of them ...
EDGE_SUPPORT_CM = 2.0
# ... and on sharp edges over at least this share of its area (a cube's outline and the edges
# between its faces cover a quarter of it or more; a tinted patch is edged at most along its
# border), not counting edges within EDGE_WALL_CM of the outline's sides or running straight
# along them for more than EDGE_RUN_CM (creases: no cube has an edge that long).
EDGE_DENSITY = 0.18
EDGE_WALL_CM = 0.3
EDGE_RUN_CM = 1.6
# A coloured sliver along the outline's side is a cube beyond it when its paint continues beyond
# over at least this share of a footprint (``_cut_at_side``).
SIDE_CUBE_SHARE = 0.25
# A piece wholly beyond a side is a cube when it covers this many footprints (``_wholly_beyond``).
WHOLLY_BEYOND_CUBES = (0.5, 2.5)
# A sliver along a side whose band beyond is crossed by edges at its ends spans this much along
# it (cm): a cube's face (1 cm) seen square to a cube's diagonal, with its blurred ends
# (``_edged_across_side``).
SLIVER_SPAN_CM = (0.5, 1.5)
# ... and an edge crosses the band beyond where it covers this share of the band's depth in view
# (a cube's side runs across the whole rim; noise and a cube's soft corners leave gaps).
CROSS_SHARE = 2 / 3
# the most a cube's part the floor estimate found beside its outlined part can cover (cm^2):
# the cube's whole footprint, top and the sides an oblique camera sees, with its halo
# (``_painted_like_outlined``)
CUBE_PART_CM2 = 4.0
# a cube painted like the print darkens its sides and shadow by more than this (log; as the
# counter's PAINTED_STEP) and that L spans a cube: 0.6 cm (its narrowest bearing) to 2.2 cm
# (a top's diagonal plus a side and the shadow) (``_shadowed_tops``)
DARK_L_STEP = 0.1
DARK_L_SPAN_CM = (0.6, 2.2)
# a top the faint edges close must have sharp edges of its own along at least this share of
# its rim: one of its four edges (its two near sides give two, ``_faint_closed_tops``)
OWN_RIM_SHARE = 0.25


@dataclass
class Blob:
    """One connected group of cube pixels on the rectified floor."""

    mask: np.ndarray  # bool, rectified size, only this blob
    area: float  # px
    centroid: tuple[float, float]
    bbox: tuple[int, int, int, int]
    weak: bool = False  # found only by the weak test
    edge: bool = False  # partly beyond the floor's outline
    mouth: bool = False  # partly beyond the tower's side (TrayView.hidden): floor or ramp?
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


def _channel_max(a: np.ndarray) -> np.ndarray:
    """Largest of the three channels (as fast as it gets: numpy's max over a short last axis
    is several times slower)."""
    return np.maximum(np.maximum(a[..., 0], a[..., 1]), a[..., 2])


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
    lr = _log(rect_lin + NOISE_FLOOR) - _log(bg_lin + NOISE_FLOOR)
    if clipped is not None:
        lr[clipped] = 0.0
    d = (np.ones(3, np.float32) if shade is None else shade).astype(np.float32)
    dd = float(d @ d)
    # (as per-pixel 3 x 3 transforms: several times faster than numpy's broadcasting)
    t = cv2.transform(lr, (d / dd).reshape(1, 3))
    off = cv2.transform(lr, (np.eye(3, dtype=np.float32) - np.outer(d, d) / dd).astype(np.float32))
    return t, _channel_max(np.abs(off))


def _off_shadow_plane(lr: np.ndarray, shade: np.ndarray) -> np.ndarray | None:
    """The largest channel of the part of log change ``lr`` no shadow can make, or None when
    ``shade`` is grey. A shadow changes the floor along ``shade`` (the lamp blocked, the
    room's light left) and along grey (less of the room's light too: deep between cubes), so
    what is left lies along the plane's normal."""
    g = np.ones(3, np.float32) / np.sqrt(3.0)
    d = shade - (shade @ g) * g
    if float(np.linalg.norm(d)) < 0.05:
        return None
    nrm = np.cross(g, d / np.linalg.norm(d)).astype(np.float32)
    return np.abs(lr @ nrm) * float(np.abs(nrm).max())


def _difference(rect_lin: np.ndarray, bg_lin: np.ndarray) -> np.ndarray:
    m, chroma = _log_change(rect_lin, bg_lin)
    fg = (chroma > CHROMA_STEP) | (m < np.log(SHADOW_FLOOR)) | (m > np.log(BRIGHT_CEIL))
    return fg.astype(np.uint8)


def _clean(fg: np.ndarray, min_area: float) -> np.ndarray:
    k3 = np.ones((3, 3), np.uint8)
    fg = cv2.morphologyEx(fg, cv2.MORPH_OPEN, k3)
    fg = cv2.morphologyEx(fg, cv2.MORPH_CLOSE, k3)
    _, labels, area = _components(fg)
    keep = (area >= min_area).astype(np.uint8)
    keep[0] = 0
    return np.take(keep, labels)  # (np.take: faster than indexing, the same values)


def _labelled_with_stats(mask: np.ndarray):
    """OpenCV's 8-connected labelling with statistics, by Grana's block algorithm: the same
    labels and statistics as the default, three times faster on one thread (0.16 against
    0.5 ms on the rectified view)."""
    return cv2.connectedComponentsWithStatsWithAlgorithm(mask, 8, cv2.CV_32S, cv2.CCL_GRANA)


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
        return _tone_matched(rect, ref_rect)
    return estimate_floor(rect, px_per_cm, floor_box)


def _tone_matched(rect: np.ndarray, ref_rect: np.ndarray, bins: int = 8) -> np.ndarray:
    """The empty tray as this frame's camera would show it now (linear light).

    Between the two frames the camera's exposure and white balance drift, and because its tone
    curve is not linear, light and dark parts move by different factors. Per channel, the
    factor frame / empty tray is taken as a function of the empty tray's value: the median
    ratio in bins of equal count (robust: the cubes are scattered over all bins, a minority in
    each), interpolated into a lookup table over the 256 values.
    """
    f = to_linear(rect[::3, ::3]).reshape(-1, 3)
    r_u8 = ref_rect[::3, ::3].reshape(-1, 3)
    r = to_linear(r_u8)
    lr = np.log(f + NOISE_FLOOR) - np.log(r + NOISE_FLOOR)
    ref_lin = to_linear(ref_rect)
    out = np.empty_like(ref_lin)
    for c in range(3):
        order = np.argsort(r_u8[:, c], kind="stable")
        v, d = r_u8[order, c].astype(np.float32), lr[order, c]
        centres, gains = [], []
        for part_v, part_d in zip(np.array_split(v, bins), np.array_split(d, bins), strict=True):
            if len(part_v):
                centres.append(float(np.median(part_v)))
                gains.append(float(np.median(part_d)))
        centres, idx = np.unique(np.array(centres), return_index=True)
        lut_log = np.interp(np.arange(256, dtype=np.float32), centres, np.array(gains)[idx])
        # back to a factor on linear light (the ratio was of light plus the noise offset)
        lin = to_linear(np.arange(256, dtype=np.uint8))
        lut = ((lin + NOISE_FLOOR) * np.exp(lut_log) - NOISE_FLOOR).clip(0, None)
        out[..., c] = lut.astype(np.float32)[ref_rect[..., c]]
    return out


def cube_masks(
    rect: np.ndarray,
    bg_lin: np.ndarray,
    px_per_cm: float,
    floor_box: tuple[int, int, int, int],
    *,
    have_reference: bool,
    outlines: Outlines | None = None,
    beyond: tuple[int, ...] = (0, 1, 2, 3),
    doubts: list | None = None,
    shadowed: list | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(strong, weak) cube masks on the rectified view.

    With the empty tray as floor model the change is measured against the frame's own noise
    (``_reference_masks``). Without one: a change of colour or a strong brightening; strong
    colourless darkening unless it is the cubes' common shadow; each confirmed by sharp edges,
    plus what sharp edges outline that the floor estimate missed (``outlines``, computed here
    when not given; when given, built on this frame, and its linear light is used again).
    ``beyond``: the sides (top, right, bottom, left) across which a blob is continued
    (``_continued_beyond``; not the tower's, whose band is no single paint), a coloured sliver
    along the side too (``_cut_at_side``), and beyond which a cube standing on the outline is
    taken (``_wholly_beyond``). ``shadowed``: given a list, the cubes found from the darkening
    they wrap alone (``_shadowed_tops``) are appended to it as one mask, for the reading to
    flag. Brightening is judged against the lit floor nearby
    (``_brighter_than_near``), and inside a piece not edged as a whole, a cube of another
    paint on its own (``_edged_or_other``).
    """
    if outlines is not None and outlines.lin.shape[:2] == rect.shape[:2]:
        rect_lin = outlines.lin  # the same frame's linear light: not worked out twice
    else:
        rect_lin = to_linear(rect)
    shade = shadow_direction(bg_lin, floor_box)
    clipped = (rect >= 250) & (bg_lin >= SATURATED)
    if have_reference:
        strong, weak = _reference_masks(rect_lin, bg_lin, shade, clipped, px_per_cm, floor_box)
        if outlines is not None:
            # a top face painted like the print does not change, but its sides do: a whole top
            # face touching only changes too small to be a cube (its shaded sides, an L) is
            # part of that cube
            strong = _with_touching(strong, outlines.top_mask(), px_per_cm * px_per_cm)
        return strong, weak
    m, chroma = _log_change(rect_lin, bg_lin, shade, clipped)
    coloured = (chroma > CHROMA_STEP) | _brighter_than_near(m, bg_lin, shade, px_per_cm)
    dark = m < np.log(SHADOW_FLOOR)
    x0, y0, x1, y1 = floor_box
    # walls: same paint, other light, and no model of them without a reference
    band = np.ones(m.shape, bool)
    band[y0:y1, x0:x1] = False
    cube_px = px_per_cm * px_per_cm
    if outlines is None:
        outlines = Outlines(rect_lin, px_per_cm, floor_box)
    outlined, edge = outlines.solid(), outlines.edges()
    # A change from the floor estimate counts where sharp edges confirm it (a cube's sides and
    # top are bounded by them; a tinted corner or a lamp's soft light is not): at least
    # EDGE_SUPPORT_CM of edge within its outline and EDGE_DENSITY of its area, not counting
    # the creases along the outline's sides (near the sides, or straight along them for
    # longer than any cube's edge).
    r = round(EDGE_WALL_CM * px_per_cm)
    edge[: y0 + r], edge[y1 - r:], edge[:, : x0 + r], edge[:, x1 - r:] = 0, 0, 0, 0
    edge &= cv2.dilate(_crease_runs(edge, px_per_cm), np.ones((3, 3), np.uint8)) ^ 1
    strong = _clean((coloured & ~band).astype(np.uint8), 0.2 * cube_px)
    neutral = _clean((dark & ~band & (strong == 0)).astype(np.uint8), 0.2 * cube_px)
    # a lamp throws every cube's shadow one way: that darkening is not cubes
    neutral, cast = _without_shadows(strong, neutral, px_per_cm)
    _add_pieces(strong, neutral, SHADOW_CM2 * cube_px)
    # Things outlined all round join, whether the floor estimate missed them (a cube painted
    # like the print, or beside a darker one it found) or not.
    found = strong
    strong = _edged_or_other(strong, edge, rect_lin, px_per_cm)
    # What the floor estimate adds beyond the outlined things must be edged on its own, long
    # straight edges (a lamp's or the tower's shadow, longer than two cubes) not counting: the
    # estimate errs in a band along a hard shadow's edge, and such a band touching cubes
    # would pass as part of them.
    # (the outlined things' own edges, beside such a piece, are theirs, not its)
    apart = cv2.dilate(outlined, np.ones((5, 5), np.uint8)) ^ 1
    own = strong & apart
    kept = _edged_or_other(
        own, edge & (_straight(edge, px_per_cm) ^ 1) & cv2.erode(apart, np.ones((3, 3), np.uint8)),
        rect_lin, px_per_cm)
    kept |= _painted_like_outlined(own & (kept ^ 1), outlined, rect_lin, px_per_cm, shade, m)
    if doubts is not None:
        doubts += _dark_left_out(own & (kept ^ 1), neutral, px_per_cm)
    strong = (strong & (own ^ 1)) | kept
    # a lamp's hard shadow is outlined too: what the common offset said is shadow stays out
    strong |= outlined & (cast ^ 1)
    paints: dict[int, np.ndarray | None] = {}  # the bands' paints, worked out once
    strong |= _cut_at_side(coloured & ~band & (strong == 0), rect_lin, floor_box, px_per_cm,
                           beyond, shade, paints)
    strong |= _edged_across_side(coloured & ~band & (strong == 0), rect_lin, floor_box,
                                 px_per_cm, beyond)
    strong = _continued_beyond(strong, rect_lin, floor_box, px_per_cm, beyond, paints=paints)
    strong |= _wholly_beyond(strong, rect_lin, floor_box, px_per_cm, beyond, shade)
    # (on the floor proper: not the creases along the sides, as for ``edge``, nor the walls,
    # whose light no floor estimate knows; darker than the floor estimate: a face's noise,
    # steep in log terms, is what raises the bar over its own outline, and a glare's grey
    # light brightens)
    inner = np.zeros_like(strong)
    inner[y0 + r: y1 - r, x0 + r: x1 - r] = 1
    strong |= _faintly_outlined(found & (coloured & (m < 0)) & (strong ^ 1) & inner,
                                outlines.faint_edges() & inner, px_per_cm)
    strong |= _faint_closed_tops(outlines, strong, bg_lin, px_per_cm)
    lone = _shadowed_tops(m, chroma, strong, floor_box, px_per_cm)
    strong |= lone
    if shadowed is not None:
        shadowed.append(lone)
    return strong, np.zeros_like(strong)


def _faintly_outlined(dropped: np.ndarray, faint: np.ndarray, px_per_cm: float) -> np.ndarray:
    """The pieces of ``dropped`` (another paint than the floor's, darker, not kept for want of
    sharp edges) that could be a cube (uint8): a footprint's area, at least a cube's
    half-width thick, and outlined over most of their rim by ``faint`` edges (steeper than
    half the edge bar: a cube's outline stays steep; a corner's tinted glow or a lamp's
    coloured light fades gently), long straight runs (creases, shadows' edges) not counting.

    Why: a cube is outlined all round, but on a dark print the darkest lightness band's edge
    bar is set by the dark cubes' own faces, whose noise is steep in log terms, and can rise
    above their outlines (drawn: five black cubes on the dark print, all lost, the reading
    sure). Their colour change and their outline, if fainter than the bar, still say cube.
    """
    out = np.zeros_like(dropped)
    if not dropped.any():
        return out
    x, y, w, h = cv2.boundingRect(dropped)
    n, labels, stats, _ = _labelled_with_stats(dropped[y:y + h, x:x + w])
    near = None
    for i in range(1, n):
        if stats[i, 4] < px_per_cm * px_per_cm:
            continue
        piece = (labels == i).astype(np.uint8)
        framed = cv2.copyMakeBorder(piece, 1, 1, 1, 1, cv2.BORDER_CONSTANT, value=0)
        if cv2.distanceTransform(framed, cv2.DIST_L2, 3).max() < 0.5 * px_per_cm:
            continue
        rim = piece ^ cv2.erode(piece, np.ones((3, 3), np.uint8))
        if near is None:
            f = faint & (_straight(faint, px_per_cm) ^ 1)
            near = cv2.dilate(f[y:y + h, x:x + w], np.ones((5, 5), np.uint8))
        if np.count_nonzero(rim & near) >= 0.5 * np.count_nonzero(rim):
            out[y:y + h, x:x + w] |= piece
    return out


def _dark_left_out(dropped: np.ndarray, neutral: np.ndarray, px_per_cm: float) -> list:
    """Centres (rectified px) of the dropped pieces that hold a cube's footprint of colourless
    darkening: what a black cube in a deep shadow leaves when its piece, joined to the
    shadow, is not edged like a cube as a whole.

    Why: a shadow and a black cube in it differ by little (a shadow is the floor in the
    room's light alone; black paint in that light is darker by no clear factor), so the piece
    is rightly not counted; but it may hold a cube, and the reading must say so.
    """
    dark = dropped & neutral
    if not dark.any():
        return []
    x, y, w, h = cv2.boundingRect(dark)  # labelled on that box only: most frames drop little
    n, _, stats, cents = _labelled_with_stats(dark[y:y + h, x:x + w])
    return [(float(cents[i][0] + x), float(cents[i][1] + y)) for i in range(1, n)
            if stats[i, 4] >= px_per_cm * px_per_cm]


def _wholly_beyond(strong: np.ndarray, rect_lin: np.ndarray,
                   floor_box: tuple[int, int, int, int], px_per_cm: float,
                   sides: tuple[int, ...], shade: np.ndarray | None) -> np.ndarray:
    """Cube-sized pieces wholly beyond a side (not the tower's) that touch the floor's
    outline, painted unlike that side's band (off the shadow's tint), with the outline's pixels
    they touch.

    Why: a cube leaning on the near wall of a camera beyond that wall can show nothing over
    the floor (s000/drop09: a blue and a green cube above the rim line, lost without a word).
    The band beyond a side is one paint in its own light (wall, rim); a cube there is another
    paint, a cube's size (``WHOLLY_BEYOND_CUBES`` of a footprint) and thickness, and stands on
    the outline in the picture. The outline's pixels it touches join it, so that the counter
    sees it run onto the floor and counts it flagged at the tray's edge.
    """
    x0, y0, x1, y1 = floor_box
    h, w = strong.shape
    cube_px = px_per_cm * px_per_cm
    lo, hi = WHOLLY_BEYOND_CUBES
    r = round(px_per_cm)
    # the band one cube deep beyond each side (a cube wholly beyond but touching the outline
    # lies within it)
    zones = ((slice(max(y0 - r, 0), y0), slice(x0, x1)), (slice(y0, y1), slice(x1, min(x1 + r, w))),
             (slice(y1, min(y1 + r, h)), slice(x0, x1)), (slice(y0, y1), slice(max(x0 - r, 0), x0)))
    out = np.zeros_like(strong)
    near = np.zeros_like(strong)
    near[max(y0 - 2, 0):y1 + 2, max(x0 - 2, 0):x1 + 2] = 1
    near[y0 + 2:y1 - 2, x0 + 2:x1 - 2] = 0
    k5 = np.ones((5, 5), np.uint8)
    # what touches a blob already found and is of its paint is that blob's (its
    # continuation was judged, and stops where its cube ends: beyond, a run of its paint is
    # another cube out of the tray); another paint beside it is another cube
    cache: list[np.ndarray] = []

    def cs_full() -> np.ndarray:
        if not cache:
            cache.append(_chroma(rect_lin, px_per_cm))
        return cache[0]

    for k, (sy, sx) in enumerate(zones):
        if k not in sides or sy.stop <= sy.start or sx.stop <= sx.start:
            continue
        cs = _chroma(rect_lin[sy, sx], px_per_cm)
        paint = np.median(cs[::3, ::3].reshape(-1, 3), axis=0)
        unlike = _channel_max(np.abs(_off_tint(cs - paint, shade))) > CHROMA_STEP
        piece = cv2.morphologyEx(unlike.astype(np.uint8), cv2.MORPH_OPEN, k5)
        piece &= strong[sy, sx] ^ 1
        n, labels, area = _components(piece)
        for i in range(1, n):
            if not lo * cube_px <= area[i] <= hi * cube_px:
                continue
            mk = (labels == i).astype(np.uint8)
            if not (mk & near[sy, sx]).any():
                continue
            framed = cv2.copyMakeBorder(mk, 1, 1, 1, 1, cv2.BORDER_CONSTANT, value=0)
            if cv2.distanceTransform(framed, cv2.DIST_L2, 3).max() < 0.3 * px_per_cm:
                continue  # thinner than 0.6 cm: a side, a halo, a streak (no whole cube)
            m = np.zeros_like(strong)
            m[sy, sx] = mk
            if _same_paint_as_touched(m, strong, cs_full(), k5):
                continue
            out |= m | (cv2.dilate(m, k5) & near)
    return out


def _cut_at_side(coloured: np.ndarray, rect_lin: np.ndarray,
                 floor_box: tuple[int, int, int, int], px_per_cm: float,
                 sides: tuple[int, ...], shade: np.ndarray | None = None,
                 paints: dict[int, np.ndarray | None] | None = None) -> np.ndarray:
    """Cubes mostly beyond the outline, seen over the floor only as a coloured sliver along
    its side: each such sliver with its continuation beyond (``_continued_beyond``), when that
    continuation is a cube's worth (``SIDE_CUBE_SHARE`` of a footprint).

    Why: a cube leaning on the near wall of a camera beyond that wall shows over the floor
    only a strip of its top (s000); the strip is too thin to be edged (edges along the sides
    are not counted: creases), so nothing was continued beyond the side and the cube was
    lost, without a word. A coloured sliver along a side (reaching less than a cube's width
    in: a cube mostly beyond) is a cube when the band beyond holds a cube-sized piece of its
    paint, unlike the band's own (the wall, the rim).
    """
    x0, y0, x1, y1 = floor_box
    cube_px = px_per_cm * px_per_cm
    inner = np.zeros(coloured.shape, np.uint8)
    inner[y0 + 2:y1 - 2, x0 + 2:x1 - 2] = 1
    if not (coloured & (inner == 0)).any():
        return inner * 0
    k3 = np.ones((3, 3), np.uint8)
    seeds = cv2.morphologyEx(cv2.morphologyEx(coloured.astype(np.uint8), cv2.MORPH_OPEN, k3),
                             cv2.MORPH_CLOSE, k3)
    n, labels, area = _components(seeds)
    touch = np.zeros(n, bool)
    touch |= _present(labels[(seeds > 0) & (inner == 0)], n)
    touch &= area >= 0.1 * cube_px
    # a cube mostly beyond the side reaches less than a cube's width over the floor
    r = round(px_per_cm)
    touch &= ~_present(labels[y0 + r:y1 - r, x0 + r:x1 - r], n)
    touch[0] = False
    seeds = np.take(touch.astype(np.uint8), labels)  # (np.take: faster, the same values)
    if not seeds.any():
        return seeds
    grown = _continued_beyond(seeds, rect_lin, floor_box, px_per_cm, sides, shade, paints)
    out_of_box = np.ones_like(seeds)
    out_of_box[y0:y1, x0:x1] = 0
    n, labels = cv2.connectedComponents(grown, connectivity=8)
    outside = np.bincount(labels[(grown > 0) & (out_of_box > 0)], minlength=n)
    keep = outside >= SIDE_CUBE_SHARE * cube_px
    keep[0] = False
    return np.take(keep.astype(np.uint8), labels)  # (np.take: faster, the same values)


def _edged_across_side(coloured: np.ndarray, rect_lin: np.ndarray,
                       floor_box: tuple[int, int, int, int], px_per_cm: float,
                       sides: tuple[int, ...]) -> np.ndarray:
    """Coloured slivers along a side (not the tower's) with the band beyond them crossed by
    sharp edges at both their ends (``_edged_below``), with that part of the band (uint8).

    Why: a cube leaning on the near wall of a camera beyond that wall can show only a sliver
    over the floor, and beyond the side its paint can be the rim's (a white cube on a white
    rim, s000/drop08): no continuation by paint (``_cut_at_side``) finds it. But the rim is
    one flat surface with its edges along the side; the cube's sides cross it, continuing
    the sliver's two ends. Each side is turned to lie at the bottom and judged alike.
    """
    out = np.zeros(coloured.shape, np.uint8)
    x0, y0, x1, y1 = floor_box
    h, w = coloured.shape
    r = round(px_per_cm)
    d = r + 3  # inside: enough to tell a piece reaching a cube in
    # each side's strip (inside part, band beyond) and the rows/columns just inside it
    ys, xs = slice(y0, y1), slice(x0, x1)
    strips = {0: ((slice(max(y0 - r, 0), y0 + d), xs), (slice(y0, y0 + 3), xs)),
              1: ((ys, slice(x1 - d, min(x1 + r, w))), (ys, slice(x1 - 3, x1))),
              2: ((slice(y1 - d, min(y1 + r, h)), xs), (slice(y1 - 3, y1), xs)),
              3: ((ys, slice(max(x0 - r, 0), x0 + d)), (ys, slice(x0, x0 + 3)))}
    turns = {0: 2, 1: -1, 2: 0, 3: 1}  # quarter turns (anticlockwise) bringing side k down
    box = np.zeros(coloured.shape, np.uint8)
    box[ys, xs] = 1
    for k in sides:
        (sy, sx), edge = strips[k]
        if not coloured[edge].any():
            continue  # (most sides of most frames)
        t = turns[k]
        c, b = np.rot90(coloured[sy, sx], t), np.rot90(box[sy, sx], t)
        bx, by, bw, bh = _bbox(b)
        found = _edged_below(np.ascontiguousarray(c, np.uint8), np.rot90(rect_lin[sy, sx], t),
                             (bx, by, bx + bw, by + bh), px_per_cm)
        out[sy, sx] |= np.rot90(found, -t)
    return out


def _edged_below(coloured: np.ndarray, lin: np.ndarray, floor_box: tuple[int, int, int, int],
                 px_per_cm: float) -> np.ndarray:
    """``_edged_across_side`` for the bottom side: the coloured pieces touching it, reaching
    less than a cube's width in and ``SLIVER_SPAN_CM`` along it (a cube's face, square or
    turned), clear of the corners (``EDGE_WALL_CM``: the walls' joints cross the band there),
    whose ends the band beyond (a cube deep, as far as the view goes, at least a quarter
    cm) is crossed by ``edges_across`` along ``CROSS_SHARE`` of its depth, within ``EDGE_WALL_CM``
    of each end; returned with the band between those two edges, as far out as they run.
    """
    x0, y0, x1, y1 = floor_box
    h = coloured.shape[0]
    r = round(px_per_cm)
    m = max(1, round(EDGE_WALL_CM * px_per_cm))
    out = np.zeros_like(coloured)
    if y1 + round(0.25 * px_per_cm) > h:
        return out
    # (labelled over the floor's last cube and a bit only: what reaches further in is out)
    top = max(y0, y1 - r - 3)
    k3 = np.ones((3, 3), np.uint8)
    seeds = cv2.morphologyEx(cv2.morphologyEx(coloured[top:y1], cv2.MORPH_OPEN, k3),
                             cv2.MORPH_CLOSE, k3)
    seeds[:, :x0], seeds[:, x1:] = 0, 0
    n, labels, area = _components(seeds)
    touch = _present(labels[-3:], n) & (area >= 0.1 * px_per_cm * px_per_cm)
    touch &= ~_present(labels[: y1 - r - top], n)  # a cube mostly beyond reaches less in
    touch[0] = False
    lo, hi = SLIVER_SPAN_CM
    edges = None
    for i in np.flatnonzero(touch):
        cols = np.flatnonzero((labels[-3:] == i).any(axis=0))
        a, b = int(cols[0]), int(cols[-1])
        if not lo * px_per_cm <= b - a + 1 <= hi * px_per_cm or a - x0 < m or x1 - 1 - b < m:
            continue
        if edges is None:  # the band beyond the side, a cube deep
            band = np.ascontiguousarray(lin[y1:y1 + r, x0:x1], np.float32)
            seen = in_view_rows(band)
            edges = edges_across(band, px_per_cm, seen)
        found = _crossed_at_ends(edges, seen, a - x0, b - x0, px_per_cm)
        if found is None:
            continue
        ca, cb, reach = found
        out[top:y1][labels == i] = 1
        span = np.zeros_like(seen)
        span[:reach, ca:cb + 1] = seen[:reach, ca:cb + 1]
        out[y1:y1 + span.shape[0], x0:x1] |= span.astype(np.uint8)
    return out


def _crossed_at_ends(edges: np.ndarray, seen: np.ndarray, a: int, b: int,
                     px_per_cm: float) -> tuple[int, int, int] | None:
    """The columns (band px) of the edges crossing the band ``edges`` near both ends ``a``, ``b``
    of a sliver (within ``EDGE_WALL_CM``) and the rows they reach out to, or None: an edge
    crosses at a column when, allowing a turned cube's slant (a sixth of a cm either way), it
    covers ``CROSS_SHARE`` of the band's depth
    in view there (at least a quarter cm)."""
    m = max(1, round(EDGE_WALL_CM * px_per_cm))
    s = max(1, round(px_per_cm / 6))
    depth = seen.sum(axis=0)
    lo, hi = max(a - m, 0), min(b + m + 1, edges.shape[1])
    if lo >= hi or depth[a:b + 1].min() < 0.25 * px_per_cm:
        return None
    wide = cv2.dilate(edges, np.ones((1, 2 * s + 1), np.uint8)) & seen
    crossed = wide.sum(axis=0) >= CROSS_SHARE * np.maximum(depth, 1)
    left = np.flatnonzero(crossed[lo:min(a + m + 1, hi)])
    right = np.flatnonzero(crossed[max(b - m, lo):hi])
    if not left.size or not right.size:
        return None
    ca, cb = lo + int(left[0]), max(b - m, lo) + int(right[-1])
    if cb - ca < SLIVER_SPAN_CM[0] * px_per_cm:
        return None
    # the cube reaches out as far as its crossing sides run (beyond: rim, table)
    rows = np.flatnonzero(wide[:, ca] | wide[:, cb])
    return ca, cb, int(rows[-1]) + 1


def _crease_runs(edge: np.ndarray, px_per_cm: float) -> np.ndarray:
    """The runs of ``edge`` straight along the floor's axes for longer than ``EDGE_RUN_CM``
    and thinner than ``EDGE_OPEN_CM`` (uint8): creases, no cube's edge (no cube has an edge that
    long).

    Why thin: a mass of edge pixels as wide as a run is long is no line. A bright cube on a
    dark print whose darker lightness bands read no gradient at all (8-bit steps) has its
    whole face taken for edge (the bar at its fixed floor), a solid patch over 1.6 cm across
    with the halo; taken for crease runs, every edge of it was dropped and the cube was not
    confirmed (drawn seed 1 #86: a yellow missed, sure)."""
    run = round(EDGE_RUN_CM * px_per_cm) | 1
    thick = max(2, round(EDGE_OPEN_CM * px_per_cm))
    out = np.zeros_like(edge)
    for line, mass in (((1, run), (thick, run)), ((run, 1), (run, thick))):
        runs = cv2.morphologyEx(edge, cv2.MORPH_OPEN, np.ones(line, np.uint8))
        solid = cv2.morphologyEx(edge, cv2.MORPH_OPEN, np.ones(mass, np.uint8))
        out |= runs & (solid ^ 1)
    return out


def _edged_or_other(mask: np.ndarray, edge: np.ndarray, rect_lin: np.ndarray,
                    px_per_cm: float) -> np.ndarray:
    """The pieces of ``mask`` that are edged (``_edged``) and, inside those that are not,
    what is painted unlike most of the piece (``_other_paint``) and edged on its own."""
    labels, ok, area = _edge_support(mask, edge, px_per_cm)
    if labels is None:
        return mask
    confirmed = np.take(ok.astype(np.uint8), labels)  # (np.take: faster, the same values)
    big = ~ok & (area >= 2 * px_per_cm * px_per_cm)
    big[0] = False
    if not big.any():
        return confirmed
    other = _other_paint(labels, np.nonzero(big)[0], rect_lin, px_per_cm)
    return confirmed | _edged(other, edge, px_per_cm) if other.any() else confirmed


def _other_paint(labels: np.ndarray, which, rect_lin: np.ndarray,
                 px_per_cm: float) -> np.ndarray:
    """Within each piece ``which`` of ``labels`` (pieces larger than two cubes: below that a
    cube on them would be most of the piece), what is painted unlike most of it (colour,
    lightness left out, more than ``CHROMA_STEP`` off the piece's median).

    Why: where the floor estimate misses a patch of the print (a coloured band narrower than
    its median), the patch is one blob with any cube standing on it, and the blob as a whole
    is not edged like a cube and is dropped, the cube with it (a yellow cube on a pink band,
    s003). A patch of print is one paint; a cube on it is another, and edged on its own.
    """
    cube_px = px_per_cm * px_per_cm
    out = np.zeros(labels.shape, np.uint8)
    for i in which:
        x, y, w, h = _bbox(labels == i)
        m = labels[y:y + h, x:x + w] == i
        cs = _chroma(rect_lin[y:y + h, x:x + w], px_per_cm)
        paint = np.median(cs[m], axis=0)
        other = (m & (_channel_max(np.abs(cs - paint)) > CHROMA_STEP)).astype(np.uint8)
        out[y:y + h, x:x + w] |= _clean(other, 0.2 * cube_px)
    return out


def _brighter_than_near(t: np.ndarray, bg_lin: np.ndarray, shade: np.ndarray,
                        px_per_cm: float) -> np.ndarray:
    """Where the frame, ``t`` brighter than the floor estimate ``bg_lin`` along ``shade``, is
    brighter by more than ``BRIGHT_CEIL`` than the brightest estimate within ``LIT_REACH_CM``.

    Why not against the estimate at the pixel: a shadow only darkens, so bare floor is never
    brighter than the lit floor beside it; but the estimate from the frame places a lamp's
    hard shadow edge only to within its fill's reach, and lit floor estimated as shadowed
    read as a strong brightening: a band along the tower's shadow edge joined the cubes
    beside it (s002). A cube brighter than the print is brighter than the lit floor too.
    """
    # at a quarter of the resolution (the estimate is made there and changes slowly): how
    # much brighter the brightest estimate nearby is than the estimate here, along ``shade``
    f = 4
    h, w = bg_lin.shape[:2]
    small = cv2.resize(bg_lin, (w // f, h // f), interpolation=cv2.INTER_AREA)
    r = max(1, round(LIT_REACH_CM * px_per_cm / f))
    k = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1, 2 * r + 1))
    lift = _log(cv2.dilate(small, k) + NOISE_FLOOR) - _log(small + NOISE_FLOOR)
    lift = cv2.resize((lift @ shade) / float(shade @ shade), (w, h),
                      interpolation=cv2.INTER_LINEAR)
    return t - lift > np.log(BRIGHT_CEIL)


def _continued_beyond(strong: np.ndarray, rect_lin: np.ndarray,
                      floor_box: tuple[int, int, int, int], px_per_cm: float,
                      sides: tuple[int, ...] = (0, 1, 2, 3),
                      shade: np.ndarray | None = None,
                      paints: dict[int, np.ndarray | None] | None = None) -> np.ndarray:
    """``strong`` with its blobs that cross the floor's outline continued into the band beyond.

    Why: a cube leaning on a wall, or lying where the outline stops short of the crease (the
    tower's mouth), is partly beyond the outline; cut there, its piece over the floor is a
    sliver and is lost. Without a reference the band beyond is wall, rim or the mouth's
    shadowed floor, lit unlike the floor, so the floor's estimate says nothing there. But a
    cube is one paint: beyond the outline its continuation has the colour (lightness left
    out: its sides are shaded) of its part over the floor, within ``CHROMA_STEP``, and differs
    by more than that from the band's own paint (the band's median colour along that side).
    No further than a cube reaches from the blob. With the shadow's tint ``shade``, unlike
    the band's paint means off that tint too (``_off_tint``). ``paints``: the bands' paints
    worked out so far for this frame (filled in here; shared between calls).
    """
    x0, y0, x1, y1 = floor_box
    h, w = strong.shape
    ring = strong.copy()
    ring[y0 + 2:y1 - 2, x0 + 2:x1 - 2] = 0
    ring[:y0], ring[y1:], ring[:, :x0], ring[:, x1:] = 0, 0, 0, 0
    if not ring.any():
        return strong
    zones = ((slice(0, y0), slice(x0, x1)), (slice(y0, y1), slice(x1, w)),
             (slice(y1, h), slice(x0, x1)), (slice(y0, y1), slice(0, x0)))
    paints = {} if paints is None else paints

    def band_paint(k: int) -> np.ndarray | None:
        # the band's median colour, from every third pixel (a median needs no more)
        if k not in paints:
            band = rect_lin[zones[k]][::3, ::3]
            paints[k] = (np.median(_chroma(band, px_per_cm / 3).reshape(-1, 3), axis=0)
                         if k in sides and band.size else None)
        return paints[k]

    _, labels = cv2.connectedComponents(strong, connectivity=8)
    r = round(px_per_cm)
    out = strong.copy()
    for i in np.unique(labels[ring > 0]):
        bx, by, bw, bh = _bbox(labels == i)
        bx0, by0 = max(bx - r, 0), max(by - r, 0)
        bx1, by1 = min(bx + bw + r, w), min(by + bh + r, h)
        sub = (labels[by0:by1, bx0:bx1] == i).astype(np.uint8)
        cs = _chroma(rect_lin[by0:by1, bx0:bx1], px_per_cm)
        # the paint of the blob's part next to each pixel (a cluster is of many paints), from
        # its interior (its rim, blurred with the floor, is of neither)
        core = cv2.erode(sub, np.ones((5, 5), np.uint8))
        core = (core if core.any() else sub).astype(np.float32)
        wsum = cv2.blur(core, (r + 1, r + 1))
        local = cv2.blur(cs * core[..., None], (r + 1, r + 1)) / np.maximum(wsum, 1e-3)[..., None]
        cand = (_channel_max(np.abs(cs - local)) < CHROMA_STEP) & (wsum > 0.05)
        beyond = np.zeros(cand.shape, bool)
        for k, (sy, sx) in enumerate(zones):
            ys = slice(max(sy.start or 0, by0) - by0, max(min(sy.stop, by1) - by0, 0))
            xs = slice(max(sx.start or 0, bx0) - bx0, max(min(sx.stop, bx1) - bx0, 0))
            if ys.stop <= ys.start or xs.stop <= xs.start or band_paint(k) is None:
                continue
            unlike = _off_tint(cs[ys, xs] - band_paint(k), shade)
            beyond[ys, xs] = _channel_max(np.abs(unlike)) > CHROMA_STEP
        near = cv2.distanceTransform(sub ^ 1, cv2.DIST_L2, 3) <= r
        cand = (cand & beyond & near).astype(np.uint8)
        cand = cv2.morphologyEx(cand, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
        m, lab = cv2.connectedComponents(sub | cand, connectivity=8)
        keep = _present(lab[sub > 0], m)
        keep[0] = False
        out[by0:by1, bx0:bx1] |= cand & keep[lab].astype(np.uint8)
    return out


def _painted_like_outlined(pieces: np.ndarray, outlined: np.ndarray, rect_lin: np.ndarray,
                           px_per_cm: float, shade: np.ndarray | None = None,
                           light: np.ndarray | None = None) -> np.ndarray:
    """The pieces of ``pieces`` (uint8) that touch an outlined thing painted like them: its
    colour (lightness out, ``_chroma``) within ``CHROMA_STEP`` of the median of the thing's
    interior, in each piece's median, off the shadow's tint ``shade`` (``_off_tint``: a
    cube's shaded side is its paint in less of the lamp's light).

    Why: what the floor estimate adds beside the outlined things must be edged on its own,
    their edges beside it not counting (a band of the estimate's error along a lamp's shadow
    edge passed on a red cube's outline). But a cube is one paint: when only part of a cube is
    outlined (a brown's shaded side, enclosed by edges) the rest of it (its top, cut by the
    outline's side, beside a green) had only its far edge left and was lost (s004/drop08). A
    band of the estimate's error is the floor's paint, unlike the cube it touches.
    With ``light`` (the frame's lightness change over the floor estimate, log), only pieces
    darker than the floor: a glare greys the tops it lies on and the floor around them alike,
    so the glare beside them reads as their paint; it only brightens (as for
    ``_faintly_outlined``).
    """
    out = np.zeros_like(pieces)
    n, labels = cv2.connectedComponents(pieces, connectivity=8)
    if n <= 1:
        return out
    h, w = pieces.shape
    r = round(px_per_cm)
    k3, k7 = np.ones((3, 3), np.uint8), np.ones((7, 7), np.uint8)
    # (a part of a cube worth counting, as elsewhere here: a fifth of a cube's area; the rims
    # left beside the things' dilation are their own blur and halo; and no more than the
    # rest of one cube can be, ``CUBE_PART_CM2``: a glare around glared tops is of their
    # (the glare's) colour too)
    cube_px = px_per_cm * px_per_cm
    area = np.bincount(labels.ravel(), minlength=n)
    which = np.flatnonzero((area >= 0.2 * cube_px) & (area <= CUBE_PART_CM2 * cube_px))
    which = which[which > 0]
    for i, (bx, by, bw, bh) in zip(which, _bboxes(labels, which), strict=True):
        x0, y0 = max(bx - r, 0), max(by - r, 0)
        x1, y1 = min(bx + bw + r, w), min(by + bh + r, h)
        piece = (labels[y0:y1, x0:x1] == i).astype(np.uint8)
        if light is not None and np.median(light[y0:y1, x0:x1][piece > 0]) >= 0:
            continue
        things = outlined[y0:y1, x0:x1]
        _, tl = cv2.connectedComponents(things, connectivity=8)
        # (``pieces`` lie 2 px off the things: beyond their dilation by 5 x 5)
        touched = np.unique(tl[(cv2.dilate(piece, k7) > 0) & (things > 0)])
        if touched.size == 0:
            continue
        cs = _chroma(rect_lin[y0:y1, x0:x1], px_per_cm)
        paint = np.median(cs[piece > 0], axis=0)
        inner = cv2.erode(things, k3)
        for j in touched:
            thing = tl == j
            core = thing & (inner > 0)
            core = core if core.any() else thing
            diff = _off_tint(np.median(cs[core], axis=0) - paint, shade)
            if _channel_max(np.abs(diff)) < CHROMA_STEP:
                out[y0:y1, x0:x1] |= piece
                break
    return out


def _same_paint_as_touched(piece: np.ndarray, strong: np.ndarray, chroma: np.ndarray,
                           kernel: np.ndarray) -> bool:
    """Whether ``piece`` touches ``strong`` where that is painted like the piece (a quarter of
    the piece within ``CHROMA_STEP`` of the median colour of the blob's interior nearby)."""
    if not (cv2.dilate(piece, kernel) & strong).any():
        return False
    # the touched blob's paint from its interior near the piece (its rim is blurred with
    # what lies around it)
    side = 2 * kernel.shape[0] + 1
    ring = cv2.dilate(piece, np.ones((side, side), np.uint8)) & cv2.erode(strong, kernel)
    if not ring.any():
        return True  # touches only a sliver: nothing of another paint to tell it from
    # a piece's own paint is blurred with the band's over a good part of it: of the blob's
    # paint when a good part of it (a quarter) is within ``CHROMA_STEP`` of the blob's
    b = np.median(chroma[ring > 0], axis=0)
    alike = _channel_max(np.abs(chroma[piece > 0] - b)) < CHROMA_STEP
    return bool(alike.mean() >= 0.25)


def _off_tint(diff: np.ndarray, shade: np.ndarray | None) -> np.ndarray:
    """A difference of log colour ``diff`` (lightness out) less its part along the shadow's
    tint: a wall in a tinted shadow is the band's own paint in the room's light, not a cube
    (a shadowed corner of s002 read as a black cube beyond the side). Unchanged when the
    tint is grey or unknown."""
    if shade is None:
        return diff
    u = shade - shade.mean()
    norm = float(np.linalg.norm(u))
    if norm < 0.05:
        return diff
    u = (u / norm).astype(np.float32)
    return diff - (diff @ u)[..., None] * u


def _chroma(lin: np.ndarray, px_per_cm: float) -> np.ndarray:
    """Log colour with the lightness taken out, averaged over 0.25 cm (sensor and JPEG
    noise): what a shade or a shadow leaves alone."""
    k = max(1, round(0.25 * px_per_cm))
    c = cv2.blur(_log(lin + NOISE_FLOOR), (k, k))
    return c - _channel_mean(c)[..., None]


def _channel_mean(a: np.ndarray) -> np.ndarray:
    """``a.mean(axis=2)`` of a 3-channel float32 image, the same bits, ten times faster
    (numpy's reductions over a short last axis are slow, as for ``_channel_max``): numpy adds
    a pixel's channels in order and divides by 3 in float64, which rounded to float32 is the
    float32 quotient (an exact quotient's double rounding cannot differ)."""
    return (a[..., 0] + a[..., 1] + a[..., 2]) / np.float32(3)


def _with_touching(mask: np.ndarray, pieces: np.ndarray, max_area: float) -> np.ndarray:
    """``mask`` plus each connected piece of ``pieces`` that touches ``mask`` but no piece of
    it as large as ``max_area`` px."""
    n, labels = cv2.connectedComponents(pieces, connectivity=8)
    if n <= 1:
        return mask
    _, mlab, marea = _components(mask)
    big = marea >= max_area
    big[0] = False
    k = np.ones((3, 3), np.uint8)
    near = cv2.dilate(mask.astype(np.uint8), k) > 0
    near_big = cv2.dilate(big[mlab].astype(np.uint8), k) > 0
    hit = _present(labels[near & (pieces > 0)], n) & ~_present(labels[near_big & (pieces > 0)], n)
    hit[0] = False
    return mask | np.take(hit.astype(mask.dtype), labels)  # (np.take: faster, same values)


def _edged(mask: np.ndarray, edge: np.ndarray, px_per_cm: float) -> np.ndarray:
    """The pieces of ``mask`` with sharp ``edge`` pixels (within 2 px of them) over at least
    ``EDGE_SUPPORT_CM`` of length and ``EDGE_DENSITY`` of their area."""
    labels, ok, _ = _edge_support(mask, edge, px_per_cm)
    return mask if labels is None else np.take(ok.astype(np.uint8), labels)  # (faster)


def _edge_support(mask: np.ndarray, edge: np.ndarray, px_per_cm: float):
    """(labels, edged per label, area per label) of the pieces of ``mask`` (``_edged``);
    labels None when there is no piece."""
    n, labels, area = _components(mask)
    if n <= 1:
        return None, None, area
    grown = cv2.dilate(labels.astype(np.float32), np.ones((5, 5), np.uint8)).astype(np.int32)
    support = np.bincount(grown[edge > 0], minlength=n)
    ok = support >= np.maximum(EDGE_SUPPORT_CM * px_per_cm, EDGE_DENSITY * area)
    ok[0] = False
    return labels, ok, area


def _reference_masks(rect_lin, bg_lin, shade, clipped, px_per_cm, floor_box):
    """Cube pixels against the empty tray, measured against the frame's own noise.

    The log ratio is averaged over a quarter of a centimetre (JPEG and sensor noise; a cube is
    four times that wide) and compared with the frame's noise, the robust spread of the change
    over the floor (most of the floor is bare).

    - A change of colour beyond ``REF_CHROMA`` or a brightening of any channel beyond
      ``REF_BRIGHT`` is a cube. (A lamp's shadow in a dim room can be as dark as black paint:
      depth alone says nothing.)
    - A colourless darkening beyond ``REF_DARK`` is a cube's own shaded sides and shadow, or a
      cube whose paint matches the print's hue (black, brown on cream, white on a light print
      seen slightly from the side), or a shadow cast by something else (a hand, the tower). The
      first kinds are cube-sized; a darkened piece larger than ``SHADOW_CM2`` (on its own) is
      taken as a cast shadow. A piece shaped like an L (shaded sides around an unchanged top, a
      cube painted exactly like the print) stands for its convex hull.
    - Weak: any faint change away from the above; believed later only if cube-shaped.
    """
    k = max(3, round(0.25 * px_per_cm) | 1)
    lr = _log(rect_lin + NOISE_FLOOR) - _log(bg_lin + NOISE_FLOOR)
    lr[clipped] = 0.0
    lr = cv2.blur(lr, (k, k))
    t = (lr @ shade) / float(shade @ shade)
    chroma = _off_shadow_plane(lr, shade)
    if chroma is None:
        chroma = _channel_max(np.abs(lr - t[..., None] * shade))
    noise_t, noise_c = _noise_maps(t, chroma, bg_lin)
    dark = np.maximum(REF_DARK, REF_SIGMAS * noise_t)
    bright = np.maximum(REF_BRIGHT, REF_SIGMAS * noise_t)
    chroma_step = np.maximum(REF_CHROMA, REF_SIGMAS * noise_c)
    cube_px = px_per_cm * px_per_cm
    # a shadow only ever darkens: any one channel brighter than noise allows is not shadow
    # (a white cube on a cream print is bluer, hence brighter in blue, than the print)
    strong = (chroma > chroma_step) | (_channel_max(lr) > bright)
    strong = _clean(strong.astype(np.uint8), 0.2 * cube_px)
    neutral = _clean(((t < -dark) & (strong == 0)).astype(np.uint8), 0.2 * cube_px)
    neutral, cast = _without_shadows(strong, neutral, px_per_cm)
    neutral = _sides_widened(neutral, strong, px_per_cm)
    _add_pieces(strong, neutral, SHADOW_CM2 * cube_px, floor_box)
    faint = (chroma > np.maximum(WEAK_CHROMA, 3 * noise_c)) | (
        np.abs(t) > np.maximum(REF_FAINT, 3 * noise_t))
    near = cv2.dilate(strong | cast, np.ones((7, 7), np.uint8)) > 0
    faint = _clean((faint & ~near).astype(np.uint8), 0.3 * cube_px)
    weak = np.zeros_like(strong)
    _add_pieces(weak, faint, 3 * cube_px)
    return strong, weak


def _sides_widened(neutral: np.ndarray, strong: np.ndarray, px_per_cm: float) -> np.ndarray:
    """``neutral`` with each lone bar of darkening a cube long but thinner than a cube widened
    to a cube's width about its own axis.

    Why: a cube painted like the print (a white cube on a pale print, its top clipped with the
    floor's) shows no change on its top; only its shaded side and its shadow darken, a bar
    along one edge of the top, about a cube long (``SIDE_BAR_CM``) and a side's width plus a
    shadow's thick. Left as it is the counter drops it as a sliver (a cube is 1 cm across from
    any side). A bar within a shadow's reach of a coloured piece may be that cube's shadow (a
    point lamp's are hard-edged) and is left alone. The bar is widened both ways (which side
    the top lies on needs the camera and the light), so the piece covers the top.
    """
    n, labels, stats, _ = _labelled_with_stats(neutral)
    if n <= 1:
        return neutral
    r = max(1, round(SHADOW_MAX_CM * px_per_cm))
    disc = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1,) * 2)
    lo, hi = (v * px_per_cm for v in SIDE_BAR_CM)
    h_img, w_img = neutral.shape
    out = neutral.copy()
    for i in range(1, n):
        x, y, w, h, a = stats[i]
        if max(w, h) < lo / np.sqrt(2) or a >= SLIVER_CM * px_per_cm * (hi + 1.0):
            continue  # too short or too much of it for a bar
        ys, xs = np.nonzero(labels[y: y + h, x: x + w] == i)
        (cx, cy), (bw, bh), deg = cv2.minAreaRect(
            np.column_stack([xs + x, ys + y]).astype(np.float32))
        long_ = max(bw, bh)
        # its mean thickness (area over length), as the counter judges a sliver
        if not (lo <= long_ <= hi and len(xs) < SLIVER_CM * px_per_cm * (long_ + 1.0)):
            continue
        # within a shadow's reach of a coloured piece: maybe that cube's shadow
        x0, y0 = max(x - r, 0), max(y - r, 0)
        x1, y1 = min(x + w + r, w_img), min(y + h + r, h_img)
        piece = (labels[y0:y1, x0:x1] == i).astype(np.uint8)
        if np.any(cv2.dilate(piece, disc) & strong[y0:y1, x0:x1]):
            continue
        size = (bw, px_per_cm) if bw >= bh else (px_per_cm, bh)
        box = cv2.boxPoints(((cx, cy), size, deg)).astype(np.int32)
        cv2.fillConvexPoly(out, box, 1)
    return out


def _without_shadows(strong: np.ndarray, neutral: np.ndarray, px_per_cm: float):
    """(cube-like darkening, cast shadow): colourless darkening ``neutral`` beside the coloured
    cube pixels ``strong``, split into what may be cubes and what is shadow.

    Pieces too large to be cubes and their shadows (``SHADOW_CM2``) are shadows cast by
    something else. When a lamp throws the cubes' shadows one common way
    (``_shadow_shift``), the darkening where a coloured cube's shadow falls (swept along the
    offset), and the far band of every piece as deep as the shadow is long (a dark cube's
    shadow) is shadow too, unless that band would take a dark piece whole (a dark cube).
    """
    cube_px = px_per_cm * px_per_cm
    n, labels, area = _components(neutral)
    small = area <= SHADOW_CM2 * cube_px
    small[0] = False
    neutral = np.take(small.astype(np.uint8), labels)  # (np.take: faster, the same values)
    cast = np.zeros_like(strong)
    shift = _shadow_shift(strong, neutral, px_per_cm)
    if shift is not None:
        dx, dy = shift
        body = strong | neutral
        band = neutral & ~_shifted(body, -dx, -dy)
        n, labels = cv2.connectedComponents(neutral, connectivity=8)
        left = np.bincount(labels[(neutral > 0) & (band == 0)], minlength=n)
        band &= np.take((left >= 0.6 * cube_px).astype(np.uint8), labels)  # (faster)
        cast = band
        for frac in (0.25, 0.5, 0.75, 1.0):
            cast |= _shifted(strong, round(frac * dx), round(frac * dy))
        cast = neutral & cast
        neutral = neutral & ~cast
    return neutral, cast


def _noise_maps(t: np.ndarray, chroma: np.ndarray, bg_lin: np.ndarray, bins: int = 6):
    """Per pixel, the spread of the change (lightness, colour) that noise alone makes there.

    Sensor noise and JPEG weigh more, in log ratios, where the floor is dark (the tower's
    mouth, a deep shadow), so the spread is measured per band of the floor model's lightness
    (robustly: most pixels of any band are bare floor or wall) and looked up per pixel.
    """
    lum = bg_lin @ LUMA_BGR
    ls, ts, cs = lum[::2, ::2].ravel(), t[::2, ::2].ravel(), chroma[::2, ::2].ravel()
    edges = np.quantile(ls, np.linspace(0, 1, bins + 1))
    edges[0], edges[-1] = -np.inf, np.inf
    idx = np.clip(np.searchsorted(edges, ls, side="right") - 1, 0, bins - 1)
    nt, nc = np.zeros(bins, np.float32), np.zeros(bins, np.float32)
    for b in range(bins):
        tb, cb = ts[idx == b], cs[idx == b]
        if len(tb) == 0:
            continue
        nt[b] = 1.4826 * np.median(np.abs(tb - np.median(tb)))
        nc[b] = 1.4826 * np.median(cb)
    pix = np.clip(np.searchsorted(edges, lum, side="right") - 1, 0, bins - 1)
    return nt[pix], nc[pix]


def _add_pieces(dst: np.ndarray, pieces: np.ndarray, max_area: float,
                floor_box: tuple[int, int, int, int] | None = None) -> None:
    """OR into ``dst`` each connected piece of ``pieces`` up to ``max_area`` px; an L-shaped
    piece (shaded sides and shadow around an unchanged top) as its convex hull, filled only
    over the floor (``floor_box``, when given: a piece reaching onto a wall's face is a shadow
    on it there, nothing to fill)."""
    n, labels, stats, _ = _labelled_with_stats(pieces)
    for i in range(1, n):
        x, y, w, h, a = stats[i]
        if a > max_area:
            continue  # a cast shadow, or light that changed
        piece = (labels[y:y + h, x:x + w] == i).astype(np.uint8)
        contours, _ = cv2.findContours(piece, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        hull = cv2.convexHull(max(contours, key=cv2.contourArea))
        if a < 0.75 * max(cv2.contourArea(hull), 1.0):
            filled = piece.copy()
            cv2.fillConvexPoly(filled, hull, 1)
            if floor_box is not None:
                fx0, fy0, fx1, fy1 = floor_box
                inside = np.zeros_like(piece)
                inside[max(0, fy0 - y): max(0, fy1 - y), max(0, fx0 - x): max(0, fx1 - x)] = 1
                filled &= inside | piece
            piece = filled
        dst[y:y + h, x:x + w] |= piece


def _shifted(mask: np.ndarray, dx: int, dy: int) -> np.ndarray:
    """``mask`` moved by (dx, dy) pixels, zeros shifted in."""
    out = np.zeros_like(mask)
    h, w = mask.shape
    out[max(dy, 0): h + min(dy, 0), max(dx, 0): w + min(dx, 0)] = \
        mask[max(-dy, 0): h + min(-dy, 0), max(-dx, 0): w + min(-dx, 0)]
    return out


def _shadow_shift(strong: np.ndarray, neutral: np.ndarray, px_per_cm: float):
    """The offset (dx, dy) in px from the cubes to their shadows, when the frame shows one.

    A lamp casts every cube's shadow the same way. Colourless darkening that lies beside the
    coloured cubes at one common offset is shadow: the offset is the shift that best lays the
    coloured pixels onto the darkened ones (cross-correlation at a quarter of the resolution,
    up to ``SHADOW_MAX_CM``). None when too little of the cubes' area finds a shadow there
    (soft light), when as much finds it the opposite way (shaded sides all round) or the offset
    is short.
    """
    f = 4
    h, w = strong.shape
    a = cv2.resize(strong.astype(np.float32), (w // f, h // f), interpolation=cv2.INTER_AREA)
    b = cv2.resize(neutral.astype(np.float32), (w // f, h // f), interpolation=cv2.INTER_AREA)
    total = float(a.sum())
    if total < 0.5 * (px_per_cm / f) ** 2:
        return None
    r = int(np.ceil(SHADOW_MAX_CM * px_per_cm / f))
    pad = cv2.copyMakeBorder(b, r, r, r, r, cv2.BORDER_CONSTANT, value=0)
    score = cv2.matchTemplate(pad, a, cv2.TM_CCORR) / total  # score[r + dy, r + dx]
    dy, dx = np.unravel_index(int(np.argmax(score)), score.shape)
    opposite = score[2 * r - dy, 2 * r - dx]  # the same offset the other way: shading all round
    if (score[dy, dx] < SHADOW_SHARE or score[dy, dx] < 2.0 * opposite
            or np.hypot(dx - r, dy - r) * f < 0.25 * px_per_cm):
        return None
    sx, sy = int((dx - r) * f), int((dy - r) * f)
    # one lamp, one offset for all: most of the cubes must find their shadow there, not one
    # dark cube that happens to lie at that offset from another
    n, labels, area = _components(strong)
    hit = _shifted(neutral, -sx, -sy)
    on = np.bincount(labels[hit > 0], minlength=n)
    big = area >= 0.5 * px_per_cm**2
    big[0] = False
    found = big & (on >= SHADOW_SHARE * area)
    if found.sum() < max(2, 0.5 * big.sum()):
        return None
    return sx, sy


def estimate_floor(
    rect: np.ndarray, px_per_cm: float, floor_box: tuple[int, int, int, int] | None = None
) -> np.ndarray:
    """The bare floor under everything, from one frame (no empty-tray reference); linear light.

    Works on a 4x smaller copy of the floor proper (the floor's light changes slowly; the walls
    are other light and would leak into the floor's edge). A median about three cubes wide
    gives a first floor that follows shading and shadow edges (a median keeps steps) and
    ignores scattered cubes; what differs from it is masked out and filled with a masked
    Gaussian average (normalised convolution) of the floor around it, only there (an average
    everywhere would smear a lamp's shadow edge into a false change). Two rounds, so that
    clusters which fooled the median are masked the second time. Beyond the floor the estimate
    repeats its edge.
    """
    h, w = rect.shape[:2]
    f = 4
    x0, y0, x1, y1 = floor_box if floor_box is not None else (0, 0, w, h)
    sx0, sy0, sx1, sy1 = -(-x0 // f), -(-y0 // f), x1 // f, y1 // f
    small_u8 = cv2.resize(rect, (w // f, h // f), interpolation=cv2.INTER_AREA)
    floor_u8 = np.ascontiguousarray(small_u8[sy0:sy1, sx0:sx1])
    small = to_linear(floor_u8)
    k = int(3 * px_per_cm / f) | 1
    bg = to_linear(cv2.medianBlur(floor_u8, k))
    sigma = 1.0 * px_per_cm / f
    grow = np.ones((3, 3), np.uint8)
    for _ in range(2):
        fg = cv2.dilate(_difference(small, bg), grow)
        keep = fg == 0
        if keep.sum() < 0.2 * keep.size:
            break
        mk = keep.astype(np.float32)
        num = cv2.GaussianBlur(small * mk[..., None], (0, 0), sigma)
        den = cv2.GaussianBlur(mk, (0, 0), sigma)[..., None]
        bg = np.where((den > 0.05) & (fg[..., None] > 0), num / np.maximum(den, 1e-4), bg)
    bg = cv2.copyMakeBorder(bg, sy0, h // f - sy1, sx0, w // f - sx1, cv2.BORDER_REPLICATE)
    return cv2.resize(bg, (w, h), interpolation=cv2.INTER_LINEAR)


def blobs(strong: np.ndarray, weak: np.ndarray | None = None) -> list[Blob]:
    out = []
    for mask, is_weak in ((strong, False), (weak, True)):
        if mask is None:
            continue
        if is_weak:
            mask = _fill_holes(mask)
        n, labels = cv2.connectedComponents(mask, connectivity=8)
        if n <= 1:
            continue
        ys, xs = np.nonzero(labels)
        lab = labels[ys, xs]
        order = np.argsort(lab, kind="stable")
        ys, xs, lab = ys[order], xs[order], lab[order]
        starts = np.searchsorted(lab, np.arange(1, n + 1))
        for i in range(1, n):
            py, px = ys[starts[i - 1]: starts[i]], xs[starts[i - 1]: starts[i]]
            m = np.zeros(mask.shape, bool)
            m[py, px] = True
            x0, y0 = int(px.min()), int(py.min())
            out.append(Blob(m, float(len(px)), (float(px.mean()), float(py.mean())),
                            (x0, y0, int(px.max()) - x0 + 1, int(py.max()) - y0 + 1), is_weak))
    return out


def split_blob(blob: Blob, n: int, seed: int = 0, seeds=None) -> list[np.ndarray]:
    """Split a blob into ``n`` pieces (k-means on pixel positions); returns boolean masks.

    Touching cubes of one colour are compact squares of known size side by side, so the pixel
    positions cluster around their centres. K-means runs on a subsample (speed) and every
    pixel then goes to its nearest centre. With ``seeds`` (n points, e.g. the cubes' top
    faces) every pixel goes to its nearest seed instead.
    """
    if n <= 1:
        return [blob.mask]
    ys, xs = np.nonzero(blob.mask)
    pts = np.stack([xs, ys], axis=1).astype(np.float32)
    if len(pts) < n:
        return [blob.mask]
    if seeds is not None and len(seeds) == n:
        centres = np.asarray(seeds, np.float32)
    else:
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



def _faint_closed_tops(outlines: Outlines, strong: np.ndarray, bg_lin: np.ndarray,
                       px_per_cm: float) -> np.ndarray:
    """White tops the sharp edges leave open but the faint ones close (uint8, rectified
    view), each with the edges around it: an edge-free piece enclosed by the sharp and the
    faint edges together (``Outlines.faint_edges``), shaped like a top face (``_top_shaped``),
    not found already, no darker than the floor estimate in any channel, with sharp edges of
    its own (``_own_outline``).

    Why: white paint reflects at least as much of every colour of light as any print, so a
    white top on a pale print is at least as bright as its floor, and its far edges against
    that floor are only faint (s003/drop09: the white's near sides lie by a red, its top's
    far edges are faint and its outline is open along 0.85 cm: nothing of it was found).
    A top is bounded by its own near sides' sharp edges (the lamp lights a top and a side
    differently); a pocket of floor the edges enclose is the floor's light too, but bounded
    by other cubes' outlines and long lines.
    """
    x0, y0, x1, y1 = outlines.box
    edge, faint = outlines.edge, outlines.faint
    out = np.zeros(strong.shape, np.uint8)
    bound = cv2.morphologyEx(edge | faint, cv2.MORPH_CLOSE, np.ones((5, 5), np.uint8))
    _, labels, area = _components(1 - bound, connectivity=4)
    cube_px = px_per_cm * px_per_cm
    lo, hi = TOP_AREA_CM2
    ok = (area >= lo * cube_px) & (area <= hi * cube_px)
    ok[0] = False
    for side in (labels[0], labels[-1], labels[:, 0], labels[:, -1]):
        ok[side] = False  # floor between a crease and the outline
    found = strong[y0:y1, x0:x1]
    ok &= np.bincount(labels[found > 0], minlength=len(area)) <= 0.5 * area  # not found yet
    cand = np.nonzero(ok)[0]
    lines = None
    for i, (x, y, w, h) in zip(cand, _bboxes(labels, cand), strict=True):
        sl = (slice(max(0, y - 3), y + h + 3), slice(max(0, x - 3), x + w + 3))
        m = (labels[sl] == i).astype(np.uint8)
        if not _top_shaped(m, area[i], px_per_cm):
            continue
        if lines is None:  # worked out once, and only when a piece is shaped like a top
            lines = _straight(edge, px_per_cm, scale=2)
        if not _own_outline(m, edge[sl] & (lines[sl] ^ 1), found[sl]):
            continue
        lin = outlines.lin[y0:y1, x0:x1][sl][m > 0]
        bg = bg_lin[y0:y1, x0:x1][sl][m > 0]
        if np.median(_log(lin + NOISE_FLOOR) - _log(bg + NOISE_FLOOR), axis=0).min() < 0:
            continue  # darker than the floor in some channel: no white top
        top = cv2.dilate(m, np.ones((5, 5), np.uint8))
        out[y0:y1, x0:x1][sl] |= top & (bound[sl] | m)
    return out


def _own_outline(piece: np.ndarray, sharp: np.ndarray, found: np.ndarray) -> bool:
    """Whether ``piece`` (uint8) is bounded by sharp edges of its own (``sharp``, long
    straight runs taken off; not within ``found``, the cubes found already) along at least
    ``OWN_RIM_SHARE`` of its rim, and those are at least as many as the found cubes' edges
    on its rim.

    Why: a cube's top meets its own shaded near sides along sharp edges (the lamp lights a
    top and a side differently), two of its four edges, while a pocket of floor among cubes
    is bounded by their outlines, and one beside a crease or a shadow's edge by long lines.
    """
    rim = cv2.dilate(piece, np.ones((5, 5), np.uint8)) & (piece ^ 1)
    on = rim & sharp
    own = np.count_nonzero(on & (found ^ 1))
    return own >= OWN_RIM_SHARE * np.count_nonzero(rim) and own >= np.count_nonzero(on) - own


def _without_specks(mask: np.ndarray, lo: float) -> np.ndarray:
    """``mask`` (uint8) without its 8-connected pieces of fewer than ``lo`` pixels: those
    cannot span ``lo`` px both ways (a piece has a pixel in every row and column its box
    spans).

    Why (speed only): the darkening ``_shadowed_tops`` traces is mostly hundreds of specks,
    each of which its contour loop would build and drop by its box; one labelling drops them
    at once (plain labelling and a count: OpenCV's with statistics is several times slower).
    The contours left are the same: pieces are apart, and one inside a dropped piece's hole
    has a smaller box, so it is no cube-wide piece either."""
    n, labels = cv2.connectedComponents(mask, connectivity=8)
    keep = np.bincount(labels.ravel(), minlength=n) >= lo
    keep[0] = False
    return np.take(keep.astype(np.uint8), labels)  # (np.take: faster than indexing)


def _shadowed_tops(m: np.ndarray, chroma: np.ndarray, strong: np.ndarray,
                   floor_box: tuple[int, int, int, int], px_per_cm: float) -> np.ndarray:
    """Cubes painted like the print found by the darkening they wrap (uint8, rectified view):
    a piece of colourless darkening (``m`` below -``DARK_L_STEP``) further than a shadow's
    reach from every cube found and from the sides (a wall's and a corner's shade), spanning a
    cube (``DARK_L_SPAN_CM`` both ways, on its narrowest bearing too), whose hull holds half a
    top, and whose smallest enclosing rectangle holds, beside the piece, half a top to one
    top (``TOP_AREA_CM2``) no darker than the floor: the piece and that rectangle. The reading
    flags them (``shadowed`` in ``cube_masks``): a mark printed like that cannot be told from
    one.

    Why: a white cube on a pale print changes only its shaded sides and its shadow (shadows
    only darken, the lamp lights a side less than a top), an L wrapping a top in the floor's
    own light. Where the other cubes' faces raise the edge bar that L has no sharp edges
    (drawn: four whites on a pale print, all lost), but its darkening stays.
    """
    x0, y0, x1, y1 = floor_box
    r = round(EDGE_WALL_CM * px_per_cm)
    out = np.zeros(strong.shape, np.uint8)
    dark = np.zeros_like(out)
    sl = (slice(y0 + r, y1 - r), slice(x0 + r, x1 - r))
    dark[sl] = (m[sl] < -DARK_L_STEP) & (chroma[sl] <= CHROMA_STEP)
    # the reach worked out at half resolution (as the counter's loose outlines)
    far = cv2.distanceTransform(strong[::2, ::2] ^ 1, cv2.DIST_L2, 3) > (
        SHADOW_MAX_CM * px_per_cm / 2)
    far = cv2.resize(far.astype(np.uint8), strong.shape[::-1], interpolation=cv2.INTER_NEAREST)
    dark &= far
    lo, hi = (v * px_per_cm for v in DARK_L_SPAN_CM)
    dark = _without_specks(dark, lo)
    contours, _ = cv2.findContours(dark, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    for c in contours:
        bx, by, bw, bh = cv2.boundingRect(c)
        if not (lo <= min(bw, bh) and max(bw, bh) <= hi):
            continue
        rect = cv2.minAreaRect(c)
        if min(rect[1]) < lo or cv2.contourArea(cv2.convexHull(c)) < 0.5 * px_per_cm ** 2:
            continue
        if (min(bx - x0, by - y0, x1 - bx - bw, y1 - by - bh) < SHADOW_MAX_CM * px_per_cm):
            continue  # within a shadow's reach of a side: a wall's shade, a corner's
        box = np.round(cv2.boxPoints(rect)).astype(np.int32)
        X, Y, W, H = cv2.boundingRect(np.vstack([box, c.reshape(-1, 2)]))
        hull = np.zeros((H, W), np.uint8)
        cv2.fillPoly(hull, [box - np.array([X, Y], np.int32)], 1)
        piece = np.zeros_like(hull)
        cv2.drawContours(piece, [c - np.array([X, Y], np.int32)], -1, 1, -1)
        top = (hull > 0) & (cv2.dilate(piece, np.ones((3, 3), np.uint8)) == 0)
        if not 0.5 <= top.sum() / px_per_cm ** 2 <= TOP_AREA_CM2[1]:
            continue  # it wraps no top, or more than one (a corner printed on the floor)
        if np.median(m[Y:Y + H, X:X + W][top]) < -DARK_L_STEP:
            continue  # what it wraps is no top in the floor's own light
        out[Y:Y + H, X:X + W] |= hull | piece
    return out

