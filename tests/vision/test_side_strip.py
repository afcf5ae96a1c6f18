"""A piece of the strip between a side of the outline and a straight line along it is no cube.

Why: the outline can stop on a rim's outer edge or on a wall shadow's edge beyond the crease;
the wall, rim or shadow band let in differs from the floor estimate and pieces of it passed as
cubes (s002/drop05 without the empty tray, once the tray finder moved its side past the wall
shadow's edge). A cube there would hide the line where it stands and does not fit in a strip
thinner than itself (``counter._in_side_strip``).
"""

from __future__ import annotations

import numpy as np
from flat_blobs import PPC, blob_of

from vision.counter import _in_side_strip

SHAPE = (240, 360)  # the flat view's rectified size (16 x 10 cm, 1 cm margin, 20 px/cm)
BOX = (20, 20, 340, 220)  # its floor box
LINE_IN = 10  # px: a line 0.5 cm in from the side, thinner than a cube's strip


def _edges_with_line(row: int | None = None, col: int | None = None) -> np.ndarray:
    e = np.zeros(SHAPE, np.uint8)
    if row is not None:
        e[row, BOX[0]:BOX[2]] = 1
    if col is not None:
        e[BOX[1]:BOX[3], col] = 1
    return e


def _piece(y0: int, y1: int, x0: int, x1: int) -> np.ndarray:
    m = np.zeros(SHAPE, bool)
    m[y0:y1, x0:x1] = True
    return m


def test_piece_between_bottom_side_and_unbroken_line_is_a_strip():
    y1 = BOX[3]
    edges = _edges_with_line(row=y1 - LINE_IN)
    piece = _piece(y1 - LINE_IN + 1, y1, 150, 175)  # 1.25 x 0.45 cm, under the line
    assert _in_side_strip(blob_of(piece), edges, BOX, PPC)


def test_piece_along_left_side_is_a_strip_too():
    x0 = BOX[0]
    edges = _edges_with_line(col=x0 + LINE_IN)
    piece = _piece(100, 125, x0, x0 + LINE_IN - 1)
    assert _in_side_strip(blob_of(piece), edges, BOX, PPC)


def test_line_hidden_where_the_piece_lies_is_no_strip():
    # something solid stands there: the line is broken across the piece
    y1 = BOX[3]
    edges = _edges_with_line(row=y1 - LINE_IN)
    edges[:, 145:180] = 0
    piece = _piece(y1 - LINE_IN + 1, y1, 150, 175)
    assert not _in_side_strip(blob_of(piece), edges, BOX, PPC)


def test_line_not_running_on_past_an_end_is_no_strip():
    # a cube's own edge lined up with the side runs no further than the cube
    y1 = BOX[3]
    edges = np.zeros(SHAPE, np.uint8)
    edges[y1 - LINE_IN, 148:177] = 1
    piece = _piece(y1 - LINE_IN + 1, y1, 150, 175)
    assert not _in_side_strip(blob_of(piece), edges, BOX, PPC)


def test_cube_reaching_past_the_line_is_no_strip():
    # a cube against the wall reaches a cube's depth in, across the line
    y1 = BOX[3]
    edges = _edges_with_line(row=y1 - LINE_IN)
    piece = _piece(y1 - round(PPC), y1, 150, 170)
    assert not _in_side_strip(blob_of(piece), edges, BOX, PPC)


def test_piece_mostly_beyond_the_side_is_left_to_the_beyond_rules():
    y1 = BOX[3]
    edges = _edges_with_line(row=y1 - LINE_IN)
    piece = _piece(y1 - 3, y1 + 15, 150, 175)
    assert not _in_side_strip(blob_of(piece), edges, BOX, PPC)
