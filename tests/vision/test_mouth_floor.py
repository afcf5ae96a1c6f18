"""The tower's mouth without a reference (vision.mouth ``mouth_floor``, vision.counter
``on_one_side``) on drawn rectified views.

The view is 360 x 260 px at 20 px/cm with the floor box (20, 40, 340, 240): the tower stands
over the top side (0), so the band beyond it is the mouth's shadowed floor, 2 cm deep. Its
light falls off away from the floor (the mouth's depth) and is an orange shade of the lit
floor's paint, as the room's light leaves it.
"""

from __future__ import annotations

import numpy as np

from vision.cubefit import on_one_side
from vision.mouth import _row_floor, _side_band, mouth_floor, mouth_top_faces
from vision.tray import view_from_corners

PPC = 20.0
BOX = (20, 40, 340, 240)
FLOOR = np.array([0.20, 0.45, 0.80], np.float32)  # lit floor, linear BGR (an orange print)
BLUE = np.array([0.30, 0.08, 0.03], np.float32)  # a blue cube's paint as a ratio to white


def _scene() -> np.ndarray:
    """Lit floor inside the box; beyond the top side the mouth's floor, 10 x (the far row) to
    4 x (next to the side) darker, its colour a little redder than the lit floor's."""
    lin = np.empty((260, 360, 3), np.float32)
    lin[:] = FLOOR
    rows = np.linspace(0.025, 0.06, 40, dtype=np.float32)[:, None, None]
    lin[:40] = rows * np.array([0.6, 0.9, 1.2], np.float32) * FLOOR / FLOOR.mean()
    rng = np.random.default_rng(3)
    return (lin * rng.normal(1.0, 0.03, lin.shape)).astype(np.float32)


def _cube(lin: np.ndarray, ys: slice, xs: slice) -> None:
    """A blue cube's picture lit by the mouth's light there (its paint times that light)."""
    lin[ys, xs] = BLUE * 2.0 * lin[ys, xs].mean(axis=2, keepdims=True)


def test_a_painted_cube_reaching_the_side_is_found_against_the_mouths_own_floor():
    lin = _scene()
    _cube(lin, slice(22, 40), slice(100, 120))  # reaching the side: on the floor under the mouth
    found = mouth_floor(lin, PPC, BOX, 0)
    assert found[28:38, 104:116].all()
    # the mouth's dark floor itself is no change: nothing else found, nothing inside the side
    found[18:40, 94:126] = 0  # (blurred over 0.25 cm)
    assert not found.any()
    # its own floor, row by row (unlike the lit floor's), where no cube lies and over the cube
    band = np.ascontiguousarray(_side_band(lin, BOX, 0))
    floor = np.exp(_row_floor(np.log(band + 0.01), PPC)) - 0.01
    for y in (5, 35):
        for x in (90, 180):  # the cube at 80-100 in the band
            assert np.allclose(floor[y, x], lin[y, 180:220].mean(axis=0), rtol=0.1)


def test_what_does_not_reach_the_side_or_runs_into_the_bands_ends_is_left_out():
    lin = _scene()
    _cube(lin, slice(4, 22), slice(150, 170))  # wholly beyond: on the ramp, not the floor
    _cube(lin, slice(20, 40), slice(20, 34))  # at the band's end: the wall or the tower's leg
    _cube(lin, slice(0, 40), slice(250, 268))  # across the band: one of the tower's legs
    assert not mouth_floor(lin, PPC, BOX, 0).any()


def test_each_side_of_the_box_can_be_the_towers():
    lin = _scene()
    _cube(lin, slice(22, 40), slice(100, 120))
    for k in range(4):
        rot = np.ascontiguousarray(np.rot90(lin, -k))  # the top side turned to side k
        h, w = rot.shape[:2]
        box = [BOX, (20, 20, w - 40, h - 20), (20, 20, w - 20, h - 40), (40, 20, w - 20, h - 20)][k]
        found = mouth_floor(rot, PPC, box, k)
        assert np.rot90(found, k)[28:38, 104:116].all(), k


def test_without_the_towers_side_the_mouth_is_not_looked_at(monkeypatch):
    from test_tray import _tower_scene

    import vision.counter as counter

    def fail(*args):
        raise AssertionError("the mouth's floor estimated without a tower")

    monkeypatch.setattr(counter, "mouth_floor", fail)
    frame, _, _ = _tower_scene(tower=None)
    counter.count_cubes(frame)  # no hidden side: nothing beyond the outline is looked at


def _view():
    c = np.float32([[100, 100], [420, 100], [420, 300], [100, 300]])
    return view_from_corners(c, image_size=(640, 480), hidden_at=(260, 100), hidden_cm=2.0)


