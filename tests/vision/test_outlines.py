"""The outline cue (``vision.outlines.Outlines``): cubes found by their sharp edges alone, top
faces counted, and what is not a cube (a soft tinted patch, a wall crease) left out."""

from __future__ import annotations

import cv2
import numpy as np
import synth

from vision.colours import to_linear
from vision.segment import Outlines, cube_masks, floor_model
from vision.tray import find_tray

PX = 20  # px per cm, as in the counter
BOX = (20, 20, 340, 220)  # floor box of a 360 x 240 canvas


def _canvas(floor=(170, 190, 215)) -> np.ndarray:
    img = np.empty((240, 360, 3), np.uint8)
    img[:] = floor
    return img


def _cube(img, cx, cy, top, side=None, deg=0.0):
    """A 1 cm cube seen from slightly off straight down: its top and a darker side face."""
    side = side if side is not None else tuple(int(0.6 * c) for c in top)
    box = cv2.boxPoints(((cx + 3, cy + 4), (PX, PX), deg)).astype(np.int32)
    cv2.fillConvexPoly(img, box, side, cv2.LINE_AA)
    box = cv2.boxPoints(((cx, cy), (PX, PX), deg)).astype(np.int32)
    cv2.fillConvexPoly(img, box, top, cv2.LINE_AA)


def _noisy(img, seed=0, sd=2.0):
    rng = np.random.default_rng(seed)
    return np.clip(img + rng.normal(0, sd, img.shape), 0, 255).astype(np.uint8)


def _at(mask, x, y):
    return bool(mask[y - 3: y + 4, x - 3: x + 4].any())


def test_a_cube_painted_like_the_floor_is_outlined():
    img = _canvas()
    # a white cube on a cream print: its top a few per cent off the floor, its side shaded
    _cube(img, 120, 120, (180, 201, 227), side=(120, 135, 150), deg=20)
    o = Outlines(to_linear(_noisy(img)), PX, BOX)
    solid = o.solid()
    assert _at(solid, 120, 120)
    assert np.count_nonzero(solid) < 3 * PX * PX  # the cube, not the floor


def test_soft_tinted_patch_and_shading_are_not_outlined():
    img = _canvas().astype(np.float32)
    yy, xx = np.mgrid[:240, :360]
    # a reddish tint fading over 3 cm in a corner, and a gentle shading across the floor
    tint = np.clip(1 - np.hypot(xx - 20, yy - 220) / (3 * PX), 0, 1)[..., None]
    img *= 1 - 0.35 * tint * np.array([1.0, 1.0, 0.2])
    img *= np.linspace(0.8, 1.0, 360)[None, :, None]
    o = Outlines(to_linear(_noisy(img)), PX, BOX)
    assert np.count_nonzero(o.solid()) == 0
    assert len(o.top_faces()) == 0


def test_top_faces_of_a_touching_row():
    img = _canvas()
    for i in range(3):
        _cube(img, 100 + i * (PX + 3), 120, (40, 40, 190))  # three red cubes, barely apart
    o = Outlines(to_linear(_noisy(img)), PX, BOX)
    tops = o.top_faces()
    assert len(tops) == 3
    assert np.allclose(np.sort(tops[:, 0]), [100, 123, 146], atol=4)


def test_crease_along_a_side_is_not_a_cube():
    img = _canvas()
    img[:, :30] = (120, 135, 150)  # the wall's face let into the outline, a sharp crease
    o = Outlines(to_linear(_noisy(img)), PX, BOX)
    assert np.count_nonzero(o.solid()) == 0


def _strip_scene() -> np.ndarray:
    """A line of the print 0.5 cm inside a crease along the right side (a wall's face let into
    the outline), the strip between them cut by short cross marks: enclosed, face-sized pieces
    bounded mostly by two long straight edges."""
    img = _canvas()
    img[:, 320:] = (120, 135, 150)  # the wall's face beyond a sharp crease
    img[30:210, 308:310] = (60, 70, 80)  # the print's line
    for y in range(30, 211, 30):
        img[y:y + 2, 308:320] = (60, 70, 80)  # the strip cut into pieces 1.5 cm long
    return img


