"""Without the empty tray, a cube painted like the print (white on a pale print) shows only its
shaded sides and its contact shadow: an L of sharp edges, darker than the floor, around a top
in the floor's own light. ``counter._painted_like_floor`` counts such a piece (flagged), and
leaves alone what only looks like it from afar: a thin line of the print, the floor's corner."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
import synth

from vision.counter import count_cubes

PALE = synth.PRINTS_RGB["pale"]


@pytest.mark.parametrize("x, y, deg", [(9.0, 5.5, 0), (5.0, 3.5, 30), (12.0, 7.0, 45)])
@pytest.mark.parametrize("oblique", [False, True])
def test_a_white_cube_on_a_pale_print_is_counted_and_flagged(x, y, deg, oblique):
    img, truth = synth.render(synth.Scene(cubes=[("white", x, y, deg)], print_rgb=PALE,
                                          oblique=oblique))
    reading = count_cubes(img)
    assert reading.total == 1, reading.warnings
    cube = reading.cubes[0]
    assert abs(cube.x - truth[0]["x"]) < 25 and abs(cube.y - truth[0]["y"]) < 25
    # found from its sides alone: the players are asked
    assert cube.uncertain and any("sides and shadow" in w for w in reading.warnings)


def test_a_thin_line_of_the_print_is_no_cube():
    """A dark line (a band's edge in the print) spans a cube's width both ways when it runs
    diagonally, and is darker than the floor, but it has no width: no cube's L."""
    img, _ = synth.render(synth.Scene(cubes=[], print_rgb=PALE))
    cv2.line(img, (420, 240), (470, 290), (150, 150, 150), 2, cv2.LINE_AA)
    reading = count_cubes(img)
    assert reading.total == 0, reading.warnings


def test_a_printed_corner_of_long_lines_is_no_cube():
    """Two dark lines meeting at a right angle along the floor's axes, each longer than any
    edge of a cube (a crease at the floor's corner, a frame printed on it), are no cube's L."""
    scene = synth.Scene(cubes=[], print_rgb=PALE)
    img, _ = synth.render(scene)
    corner = np.float32([[[7.0, 3.0], [7.0, 4.9], [8.9, 3.0]]]) + synth.TRAY_ORIGIN_CM
    a, b, c = cv2.perspectiveTransform(corner * synth.S, synth._camera(scene))[0]
    for p in (b, c):
        cv2.line(img, tuple(int(v) for v in a), tuple(int(v) for v in p), (150, 150, 150), 3)
    reading = count_cubes(img)
    assert reading.total == 0, reading.warnings



def test_a_white_cube_on_a_clipped_pale_floor_is_counted():
    """A bright exposure clips the pale floor: most of it has no gradient at all, the band of
    lightness below it is all cubes' sides and shadows, and their own edges set its bar
    (``outlines._beyond_noise_robust``): the white cube's L had no edges and it was lost,
    the reading sure. The bar there is what noise can explain."""
    scene = synth.Scene(cubes=[("white", 9.0, 5.5, 20), ("blue", 4.0, 4.0, 0)], print_rgb=PALE,
                        exposure=1.3, oblique=True)
    img, _ = synth.render(scene)
    reading = count_cubes(img)
    assert reading.total == 2, reading.warnings
    assert any("sides and shadow" in w for w in reading.warnings)


def test_a_cube_painted_like_the_floor_does_not_size_the_frames_cubes(monkeypatch):
    """The frame's cube size comes from its lone cubes' blobs; a painted cube's blob is the
    rectangle its L spans, a guess, and left out (with it in, the hull bar's setting moved
    the drawn bench by 10 frames through the cube size alone)."""
    import vision.counter as counter

    seen = []
    real = counter._frame_scale
    monkeypatch.setattr(counter, "_frame_scale", lambda r: seen.append(len(r)) or real(r))
    img, _ = synth.render(synth.Scene(cubes=[("white", 9.0, 5.5, 0), ("blue", 4.0, 4.0, 0)],
                                      print_rgb=PALE))
    reading = count_cubes(img)
    assert reading.total == 2 and any("sides and shadow" in w for w in reading.warnings)
    assert seen == [1]  # the blue alone


def test_a_white_cube_beside_another_on_a_pale_print_leaves_the_reading_unsure():
    """Within a shadow's reach of another cube the L is not counted (a lamp's hard shadow of
    that cube passes the same tests), but the reading must not be sure of the count."""
    img, _ = synth.render(synth.Scene(cubes=[("blue", 8.0, 5.0, 0), ("white", 9.6, 5.0, 10)],
                                      print_rgb=PALE))
    reading = count_cubes(img)
    assert reading.total in (1, 2)
    if reading.total == 1:
        assert reading.uncertain and any("beside a cube" in w for w in reading.warnings)
    img, _ = synth.render(synth.Scene(cubes=[("blue", 8.0, 5.0, 0)], print_rgb=PALE))
    assert not any("beside a cube" in w for w in count_cubes(img).warnings)


def test_a_white_cube_with_lit_floor_between_it_and_its_neighbour_is_counted():
    """An L within a shadow's reach of another cube but with floor in the floor's own light
    between them is no shadow of that cube (a cast shadow runs unbroken from its caster's
    base, ``counter._lit_between``): the white cube is counted, and flagged as every cube
    found from its sides alone is."""
    for oblique in (False, True):
        scene = synth.Scene(cubes=[("blue", 8.0, 5.0, 0), ("white", 9.8, 5.0, 10)],
                            print_rgb=PALE, oblique=oblique)
        img, _ = synth.render(scene)
        reading = count_cubes(img)
        assert reading.counts["white"] == 1 and reading.total == 2, reading.warnings
        assert any("sides and shadow" in w for w in reading.warnings)


def test_the_floor_between_a_cube_and_its_shadow_is_dark():
    """``counter._lit_between`` on a drawn patch: a cube piece and an L 0.8 cm apart. Lit floor
    between them: True; a shadow's band joining them (darker than the floor): False."""
    from vision.counter import _lit_between

    ppc = 20.0
    strong = np.zeros((120, 160), np.uint8)
    strong[40:60, 30:50] = 1  # the cube
    lin = np.full((120, 160, 3), 0.6, np.float32)
    bg = lin.copy()
    piece = np.zeros_like(strong)
    piece[40:60, 66:86] = 1  # the L's box, 16 px (0.8 cm) right of the cube
    contour = cv2.findContours(piece, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)[0][0]
    assert _lit_between(contour, strong, lin, bg, ppc)
    # beside a cube itself found from its L: likelier that L broken in two than another cube
    assert not _lit_between(contour, strong, lin, bg, ppc, painted=strong)
    lin[42:58, 50:66] *= 0.5  # the cube's shadow running on to the L
    assert not _lit_between(contour, strong, lin, bg, ppc)
    far = np.zeros_like(strong)
    far[40:60, 30:50] = 0
    assert _lit_between(contour, far, lin, bg, ppc)  # no cube near: nothing cast it
