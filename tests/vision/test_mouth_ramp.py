"""Cubes still on the tower's ramp (vision.cubefit.mouth_fit's ``MOUTH_BASE_CM`` test) on drawn
masks, with the tower's side where it truly is.

A cube on the ramp stands wholly beyond the tower's side (its centre at least 0.62 cm beyond
in the renders' labels; a cube on the floor under the mouth at most 0.3 cm). The mouth's cube
models must show at least 30 % of their footprint inside the side to be judged (``ok_view``),
which holds every base within about 0.3 cm of the side: the ramp bar at 0.5 cm never fires
(0 of 55 mouth models on the renders, with the found outline or the true one). Pinned here as
a known miss on geometry alone; the renders' failures of this class (s004/drop07) also need
the side found at the crease (found 0.6-1.3 cm off at one end there; README, tray section).
Measured fixes (all 65 renders): the 30 % bar taken over the view instead of the judged part
(models may stand wholly beyond the side) passes this test but costs 65 -> 59 of 65 with the
reference (6 extra) and noref errors 16 -> 18; the same with models failing the old bar not
counted: the ramp extras on drop07 go, but cubes leaning on the lip (in the tray, centres
0.3-0.8 cm beyond the found side, z 0.6-0.82 cm against the ramp's 0.92-1.13) are lost:
65 -> 61 with the reference, noref 56 -> 55 (missed 7 -> 15).
"""

from __future__ import annotations

import numpy as np
import pytest
from flat_blobs import blob_of
from test_mouth_fit import PPC, _paint, _view

from vision.cubefit import MOUTH_BASE_CM, _past_side, mouth_fit


def _floor_and_ramp(view, beyond_cm: float):
    """A cube on the floor 0.8 cm inside the tower's side and one whose base lies
    ``beyond_cm`` beyond it (on the ramp; drawn on the floor plane, as the models see it),
    touching in the picture: one blob."""
    w, h = view.size
    _, y0, _, _ = view.floor_box
    m = np.zeros((h, w), bool)
    _paint(view, m, 180.0, y0 + 0.8 * PPC)
    _paint(view, m, 180.0, y0 - beyond_cm * PPC)
    return blob_of(m)


def test_the_ramp_scene_is_one_blob_reaching_beyond_the_ramp_bar():
    # the scene itself: the ramp cube's pixels lie beyond the bar, the floor cube's inside
    view = _view()
    b = _floor_and_ramp(view, 0.8)
    ys, xs = np.nonzero(b.mask)
    past = _past_side(view, np.stack([xs, ys], axis=1))
    assert past.max() > MOUTH_BASE_CM + 0.5 and past.min() < -1.0


@pytest.mark.xfail(strict=True, reason="the visibility bar (30 % of a model inside the side) "
                   "holds a ramp cube's model at the side, under MOUTH_BASE_CM: kept")
@pytest.mark.parametrize("one_light", [False, True])
def test_a_cube_wholly_beyond_the_side_on_the_ramp_is_not_in_the_tray(one_light):
    view = _view()
    b = _floor_and_ramp(view, 0.8)
    area = float(view.cube_footprint(*b.centroid))
    centres, keep = mouth_fit(b, (0, 0), view, None, b.centroid, area, one_light=one_light)
    assert np.count_nonzero(keep) == 1
    assert _past_side(view, centres[keep])[0] < 0.0  # the one kept is the floor's
