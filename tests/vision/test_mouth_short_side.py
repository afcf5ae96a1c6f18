"""The tower's side found short of the crease, without a reference (vision.mouth
``mouth_floor`` given ``floor_inside``), on drawn rectified views.

Same drawing as test_mouth_floor.py: 360 x 260 px at 20 px/cm, floor box (20, 40, 340, 240),
the tower over the top side, the mouth's shadowed floor in the 2 cm beyond it. Here the side
was found 0.5 cm short of the crease: the lit floor runs on beyond it (a little darker: the
tower's penumbra), seen between the cubes standing along the side; one such 1 cm gap beside a
cube is drawn (along the side the mouth's row floor is still the mouth's: the strip shows in
gaps only).
"""

from __future__ import annotations

import numpy as np
from test_mouth_floor import BOX, PPC, _cube, _scene

from vision.mouth import floor_inside, mouth_floor


def _found(lin: np.ndarray, cubes: np.ndarray, box=BOX, side: int = 0) -> np.ndarray:
    """``mouth_floor`` given the floor just inside the side, where ``cubes`` leaves it."""
    return mouth_floor(lin, PPC, box, side, floor_inside(lin, cubes, PPC, box, side))


def _short_side_scene() -> np.ndarray:
    lin = _scene()
    # the lit floor beyond the side, 0.5 cm deep, in a 1 cm gap beside a cube: the floor's
    # paint and light, 0.8 x as bright in the tower's penumbra
    lin[30:40, 120:140] = 0.8 * lin[50:60, 120:140]
    _cube(lin, slice(22, 40), slice(100, 120))  # a cube at the side, joined to that strip
    return lin


def test_the_lit_floor_beyond_a_side_found_short_is_no_cube():
    lin = _short_side_scene()
    no_cubes = np.zeros(lin.shape[:2], np.uint8)
    found = _found(lin, no_cubes)
    assert found[28:38, 104:116].all()  # the cube
    assert not found[32:40, 124:138].any()  # the strip: the floor just inside, running on
    # measured against the mouth's own row floor alone, the strip is brighter than it and not
    # its colour: it went into the cube's blob (where a cube model was then placed on it)
    assert mouth_floor(lin, PPC, BOX, 0)[32:40, 124:138].mean() > 0.9


def test_the_floor_inside_is_found_along_each_side():
    lin = _short_side_scene()
    for k in range(4):
        rot = np.ascontiguousarray(np.rot90(lin, -k))  # the top side turned to side k
        h, w = rot.shape[:2]
        box = [BOX, (20, 20, w - 40, h - 20), (20, 20, w - 20, h - 40), (40, 20, w - 20, h - 20)][k]
        found = np.rot90(_found(rot, np.zeros((h, w), np.uint8), box, k), k)
        assert found[28:38, 104:116].all() and not found[32:40, 124:138].any(), k


def test_the_floor_inside_is_taken_from_what_the_floor_pass_left_as_floor():
    lin = _short_side_scene()
    # cubes lining the whole inside of the side (a crowded mouth): no floor to go by there,
    # so the strip is judged against the mouth's row floor as before
    crowded = np.zeros(lin.shape[:2], np.uint8)
    crowded[40:60] = 1
    assert floor_inside(lin, crowded, PPC, BOX, 0) is None
    assert _found(lin, crowded)[32:40, 124:138].mean() > 0.9
    # a cube's pixels inside the side do not make the floor there: red cubes lining the side
    # inside over 1.5 cm on either side of the gap, left out by the floor pass's mask, leave
    # the strip floor (their median would be a red cube's)
    lin[40:60, 100:160] = np.array([0.05, 0.08, 0.6], np.float32)
    lined = np.zeros(lin.shape[:2], np.uint8)
    lined[40:60, 100:160] = 1
    assert not _found(lin, lined)[32:40, 124:138].any()
    assert _found(lin, lined)[28:38, 104:116].all()  # the cube
