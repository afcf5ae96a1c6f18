"""count_cubes end to end on drawn scenes: the easy ones exactly, the hard ones honestly.

"Honestly" means: either every count is right, or the reading says it is unsure. A confident
wrong answer is the one thing a hard scene must never produce... except where a test says in
its name that the counter is known to miss it (kept visible, marked xfail, so that a fix shows).
"""

from __future__ import annotations

import dataclasses

import cv2
import numpy as np
import pytest
import synth

from vision.calibration import Calibration, calibrate_from_drop
from vision.counter import count_cubes
from vision.reading import COLOURS

ALL = list(COLOURS)


def _run(scene, *, reference=True, **kw):
    frame, truth = synth.render(scene)
    ref = None
    if reference:
        ref, _ = synth.render(scene, with_cubes=False)
    return count_cubes(frame, ref, **kw), truth


@pytest.mark.parametrize("reference", [True, False])
@pytest.mark.parametrize("oblique", [False, True])
def test_seven_colours_scattered(reference, oblique):
    scene = synth.Scene(cubes=synth.scatter(ALL * 2, seed=11), oblique=oblique)
    reading, truth = _run(scene, reference=reference)
    assert reading.counts == synth.counts(truth)
    assert reading.total == 14


def test_positions_are_in_input_pixels():
    scene = synth.Scene(cubes=synth.scatter(["red", "blue", "green"], seed=2), oblique=True)
    reading, truth = _run(scene)
    for t in truth:
        d = min(np.hypot(c.x - t["x"], c.y - t["y"]) for c in reading.cubes)
        assert d < 0.02 * scene.size[0]  # within about half a cube
    assert all(0 <= c.confidence <= 1 for c in reading.cubes)


def test_empty_tray_is_zero_and_sure():
    scene = synth.Scene()
    reading, _ = _run(scene)
    assert reading.total == 0 and not reading.uncertain


def test_cubes_on_the_table_are_ignored():
    scene = synth.Scene(
        cubes=[("red", 8, 5, 0)],
        on_table=[
            ("red", 3, 3, 0), ("blue", 27, 16, 0), ("white", 5.5, 10, 0), ("green", 24.5, 8, 0)
        ],
    )
    for reference in (True, False):
        reading, _ = _run(scene, reference=reference)
        assert reading.counts == {**dict.fromkeys(ALL, 0), "red": 1}


def test_light_and_exposure_drift_since_the_reference():
    """The empty tray was captured under neutral light; the drop under a warm lamp, darker."""
    scene = synth.Scene(cubes=synth.scatter(ALL, seed=4), cast=(1.25, 1.0, 0.6), exposure=0.75)
    frame, truth = synth.render(scene)
    neutral = dataclasses.replace(scene, cast=(1, 1, 1), exposure=1.0)
    ref, _ = synth.render(neutral, with_cubes=False)
    assert count_cubes(frame, ref).counts == synth.counts(truth)


HARD = {
    "touching_same_colour": synth.Scene(
        cubes=[
            ("green", 5, 5, 0), ("green", 6.02, 5, 0), ("green", 5.5, 6.02, 0), ("red", 11, 3, 20)
        ]
    ),
    "touching_rotated_pairs": synth.Scene(
        cubes=[
            ("blue", 5, 5, 30), ("blue", 6.1, 5.4, 30),
            ("yellow", 11, 3, 20), ("yellow", 12.1, 3.2, 25),
        ]
    ),
    "wall_shadow": synth.Scene(
        cubes=[
            ("black", 3, 1.0, 10), ("brown", 7, 1.1, 40), ("white", 10, 1.2, 0), ("red", 13, 5, 0)
        ],
        wall_shadow=0.55,
    ),
    "dark_print_dark_cubes": synth.Scene(
        cubes=[("black", 4, 4, 10), ("brown", 8, 5, 30), ("black", 12, 3, 0), ("brown", 6, 7, 5)],
        print_rgb=synth.PRINTS_RGB["dark"], table_rgb=(200, 195, 190),
    ),
    "noise_and_jpeg": synth.Scene(cubes=synth.scatter(ALL, seed=3), noise=7, jpeg=40),
    "leaning_on_another": synth.Scene(
        cubes=[("red", 5, 5, 0), ("red", 5.5, 5.4, 20), ("white", 11, 5, 0)]
    ),
    "grey_print": synth.Scene(cubes=synth.scatter(ALL, seed=5), print_rgb=synth.PRINTS_RGB["grey"]),
}


