"""Blobs drawn as masks on a straight-down rectified view, for the counter's unit tests.

One place for the view (16 x 10 cm at 20 px/cm, no lens known) and for making a
``vision.segment.Blob`` of a mask the way ``segment`` does, so tests of different stages
describe the same scene the same way.
"""

from __future__ import annotations

import numpy as np

from vision.segment import Blob
from vision.tray import view_from_corners

PPC = 20.0


def flat_view():
    corners = [(100, 100), (420, 100), (420, 300), (100, 300)]  # 16 x 10 cm at 20 px/cm
    return view_from_corners(corners, px_per_cm=PPC)


def blob_of(mask: np.ndarray) -> Blob:
    ys, xs = np.nonzero(mask)
    x0, y0 = int(xs.min()), int(ys.min())
    return Blob(mask=mask, area=float(mask.sum()), centroid=(float(xs.mean()), float(ys.mean())),
                bbox=(x0, y0, int(xs.max()) - x0 + 1, int(ys.max()) - y0 + 1))
