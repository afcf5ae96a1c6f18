"""Cubes at the tower's mouth (vision.cubefit: ``widened``, ``mouth_fit``, ``_CubeFit`` with
the side's far part unknown) on drawn masks.

A tilted pinhole camera (as in test_tray) looks at a 16 x 10 cm floor whose far side is the
tower's; the blobs are the cube models' own footprints, so the expected answers follow from
the geometry alone.
"""

from __future__ import annotations

import numpy as np
from flat_blobs import blob_of
from test_tray import _look

import vision.cubefit as cubefit
from vision.cubefit import _cube_template, _CubeFit, _past_side, mouth_fit, widened
from vision.tray import view_from_corners

PPC = 20.0


def _view(extra_cm: float = 1.0):
    corners = _look([(0, 0), (16, 0), (16, 10), (0, 10)])
    far = _look([(8, 10)])[0]  # the tower stands over the far side
    view = view_from_corners(corners, px_per_cm=PPC, image_size=(1152, 648), hidden_at=far,
                             hidden_cm=1.0)
    return widened(view, extra_cm) if extra_cm else view


def _paint(view, mask, x: float, y: float) -> None:
    """A 1 cm cube's footprint (top and visible sides) with its base centre at view (x, y)."""
    k, (ax, ay), _ = _cube_template(view, view.camera(), x, y, 45.0)
    ys, xs = np.nonzero(k > 0)
    mask[ys - ay + round(y), xs - ax + round(x)] = True


def _face(view, x: float, y: float) -> tuple[float, float]:
    """Where the top face of the cube based at view (x, y) appears."""
    _, _, top = _cube_template(view, view.camera(), x, y, 45.0)
    return x + top[0], y + top[1]


def _pair(view):
    """A cube 0.7 cm inside the tower's side and one 1 cm in front of it (nearer the camera),
    whose top hides most of the first; nothing beyond the side shows (the mouth's dark
    floor). Returns the mask and the front cube's base."""
    w, h = view.size
    _, y0, _, _ = view.floor_box
    back, front = (180.0, y0 + 0.7 * PPC), (180.0, y0 + 1.7 * PPC)
    m = np.zeros((h, w), bool)
    _paint(view, m, *back)
    _paint(view, m, *front)
    m[:y0] = False
    return m, front


def test_the_view_reaches_one_cube_further_beyond_the_towers_side_only():
    narrow, wide = _view(0.0), _view(1.0)
    assert wide.hidden == narrow.hidden == 0
    assert wide.pad[0] - narrow.pad[0] == round(PPC)
    assert wide.pad[1:] == narrow.pad[1:]
    assert np.allclose(wide.corners, narrow.corners)  # the outline itself is not moved


def test_past_side_is_measured_from_the_towers_side():
    view = _view()
    x0, y0, x1, y1 = view.floor_box
    d = _past_side(view, [(100, y0 - 10), (100, y0 + 20), ((x0 + x1) / 2, (y0 + y1) / 2)])
    assert np.allclose(d, [0.5, -1.0, -5.0])


def test_a_cube_hidden_behind_the_one_in_front_of_it_is_counted():
    view = _view()
    m, front = _pair(view)
    for hidden_ok, want in ((True, 2), (False, 1)):
        fit = _CubeFit(m, (0, 0), view, 1.0)
        fit.unknown_beyond_side(view)
        fit.hidden_ok = hidden_ok  # False: judged as before, on its whole footprint
        fit.add_face(*_face(view, *front))
        fit.grow()
        assert len(fit.models) == want


def test_only_cubes_nearer_the_camera_can_hide_one():
    view = _view()
    m, front = _pair(view)
    fit = _CubeFit(m, (0, 0), view, 1.0)
    fit.unknown_beyond_side(view)
    fit.add_face(*_face(view, *front))
    j = fit.models[0][0]
    py, px = divmod(j, fit.shape[1])
    behind = (py - round(PPC / fit.step)) * fit.shape[1] + px  # 1 cm further from the camera
    ahead = (py + round(PPC / fit.step)) * fit.shape[1] + px  # 1 cm nearer
    assert fit._in_front(behind).any()
    assert not fit._in_front(ahead).any()


def test_a_model_whose_base_lies_beyond_the_bar_is_not_in_the_tray(monkeypatch):
    view = _view()
    w, h = view.size
    _, y0, _, _ = view.floor_box
    m = np.zeros((h, w), bool)
    _paint(view, m, 180.0, y0 + 0.3 * PPC)  # a cube leaning on the lip, its base inside
    m[:y0] = False
    b = blob_of(m)
    area = float(view.cube_footprint(*b.centroid))
    centres, keep = mouth_fit(b, (0, 0), view, None, b.centroid, area)
    assert len(centres) == 1 and keep.all()
    # the same cube with the bar half a cube inside the side: its base lies beyond it
    monkeypatch.setattr(cubefit, "MOUTH_BASE_CM", -0.5)
    centres, keep = mouth_fit(b, (0, 0), view, None, b.centroid, area)
    assert len(centres) == 1 and not keep.any()