def test_a_piece_crossing_the_side_is_measured_where_most_of_it_lies():
    view = _view()
    y0 = view.floor_box[1]
    ys = np.arange(y0 - 4, y0 + 12)  # 4 rows beyond the side, 12 inside
    cy, _ = on_one_side(ys, np.full(len(ys), 150), (0, 0), view)
    assert cy.min() >= y0 and len(cy) == 12
    ys = np.arange(y0 - 12, y0 + 4)  # mostly beyond: measured against the mouth's floor
    cy, _ = on_one_side(ys, np.full(len(ys), 150), (0, 0), view)
    assert cy.max() < y0 and len(cy) == 12


def _outlined_top(lin: np.ndarray, y: int, x: int, side: int = 16, rim: int = 3) -> None:
    """A cube's top at (y, x) (its corner) painted like the mouth's floor around it (a brown
    cube in the mouth's shadow), its sides and contact shadow a darker rim all round."""
    lin[y - rim: y + side + rim, x - rim: x + side + rim] *= 0.35
    lin[y: y + side, x: x + side] /= 0.35


def test_a_top_face_painted_like_the_mouths_floor_is_found_by_its_outline():
    lin = _scene()
    _outlined_top(lin, 26, 100)  # across the side: its top beyond, its near rim inside
    _outlined_top(lin, 120, 200)  # on the floor proper: the floor's own outlines' business
    assert not mouth_floor(lin, PPC, BOX, 0)[26:42, 100:116].any()  # no colour, no light
    tops, _ = mouth_top_faces(lin, PPC, BOX, 0, np.zeros((0, 2)))
    assert len(tops) == 1 and np.allclose(tops[0], (107.5, 33.5), atol=1.5)
    # a top the floor's outlines already hold is not repeated
    assert len(mouth_top_faces(lin, PPC, BOX, 0, tops + 2.0)[0]) == 0


def test_the_mouths_top_faces_are_found_beyond_each_side():
    lin = _scene()
    _outlined_top(lin, 26, 100)
    for k in range(4):
        rot = np.ascontiguousarray(np.rot90(lin, -k))  # the top side turned to side k
        h, w = rot.shape[:2]
        box = [BOX, (20, 20, w - 40, h - 20), (20, 20, w - 20, h - 40), (40, 20, w - 20, h - 20)][k]
        tops, _ = mouth_top_faces(rot, PPC, box, k, np.zeros((0, 2)))
        assert len(tops) == 1, k
        # back to the unturned view: the top's centre where it was drawn
        x, y = tops[0]
        for _ in range(k):  # a point turned back by a quarter each time
            x, y = y, w - 1 - x
            h, w = w, h
        assert np.allclose((x, y), (107.5, 33.5), atol=1.5), k


def test_the_mouths_top_faces_are_looked_for_only_with_the_towers_side(monkeypatch):
    from test_tray import _tower_scene

    import vision.counter as counter

    seen = []
    real = counter.mouth_top_faces
    monkeypatch.setattr(counter, "mouth_top_faces", lambda *a: seen.append(1) or real(*a))
    frame, _, _ = _tower_scene(tower=None)
    counter.count_cubes(frame)
    assert not seen  # no hidden side: nothing paid for the mouth
    frame, _, _ = _tower_scene()
    counter.count_cubes(frame)
    assert seen


def test_a_cube_touching_a_legs_picture_is_found_and_the_leg_left_out():
    """A cube at the side whose picture touches one of the tower's legs (s004/drop10) used to
    be dropped with the leg; the leg, thinner than a cube, is still left out."""
    lin = _scene()
    _cube(lin, slice(0, 40), slice(150, 156))  # a leg across the band, 0.3 cm wide
    _cube(lin, slice(22, 40), slice(156, 176))  # a cube at the side, touching it
    found = mouth_floor(lin, PPC, BOX, 0)
    assert found[28:38, 160:172].all()
    assert not found[:16].any()  # the leg beyond the cube's reach
    # a cube-wide piece across the band is a leg (or a wall) and stays out
    lin = _scene()
    _cube(lin, slice(0, 40), slice(150, 170))
    assert not mouth_floor(lin, PPC, BOX, 0).any()


def test_a_cube_beyond_the_side_joined_to_it_by_a_thin_tail_is_left_out():
    """A cube still on the ramp lies wholly beyond the side and reaches it only through a thin
    tail (a shadow's edge, a neighbour's corner: s004/drop07); a cube on the floor under the
    mouth meets the side with its width and stays."""
    lin = _scene()
    _cube(lin, slice(6, 22), slice(150, 170))  # on the ramp
    _cube(lin, slice(20, 40), slice(158, 162))  # a tail 0.2 cm wide down to the side
    _cube(lin, slice(22, 40), slice(100, 120))  # on the floor under the mouth
    found = mouth_floor(lin, PPC, BOX, 0)
    assert not found[:, 140:180].any()
    assert found[28:38, 104:116].all()
