"""The mouth's own top faces without a reference (vision.mouth ``mouth_top_faces``) on drawn
rectified views (the drawing of test_mouth_floor.py: floor box (20, 40, 340, 240), the tower
over the top side, the mouth's shadowed floor in the 2 cm beyond it)."""

from __future__ import annotations

import cv2
import numpy as np
from test_mouth_floor import BLUE, BOX, PPC, _outlined_top, _scene

import vision.mouth as mouth
from vision.mouth import floor_inside, mouth_top_faces

NONE = np.zeros((0, 2))


def _turned_top(lin: np.ndarray, cx: int, cy: int) -> None:
    """A blue cube's top turned by 45 degrees (1 cm a side, 1.4 cm corner to corner) centred
    at (cx, cy), its sides and contact shadow a darker rim all round."""
    def diamond(half: int) -> np.ndarray:
        m = np.zeros(lin.shape[:2], np.uint8)
        pts = np.array([[cx, cy - half], [cx + half, cy], [cx, cy + half], [cx - half, cy]])
        cv2.fillPoly(m, [pts.astype(np.int32)], 1)
        return m > 0

    lin[diamond(17)] *= 0.35
    lin[diamond(14)] = BLUE * 0.8


def test_a_top_across_the_side_reaching_more_than_a_cube_inside_is_found_whole(monkeypatch):
    lin = _scene()
    _turned_top(lin, 110, 52)  # from 0.2 cm beyond the side to 1.2 cm inside (its rim 1.35)
    tops, pieces = mouth_top_faces(lin, PPC, BOX, 0, NONE)
    assert len(tops) == 1 and np.allclose(tops[0], (110, 52), atol=1.5)
    assert pieces[44:60, 106:115].all() and not pieces[:, 140:].any()  # its piece: blob
    # looked for only 1 cm inside, the face ran into the box's edge: no face
    monkeypatch.setattr(mouth, "MOUTH_TOPS_IN_CM", 1.0)
    assert len(mouth_top_faces(lin, PPC, BOX, 0, NONE)[0]) == 0


def test_floor_enclosed_at_the_side_shaped_like_a_top_is_no_face():
    lin = _scene()
    _outlined_top(lin, 41, 100)  # a square of the lit floor at the side, outlined all round
    _outlined_top(lin, 22, 200)  # a top of the mouth's floor's light (a brown in the shadow)
    no_cubes = np.zeros(lin.shape[:2], np.uint8)
    floor_in = floor_inside(lin, no_cubes, PPC, BOX, 0)
    tops, pieces = mouth_top_faces(lin, PPC, BOX, 0, NONE, floor_in)
    assert len(tops) == 1 and np.allclose(tops[0], (207.5, 29.5), atol=1.5)
    assert not pieces[41:57, 100:116].any() and pieces[22:38, 200:216].all()
    # without the floor inside to go by, both are faces
    assert len(mouth_top_faces(lin, PPC, BOX, 0, NONE)[0]) == 2