def test_a_models_centre_counts_what_the_view_shows_beyond_the_side():
    # the split seeds a cube's pixels from its footprint's centre: a cube leaning on the lip
    # shows most of itself beyond the side, unjudged there but still its own pixels
    view = _view()
    w, h = view.size
    _, y0, _, _ = view.floor_box
    m = np.zeros((h, w), bool)
    _paint(view, m, 180.0, y0 + 0.3 * PPC)
    fit = _CubeFit(m, (0, 0), view, 1.0)
    fit.unknown_beyond_side(view)
    fit.grow()
    ys, _ = np.nonzero(m)
    assert len(fit.models) == 1
    assert abs(fit.centres()[0, 1] - ys.mean()) < 0.15 * PPC


def _crumb_scene(view):
    """A cube just inside the tower's side, one leaning on the lip 1.5 cm beside it and, at
    the side between them, a crumb of 0.3 x 0.4 cm (the strip the floor estimate leaves along
    the mouth's shadow edge, or the lip against the mouth's row floor)."""
    w, h = view.size
    _, y0, _, _ = view.floor_box
    m = np.zeros((h, w), bool)
    _paint(view, m, 170.0, y0 + 0.9 * PPC)
    _paint(view, m, 200.0, y0 + 0.3 * PPC)
    m[y0 - 4: y0 + 2, 186: 194] = True
    return m


def test_without_the_empty_tray_a_crumb_at_the_side_is_no_cube():
    # the crumb, with the parts of it the view leaves unjudged (beyond the side, behind the
    # cubes in front), passes the share test on a twentieth of a footprint; judged over at
    # least half its footprint (FIT_JUDGED_MIN) it explains too little
    view = _view()
    b = blob_of(_crumb_scene(view))
    area = float(view.cube_footprint(*b.centroid))
    with_ref = mouth_fit(b, (0, 0), view, None, b.centroid, area)
    without = mouth_fit(b, (0, 0), view, None, b.centroid, area, one_light=True)
    assert len(with_ref[0]) == 3  # with the reference every sliver there is a real change
    assert len(without[0]) == 2


def test_without_the_empty_tray_a_cube_leaning_on_the_lip_is_still_counted():
    view = _view()
    w, h = view.size
    _, y0, _, _ = view.floor_box
    m = np.zeros((h, w), bool)
    _paint(view, m, 180.0, y0 + 0.3 * PPC)  # its base inside, most of it beyond the side
    b = blob_of(m)
    area = float(view.cube_footprint(*b.centroid))
    centres, keep = mouth_fit(b, (0, 0), view, None, b.centroid, area, one_light=True)
    assert len(centres) == 1 and keep.all()


def _behind_and_in_front(view, band_cm: float | None = None):
    """A cube leaning on the lip (its base 0.3 cm inside the tower's side, most of it beyond)
    and, 1 cm nearer the camera, another cube (or, with ``band_cm``, a band that deep and as
    wide as the first cube, like its shadow); with the reference the blob shows beyond the
    side too."""
    w, h = view.size
    _, y0, _, _ = view.floor_box
    m = np.zeros((h, w), bool)
    _paint(view, m, 180.0, y0 + 0.3 * PPC)
    if band_cm is None:
        _paint(view, m, 180.0, y0 + 1.3 * PPC)
    else:
        ys, xs = np.nonzero(m)
        m[ys.max(): ys.max() + round(band_cm * PPC), xs.min(): xs.max() + 1] = True
    return m


def _grown(view, m, claims: bool) -> int:
    fit = _CubeFit(m, (0, 0), view, 1.0)
    fit.unknown_beyond_side(view)
    fit.front_claims = claims
    fit.grow()
    return len(fit.models)


def test_a_cube_in_front_claims_what_it_shares_with_the_one_behind():
    # placed by score, the cube behind (its part beyond the side unjudged) takes the overlap
    # and leaves the one in front under the bar; nearer the camera, the overlap is its own
    view = _view()
    m = _behind_and_in_front(view)
    assert _grown(view, m, claims=False) == 1
    assert _grown(view, m, claims=True) == 2
    b = blob_of(m)
    area = float(view.cube_footprint(*b.centroid))
    assert len(mouth_fit(b, (0, 0), view, None, b.centroid, area)[0]) == 2


def test_a_claim_on_a_shadow_in_front_of_a_cube_is_not_decisive(monkeypatch):
    view = _view()
    m = _behind_and_in_front(view, band_cm=0.5)
    assert _grown(view, m, claims=True) == 1
    # at the plain bar the band and the overlap pass as a cube
    monkeypatch.setattr(cubefit, "FIT_DECISIVE", 0.0)
    assert _grown(view, m, claims=True) == 2
