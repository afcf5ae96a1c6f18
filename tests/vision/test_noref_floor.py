"""Without a reference: where the floor estimate from the frame errs, and what the masks then
do (``vision.segment.cube_masks`` with ``have_reference=False`` and a floor model given)."""

from __future__ import annotations

import cv2
import numpy as np
import synth

from vision.colours import to_linear
from vision.counter import count_cubes
from vision.segment import cube_masks

PX = 20  # px per cm, as in the counter
BOX = (20, 20, 340, 220)  # floor box of a 360 x 240 canvas
LIT = np.array((150, 180, 210), np.float32)
SHADE = np.array((0.55, 0.45, 0.4), np.float32)  # the room's light only: tinted


def _edge_y(xx, shift: int = 0):
    """Where a shadow's edge runs: diagonally, crenellated (a railing's shadow, say), so that
    no straight-edge rule can tell it from a cube's outline."""
    teeth = 8.0 * (np.abs(((xx / 30.0) % 1.0) - 0.5) * 2.0)
    return 40 + shift + 0.45 * (xx - 20) + teeth


def _lit_and_shadowed(shift: int) -> np.ndarray:
    """A floor under a lamp whose hard shadow edge lies ``shift`` px further down."""
    yy, xx = np.mgrid[:240, :360]
    img = np.empty((240, 360, 3), np.float32)
    img[:] = LIT
    img[yy < _edge_y(xx, shift)] *= SHADE
    return img


def _noisy(img, seed=0, sd=2.0):
    rng = np.random.default_rng(seed)
    return np.clip(img + rng.normal(0, sd, img.shape), 0, 255).astype(np.uint8)


def _white_cube(img, cx, cy):
    box = cv2.boxPoints(((cx + 3, cy + 4), (PX, PX), 20.0)).astype(np.int32)
    cv2.fillConvexPoly(img, box, (150, 150, 150), cv2.LINE_AA)
    box = cv2.boxPoints(((cx, cy), (PX, PX), 20.0)).astype(np.int32)
    cv2.fillConvexPoly(img, box, (250, 252, 252), cv2.LINE_AA)


def test_lit_floor_the_estimate_calls_shadow_is_not_a_cube_but_a_white_cube_is():
    # the estimate put the lamp's shadow edge 0.3 cm too low (it is only as sharp as its
    # fill's reach): a band of lit floor read against shadowed floor is a strong brightening
    frame = _lit_and_shadowed(0)
    _white_cube(frame, 250, 190)  # in the lit part, away from the edge
    frame = _noisy(frame)
    bg = to_linear(_lit_and_shadowed(6).astype(np.uint8))
    strong, _ = cube_masks(frame, bg, PX, BOX, have_reference=False)
    yy, xx = np.mgrid[:240, :360]
    band = (yy < _edge_y(xx)) ^ (yy < _edge_y(xx, 6))
    band[:, :40] = band[:, 320:] = False
    assert np.count_nonzero(strong[band]) < 0.05 * np.count_nonzero(band)
    assert strong[190, 250]


def test_a_cube_on_a_print_patch_the_estimate_missed_is_found_alone():
    # a soft pink band of the print, wider than a cube, that the floor estimate did not follow:
    # band and cube are one change, not edged like a cube as a whole
    floor = np.array((200, 215, 235), np.float32)
    frame = np.empty((240, 360, 3), np.float32)
    frame[:] = floor
    band = np.zeros((240, 360), np.float32)
    band[120:200, 60:180] = 1.0
    band = cv2.GaussianBlur(band, (0, 0), 8)[..., None]
    frame = frame * (1 - band) + np.array((170, 150, 235), np.float32) * band
    box = cv2.boxPoints(((123, 163), (PX, PX), 15.0)).astype(np.int32)
    cv2.fillConvexPoly(frame, box, (20, 120, 150), cv2.LINE_AA)  # its shaded side
    box = cv2.boxPoints(((120, 160), (PX, PX), 15.0)).astype(np.int32)
    cv2.fillConvexPoly(frame, box, (40, 200, 235), cv2.LINE_AA)  # a yellow top
    # grained: edged all over, so the top is not enclosed and the cube not outlined alone
    top = np.zeros((240, 360), np.uint8)
    cv2.fillConvexPoly(top, box, 1)
    rng = np.random.default_rng(1)
    frame[top > 0] += rng.normal(0, 12, (int(top.sum()), 3))
    frame = _noisy(frame)
    bg = np.empty_like(frame, np.float32)
    bg[:] = to_linear(floor.astype(np.uint8)[None, None])[0, 0]
    strong, _ = cube_masks(frame, bg, PX, BOX, have_reference=False)
    assert strong[160, 120]
    _, labels = cv2.connectedComponents(strong)
    piece = labels == labels[160, 120]
    assert np.count_nonzero(piece) < 2.5 * PX * PX  # the cube, not the band with it
    assert not strong[135, 75] and not strong[185, 165]