@pytest.mark.parametrize("reference", [True, False])
@pytest.mark.parametrize("name", sorted(HARD))
def test_hard_scene_is_right_or_says_unsure(name, reference):
    reading, truth = _run(HARD[name], reference=reference)
    assert reading.counts == synth.counts(truth) or reading.uncertain, reading.to_dict()
    if reading.uncertain:
        assert reading.warnings, "unsure cubes must be explained in words"


PALE = synth.Scene(
    cubes=[("white", 4, 4, 10), ("yellow", 8, 5, 30), ("white", 12, 3, 0), ("yellow", 6, 7, 5)],
    print_rgb=synth.PRINTS_RGB["pale"], table_rgb=(90, 80, 100),
)
GLARE = synth.Scene(cubes=[("white", 11.5, 6.5, 10), ("yellow", 9, 6.5, 0)], glare=True)


@pytest.mark.parametrize("reference", [True, False])
def test_white_cubes_on_a_pale_print(reference):
    # without the empty tray white on a near-white print shows only its shaded sides and
    # shadow, an L of edges: counted from it, and flagged (``counter._painted_like_floor``)
    reading, truth = _run(PALE, reference=reference)
    assert reading.counts == synth.counts(truth) or reading.uncertain
    if not reference:
        assert reading.counts == synth.counts(truth) and reading.uncertain


@pytest.mark.parametrize("reference", [True, False])
def test_white_cube_in_glare(reference):
    # without the empty tray the white cube in the glare spot is still missed, but its
    # outline, apart from every cube, now says so (``counter._outlines_left_out``)
    reading, truth = _run(GLARE, reference=reference)
    assert reading.counts == synth.counts(truth) or reading.uncertain


def test_green_on_a_dark_print_is_right_or_unsure():
    # was a known miss (named yellow, and surely): it now lies far from every reference and
    # says so
    scene = synth.Scene(
        cubes=[("black", 4, 4, 10), ("brown", 8, 5, 30), ("blue", 12, 3, 0), ("green", 6, 7, 5)],
        print_rgb=synth.PRINTS_RGB["dark"], table_rgb=(200, 195, 190),
    )
    reading, truth = _run(scene)
    assert reading.counts == synth.counts(truth) or reading.uncertain
    if reading.counts != synth.counts(truth):
        assert any("unlike every" in w or "could be" in w for w in reading.warnings)


def test_bounds_rename_the_least_certain_cube():
    scene = HARD["grey_print"]
    reading, truth = _run(scene)
    want = synth.counts(truth)
    bounded = _run(scene, bounds=want)[0]
    assert all(bounded.counts[c] <= want[c] or bounded.uncertain for c in ALL)
    assert bounded.total == reading.total


def test_bounds_that_cannot_be_met_are_reported():
    scene = synth.Scene(cubes=[("red", 4, 4, 0), ("red", 9, 5, 0), ("red", 13, 7, 0)])
    reading, _ = _run(scene, bounds=dict.fromkeys(ALL, 0))
    assert reading.uncertain
    assert any("more" in w for w in reading.warnings)


def test_manual_corners_from_a_calibration():
    scene = synth.Scene(cubes=synth.scatter(["red", "white"], seed=8), oblique=True)
    frame, truth = synth.render(scene)
    cal = Calibration(corners=[tuple(p) for p in synth.floor_corners_px(scene)])
    assert count_cubes(frame, calibration=cal).counts == synth.counts(truth)


