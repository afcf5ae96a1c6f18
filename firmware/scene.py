"""Whether the tray still looks as it did at the last reading: one drop starts one phase.

Why: the companion lets a reading start a phase only if it was taken after the previous phase
began (``companion.drops``), and decides "after" by reading ids. A restart, or "Read the tray
now", reads an unchanged tray again under a new id, which then passed for the next phase's drop
(the brown phase's cubes offered for the green one). So each reading says whether the picture is
the last reading's tray unchanged; the companion then dates it from the first reading of that
tray. The last reading's thumbnail is kept on disk, so a restart still knows it.

Pixels, not counts: the same tray read with other bounds may count otherwise, and two drops of
equal counts lie differently. A cube at 1152 x 648 covers about a dozen thumbnail pixels, so a
handful of changed pixels means a changed tray; sensor noise and JPEG stay under the level.
"""

from __future__ import annotations

import logging
from pathlib import Path

import cv2
import numpy as np

log = logging.getLogger(__name__)

SIZE = (160, 90)  # thumbnail width, height
CHANGED_LEVEL = 30  # of 255, on the blurred grey thumbnails
CHANGED_PIXELS = 4  # fewer changed pixels than this: the same tray


def thumbnail(image: np.ndarray) -> np.ndarray:
    grey = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    small = cv2.resize(grey, SIZE, interpolation=cv2.INTER_AREA)
    return cv2.GaussianBlur(small, (3, 3), 0)


def same_tray(a: np.ndarray, b: np.ndarray) -> bool:
    return int(np.count_nonzero(cv2.absdiff(a, b) > CHANGED_LEVEL)) < CHANGED_PIXELS


class SceneMemory:
    """The thumbnail of the last frame read, in memory and in ``path`` (a PNG) when given."""

    def __init__(self, path: Path | None = None):
        self.path = path
        self._last: np.ndarray | None = None
        if path is not None and path.is_file():
            loaded = cv2.imread(str(path), cv2.IMREAD_GRAYSCALE)
            if loaded is not None and loaded.shape == (SIZE[1], SIZE[0]):
                self._last = loaded
            else:
                log.warning("ignoring %s: not a tray thumbnail", path)

    def unchanged(self, image: np.ndarray) -> bool:
        """True when ``image`` shows the last frame read's tray unchanged; it becomes the last."""
        now = thumbnail(image)
        same = self._last is not None and same_tray(self._last, now)
        self._last = now
        if self.path is not None:
            try:
                partial = self.path.with_name(self.path.name + ".partial.png")
                ok, png = cv2.imencode(".png", now)  # imwrite says only False on a full card
                if not ok:
                    raise OSError("the thumbnail could not be encoded")
                partial.write_bytes(png.tobytes())  # the reason itself (no space left...)
                partial.replace(self.path)
            except OSError as exc:  # a full card loses the check after a restart, not the reading
                log.warning("could not keep the tray thumbnail in %s: %s", self.path, exc)
        return same