def _near_wall_scene(cube: bool) -> tuple[np.ndarray, np.ndarray]:
    """A cream floor whose near side (bottom) is a wall's pale rim; with ``cube``, a red cube
    leaning on that wall, its top showing over the floor only as a 0.3 cm strip; without, a
    pink patch of print along the side, the floor estimate not following it."""
    floor = np.array((170, 200, 225), np.float32)
    frame = np.empty((240, 360, 3), np.float32)
    frame[:] = floor
    frame[220:] = (215, 230, 240)  # the rim beyond the side
    if cube:
        cv2.rectangle(frame, (110, 214), (130, 236), (35, 35, 150), -1)  # its lit top
        cv2.rectangle(frame, (110, 232), (130, 236), (25, 25, 100), -1)  # its side
    else:
        frame[212:220, 100:140] = (170, 160, 230)
    bg = np.empty_like(frame)
    bg[:] = to_linear(floor.astype(np.uint8)[None, None])[0, 0]
    return _noisy(frame), bg


def test_a_cube_mostly_beyond_the_near_side_is_continued_from_its_strip_over_the_floor():
    frame, bg = _near_wall_scene(cube=True)
    strong, _ = cube_masks(frame, bg, PX, BOX, have_reference=False)
    assert strong[217, 120] and strong[227, 120]
    assert np.count_nonzero(strong) < 2 * PX * PX


def test_a_coloured_strip_along_the_side_with_nothing_beyond_is_not_a_cube():
    frame, bg = _near_wall_scene(cube=False)
    strong, _ = cube_masks(frame, bg, PX, BOX, have_reference=False)
    assert np.count_nonzero(strong) == 0


def test_a_change_of_colour_along_the_shadows_tint_is_not_unlike_the_band():
    from vision.segment import _off_tint

    shade = np.array((0.6, 1.1, 1.3), np.float32)  # a lamp's shadow, tinted by the room
    tint = shade - shade.mean()
    along = np.array([0.8 * tint], np.float32)  # the band's paint, in the shadow
    across = np.array([[0.3, -0.3, 0.0]], np.float32)
    assert np.abs(_off_tint(along, shade)).max() < 1e-5
    assert np.abs(_off_tint(across, shade)).max() > 0.22
    # a grey shadow (or none known): nothing taken out
    assert np.allclose(_off_tint(along, np.ones(3, np.float32)), along)
    assert np.allclose(_off_tint(along, None), along)


