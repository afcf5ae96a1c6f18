"""Floor models, cube masks and splitting, on small rectified canvases."""

from __future__ import annotations

import cv2
import numpy as np

from vision.colours import to_linear
from vision.segment import (
    Blob,
    blobs,
    cube_masks,
    estimate_floor,
    floor_model,
    shadow_direction,
    split_blob,
)

PX = 20  # px per cm, as in the counter
BOX = (20, 20, 340, 220)  # floor box of a 360 x 240 canvas


def _canvas(floor=(150, 180, 210)) -> np.ndarray:
    img = np.zeros((240, 360, 3), np.uint8)
    img[:] = floor
    return img


def _square(img, cx, cy, colour, side=PX):
    h = side // 2
    cv2.rectangle(img, (cx - h, cy - h), (cx + h, cy + h), colour, -1)


def test_reference_floor_follows_exposure_drift():
    ref = _canvas()
    frame = (ref.astype(np.float32) * 0.7).astype(np.uint8)  # the camera exposes less
    bg = floor_model(frame, ref, PX, BOX)
    assert np.allclose(bg, to_linear(frame), atol=0.02)


def test_estimated_floor_ignores_cubes_and_follows_shading():
    img = _canvas()
    ramp = np.linspace(0.7, 1.0, img.shape[1])[None, :, None]
    img = (img * ramp).astype(np.uint8)
    for x in (80, 160, 240):
        _square(img, x, 120, (30, 30, 200))
    bg = estimate_floor(img, PX, BOX)
    # under a cube, the floor model is the floor's colour there, not the cube's
    floor_there = to_linear(img)[120, 120]
    assert np.allclose(bg[120, 160], floor_there, rtol=0.15)


def test_cube_masks_find_cubes_not_shadows():
    ref = _canvas()
    frame = ref.copy()
    # a soft grey shadow (same paint, less light) and a red cube
    frame[60:120, 40:120] = (ref[60:120, 40:120] * 0.75).astype(np.uint8)  # half the light
    _square(frame, 250, 120, (40, 40, 200))
    strong, _ = cube_masks(frame, floor_model(frame, ref, PX, BOX), PX, BOX, have_reference=True)
    assert strong[120, 250] and not strong[90, 80]


def test_weak_test_finds_a_cube_painted_like_the_print():
    ref = _canvas((225, 230, 232))
    frame = ref.copy()
    _square(frame, 180, 120, (205, 232, 236), side=22)  # pale yellowish on white: a faint cube
    strong, weak = cube_masks(frame, floor_model(frame, ref, PX, BOX), PX, BOX,
                              have_reference=True)
    assert strong[120, 180] or weak[120, 180]


def test_a_large_colourless_shadow_is_not_cubes_but_a_black_cube_is():
    ref = _canvas()
    frame = ref.copy()
    # a hand's shadow, 6 x 4 cm, at a third of the light; a black cube beside it
    frame[40:120, 60:180] = (ref[40:120, 60:180] * 0.6).astype(np.uint8)
    _square(frame, 260, 160, (40, 40, 40))
    strong, _ = cube_masks(frame, floor_model(frame, ref, PX, BOX), PX, BOX, have_reference=True)
    assert not strong[80, 120] and strong[160, 260]


def test_the_change_threshold_follows_the_frames_noise():
    rng = np.random.default_rng(0)
    ref = _canvas()
    frame = np.clip(ref + rng.normal(0, 14, ref.shape), 0, 255).astype(np.uint8)
    _square(frame, 180, 120, (40, 40, 200))
    strong, _ = cube_masks(frame, floor_model(frame, ref, PX, BOX), PX, BOX, have_reference=True)
    assert strong[120, 180]
    # the noise alone makes no cube-sized pieces
    strong[100:141, 160:201] = 0
    assert strong.sum() < 0.2 * PX * PX


def test_a_lamps_shadow_offset_is_measured_and_its_shadows_dropped():
    ref = _canvas()
    frame = ref.copy()
    for cx, cy in ((80, 80), (200, 140), (280, 70)):
        # a hard shadow 0.6 cm down-right of each coloured cube, then the cube
        frame[cy - 10 + 12: cy + 10 + 12, cx - 10 + 12: cx + 10 + 12] = (ref[0, 0] * 0.4)
        _square(frame, cx, cy, (40, 160, 60))
    bg = floor_model(frame, ref, PX, BOX)
    strong, _ = cube_masks(frame, bg, PX, BOX, have_reference=True)
    for cx, cy in ((80, 80), (200, 140), (280, 70)):
        assert strong[cy, cx]
        assert not strong[cy + 19, cx + 19]  # the shadow's far corner