def test_a_strip_between_long_straight_lines_is_not_outlined():
    img = _strip_scene()
    o = Outlines(to_linear(_noisy(img)), PX, BOX)
    assert np.count_nonzero(o.solid()[:, 300:]) == 0


def test_cubes_in_a_row_beside_long_lines_stay_outlined():
    img = _strip_scene()
    for i in range(4):  # a row 4.6 cm long, barely apart: its faces' sides on long lines
        _cube(img, 100 + i * (PX + 3), 120, (180, 201, 227), side=(120, 135, 150))
    o = Outlines(to_linear(_noisy(img)), PX, BOX)
    solid = o.solid()
    assert all(_at(solid, 100 + i * (PX + 3), 120) for i in range(4))
    assert np.count_nonzero(solid[:, 300:]) == 0


def test_without_reference_white_cube_beside_a_dark_one_is_kept():
    img = _canvas()
    _cube(img, 120, 120, (45, 40, 40), deg=10)  # black
    _cube(img, 120 + PX + 2, 120, (228, 232, 234), deg=10)  # white, touching it
    img = _noisy(img)
    bg = floor_model(img, None, PX, BOX)
    strong, _ = cube_masks(img, bg, PX, BOX, have_reference=False)
    assert _at(strong, 120, 120) and _at(strong, 142, 120)


def test_without_reference_a_hard_shadow_edge_beside_cubes_is_not_cubes():
    img = _canvas().astype(np.float32)
    yy, xx = np.mgrid[:240, :360]
    shadow = (yy - 40) > 0.45 * (xx - 20)  # a lamp's hard shadow, a long straight edge
    img[shadow] *= np.array([0.55, 0.45, 0.4])  # tinted: the room's light, not the lamp's
    img = img.astype(np.uint8)
    for x in (120, 200):  # cubes on the edge
        y = int(40 + 0.45 * (x - 20))
        _cube(img, x, y, (40, 160, 60))
    img = _noisy(img)
    bg = floor_model(img, None, PX, BOX)
    strong, _ = cube_masks(img, bg, PX, BOX, have_reference=False)
    assert _at(strong, 120, 85) and _at(strong, 200, 121)
    # along the edge, away from the cubes, nothing
    n, _ = cv2.connectedComponents(strong)
    far = [(280, 157), (300, 166), (60, 58)]
    assert not any(_at(strong, x, y) for x, y in far)
    assert n - 1 <= 2


def test_with_reference_a_top_painted_like_the_floor_joins_its_shaded_sides():
    empty = _canvas()
    img = empty.copy()
    # a cube whose top reads exactly like the print (a black cube under a lamp, a cream cube on
    # cream): only its sides change (lit by the room, not the lamp: another colour); its top is
    # outlined by its bevels
    side = (120, 90, 70)
    box = cv2.boxPoints(((123, 124), (PX, PX), 15.0)).astype(np.int32)
    cv2.fillConvexPoly(img, box, side, cv2.LINE_AA)
    top = cv2.boxPoints(((120, 120), (PX, PX), 15.0)).astype(np.int32)
    cv2.fillConvexPoly(img, top, (170, 190, 215), cv2.LINE_AA)
    cv2.polylines(img, [top], True, (120, 135, 150), 1, cv2.LINE_AA)
    img, empty = _noisy(img), _noisy(empty, seed=1)
    bg = floor_model(img, empty, PX, BOX)
    o = Outlines(to_linear(img), PX, BOX)
    assert len(o.top_faces()) == 1
    strong, _ = cube_masks(img, bg, PX, BOX, have_reference=True, outlines=o)
    assert _at(strong, 120, 120)
    # a bare square of print enclosed by a change too large to be one cube's sides is not
    # joined to it (the floor between cubes)
    big = empty.copy()
    cv2.rectangle(big, (100, 60), (160, 120), (40, 40, 190), -1)
    cv2.rectangle(big, (120, 80), (140, 100), (170, 190, 215), -1)
    big = _noisy(big, seed=2)
    o = Outlines(to_linear(big), PX, BOX)
    strong, _ = cube_masks(big, floor_model(big, empty, PX, BOX), PX, BOX, have_reference=True,
                           outlines=o)
    assert not _at(strong, 130, 90)