def test_calibration_drop_refines_the_colours():
    scene = synth.Scene(cubes=synth.scatter(ALL, seed=9))
    frame, truth = synth.render(scene)
    ref, _ = synth.render(scene, with_cubes=False)
    cal = calibrate_from_drop(frame, synth.counts(truth), ref)
    assert cal.colours.refs != Calibration().colours.refs
    # and the calibrated model still reads the drop it learned from
    assert count_cubes(frame, ref, calibration=cal).counts == synth.counts(truth)


def test_calibration_drop_with_a_miscount_is_refused():
    scene = synth.Scene(cubes=synth.scatter(["red", "blue"], seed=10))
    frame, _ = synth.render(scene)
    with pytest.raises(ValueError, match="not used for calibration"):
        calibrate_from_drop(frame, {"red": 1, "blue": 1, "green": 1})


def test_reading_serialises():
    reading, _ = _run(HARD["leaning_on_another"])
    d = reading.to_dict()
    assert set(d) == {"counts", "total", "cubes", "uncertain", "warnings", "tray_corners"}
    assert d["total"] == len(d["cubes"])
    assert len(d["tray_corners"]) == 4 and all(len(p) == 2 for p in d["tray_corners"])


def test_reading_without_corners_leaves_them_out():
    from vision.reading import TrayReading

    assert "tray_corners" not in TrayReading().to_dict()


@pytest.mark.parametrize("oblique", [False, True])
def test_tray_corners_are_the_floor_corners_in_order(oblique):
    scene = synth.Scene(cubes=synth.scatter(["red", "blue"], seed=3), oblique=oblique)
    reading, _ = _run(scene)
    got = np.array(reading.tray_corners)
    want = synth.floor_corners_px(scene).reshape(-1, 2)
    # each found corner near a true one (the drawn oblique wall puts the far crease ~1 cm off),
    # and the order as documented:
    # clockwise on screen from the top-left-most, 0 -> 1 along a long side
    for p in got:
        assert np.min(np.hypot(*(want - p).T)) < 1.5 * synth.S
    assert np.argmin(got.sum(axis=1)) == 0
    side = [np.hypot(*(got[(i + 1) % 4] - got[i])) for i in range(4)]
    assert side[0] + side[2] > side[1] + side[3]
    (ax, ay), (bx, by) = got[1] - got[0], got[2] - got[1]
    assert ax * by - ay * bx > 0  # clockwise on screen (y down)


def test_frame_scale_follows_the_lone_cubes_and_ignores_clusters():
    from vision.counter import SCALE_RANGE, _frame_scale

    # lone cubes 40 % larger than the geometry says (a lamp's shadows), and one pair
    s = _frame_scale([1.4, 1.35, 1.45, 1.38, 2.9])
    assert 1.3 < s < 1.45
    assert _frame_scale([]) == 1.0
    assert _frame_scale([3.0]) == 1.0  # a cluster alone says nothing about a lone cube
    assert SCALE_RANGE[0] <= _frame_scale([0.1, 9.0]) <= SCALE_RANGE[1]


def test_cores_count_touching_cubes_by_their_waist():
    import cv2

    from vision.counter import _cores

    mask = np.zeros((100, 120), np.uint8)
    cv2.rectangle(mask, (20, 30), (39, 49), 1, -1)  # two 1 cm cubes (20 px/cm) corner to
    cv2.rectangle(mask, (38, 48), (57, 67), 1, -1)  # corner
    assert _cores(mask > 0, 20.0) == 2
    one = np.zeros((100, 120), np.uint8)
    cv2.rectangle(one, (20, 30), (39, 49), 1, -1)
    cv2.rectangle(one, (40, 35), (49, 44), 1, -1)  # a shadow half a cube wide beside it
    assert _cores(one > 0, 20.0) == 1