def test_tinted_shadow_direction_is_measured_from_the_floor():
    floor = np.ones((240, 360, 3), np.float32) * np.array([0.2, 0.3, 0.5], np.float32)
    # half the floor in a shadow lit by bluish room light: blue drops less than red
    floor[:, 180:] *= np.array([0.6, 0.45, 0.3], np.float32)
    d = shadow_direction(floor, BOX)
    assert d[0] < d[1] < d[2]  # the log ratio falls most in red
    assert np.allclose(shadow_direction(np.full((240, 360, 3), 0.4, np.float32), BOX), 1.0)


def test_two_touching_cubes_split_in_two():
    mask = np.zeros((240, 360), np.uint8)
    _square(mask, 150, 120, 1)
    _square(mask, 171, 124, 1)
    (blob,) = blobs(mask)
    parts = split_blob(blob, 2)
    centres = sorted(np.argwhere(p).mean(axis=0)[1] for p in parts)
    assert abs(centres[0] - 150) < 4 and abs(centres[1] - 171) < 4
    assert sum(int(p.sum()) for p in parts) == int(blob.area)


def test_split_into_one_is_the_blob():
    m = np.zeros((10, 10), bool)
    m[2:5, 2:5] = True
    b = Blob(m, 9.0, (3.0, 3.0), (2, 2, 3, 3))
    assert split_blob(b, 1)[0] is m


def test_a_nonlinear_exposure_change_is_not_a_cube():
    # the camera's tone curve moves light and dark parts of the empty tray by different factors
    ref = _canvas()
    ref[:, :180] = (60, 70, 80)  # a dark half (a shadow in both frames)
    lin = (ref / 255.0) ** 2.2
    frame = (np.clip((lin * 1.6) ** (1 / 2.2 * 0.9), 0, 1) * 255).astype(np.uint8)
    strong, weak = cube_masks(frame, floor_model(frame, ref, PX, BOX), PX, BOX,
                              have_reference=True)
    assert strong.sum() + weak.sum() < 0.2 * PX * PX


def test_piece_boxes_and_fast_labels_match_opencvs_statistics():
    from vision.outlines import _bboxes
    from vision.segment import _labelled_with_stats

    rng = np.random.default_rng(3)
    mask = (rng.random((60, 90)) < 0.3).astype(np.uint8)
    n, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
    n2, labels2, stats2, _ = _labelled_with_stats(mask)
    assert n2 == n and np.array_equal(labels2, labels) and np.array_equal(stats2, stats)
    which = np.arange(1, n, 3)
    assert _bboxes(labels, which) == [tuple(int(v) for v in stats[i, :4]) for i in which]
    assert _bboxes(labels, np.array([], int)) == []


def test_present_labels_are_those_np_unique_finds():
    from vision.segment import _present

    rng = np.random.default_rng(7)
    labels = rng.integers(0, 9, (40, 50)).astype(np.int32)
    labels[labels == 4] = 0  # a label that does not occur
    sel = labels[rng.random(labels.shape) < 0.1]
    want = np.zeros(12, bool)
    want[np.unique(sel)] = True
    assert np.array_equal(_present(sel, 12), want)
    assert not _present(labels, 12)[4]


def _thickness(mask: np.ndarray) -> float:
    """Mean thickness (cm) of a mask's piece: area over its box's long side, as the counter
    judges a sliver."""
    ys, xs = np.nonzero(mask)
    (_, _), (w, h), _ = cv2.minAreaRect(np.column_stack([xs, ys]).astype(np.float32))
    return len(xs) / (max(w, h) + 1.0) / PX


