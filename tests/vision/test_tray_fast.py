"""The tray finder's faster ways give the very bits of the plain ones they replace."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision import tray
from vision.colours import row_medians


@pytest.mark.parametrize("shape", [(80, 256), (80, 255), (168, 80), (3, 1), (5, 2)])
def test_row_log_medians_match_the_medians_of_the_log_lightness(shape):
    rng = np.random.default_rng(shape[1])
    for k in range(10):
        strip = rng.integers(0, 256, shape).astype(np.uint8)
        if k % 2:  # ties, as a flat floor gives
            strip = (strip // 40 * 40).astype(np.uint8)
        want = row_medians(tray._log_lightness(strip))
        got = tray._row_log_medians(strip)
        assert got.dtype == want.dtype and np.array_equal(got, want)
    # a strided view (the bottom and right strips are read backwards)
    strip = rng.integers(0, 256, (40, 30)).astype(np.uint8).T[::-1]
    assert np.array_equal(tray._row_log_medians(strip), row_medians(tray._log_lightness(strip)))


def test_sample_grid_matches_the_clamped_look_up():
    rng = np.random.default_rng(1)
    w, h = 60, 40
    for lo, hi in ((2.0, 37.0), (-3.0, 70.0), (0.0, 39.4), (0.0, 39.5)):
        px = rng.uniform(lo, hi, (7, 5, 11))
        py = rng.uniform(lo, min(hi, 39.49 if hi < 40 else hi), (7, 5, 11))
        xs, ys, inside = tray._sample_grid(px, py, w, h)
        assert np.array_equal(xs, np.minimum(np.maximum(np.round(px).astype(int), 0), w - 1))
        assert np.array_equal(ys, np.minimum(np.maximum(np.round(py).astype(int), 0), h - 1))
        want = (px >= 0) & (px < w) & (py >= 0) & (py < h)
        assert (inside is None and want.all()) or np.array_equal(inside, want)
    xs, ys, inside = tray._sample_grid(np.full((1, 1, 2), 5.0), np.full((1, 1, 2), 5.0), w, h)
    assert inside is None
    _, _, inside = tray._sample_grid(np.array([[[-0.2, 5.0]]]), np.full((1, 1, 2), 5.0), w, h)
    assert inside is not None and not inside[0, 0, 0] and inside[0, 0, 1]


def test_surroundings_read_each_zone_beyond_its_side():
    """Four tables of four colours beyond the four sides: each zone's median is its own."""
    img = np.zeros((400, 640, 3), np.uint8)
    img[:80] = (200, 40, 40)  # beyond the top side
    img[:, 488:] = (40, 200, 40)  # beyond the right side
    img[320:] = (40, 40, 200)  # beyond the bottom side
    img[:, :152] = (200, 200, 40)  # beyond the left side
    img[80:320, 152:488] = (128, 128, 128)  # the tray: floor and 2.5 cm round it
    # the floor: 16 x 10 cm at 16 px/cm; each zone (3-5 cm out) lies in its colour
    corners = np.float32([[192, 120], [448, 120], [448, 280], [192, 280]])
    view = tray.view_from_corners(corners)
    zones = tray._surroundings(img, view)
    want = [(200, 40, 40), (40, 200, 40), (40, 40, 200), (200, 200, 40)]
    for got, bgr in zip(zones, want, strict=True):
        lab = cv2.cvtColor(np.uint8([[bgr]]), cv2.COLOR_BGR2Lab)[0, 0].astype(np.float32)
        assert got is not None and np.abs(got - lab).max() <= 1


def _frame_with_floor(band: bool, book: bool) -> np.ndarray:
    img = np.full((324, 576, 3), 60, np.uint8)  # the table
    img[60:260, 130:450] = 200  # the floor
    if band:  # a hard shadow across the floor's far end: an edge-bounded piece of its own
        img[60:110, 130:450] = 120
    if book:  # something large on the table, edge-bounded, well away from the tray
        img[100:220, 480:560] = 140
    return img


@pytest.mark.parametrize("band, book, opinions", [
    (False, False, 1), (True, False, 2), (False, True, 1), (True, True, 2)])
def test_second_opinion_only_from_large_pieces_beside_the_floor(band, book, opinions):
    """The floor's second opinion takes in a large inner piece beside the floor (a shadowed
    part) but not one far from it (a book on the table), and is not made without one."""
    img = _frame_with_floor(band, book)
    masks = tray._floor_by_edges(img, tray._edges(img))
    assert len(masks) == opinions
    if opinions == 2:
        assert masks[1][80, 300] and not masks[0][80, 300]  # the band: second opinion only
    for m in masks:
        assert m[200, 300] and not m[160, 520]  # the lit floor in, the book out


@pytest.mark.parametrize("r", [4.0, 7.0, 11.0, 2.5])
def test_core_is_the_distance_transform_thresholded(r):
    """The floor's cores by erosion are the very pixels the distance transform keeps, on
    scattered edge pixels, lines and the frame's edge alike."""
    rng = np.random.default_rng(int(r * 10))
    for k in range(20):
        h, w = rng.integers(20, 160, 2)
        free = (rng.random((h, w)) > rng.uniform(0.002, 0.05)).astype(np.uint8)
        if k % 2:
            cv2.line(free, (0, int(h * 0.3)), (int(w) - 1, int(h * 0.6)), 0, 1)
        want = (cv2.distanceTransform(free, cv2.DIST_L2, 3) > r).astype(np.uint8)
        assert np.array_equal(tray._core(free, r), want)