def test_with_reference_a_deep_tinted_shadow_is_not_a_colour_change():
    from vision.segment import _reference_masks, shadow_direction

    # the empty tray under a lamp: the tower's shadow is tinted (the room's light, not the lamp's)
    empty = _canvas().astype(np.float32)
    yy, xx = np.mgrid[:240, :360]
    tint = np.array([0.55, 0.45, 0.4], np.float32)  # BGR gains in the lamp's shadow
    empty[yy < 70] *= tint
    frame = empty.copy()
    # a deep shadow on the lit floor (between cubes: the lamp and half the room's light
    # blocked): the tint, and grey darkening on top of it; 12 cm^2, so no cube
    patch = (yy > 120) & (yy < 180) & (xx > 100) & (xx < 180)
    frame[patch] *= tint * 0.5
    frame, empty = _noisy(frame.astype(np.uint8)), _noisy(empty.astype(np.uint8), seed=1)
    bg = floor_model(frame, empty, PX, BOX)
    shade = shadow_direction(bg, BOX)
    clipped = np.zeros(frame.shape, bool)
    strong, _ = _reference_masks(to_linear(frame), bg, shade, clipped, PX, BOX)
    assert not _at(strong, 140, 150)
    # a red cube on the same floor is still a change of colour
    cube = frame.copy()
    _cube(cube, 250, 150, (40, 40, 190))
    strong, _ = _reference_masks(to_linear(cube), bg, shade, clipped, PX, BOX)
    assert _at(strong, 250, 150)


def test_without_reference_a_lamps_hard_shadows_are_not_outlined_cubes():
    img = _canvas()
    centres = [(90, 80), (200, 90), (150, 170), (260, 170)]
    for cx, cy in centres:
        # a lamp's hard shadow, the same way for every cube, 1.2 cm long
        box = cv2.boxPoints(((cx - 16, cy + 8), (PX, PX), 0.0)).astype(np.int32)
        cv2.fillConvexPoly(img, box, (90, 100, 115))
    for (cx, cy), top in zip(centres, [(40, 40, 190), (190, 90, 40), (40, 190, 200),
                                       (60, 150, 60)], strict=True):
        _cube(img, cx, cy, top)
    img = _noisy(img)
    bg = floor_model(img, None, PX, BOX)
    strong, _ = cube_masks(img, bg, PX, BOX, have_reference=False)
    for cx, cy in centres:
        assert _at(strong, cx, cy)
        assert not _at(strong, cx - 22, cy + 12)  # the shadow's far corner


def _near_wall_scene(wall=(150, 175, 205)) -> np.ndarray:
    """The floor box's bottom side with a wall band beyond it (other light, same paint)."""
    img = _canvas()
    img[BOX[3]:] = wall
    return img


def test_without_reference_a_cube_across_the_side_is_continued_beyond_it():
    img = _near_wall_scene()
    # a red cube leaning on the near wall: two thirds of it beyond the outline's side
    _cube(img, 150, BOX[3] + 3, (40, 40, 190))
    img = _noisy(img)
    bg = floor_model(img, None, PX, BOX)
    strong, _ = cube_masks(img, bg, PX, BOX, have_reference=False)
    assert _at(strong, 150, BOX[3] - 4)  # its part over the floor
    assert _at(strong, 150, BOX[3] + 8)  # and beyond the side, continued
    beyond = np.count_nonzero(strong[BOX[3]:])
    assert 0.3 * PX * PX < beyond < 1.2 * PX * PX  # the cube's part, not the wall