def test_a_white_cube_on_a_white_print_is_a_cube_wide_piece():
    """A white cube on a white print, both clipped: the top does not change, only the side the
    camera sees and the contact shadow darken, a bar 1.4 cm long and 0.4 cm thick. The piece
    handed on is a cube wide (the counter drops anything thinner as a sliver); beside a red
    cube (within a shadow's reach) the same bar is left as it is (it may be that cube's
    shadow under a point lamp)."""
    ref = _canvas((255, 255, 255))
    frame = ref.copy()
    frame[100:104, 160:186] = (150, 150, 150)  # the side
    frame[104:108, 162:188] = (200, 200, 200)  # its shadow
    strong, _ = cube_masks(frame, floor_model(frame, ref, PX, BOX), PX, BOX, have_reference=True)
    _, labels = cv2.connectedComponents(strong)
    piece = labels == labels[102, 172]
    assert labels[102, 172] > 0 and _thickness(piece) >= 0.8
    # the same bar with a red cube 0.5 cm from it
    _square(frame, 172, 80, (40, 40, 200))
    strong, _ = cube_masks(frame, floor_model(frame, ref, PX, BOX), PX, BOX, have_reference=True)
    _, labels = cv2.connectedComponents(strong)
    assert _thickness(labels == labels[102, 172]) < 0.45


def test_a_crease_run_is_a_thin_line_not_a_mass_of_edges():
    """Edges straight along the floor's axes for longer than a cube's edge are creases; but a
    bright cube on a dark print (or in a glare) can have its whole face taken for edge, a
    solid mass as wide as such a run is long: no line, and its edges must still count."""
    from vision.segment import _crease_runs

    edge = np.zeros((120, 160), np.uint8)
    edge[20:23, 10:150] = 1  # a crease: a long thin line
    edge[50:95, 40:85] = 1  # a cube's face read as edge all over, 2.25 cm across
    runs = _crease_runs(edge, 20.0)
    assert runs[21, 80] and runs[21, 20]
    assert not runs[50:95, 40:85].any()


def test_a_piece_beside_an_outlined_thing_of_its_paint_is_kept_the_floors_paint_is_not():
    """What the floor estimate adds beside an outlined thing (the pieces 2 px beyond its
    dilation) is kept when painted like it: a brown's top beside its own outlined shaded side
    (s004/drop08: its far edge cut by the outline's side, its near edges the side's). A band of
    the floor's own paint (the estimate's error along a shadow edge), a green beside a brown,
    and a rim thinner than a fifth of a cube are not."""
    from vision.segment import _painted_like_outlined

    floor = np.array([0.35, 0.50, 0.70], np.float32)  # linear BGR: a pale cream print
    brown = np.array([0.03, 0.06, 0.20], np.float32)
    green = np.array([0.06, 0.20, 0.05], np.float32)
    lin = np.empty((140, 200, 3), np.float32)
    lin[:] = floor
    pieces = np.zeros((140, 200), np.uint8)
    outlined = np.zeros_like(pieces)
    lin[60:70, 20:40] = 0.5 * brown  # a brown's shaded side, outlined
    outlined[60:70, 20:40] = 1
    lin[40:58, 20:40] = brown  # its top, 2 px off: the estimate's piece
    pieces[40:58, 20:40] = 1
    lin[72:85, 20:40] = 0.6 * floor  # the floor in shade below the side
    pieces[72:85, 20:40] = 1
    lin[60:70, 90:110] = 0.5 * brown  # another brown's side, a green top beside it
    outlined[60:70, 90:110] = 1
    lin[40:58, 90:110] = green
    pieces[40:58, 90:110] = 1
    lin[60:70, 150:170] = 0.5 * brown  # a third, with a 2 px rim of its paint beside it
    outlined[60:70, 150:170] = 1
    lin[72:74, 150:170] = 0.5 * brown
    pieces[72:74, 150:170] = 1
    kept = _painted_like_outlined(pieces, outlined, lin, PX)
    assert kept[48, 30]
    assert not kept[78, 30] and not kept[48, 100] and not kept[72, 160]
    # a glare greys a top and the floor around it alike: the glare beside an outlined glared
    # top reads as its paint, but it is brighter than the floor, and a glare only brightens
    lin[100:110, 20:40] = 0.9  # a glared top, outlined
    outlined[100:110, 20:40] = 1
    lin[112:130, 20:40] = 0.85  # the glare on the floor beside it
    pieces[112:130, 20:40] = 1
    light = np.zeros(pieces.shape, np.float32)
    light[112:130, 20:40] = 0.6
    light[40:58, 20:40] = -1.5
    assert _painted_like_outlined(pieces, outlined, lin, PX)[120, 30]
    kept = _painted_like_outlined(pieces, outlined, lin, PX, light=light)
    assert kept[48, 30] and not kept[120, 30]
