"""Which labelled cubes a picture does not show: a diagnostic the bench prints beside its figures.

Why: the renderer labels a cube visible by geometry (its pixels in an object-index pass), not by
what the camera made of it. A cube in the deep shadow of a dim set-up is "clearly visible"
(hundreds of pixels) in a picture where it is as dark as the floor it covers, and a cube on a
print of its own colour in glare is as white as the print. No counter finds those but by
guessing, so the bench says how many of its misses are such cubes and how many trays would be
exact if they went either way: beside the exact trays the issue's rule counts, never instead.

A cube is shown when, within ``RADIUS`` of its labelled centre, the picture differs from its
set-up's empty tray (same camera, same light) by at least ``MIN_DELTA_E`` in CIELAB, both blurred
first so that sensor noise does not count as a difference. Sizes are for a 512-pixel-wide
picture (a cube is 12-20 pixels across there) and scale with the picture's width. The numbers
were set by looking at the shipped model's misses on renderer seed 150 (vision/README.md,
"Where the errors are"): at a difference under 10 the crops show nothing a person could see.
"""

from __future__ import annotations

import cv2
import numpy as np

from vision.train.data import Sample

RADIUS = 4.0  # pixels at 512 wide: about a quarter of a cube's width each way
BLUR = 1.0  # Gaussian sigma, pixels at 512 wide
MIN_DELTA_E = 10.0


def difference(image: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Per pixel, the CIELAB distance between the blurred picture and blurred empty tray."""
    sigma = BLUR * image.shape[1] / 512
    lab = [cv2.cvtColor(cv2.GaussianBlur(im, (0, 0), sigma), cv2.COLOR_BGR2LAB).astype(np.float32)
           for im in (image, reference)]
    return np.linalg.norm(lab[0] - lab[1], axis=2)


def unshown(sample: Sample, image: np.ndarray, reference: np.ndarray | None) -> set[int] | None:
    """Indices, among the sample's in-tray cubes in label order (as ``vision.bench.pair_cubes``
    lists them), of the clearly visible ones the picture does not show; None when it cannot be
    told (no empty tray, or one of another size)."""
    if reference is None or reference.shape != image.shape:
        return None
    h, w = image.shape[:2]
    diff = difference(image, reference)
    r = max(1, round(RADIUS * w / 512))
    low = sample.low_visibility_px(w, h)
    out = set()
    for j, c in enumerate(c for c in sample.cubes if c.in_tray):
        if c.visible_px < low:
            continue  # may go either way already
        x, y = round(c.x), round(c.y)
        window = diff[max(0, y - r):max(0, y + r + 1), max(0, x - r):max(0, x + r + 1)]
        if window.size == 0 or float(window.max()) < MIN_DELTA_E:
            out.add(j)
    return out