def _rim_scene(blue_at: int | None, thin: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """A cream floor, the near wall's pale rim beyond the bottom side; a blue cube wholly on
    the rim's side of the outline, its near edge ``blue_at`` px below the side; with ``thin``,
    a blue streak 4 px wide instead."""
    floor = np.array((170, 200, 225), np.float32)
    frame = np.empty((240, 360, 3), np.float32)
    frame[:] = floor
    frame[220:] = (215, 230, 240)
    if blue_at is not None:
        bottom = 240 if not thin else 220 + blue_at + 4
        cv2.rectangle(frame, (150, 220 + blue_at), (170 if not thin else 190, bottom),
                      (170, 75, 45), -1)
    bg = np.empty_like(frame)
    bg[:] = to_linear(floor.astype(np.uint8)[None, None])[0, 0]
    return _noisy(frame), bg


def test_a_cube_wholly_beyond_the_near_side_touching_it_is_kept_with_the_outline_it_touches():
    frame, bg = _rim_scene(0)
    strong, _ = cube_masks(frame, bg, PX, BOX, have_reference=False)
    assert strong[230, 160]
    assert strong[218, 160]  # the outline's pixels it stands on: the counter sees it run on
    assert np.count_nonzero(strong) < 2 * PX * PX


def test_nothing_beyond_the_side_that_does_not_touch_it_or_is_a_streak():
    for scene in (_rim_scene(8), _rim_scene(0, thin=True), _rim_scene(None)):
        frame, bg = scene
        strong, _ = cube_masks(frame, bg, PX, BOX, have_reference=False)
        assert np.count_nonzero(strong) == 0


def test_a_dropped_dark_piece_a_cube_could_hide_in_is_reported_not_a_speck_or_a_coloured_one():
    """A black cube in a deep shadow joins the shadow's piece; that piece is rightly dropped
    (not edged like a cube), but when it holds a cube's footprint of colourless darkening the
    reading must be told (``_dark_left_out``): a speck cannot hide a cube, and a coloured
    piece left out is not a black cube in a shadow."""
    from vision.segment import _dark_left_out

    dropped = np.zeros((240, 360), np.uint8)
    neutral = np.zeros_like(dropped)
    dropped[100:130, 100:160] = 1  # a shadow's piece, 4.5 cubes, with a cube in it
    neutral[100:130, 100:160] = 1
    dropped[30:40, 30:40] = 1  # a dark speck: a quarter of a cube
    neutral[30:40, 30:40] = 1
    dropped[160:190, 200:230] = 1  # a coloured piece left out: not darkening
    found = _dark_left_out(dropped, neutral, PX)
    assert len(found) == 1
    assert abs(found[0][0] - 129.5) < 1 and abs(found[0][1] - 114.5) < 1
    assert _dark_left_out(dropped, np.zeros_like(dropped), PX) == []


def test_a_cube_sized_patch_of_other_paint_with_a_faint_outline_is_kept():
    """``segment._faintly_outlined``: a darker patch of another paint than the floor, dropped
    for want of sharp edges, is a cube when it could hold one and steep (if faint) changes
    outline most of its rim (a black cube on a dark print whose own dark faces raised the
    edge bar above its outline); not a soft glow, nor a piece bounded by long straight
    creases, nor what is too small or too thin for a cube."""
    from vision.segment import _faintly_outlined

    dropped = np.zeros((200, 300), np.uint8)
    faint = np.zeros_like(dropped)
    dropped[40:62, 40:62] = 1  # a cube, outlined all round by faint edges
    cv2.rectangle(faint, (39, 39), (62, 62), 1, 1)
    dropped[40:70, 150:180] = 1  # a glow: no steep change round it
    kept = _faintly_outlined(dropped, faint, PX)
    assert kept[40:62, 40:62].all() and not kept[40:70, 150:180].any()
    # a piece along two long straight creases (a floor's corner), soft on its third side
    dropped[:] = 0
    faint[:] = 0
    cv2.fillPoly(dropped, [np.array([[200, 100], [200, 180], [280, 180]], np.int32)], 1)
    cv2.line(faint, (199, 20), (199, 181), 1, 1)
    cv2.line(faint, (120, 181), (290, 181), 1, 1)
    assert not _faintly_outlined(dropped, faint, PX).any()
    # too small or too thin for a cube
    dropped[:] = 0
    dropped[40:55, 40:55] = 1
    dropped[100:106, 100:180] = 1
    faint = cv2.dilate(dropped, np.ones((3, 3), np.uint8)) ^ dropped
    assert not _faintly_outlined(dropped, faint, PX).any()


def test_black_cubes_on_a_dark_print_are_counted():
    """Drawn seed 1, scene 173: five black cubes on the dark print, a black table, glare. Their
    dark faces set the darkest band's edge bar above their own outlines: none was counted,
    the reading sure. Their colour change and faint outlines count them."""
    import bench_drawn

    case = bench_drawn.draw_case(1, 173)
    img, truth = synth.render(case.scene)
    assert count_cubes(img).counts == synth.counts(truth)


def _open_white_top(top_light: float):
    """A white cube's top on a pale print as the edges see it (an Outlines stand-in on a
    300 x 200 view, floor box the whole view): its two near sides sharp edges, its two far
    edges faint ones with a 2 px gap at each end (no hysteresis joins them), the top's light
    ``top_light`` against a floor of 0.6 in every channel."""
    from types import SimpleNamespace

    edge = np.zeros((200, 300), np.uint8)
    faint = np.zeros_like(edge)
    edge[80:102, 98:100] = 1  # the left side's edge
    edge[100:102, 98:120] = 1  # the near side's edge
    faint[80:82, 102:120] = 1  # the far edges, faint, not touching the sharp ones
    faint[84:98, 118:120] = 1
    lin = np.full((200, 300, 3), 0.6, np.float32)
    lin[82:100, 100:118] = top_light
    outlines = SimpleNamespace(box=(0, 0, 300, 200), edge=edge, faint=faint | edge, lin=lin)
    return outlines, np.full_like(lin, 0.6)


def test_a_white_top_closed_by_faint_edges_is_a_cube_a_floor_pocket_is_not():
    """``segment._faint_closed_tops``: a white top whose far edges are only faint against a
    pale print, and which touches no cube found, is taken with its edges when sharp edges of
    its own bound its near sides and it is no darker than the floor; not when it is darker
    (no white), when its sharp edges are the found cubes' (a pocket of floor among them), or
    when it has no sharp edge at all."""
    from vision.segment import _faint_closed_tops

    outlines, bg = _open_white_top(0.66)
    none = np.zeros((200, 300), np.uint8)
    kept = _faint_closed_tops(outlines, none, bg, PX)
    assert kept[84:98, 102:116].all() and kept[101, 110] and not kept[150, 200]
    dark, bg = _open_white_top(0.55)
    assert not _faint_closed_tops(dark, none, bg, PX).any()
    found = none.copy()
    found[76:106, 92:100] = 1  # the cubes found beside it own the sharp edges
    found[100:106, 92:124] = 1
    assert not _faint_closed_tops(outlines, found, bg, PX)[84:98, 102:116].any()
    outlines.edge = np.zeros_like(outlines.edge)  # faint edges all round, no sharp one
    assert not _faint_closed_tops(outlines, none, bg, PX).any()


def _pale(floor) -> np.ndarray:
    img = np.zeros((240, 360, 3), np.uint8)
    img[:] = floor
    return img


def _white_cube_l(img: np.ndarray, x: int, y: int) -> None:
    """A white cube on a print of its own light, seen from above: its top (18 px, x..x+18,
    y..y+18) unchanged, its shaded near side below and left of it and its shadow beyond, an
    L of colourless darkening."""
    img[y + 18:y + 24, x - 6:x + 18] = (img[y + 18:y + 24, x - 6:x + 18] * 0.8).astype(np.uint8)
    img[y:y + 18, x - 6:x] = (img[y:y + 18, x - 6:x] * 0.8).astype(np.uint8)


def test_a_white_cube_is_found_from_the_darkening_it_wraps():
    """``segment._shadowed_tops``: a white cube on a pale print shows only an L of darkening
    (its shaded sides and shadow) around a top in the floor's own light; such an L, away from
    every cube found and from the sides, is a cube, reported in ``shadowed`` for the reading
    to flag. Not within a shadow's reach of a found cube (its shadow), nor of a side (a
    wall's shade)."""
    floor = np.array((228, 232, 235), np.uint8)
    img = _pale(floor)
    _white_cube_l(img, 100, 90)
    bg = to_linear(_pale(floor))
    shadowed: list = []
    strong, _ = cube_masks(img, bg, PX, BOX, have_reference=False, shadowed=shadowed)
    assert strong[99, 109] and shadowed[0][99, 109]
    img[90:110, 126:146] = (40, 40, 200)  # a red cube 1 cm beside it: the L may be its shadow
    strong, _ = cube_masks(img, bg, PX, BOX, have_reference=False)
    assert not strong[99, 109]
    img = _pale(floor)
    _white_cube_l(img, 46, 40)  # 1 cm from the sides
    strong, _ = cube_masks(img, bg, PX, BOX, have_reference=False)
    assert not strong[49, 55]


def _white_on_white_rim(edges_at: tuple[int, ...], seen_to: int = 230,
                        edges_to: int = 230) -> tuple[np.ndarray, np.ndarray]:
    """A cream floor, the near wall's white rim beyond the bottom side, the frame ending 0.5 cm
    beyond it (the rectified view repeats its last row below); a white strip 0.3 cm high and
    1 cm long over the floor at the side, and beyond it, on the rim and of the rim's paint,
    dark lines crossing the band (a leaning cube's shaded sides) at the columns ``edges_at``,
    down to the row ``edges_to``; the view ends at the row ``seen_to``."""
    floor = np.array((170, 200, 225), np.float32)
    frame = np.empty((240, 360, 3), np.float32)
    frame[:] = floor
    frame[220:] = (236, 240, 242)
    frame[214:220, 110:131] = (236, 240, 242)  # the top's sliver over the floor
    for x in edges_at:
        frame[220:edges_to, x - 1:x + 2] = (150, 155, 160)
    frame = _noisy(frame)
    frame[seen_to:] = frame[seen_to - 1]  # out of the view
    bg = np.empty((240, 360, 3), np.float32)
    bg[:] = to_linear(floor.astype(np.uint8)[None, None])[0, 0]
    return frame, bg


def test_a_white_cube_leaning_on_a_white_rim_is_kept_from_its_edges_beyond_the_side():
    """``segment._edged_across_side``: beyond the side the cube's paint is the rim's, so no
    continuation by paint finds it, but its sides cross the rim band at the sliver's ends."""
    frame, bg = _white_on_white_rim((110, 130))
    strong, _ = cube_masks(frame, bg, PX, BOX, have_reference=False)
    assert strong[217, 120] and strong[225, 120]
    assert not strong[225, 100] and not strong[235, 120]  # not the rim beside, nor off view
    assert np.count_nonzero(strong) < 1.5 * PX * PX


def test_a_white_strip_along_the_side_is_no_cube_unless_both_its_ends_are_crossed_beyond():
    for edges_at in ((), (110,), (130,)):
        frame, bg = _white_on_white_rim(edges_at)
        strong, _ = cube_masks(frame, bg, PX, BOX, have_reference=False)
        assert np.count_nonzero(strong) == 0, edges_at


def test_rows_repeated_to_the_band_end_are_out_of_view_but_clipped_light_inside_is_not():
    from vision.outlines import in_view_rows

    band = np.full((20, 30, 3), 0.5, np.float32)
    band += np.random.default_rng(0).normal(0, 0.03, band.shape).astype(np.float32)
    band[3:7] = 1.0  # clipped, flat, then other light again
    band[12:] = band[11]
    seen = in_view_rows(band)
    assert seen[:12].all() and not seen[12:].any()


def test_the_leaning_white_cube_is_kept_at_every_side():
    """The same scene turned by quarter turns: each side is judged alike (``_edged_across_side``
    turns its strip so that the side lies at the bottom)."""
    frame, bg = _white_on_white_rim((110, 130))
    for t in (1, 2, 3):
        f, b = np.ascontiguousarray(np.rot90(frame, t)), np.ascontiguousarray(np.rot90(bg, t))
        h, w = f.shape[:2]
        box = (20, 20, w - 20, h - 20)
        strong, _ = cube_masks(f, b, PX, box, have_reference=False)
        back = np.rot90(strong, -t)
        assert back[217, 120] and back[225, 120], t
        assert np.count_nonzero(strong) < 1.5 * PX * PX, t


def test_the_leaning_cube_reaches_out_as_far_as_its_crossing_sides_run_not_over_the_rim():
    frame, bg = _white_on_white_rim((110, 130), seen_to=240, edges_to=232)
    strong, _ = cube_masks(frame, bg, PX, BOX, have_reference=False)
    assert strong[217, 120] and strong[228, 120]
    assert not strong[236, 120]
