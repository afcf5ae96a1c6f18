"""Known outline misses of the tray finder on drawn oblique trays, pinned (strict xfails).

Measured with ``bench_drawn.py --outline`` (seed 0, 93 oblique scenes): the far side is found on
the rim's outer edge (about 0.86 cm out) in most oblique views, and on a wall shadow's edge
(2.2 cm in) in every oblique view with a wall shadow (since fixed: ``tray._past_shadow_edges``).
Straight views find the crease. Other fixes in the finder were measured and not kept (see the
README's tray section): the downstream settings lean on today's outline. When one is fixed, its
mark goes.
"""

from __future__ import annotations

import numpy as np
import pytest
import synth

from vision.tray import find_tray, hidden_side, view_from_corners


def _far_side_offset_cm(scene: synth.Scene) -> float:
    """How far (table cm) the found far side lies beyond the true one (+ out, - in)."""
    frame, _ = synth.render(scene)
    corners = synth.frame_to_table_cm(scene, find_tray(frame).corners)
    far = np.sort(corners[:, 1])[:2].mean()
    return float(synth.TRAY_ORIGIN_CM[1] - far)


def test_straight_view_far_side_is_on_the_crease():
    assert abs(_far_side_offset_cm(synth.Scene(wall_shadow=0.5))) < 0.35


@pytest.mark.xfail(strict=True, reason="oblique far side on the rim's outer edge: the crease "
                   "and the narrow rim beyond it make one run of candidate lines")
def test_oblique_far_side_is_on_the_crease_not_the_rim():
    assert abs(_far_side_offset_cm(synth.Scene(oblique=True))) < 0.35


def test_oblique_wall_shadow_edge_is_not_the_far_side():
    # the neighbouring sides' creases run on past a shadow's edge to the true corners
    # (``tray._past_shadow_edges``)
    assert abs(_far_side_offset_cm(synth.Scene(oblique=True, wall_shadow=0.5))) < 0.35


def _tower_frame_cut(in_view: float) -> tuple[np.ndarray, np.ndarray]:
    """A straight-down tray at 20 px/cm with the tower beyond its top side, the frame cut so
    that only ``in_view`` of the zone 3-5 cm beyond the top side shows (and a fifth of the one
    beyond the bottom side): s004/drop04's framing. Returns the frame and the floor corners."""
    import cv2

    ppc = 20
    top = round(60 + in_view * 40)  # the floor's top edge: the zone is 60-100 px above
    x0, x1, y1 = 100, 100 + 16 * ppc, top + 10 * ppc
    h = y1 + 60 + 8  # a fifth of the bottom zone in view
    frame = np.empty((h, x1 + 100, 3), np.uint8)
    frame[:] = (60, 70, 95)  # table
    cv2.rectangle(frame, (0, 0), (frame.shape[1] - 1, top - 10), (200, 120, 150), -1)  # tower
    cv2.rectangle(frame, (x0 - 14, top - 14), (x1 + 13, y1 + 13), (200, 215, 225), -1)  # rim
    cv2.rectangle(frame, (x0, top), (x1 - 1, y1 - 1), (172, 208, 228), -1)  # floor
    rng = np.random.default_rng(0)
    frame = np.clip(frame + rng.normal(0, 2.0, frame.shape), 0, 255).astype(np.uint8)
    corners = np.float32([[x0, top], [x1 - 1, top], [x1 - 1, y1 - 1], [x0, y1 - 1]])
    return frame, corners


def test_the_tower_side_is_found_when_its_surroundings_show_well():
    frame, corners = _tower_frame_cut(0.6)
    view = view_from_corners(corners, image_size=(frame.shape[1], frame.shape[0]))
    assert hidden_side(frame, view) == 0


def test_the_tower_side_is_found_with_its_surroundings_partly_out_of_frame():
    # s004/drop04: only a quarter of the tower's zone and a fifth of the near one in the frame;
    # a zone counts by its area in view (``ZONE_IN_VIEW_CM2``), not its share
    frame, corners = _tower_frame_cut(0.25)
    view = view_from_corners(corners, image_size=(frame.shape[1], frame.shape[0]))
    assert hidden_side(frame, view) == 0
