"""Bare floor left out by the cube-model fit (vision.counter._bare_floor, fitted's ``bare``).

Floor enclosed by a cluster's cubes and the rim, or cut off by a lamp's hard shadow edge,
joins the cluster's blob and its area counts a cube too many; the models' near miss there is
no cube when it is painted like the floor around it and no brighter.
"""

from __future__ import annotations

import numpy as np
from flat_blobs import blob_of, flat_view

from vision.counter import _bare_floor, _without
from vision.cubefit import fitted

CUBE = 23  # px: a 1 cm base plus the halo on both sides


def test_a_near_miss_said_bare_makes_the_fit_decisive():
    view = flat_view()
    w, h = view.size
    m = np.zeros((h, w), bool)
    m[150:150 + CUBE, 150:150 + 2 * CUBE] = True  # two cubes side by side
    m[136:150, 170:198] = True  # and a piece 0.7 cm deep astride them (a shadow's band)
    b = blob_of(m)
    args = (b, (0, 0), view, None, b.centroid, float(CUBE * CUBE))
    assert fitted(*args) is None  # the near miss leaves the count open
    asked = []

    def bare(piece, corner):
        asked.append(int(piece.sum()))
        return True

    centres = fitted(*args, bare=bare)
    assert centres is not None and len(centres) == 2
    assert asked and asked[0] > 0  # the piece under the model left out was shown
    assert fitted(*args, bare=lambda piece, corner: False) is None


def _scene(piece_bgr):
    """A tan floor (linear light) half in a lamp's shadow (darker, bluer: the ambient light),
    a cube-sized blob straddling the shadow's edge; its part in the shadow painted
    ``piece_bgr`` (None: left as the shadowed floor)."""
    view = flat_view()
    w, h = view.size
    lin = np.empty((h, w, 3), np.float32)
    lin[:] = (0.20, 0.35, 0.55)  # lit floor, BGR
    lin[:150] = (0.05, 0.06, 0.09)  # the shadow: darker, tinted by the ambient light
    blob = np.zeros((h, w), bool)
    blob[150:150 + CUBE, 200:200 + CUBE] = True  # a cube in the light
    blob[138:150, 200:200 + CUBE] = True  # and a piece beyond the shadow's edge
    if piece_bgr is not None:
        lin[138:150, 200:200 + CUBE] = piece_bgr
    piece = np.zeros((12, CUBE), np.uint8) + 1
    return _bare_floor(piece, (200, 138), blob, lin, view, None, (0, 0))


def test_shadowed_floor_beside_a_cube_is_bare_floor():
    assert _scene(None)  # like the shadowed floor around it


def test_a_painted_or_brighter_piece_is_no_bare_floor():
    assert not _scene((0.03, 0.03, 0.25))  # red in the shadow: a paint of its own
    assert not _scene((0.7, 0.7, 0.7))  # brighter than any floor around: a white top


def test_a_top_face_in_the_piece_is_a_cube():
    view = flat_view()
    w, h = view.size
    lin = np.full((h, w, 3), 0.3, np.float32)
    blob = np.zeros((h, w), bool)
    blob[140:160, 200:220] = True
    piece = np.ones((20, 20), np.uint8)
    assert _bare_floor(piece, (200, 140), blob, lin, view, None, (0, 0))
    tops = np.array([[210.0, 150.0]])
    assert not _bare_floor(piece, (200, 140), blob, lin, view, tops, (0, 0))


def test_without_removes_the_piece_in_the_blobs_box():
    mask = np.ones((10, 10), bool)
    out = _without(mask, np.ones((4, 4), np.uint8), (12, 12), (10, 10))
    assert out.sum() == 100 - 16 and not out[2:6, 2:6].any()
