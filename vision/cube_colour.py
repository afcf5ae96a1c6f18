"""What a cube's colour looks like to this camera at this table: a few pixels' CIELAB.

Why: the network names colours from what it learned on many tables, and at one table it can be
confidently wrong the same way every drop (black read brown under an orange lamp, red read brown
on a pink print). The camera's pixels at that table still tell black from brown: a cube the
players confirmed as black looks like the next black cube there. ``vision.calibration`` keeps
these colours from confirmed drops and weighs a new cube's colour against them.
"""

from __future__ import annotations

import cv2
import numpy as np

from vision import tray

# The tray floor's long side in cube edges (16 cm against a 1 cm cube).
FLOOR_CUBES = 16.0
# Without an outline, a cube edge is taken as this share of the picture's width (a tray whose
# long side spans 40 % of it, as from the overhead arm).
CUBE_SHARE_OF_WIDTH = 1 / 40
# The window around a cube's centre, in cube edges from the centre: inside its top face
# wherever the centre found lies on it.
WINDOW = 0.2


def cube_edge_px(width: int, corners=None) -> float:
    """A cube edge in picture pixels: from the tray outline when there is one."""
    if corners is None:
        return CUBE_SHARE_OF_WIDTH * width
    return tray.long_side(corners) / FLOOR_CUBES


def lab_colours(image: np.ndarray, points, cube_px: float) -> np.ndarray:
    """The median colour of a small window around each (x, y) point of a BGR uint8 picture, in
    OpenCV's 8-bit CIELAB (L scaled to 0-255, a and b offset by 128: the units the learning's
    spread is given in); shape (len(points), 3). The median, because a window may catch an
    edge or a neighbour's corner."""
    h, w = image.shape[:2]
    r = max(1, round(WINDOW * cube_px))
    out = np.zeros((len(points), 3), np.float64)
    for i, (x, y) in enumerate(points):
        cx = min(max(round(x), 0), w - 1)
        cy = min(max(round(y), 0), h - 1)
        window = image[max(0, cy - r):cy + r + 1, max(0, cx - r):cx + r + 1]
        lab = cv2.cvtColor(window, cv2.COLOR_BGR2LAB).reshape(-1, 3).astype(np.float64)
        out[i] = np.median(lab, axis=0)
    return out
