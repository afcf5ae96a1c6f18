"""Parts of the tray where the picture holds no detail: blown out by glare, or crushed to black.

Why: the detector decides from contrast, and a clipped pixel has none. A white cube on a pale
print under a lamp's glare, or a dark cube in a dark tray's wall shadow, can leave no candidate
at all, so the reading is wrong without the counter doubting any cube of it. What can be said
is that the picture could not show a cube there: a patch of the tray floor at least a cube's
face in size, with no counted cube on it, whose every channel is at the sensor's top (glare)
or near its bottom (dark). The players are asked to look at that part of the tray, and to dim,
move or add a lamp.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from vision import tray

# The tray floor's long side in cube edges (16 cm against a 1 cm cube).
FLOOR_CUBES = 16.0
# Around a counted cube's centre, this many cube edges are its own pixels (its faces and the
# shadow at its foot), which may be clipped without hiding anything.
CUBE_FOOTPRINT = 0.8


@dataclass(frozen=True)
class Patch:
    """A part of the tray without detail: ``kind`` "glare" or "dark", its centre (picture
    pixels) and its area in cube faces."""

    kind: str
    x: float
    y: float
    faces: float


def blind_patches(image: np.ndarray, corners, counted, *, glare_level: int = 250,
                  dark_level: int = 16, min_faces: float = 1.0) -> list[Patch]:
    """The patches of the tray floor (``corners``: its four corners) where every channel is at
    least ``glare_level`` or at most ``dark_level``, away from the ``counted`` cubes' centres
    ((x, y) pairs), and at least ``min_faces`` cube faces in area."""
    if corners is None:
        return []
    pts = tray.order_corners(corners)
    h, w = image.shape[:2]
    long_side = max(float(np.linalg.norm(pts[1] - pts[0])), float(np.linalg.norm(pts[2] - pts[1])))
    cube = long_side / FLOOR_CUBES
    # only the floor's bounding box is looked at: the rest of the picture cannot hold the tray
    x0, y0 = np.maximum(np.floor(pts.min(axis=0)).astype(int), 0)
    x1, y1 = np.minimum(np.ceil(pts.max(axis=0)).astype(int) + 1, (w, h))
    if x1 <= x0 or y1 <= y0:
        return []
    box = image[y0:y1, x0:x1]
    floor = np.zeros(box.shape[:2], np.uint8)
    cv2.fillConvexPoly(floor, np.round(pts - (x0, y0)).astype(np.int32), 255)
    for x, y in counted:
        cv2.circle(floor, (round(x - x0), round(y - y0)), max(1, round(CUBE_FOOTPRINT * cube)),
                   0, -1)
    # a cube must fit: a thin clipped line (an edge's highlight) hides nothing
    kernel = cv2.getStructuringElement(cv2.MORPH_RECT, (max(1, round(cube / 2)),) * 2)
    patches = []
    for kind, lo, hi in (("glare", glare_level, 255), ("dark", 0, dark_level)):
        if lo > hi:
            continue
        blind = cv2.inRange(box, (lo, lo, lo), (hi, hi, hi)) & floor
        blind = cv2.morphologyEx(blind, cv2.MORPH_OPEN, kernel)
        n, _, stats, centres = cv2.connectedComponentsWithStats(blind, connectivity=8)
        for i in range(1, n):
            faces = stats[i, cv2.CC_STAT_AREA] / (cube * cube)
            if faces >= min_faces:
                patches.append(Patch(kind, float(centres[i][0] + x0), float(centres[i][1] + y0),
                                     float(faces)))
    return patches
