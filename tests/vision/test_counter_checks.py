"""The frame checks' statistics (vision.counter._mean_std) and the tray finder's shared
working copy (vision.tray: the blur made once for the edges and the watershed)."""

from __future__ import annotations

import numpy as np

from vision.counter import _mean_std
from vision.tray import _blurred, _edges, _floor_by_edges


def test_mean_and_spread_over_every_pixel_and_channel_match_numpys():
    rng = np.random.default_rng(3)
    img = rng.integers(0, 256, (97, 131, 3), dtype=np.uint8)
    img[..., 2] //= 3  # channels of different means: the spread between them counts too
    sample = img[::4, ::4]
    mean, spread = _mean_std(sample)
    assert abs(mean - float(sample.mean())) < 1e-9
    assert abs(spread - float(sample.std())) < 1e-9


def test_the_floor_found_with_the_shared_blur_is_the_same():
    rng = np.random.default_rng(5)
    img = np.full((180, 320, 3), 60, np.uint8)
    img[40:140, 60:260] = (170, 190, 210)  # a pale floor on a dark table
    img = (img + rng.integers(0, 6, img.shape)).astype(np.uint8)
    blur = _blurred(img)
    edges = _edges(img)
    assert np.array_equal(edges, _edges(img, blur))
    a = _floor_by_edges(img, edges)
    b = _floor_by_edges(img, edges, blur)
    assert len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert a[0][90, 160] and not a[0][5, 5]