# --- top faces explain a blob; what they leave is counted on its own (vision.counter) ---

def _squares(centres_cm, px_per_cm=20.0, side_cm=1.2, size=(200, 120)):
    """A blob mask of cube footprints (side_cm squares) at centres_cm."""
    import cv2
    m = np.zeros(size[::-1], np.uint8)
    h = 0.5 * side_cm * px_per_cm
    for x, y in centres_cm:
        cx, cy = x * px_per_cm, y * px_per_cm
        cv2.rectangle(m, (round(cx - h), round(cy - h)), (round(cx + h), round(cy + h)), 1, -1)
    return m > 0


def test_top_faces_leave_nothing_when_they_explain_the_blob():
    from vision.counter import _unexplained
    centres = [(2.0 + 1.25 * i, 3.0) for i in range(5)]
    mask = _squares(centres)
    # thin bridges between the cubes (their halos meet): area, not cubes
    mask[58:62, 40:160] = True
    faces = np.array(centres) * 20.0
    assert len(_unexplained(mask, faces, 20.0, 1.44 * 400)) == 0


def test_cubes_without_a_top_face_are_counted_from_what_is_left():
    from vision.counter import _unexplained
    centres = [(2.0, 3.0), (3.2, 3.0), (4.4, 3.0), (4.4, 4.2)]
    mask = _squares(centres)
    faces = np.array(centres[:1]) * 20.0
    rest = _unexplained(mask, faces, 20.0, 1.44 * 400)
    assert len(rest) == 3
    # each one near a cube that has no face
    for x, y in np.array(centres[1:]) * 20.0:
        assert np.hypot(rest[:, 0] - x, rest[:, 1] - y).min() < 12


def _beside_two_faces(touch_px):
    """Two cubes whose tops are enclosed (faces at x = 40 px) and, beside them, two more one
    above the other touching along ``touch_px`` of a side: 20 px/cm, 1.2 cm footprints."""
    m = np.zeros((80, 100), bool)
    m[10:34, 28:52] = True
    m[36:60, 28:52] = True
    m[10:34, 48:72] = True
    m[36:60, 48:72] = True
    m[34:36, 72 - touch_px:72] = True
    return m, np.array([[40.0, 22.0], [40.0, 48.0]])


def test_two_cubes_left_beyond_the_faces_reach_count_as_two_where_their_outline_pinches():
    from vision.counter import _unexplained
    # the faces' reach takes a share of each: what is left holds about one cube's area, but
    # the blob's outline pinches between the two (they touch along half a side)
    mask, faces = _beside_two_faces(10)
    rest = _unexplained(mask, faces, 20.0, 1.5 * 400)
    assert len(rest) == 2
    assert sorted(np.round(rest[:, 1] / 26.0)) == [1.0, 2.0]  # one above, one below


def test_one_cube_left_beyond_the_faces_reach_stays_one():
    from vision.counter import _unexplained
    # a single cube beside the two: the reach cuts it into a crescent, and cuts are no waist
    mask = np.zeros((80, 100), bool)
    mask[10:34, 28:52] = True
    mask[36:60, 28:52] = True
    mask[23:47, 48:72] = True
    rest = _unexplained(mask, np.array([[40.0, 22.0], [40.0, 48.0]]), 20.0, 1.5 * 400)
    assert len(rest) == 1


def test_a_chain_of_nearly_touching_cubes_counts_each_once():
    cubes = [(c, 4.0 + 1.15 * i, 5.0 + 0.25 * i, 8.0 * i) for i, c in
             enumerate(["white", "blue", "green", "white", "red", "yellow"])]
    reading, truth = _run(synth.Scene(cubes=cubes))
    assert reading.total == 6
    assert reading.counts == synth.counts(truth)


