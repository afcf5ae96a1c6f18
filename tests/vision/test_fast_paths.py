"""The fast paths give the very same numbers as the plain ones they replace: the frame fit's
contrast search shares one grid among the contrasts, short-axis reductions are done slice by
slice, medians take one partition. Bit for bit, since a near-tie (two fits, two wall bands)
must not turn on summation order."""

from __future__ import annotations

import numpy as np
import pytest

from vision.colours import (
    _LIN_LUT,
    CONTRAST_SPAN,
    CONTRAST_STEPS,
    ColourModel,
    _min_last,
    _over,
    _sum3,
    row_medians,
    to_linear,
    toned,
)

MODEL = ColourModel.default()


def _one_contrast(ratios, c, low, over, names):
    """The coarse search at one contrast, written out plainly: the grid, ``_costs`` on that
    contrast's toned ratios, the priors, the best row."""
    ks, tbs, trs, _, _ = MODEL._coarse_grid(MODEL.light_sigma, MODEL.tint_sigma)
    kk, bb, rr = (a.ravel() for a in np.meshgrid(ks, tbs, trs, indexing="ij"))
    g = np.exp(np.stack([kk + bb, kk, kk + rr], axis=1))
    cost = MODEL._costs(toned(ratios, c), g, low, over**c, 0.0, names)
    cost += (kk / MODEL.light_sigma) ** 2 + (bb * bb + rr * rr) / MODEL.tint_sigma**2
    j = int(np.argmin(cost))
    return float(kk[j]), float(bb[j]), float(rr[j]), float(cost[j])


@pytest.mark.parametrize("n", [1, 3, 9, 17])  # 9 and 17: numpy sums 8 or more pairwise
@pytest.mark.parametrize("named", [False, True])
def test_contrast_scan_equals_one_plain_scan_per_contrast(n, named):
    rng = np.random.default_rng(n)
    ratios = (rng.random((n, 3)) * 1.5 + 0.01).astype(np.float32)
    low = rng.random((n, 3)) < 0.2
    over = _over(np.where(rng.random((n, 3)) < 0.2, 1.7, 1.0), n)
    names = rng.integers(0, 7, n) if named else None
    contrasts = np.exp(np.linspace(-CONTRAST_SPAN, CONTRAST_SPAN, CONTRAST_STEPS))
    got = MODEL._coarse_scans(ratios, contrasts, None, None, low, over, names)
    want = [_one_contrast(ratios, c, low, over, names) for c in contrasts]
    assert got == want


def test_short_axis_reductions_are_bit_identical():
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((50, 9, 7, 3)) * rng.choice([1e-3, 1.0, 80.0], (50, 9, 7, 3)))
    x = x.astype(np.float32)
    assert np.array_equal(_sum3(x * x), (x * x).sum(axis=3))
    y = x[..., 0]
    assert np.array_equal(_min_last(y), y.min(axis=2))
    assert _min_last(y).dtype == np.float32


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("cols", [1, 2, 3, 8, 255, 256])
def test_row_medians_equal_numpys(dtype, cols):
    rng = np.random.default_rng(cols)
    x = (rng.standard_normal((6, cols)) * 10).astype(dtype)
    x[::2] = np.round(x[::2])  # ties
    for arr in (x, x[:, ::-1], np.asfortranarray(x)):
        got = row_medians(arr)
        assert got.dtype == dtype
        assert np.array_equal(got, np.median(arr, axis=1))
    assert np.array_equal(row_medians(x.T.T), np.median(x, axis=1))


def test_to_linear_equals_the_table_for_any_shape():
    rng = np.random.default_rng(3)
    img = rng.integers(0, 256, (31, 47, 3), dtype=np.uint8)
    for u in (img, img[::3, ::2], img[:, :, 1], img[5, :, 0], np.arange(256, dtype=np.uint8),
              img.reshape(-1, 3)):
        got = to_linear(u)
        assert got.dtype == np.float32 and got.shape == u.shape
        assert np.array_equal(got, _LIN_LUT[u])
    assert to_linear(np.zeros((0, 3), np.uint8)).shape == (0, 3)