def test_without_reference_only_a_crossing_blob_of_the_same_paint_is_continued(monkeypatch):
    img = _near_wall_scene()
    _cube(img, 150, BOX[3] + 3, (40, 40, 190))  # red, across the side
    # beside it beyond the side, touching it: a green cube lying wholly on the rim
    _cube(img, 150 + PX + 1, BOX[3] + 12, (40, 160, 60))
    # and a blue one on the rim far from any blob over the floor
    _cube(img, 60, BOX[3] + 10, (190, 80, 40))
    img = _noisy(img)
    bg = floor_model(img, None, PX, BOX)
    strong, _ = cube_masks(img, bg, PX, BOX, have_reference=False)
    assert _at(strong, 150, BOX[3] + 8)
    # Cubes wholly beyond the side that stand on the outline in the picture are taken on
    # their own (``_wholly_beyond``; the counter flags them at the tray's edge): leaning on
    # the wall inside the tray, or on its rim, the picture cannot tell (s000/drop09: two such
    # cubes, both in the tray). The continuation itself still takes only the red cube's
    # paint: without them, the green is not the red cube's.
    assert _at(strong, 150 + PX + 4, BOX[3] + 14)
    assert _at(strong, 60, BOX[3] + 10)
    monkeypatch.setattr("vision.segment._wholly_beyond",
                        lambda strong, *a, **k: np.zeros_like(strong))
    alone, _ = cube_masks(img, bg, PX, BOX, have_reference=False)
    assert _at(alone, 150, BOX[3] + 8)
    assert not _at(alone, 150 + PX + 4, BOX[3] + 14)  # another paint: not the red cube's
    assert not _at(alone, 60, BOX[3] + 10)


def test_without_reference_continuation_skips_the_sides_it_is_told_to():
    img = _near_wall_scene()
    _cube(img, 150, BOX[3] + 3, (40, 40, 190))
    img = _noisy(img)
    bg = floor_model(img, None, PX, BOX)
    strong, _ = cube_masks(img, bg, PX, BOX, have_reference=False, beyond=(0, 1, 3))
    assert not _at(strong, 150, BOX[3] + 8)


def test_without_reference_continuation_reaches_no_further_than_the_cube():
    img = _near_wall_scene()
    _cube(img, 150, BOX[3] - 4, (40, 40, 190))  # red, against the wall, across the side
    # another red touching it from beyond (on the rim or the table, out of the tray)
    _cube(img, 150, BOX[3] + 16, (40, 40, 190))
    img = _noisy(img)
    bg = floor_model(img, None, PX, BOX)
    strong, _ = cube_masks(img, bg, PX, BOX, have_reference=False)
    assert _at(strong, 150, BOX[3] + 3)  # the inner cube's own part beyond the side
    assert not strong[BOX[3] + 10:].any()  # not the whole red run beyond it


def test_masks_are_the_same_whether_the_outlines_are_passed_in_or_worked_out():
    img = _near_wall_scene()
    _cube(img, 150, BOX[3] + 3, (40, 40, 190))
    _cube(img, 90, 100, (40, 160, 60), deg=30)
    img = _noisy(img)
    bg = floor_model(img, None, PX, BOX)
    given, _ = cube_masks(img, bg, PX, BOX, have_reference=False,
                          outlines=Outlines(to_linear(img), PX, BOX))
    worked_out, _ = cube_masks(img, bg, PX, BOX, have_reference=False)
    assert np.count_nonzero(given) > PX * PX
    assert np.array_equal(given, worked_out)