def test_a_faint_blob_needs_a_sharp_outline():
    from vision.counter import _outlined
    from vision.segment import Blob
    mask = np.zeros((120, 160), bool)
    mask[40:70, 50:80] = True
    blob = Blob(mask=mask, area=900.0, centroid=(65.0, 55.0), bbox=(50, 40, 30, 30))
    edges = np.zeros((120, 160), np.uint8)
    assert not _outlined(blob, edges)  # a soft change: no sharp edge along it
    edges[39:41, 49:81] = 1
    edges[69:71, 49:81] = 1
    edges[39:71, 49:51] = 1
    assert _outlined(blob, edges)  # sharp on three sides of four


def test_an_area_count_its_cores_do_not_confirm_is_doubted():
    from vision.counter import _cores_agree
    two = _squares([(2.0, 3.0), (3.3, 3.0)])
    assert _cores_agree(two, 2, 20.0)
    # two cubes and a thin tail of shadow: three cubes' area, two cores
    tailed = two.copy()
    tailed[55:65, 90:150] = True
    assert not _cores_agree(tailed, 3, 20.0)
    assert _cores_agree(tailed, 1, 20.0)  # one cube is never asked


def test_cube_against_a_wall_beyond_a_short_outline_is_counted_and_flagged():
    """The outline ends 0.8 cm short of the right crease (as on a wall's hard shadow edge); a
    cube against that wall lies mostly beyond it but runs onto the floor: counted, and the
    reading says it is at the tray's edge. A cube on the table beyond that wall stays out."""
    scene = synth.Scene(cubes=[("red", 6, 5, 0), ("blue", 15.5, 5, 0)],
                        on_table=[("green", 24.5, 12, 0)])
    frame, _ = synth.render(scene)
    ref, _ = synth.render(scene, with_cubes=False)
    short = synth.floor_corners_cm() - synth.TRAY_ORIGIN_CM
    short[1:3, 0] -= 0.8
    pts = ((short + synth.TRAY_ORIGIN_CM) * synth.S).reshape(-1, 1, 2).astype(np.float32)
    px = cv2.perspectiveTransform(pts, synth._camera(scene)).reshape(-1, 2)
    reading = count_cubes(frame, ref, calibration=Calibration(corners=[tuple(p) for p in px]))
    assert reading.counts == {**dict.fromkeys(ALL, 0), "red": 1, "blue": 1}
    blue = [c for c in reading.cubes if c.colour == "blue"]
    assert blue[0].uncertain and any("edge" in w for w in reading.warnings)


def test_a_white_cube_on_a_pale_print_lost_without_reference_leaves_the_reading_unsure():
    """A white cube on a pale print changes only its shaded sides and shadow, an L of sharp
    edges the floor estimate does not take for a cube: counted from that L when it passes as
    one (``counter._painted_like_floor``), else the reading must say a cube may be missing
    there (``counter._outlines_left_out``), not read an empty tray and be sure.
    A blue cube there is counted and nothing is said; bare floor says nothing either."""
    pale = synth.PRINTS_RGB["pale"]
    img, truth = synth.render(synth.Scene(cubes=[("white", 9.0, 5.5, 0)], print_rgb=pale))
    reading = count_cubes(img)
    if reading.total == 1:
        return  # found: better still
    notes = [w for w in reading.warnings if "outline near" in w]
    assert len(notes) == 1, reading.warnings
    x, y = (float(v) for v in notes[0].split("(")[1].split(")")[0].split(","))
    assert abs(x - truth[0]["x"]) < 30 and abs(y - truth[0]["y"]) < 30
    img, _ = synth.render(synth.Scene(cubes=[("blue", 9.0, 5.5, 0)], print_rgb=pale))
    reading = count_cubes(img)
    assert reading.total == 1 and not reading.uncertain, reading.warnings
    img, _ = synth.render(synth.Scene(cubes=[], print_rgb=pale))
    assert count_cubes(img).warnings == ()
