"""The tray's outline: four floor corners, from the network or tapped by a player.

Why here and so small: the network finds the corners (it was trained on renders that know
where the tray is); what is left is geometry: a stable order for the corners, a check that four
points can be a tray, and "is this point on the tray" for corners tapped by hand.
"""

from __future__ import annotations

import cv2
import numpy as np

from vision.errors import VisionError
from vision.reading import PLACES

# A cube in the tower's mouth or leaning on a wall lies a little beyond the floor's outline;
# with tapped corners the outline grows by this share of its long side before cubes are dropped.
TAPPED_MARGIN = 0.07
# Four found corners are only believed when they enclose this much of the picture at least and
# form a convex shape whose opposite sides differ by less than this factor.
MIN_AREA_SHARE = 0.04
MAX_SIDE_RATIO = 2.5


def order_corners(points) -> np.ndarray:
    """Four points clockwise on screen (y down), starting at the one nearest the picture's
    top-left, turned by one where needed so that corner 0 -> 1 runs along a long side."""
    try:
        pts = np.asarray(points, np.float32).reshape(4, 2)
    except (ValueError, TypeError) as exc:
        raise VisionError("tray corners must be four (x, y) points") from exc
    if not np.all(np.isfinite(pts)):
        raise VisionError("tray corners must be finite numbers")
    centre = pts.mean(axis=0)
    pts = pts[np.argsort(np.arctan2(pts[:, 1] - centre[1], pts[:, 0] - centre[0]))]
    pts = np.roll(pts, -int(np.argmin(pts[:, 0] + pts[:, 1])), axis=0)
    side = [float(np.linalg.norm(pts[(i + 1) % 4] - pts[i])) for i in range(4)]
    if side[0] + side[2] < side[1] + side[3]:
        pts = np.roll(pts, -1, axis=0)
    return pts


def plausible(corners: np.ndarray, width: int, height: int) -> bool:
    """Whether four found corners can be a tray seen from above."""
    pts = order_corners(corners)
    contour = pts.reshape(-1, 1, 2)
    if not cv2.isContourConvex(contour):
        return False
    if cv2.contourArea(contour) < MIN_AREA_SHARE * width * height:
        return False
    side = [float(np.linalg.norm(pts[(i + 1) % 4] - pts[i])) for i in range(4)]
    return (max(side[0], side[2]) <= MAX_SIDE_RATIO * max(1.0, min(side[0], side[2]))
            and max(side[1], side[3]) <= MAX_SIDE_RATIO * max(1.0, min(side[1], side[3])))


def long_side(corners) -> float:
    """The floor's longest side in pixels (the tray's 16 cm as seen)."""
    pts = order_corners(corners)
    return float(np.linalg.norm(np.roll(pts, -1, axis=0) - pts, axis=1).max())


def inside(corners: np.ndarray, x: float, y: float, margin: float = TAPPED_MARGIN) -> bool:
    """Whether (x, y) lies on the tray or within ``margin`` of its long side beyond it."""
    pts = order_corners(corners)
    distance = cv2.pointPolygonTest(pts.reshape(-1, 1, 2), (float(x), float(y)), True)
    return distance >= -margin * long_side(pts)


def place(x: float, y: float, width: int, height: int) -> str:
    """Which third of the picture, across and down, a point is in: a key of
    ``vision.reading.PLACES`` ("top-left", "middle", "bottom"...)."""
    col = ("left", "middle", "right")[min(2, int(3 * x / max(width, 1)))]
    row = ("top", "middle", "bottom")[min(2, int(3 * y / max(height, 1)))]
    if row == col == "middle":
        return "middle"
    if row == "middle":
        return col
    if col == "middle":
        return row
    return f"{row}-{col}"


def where(x: float, y: float, width: int, height: int) -> str:
    """Words for a place, for a player: thirds of the picture ("the top left of the picture")."""
    return PLACES[place(x, y, width, height)]