def test_a_white_cube_on_a_pale_even_print_is_edged():
    """On a pale, even print the darkest band of lightness holds the cubes' shaded sides,
    shadows and the creases more than floor: its median gradient is their edges. Taken as the
    band's noise, it set the bar above the white cube's own outline (no edge at all)."""
    scene = synth.Scene(
        cubes=[("yellow", 4.93, 2.45, 74.5), ("white", 4.52, 5.83, 35.5),
               ("yellow", 11.76, 7.29, 16.6), ("blue", 14.06, 3.73, 29.5)],
        print_rgb=synth.PRINTS_RGB["pale"], noise=1.7, jpeg=88, seed=1906093338)
    frame, truth = synth.render(scene)
    view = find_tray(frame)
    o = Outlines(to_linear(view.rectify(frame)), view.px_per_cm, view.floor_box)
    white = next(c for c in truth if c["colour"] == "white")
    x, y = view.image_to_rect(np.array([[white["x"], white["y"]]], float))[0].astype(int)
    assert np.count_nonzero(o.edges()[y - 16: y + 16, x - 16: x + 16]) > 2 * PX


def _top_with_a_gap(inner, gap: int) -> np.ndarray:
    """A 1 cm top face painted ``inner`` (softly, as a lens blurs a faint paint step) inside a
    dark outline (its sides' edges) with a ``gap`` px stretch of the left side missing."""
    img = _canvas().astype(np.float32)
    m = np.zeros(img.shape[:2], np.float32)
    cv2.rectangle(m, (150, 100), (170, 120), 1.0, -1)
    m = cv2.GaussianBlur(m, (0, 0), 3.0)
    img = img * (1 - m[..., None]) + np.array(inner, np.float32) * m[..., None]
    line = np.zeros(img.shape[:2], np.uint8)
    cv2.rectangle(line, (149, 99), (171, 121), 1, 2)
    line[110 - gap // 2: 110 - gap // 2 + gap, 146:153] = 0
    img[line > 0] *= 0.55
    return to_linear(_noisy(img))


def test_a_top_face_whose_outline_has_a_gap_is_cut_from_the_floor():
    # a pink-lit brown on a pink print (s003): its outline fades where its paint meets the
    # floor's light; the top joins the bare floor through the gap (``Outlines._cut_necks``)
    o = Outlines(_top_with_a_gap((150, 190, 235), gap=10), PX, BOX)
    tops = o.top_faces()
    assert len(tops) == 1 and np.hypot(*(tops[0] - (160, 110))) < 3
    assert _at(o.solid(), 160, 110)


def test_a_pocket_of_floor_joined_through_a_gap_is_no_top_face():
    # the floor between cubes, bounded by their outlines and joined to the floor through
    # the gaps between them, is painted like the floor (s001: it read as a fifth cube)
    o = Outlines(_top_with_a_gap((170, 190, 215), gap=8), PX, BOX)
    assert len(o.top_faces()) == 0


def _floor_ringed_by_cubes() -> np.ndarray:
    """Dark cubes touching in a ring (one dark frame 1 cm wide) round a square of bare floor
    1.4 cm across, edged all round by their outlines; a white cube on the cream print
    elsewhere."""
    img = _canvas()
    img[95:145, 125:175] = (60, 50, 40)
    img[106:134, 136:164] = _canvas()[0, 0]
    _cube(img, 260, 120, (180, 201, 227), side=(120, 135, 150), deg=20)
    return img


def test_floor_enclosed_by_cubes_beyond_one_cube_is_not_a_face():
    """The enclosed floor covers more than one cube's whole picture there: no cube's faces."""
    img = to_linear(_noisy(_floor_ringed_by_cubes()))
    o = Outlines(img, PX, BOX, footprint=lambda x, y: 1.3 * PX * PX)
    solid = o.solid()
    assert not _at(solid, 150, 120)
    assert _at(solid, 260, 120)  # the white cube's faces are within its footprint
    # without a camera (no footprint) the enclosed floor is taken as faces, as before
    assert _at(Outlines(img, PX, BOX).solid(), 150, 120)
