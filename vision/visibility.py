"""How much of the tray floor a picture shows nearly black: a tray too dark for cubes to be seen.

Why: a cube in a floor the camera renders black is black too, whatever its colour, and no
counter finds it but by guessing (`vision.train.unseen` counts such cubes in the bench). That
is a lighting fault the players can fix once, when they set the empty tray, not a doubt to add
to every reading: doubting the readings of dark patches doubted six or more right readings for
each wrong one it caught (60177e9), because most wrong readings are colours, not darkness.

The levels: a pixel is nearly black when every channel is at most ``DARK_LEVEL`` of 255; a
floor is too dark when at least ``TOO_DARK_SHARE`` of it is. On the empty trays of 137
development set-ups (renderer seeds 8087, 8088, 8090 and 8100-8110, vision/README.md) the
floor was too dark in 5, and those 5 held 112 of the 150 labelled cubes their pictures do not
show; in the other 132 the darkest floor was 45 % nearly black.
"""

from __future__ import annotations

import cv2
import numpy as np

from vision import tray

DARK_LEVEL = 24
TOO_DARK_SHARE = 0.5


def dark_floor_share(image: np.ndarray, corners, level: int = DARK_LEVEL) -> float | None:
    """The share of the tray floor (``corners``: its four corners in picture pixels, any
    order) whose every channel is at most ``level``; None without corners or when the floor
    lies outside the picture."""
    if corners is None:
        return None
    floor = np.zeros(image.shape[:2], np.uint8)
    cv2.fillConvexPoly(floor, np.round(tray.order_corners(corners)).astype(np.int32), 255)
    area = cv2.countNonZero(floor)
    if area == 0:
        return None
    dark = cv2.inRange(image, (0, 0, 0), (level, level, level)) & floor
    return cv2.countNonZero(dark) / area


def too_dark(image: np.ndarray, corners) -> float | None:
    """The floor's nearly black share when it is too dark for cubes to be seen, else None."""
    share = dark_floor_share(image, corners)
    return share if share is not None and share >= TOO_DARK_SHARE else None
