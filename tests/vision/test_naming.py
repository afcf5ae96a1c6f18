"""Colour naming on synthetic patches: clipped channels, prints, the calibration's session space."""

from __future__ import annotations

import numpy as np
import pytest

from vision.calibration import Calibration, rebased
from vision.colours import (
    CLIPPED,
    FLOOR_ALBEDO,
    ColourModel,
    _strong_paint,
    cube_colour,
    lab_from_linear,
    linear_from_lab,
)
from vision.reading import COLOURS

MODEL = ColourModel.default()
TRUE_RATIO = {c: linear_from_lab(np.array(MODEL.refs[c]))[0] for c in COLOURS}


def _patch(colour: str, floor_bgr, n: int = 200, seed: int = 0):
    """Camera readings (linear, clipped at 1) of a cube of ``colour`` and the floor beside it.

    ``floor_bgr`` is the floor's true linear light (may exceed 1: it then clips).
    """
    rng = np.random.default_rng(seed)
    floor = np.asarray(floor_bgr, np.float32)
    cube = TRUE_RATIO[colour] / FLOOR_ALBEDO * floor
    shade = rng.uniform(0.85, 1.0, (n, 1)).astype(np.float32)
    px = np.clip(cube * shade, 0, 1)
    fl = np.clip(np.tile(floor, (n, 1)) * rng.uniform(0.98, 1.02, (n, 1)), 0, 1)
    return px, fl


def _names(cubes):
    MODEL.name_cubes(cubes)
    return [COLOURS[int(np.argmax(c["p"]))] for c in cubes]


def test_inverse_lab_round_trip():
    labs = MODEL.matrix()
    assert lab_from_linear(linear_from_lab(labs)) == pytest.approx(labs, abs=0.01)


def test_clipping_is_reported_per_channel():
    px, fl = _patch("white", (0.5, 0.7, 0.9))  # white is brighter than the floor: clips
    m = cube_colour(px, fl)
    assert m["low"].tolist() == [True, True, True]
    assert not m["high"].any()
    px, fl = _patch("black", (0.5, 0.7, 1.4))  # the floor's red clips
    m = cube_colour(px, fl)
    assert m["high"].tolist() == [False, False, True] and not m["low"].any()


@pytest.mark.parametrize(("colour", "spot"), [
    ("white", (0.45, 0.6, 0.8)), ("white", (0.5, 0.7, 1.2)), ("yellow", (0.4, 0.6, 0.9)),
])
def test_a_clipped_cube_in_a_bright_spot_is_named_with_confidence(colour, spot):
    """Seven cubes on a dim floor and one in a bright spot, where it reads at full scale in two
    or three channels: that reading is only a lower bound. Compared as if exact, the white
    cube lies 4 spreads from white (and would be flagged as unlike every colour)."""
    base = (0.2, 0.3, 0.4)
    cubes = [dict(cube_colour(*_patch(c, base, seed=i))) for i, c in enumerate(COLOURS)]
    cubes.append(dict(cube_colour(*_patch(colour, spot, seed=9))))
    assert cubes[-1]["low"].sum() >= 2
    assert _names(cubes) == [*COLOURS, colour]
    assert cubes[-1]["d"][COLOURS.index(colour)] < 1.0


def test_a_clipped_floor_does_not_turn_brown_red():
    """On a bright print the floor's red clips (it reads lower than it is), so every cube reads
    too red against it. Black, brown and red keep their names."""
    floor = (0.55, 0.75, 1.3)
    cubes = [dict(cube_colour(*_patch(c, floor, seed=i)))
             for i, c in enumerate(("black", "brown", "red", "blue"))]
    assert all(c["high"][2] for c in cubes)
    assert _names(cubes) == ["black", "brown", "red", "blue"]


@pytest.mark.parametrize("light", [(0.35, 0.6, 1.0), (1.0, 0.8, 0.6), (0.2, 0.2, 0.2)])
def test_any_light_cancels_against_the_floor(light):
    """A warm lamp, a cold daylight, a dim room: the light falls on cube and floor alike."""
    floor = np.array([0.7, 0.75, 0.8]) * np.array(light)
    cubes = [dict(cube_colour(*_patch(c, floor, seed=i))) for i, c in enumerate(COLOURS)]
    assert _names(cubes) == list(COLOURS)


def test_an_uninformative_cube_is_unsure_not_confident():
    """Clipped everywhere, cube and floor: nothing tells the colours apart."""
    c = {"ratio": np.array([0.6, 0.6, 0.6], np.float32), "low": np.ones(3, bool),
         "high": np.ones(3, bool), "xy": (10.0, 20.0)}
    warnings = MODEL.name_cubes([c])
    d = np.sort(c["d"])
    assert d[1] - d[0] < 1.0  # the counter flags a cube whose two nearest are within 1 spread
    assert warnings and "clipped" in warnings[0]


def test_a_clipped_cube_its_other_channel_names_is_not_said_to_be_hard_to_tell():
    """A yellow in a bright spot, clipped in green and red on cube and floor alike: its blue,
    a small share of the floor's, and the floor's colour elsewhere still name it (s003/drop06).
    The words "its colour is hard to tell" would be false there: no warning, while the fully
    clipped cube above keeps it."""
    base = (0.5, 0.6, 0.65)  # the frame's floor: its green and red bound the clipped ones
    cubes = [dict(cube_colour(*_patch(c, base, seed=i))) for i, c in enumerate(COLOURS)]
    cubes.append(dict(cube_colour(*_patch("yellow", (0.9, 1.3, 1.4), seed=9)), xy=(5.0, 6.0)))
    assert (cubes[-1]["low"] & cubes[-1]["high"]).tolist() == [False, True, True]
    warnings = MODEL.name_cubes(cubes)
    assert COLOURS[int(np.argmax(cubes[-1]["p"]))] == "yellow"
    d = np.sort(cubes[-1]["d"])
    assert d[0] < 4.0 and d[1] - d[0] > 1.0
    assert not warnings


def test_rebased_model_reads_a_session_without_refitting():
    """A calibration moves the references into this session's reading (a dark wood print:
    every ratio 2.5x, redder): the session's cubes then need no per-frame factors."""
    gains = np.array([2.2, 2.5, 2.9], np.float32)
    session = rebased(MODEL, gains)
    ratios = np.array([TRUE_RATIO[c] * gains for c in COLOURS])
    fitted = session.fit_print(ratios)
    assert fitted == pytest.approx(np.ones(3), rel=0.1)
    labs = lab_from_linear(ratios / fitted)
    assert [COLOURS[i] for i in session.probabilities(labs).argmax(axis=1)] == list(COLOURS)


def test_calibration_keeps_its_prior_widths(tmp_path):
    model = ColourModel.default()
    model.light_sigma, model.tint_sigma = 0.3, 0.1
    Calibration(colours=model).save(tmp_path / "c.json")
    back = Calibration.load(tmp_path / "c.json").colours
    assert (back.light_sigma, back.tint_sigma) == (0.3, 0.1)
    assert CLIPPED < 1.0


def test_a_white_cube_on_a_glare_is_still_white():
    """Where the print mirrors the lamp, the floor reads brighter and whiter (the light's own
    colour added, clipped in red) but the cube does not: against that floor a white cube reads
    grey, nearer green or yellow than white. The floor there is brighter than the frame's usual
    floor and clipped: room for a glare, which the naming allows for. Readings as in a
    render's glare spot (linear B, G, R)."""
    base = np.array([0.19, 0.36, 0.68], np.float32)
    cubes = [dict(cube_colour(*_patch(c, base, seed=i))) for i, c in enumerate(COLOURS)]
    rng = np.random.default_rng(5)
    px = np.clip(np.array([0.69, 0.8, 1.0]) * rng.uniform(0.9, 1.05, (200, 1)), 0, 1)
    floor = np.tile(np.array([0.42, 0.61, 1.0], np.float32), (200, 1))
    cubes.append(dict(cube_colour(px, floor)))
    assert cubes[-1]["high"][2] and cubes[-1]["low"][2]
    assert _names(cubes) == [*COLOURS, "white"]
    # near enough to white to be sure (without the glare it lies 4 spreads away: "unlike
    # every colour", flagged by the counter)
    assert cubes[-1]["d"][COLOURS.index("white")] < 3.0


@pytest.mark.parametrize("colour", ["green", "black", "yellow"])
def test_a_cube_standing_in_a_glare_keeps_its_colour(colour):
    """A glare lies on a cube's top as much as on the floor (both face up and mirror the
    lamp): it adds the same light to both, so against that floor the cube reads nearly as the
    floor does (a green, a black or a yellow like a pale grey). On a dark print the floor there
    is far brighter than the frame's usual floor without clipping anywhere; taken off cube and
    floor alike, the glare gives the cube its colour back."""
    base = np.array([0.03, 0.04, 0.06], np.float32)  # a dark print
    cubes = [dict(cube_colour(*_patch(c, base, seed=i))) for i, c in enumerate(COLOURS)]
    px, fl = _patch(colour, base, seed=9)
    glare = np.float32(0.25)  # white light added to both, well below full scale
    cubes.append(dict(cube_colour(px + glare, fl + glare)))
    assert not cubes[-1]["high"].any() and not cubes[-1]["low"].any()
    assert _names(cubes) == [*COLOURS, colour]


def test_a_grey_glare_on_a_warm_print_is_taken_off_per_channel():
    """The camera's white balance makes the lamp's light grey, so its mirror image is grey;
    the floor is the print's colour. On a cream print under a warm lamp the same glare is a
    far larger share of the floor's blue than of its red, and a blue standing in it reads
    grey, named black. Taken off per channel as the floor's colour says, it is a blue again."""
    base = np.array([0.12, 0.3, 0.5], np.float32)  # cream print, warm light: little blue
    cubes = [dict(cube_colour(*_patch(c, base, seed=i))) for i, c in enumerate(COLOURS)]
    px, fl = _patch("blue", base, seed=9)
    glare = np.float32(0.3)
    cubes.append(dict(cube_colour(px + glare, fl + glare)))
    assert not cubes[-1]["high"].any()
    assert _names(cubes) == [*COLOURS, "blue"]


def test_known_names_fit_the_light_alone():
    """With the colours confirmed (a calibration drop), the print factors come from them: a
    brown read on a print that makes it look like black's lightness is still fitted as brown."""
    gains = np.array([1.8, 2.0, 2.4], np.float32)
    names = ["brown", "black", "white"]
    ratios = np.array([TRUE_RATIO[c] * gains for c in names])
    fitted, veil = MODEL.fit_frame(ratios, names=[COLOURS.index(c) for c in names])
    assert fitted == pytest.approx(gains, rel=0.12)
    assert veil == pytest.approx(0.0, abs=0.021)


def test_a_drop_of_too_few_colours_is_refused():
    import synth

    from vision.calibration import calibrate_from_drop
    from vision.errors import VisionError

    scene = synth.Scene(cubes=synth.scatter(["red", "red"], seed=3))
    frame, truth = synth.render(scene)
    ref, _ = synth.render(scene, with_cubes=False)
    with pytest.raises(VisionError, match="at least 3 colours"):
        calibrate_from_drop(frame, synth.counts(truth), ref)


def test_two_blue_cubes_on_a_pink_print_stay_blue():
    """A pink print takes blue from every cube (and adds green): two blue cubes alone read
    darker and greyer. Fitted one factor at a time, the print's lightness first, the fit got
    stuck calling them black on a print three times darker; searched jointly it finds the tint."""
    cream = np.array([172, 208, 228.0]) / 255
    pink = np.array([200, 190, 235.0]) / 255
    fac = (cream / pink) ** 2.2
    floor = np.array([0.13, 0.2, 0.25])
    cubes = []
    for seed in (1, 2):
        rng = np.random.default_rng(seed)
        px = np.clip(TRUE_RATIO["blue"] * fac / FLOOR_ALBEDO * floor
                     * rng.uniform(0.85, 1.0, (100, 1)), 0, 1)
        cubes.append(dict(cube_colour(px, np.tile(floor, (100, 1)))))
    assert _names(cubes) == ["blue", "blue"]


# Cube readings (ratio B, G, R; floor B, G, R; cube clipped; floor clipped) of two drawn trays
# (tests/vision/bench_drawn.py, seed 0, with the reference) whose last cube stands in a glare
# that clips the pale print in every channel: a brown (#142, cool light, one cube in a wall's
# shadow) and a yellow (#100).
_CLIPPED_GLARE_FRAMES = {
    "brown": [
        ((0.014, 0.039, 0.119), (0.307, 0.293, 0.276), "000", "000"),
        ((0.013, 0.012, 0.361), (0.673, 0.646, 0.612), "000", "000"),
        ((0.023, 0.023, 0.365), (0.715, 0.687, 0.652), "000", "000"),
        ((0.012, 0.376, 0.549), (0.673, 0.646, 0.612), "000", "000"),
        ((0.311, 0.050, 0.019), (0.701, 0.673, 0.639), "000", "000"),
        ((0.313, 0.328, 0.366), (0.991, 0.991, 0.991), "000", "111"),
    ],
    "yellow": [
        ((0.012, 0.011, 0.363), (0.530, 0.625, 0.687), "000", "000"),
        ((0.015, 0.014, 0.361), (0.554, 0.652, 0.715), "000", "000"),
        ((0.039, 0.172, 0.018), (0.567, 0.666, 0.730), "000", "000"),
        ((0.012, 0.378, 0.540), (0.530, 0.625, 0.680), "000", "000"),
        ((0.014, 0.010, 0.010), (0.505, 0.599, 0.659), "000", "000"),
        ((0.025, 0.049, 0.118), (0.567, 0.673, 0.737), "000", "000"),
        ((0.040, 0.387, 0.547), (0.567, 0.673, 0.723), "000", "000"),
        ((0.015, 0.040, 0.114), (0.523, 0.619, 0.680), "000", "000"),
        ((0.013, 0.012, 0.364), (0.511, 0.605, 0.666), "000", "000"),
        ((0.312, 0.062, 0.027), (0.573, 0.673, 0.737), "000", "000"),
        ((0.310, 0.564, 0.600), (0.991, 0.991, 0.991), "001", "111"),
    ],
}


def _readings(rows):
    bits = lambda s: tuple(ch == "1" for ch in s)  # noqa: E731
    return [{"ratio": np.array(r, np.float32), "floor": np.array(f, np.float32),
             "low": bits(lo), "high": bits(hi)} for r, f, lo, hi in rows]


@pytest.mark.parametrize("colour", ["brown", "yellow"])
def test_a_cube_in_a_glare_that_clips_the_floor_is_not_named_white_for_sure(colour):
    """A glare that clips the floor in every channel leaves the floor reading full scale however
    big the glare is: neither the ratio to it nor its excess over the usual floor measures the
    glare, and a brown or a yellow standing in it read white, sure. Bounded by physics (the
    floor clipped: at least full scale less the usual floor; at most the cube's darkest
    channel), the glare taken off brings the cube's own colour within the counter's one spread
    of its best: the reading is flagged (or named right)."""
    cubes = _readings(_CLIPPED_GLARE_FRAMES[colour])
    MODEL.name_cubes(cubes)
    d = cubes[-1]["d"]
    assert d[COLOURS.index(colour)] - d.min() < 1.0


def test_a_white_cube_in_a_glare_that_clips_the_floor_stays_white():
    """The bounded glare must not talk a pale cube in the same spot out of being white (its
    darkest channel bounds the glare well short of leaving a dark paint)."""
    rows = [*_CLIPPED_GLARE_FRAMES["brown"][:-1],
            ((0.55, 0.56, 0.57), (0.991, 0.991, 0.991), "000", "111")]
    cubes = _readings(rows)
    assert _names(cubes)[-1] == "white"


def _mixed(parts, floor_bgr, seed: int = 0):
    """A piece whose pixels are ``parts`` ((colour or "shade", count) pairs): cubes' paints
    and shaded floor (the floor at a third of its light: neutral, darker)."""
    pxs, fls = [], []
    for k, (what, n) in enumerate(parts):
        if what == "shade":
            px, fl = _patch("white", floor_bgr, n=n, seed=seed + k)
            px = fl * np.float32(1 / 3)
        else:
            px, fl = _patch(what, floor_bgr, n=n, seed=seed + k)
        pxs.append(px)
        fls.append(fl)
    return np.concatenate(pxs), np.concatenate(fls)


@pytest.mark.parametrize(("parts", "colour"), [
    ((("blue", 90), ("white", 90), ("shade", 60)), "blue"),
    ((("green", 110), ("blue", 90), ("white", 100)), "green"),
    ((("red", 70), ("shade", 130)), "red"),
])
def test_a_piece_mixing_a_strong_paint_with_shaded_floor_is_named_by_that_paint(parts, colour):
    """A piece at the tower's mouth holds its cube's paint, shaded floor between the cubes and
    a neighbour's fringe: the channel-wise median lies between them and reads dull (a blue as
    white, a green as brown). A third of the piece strongly coloured, mostly in one hue, is that
    paint's cube."""
    base = (0.2, 0.3, 0.4)
    cubes = [dict(cube_colour(*_patch(c, base, seed=i))) for i, c in enumerate(COLOURS)]
    cubes.append(dict(cube_colour(*_mixed(parts, base))))
    assert _names(cubes) == [*COLOURS, colour]


@pytest.mark.parametrize(("parts", "colour"), [
    ((("white", 150), ("blue", 40), ("shade", 50)), "white"),
    ((("brown", 150), ("red", 30), ("green", 30)), "brown"),
    ((("black", 120), ("shade", 100)), "black"),
])
def test_a_dull_piece_with_a_fringe_of_paint_keeps_its_name(parts, colour):
    """Under a third of the piece strongly coloured (a neighbour's fringe), or strong pixels
    of no one hue: the dull cube's own pixels decide."""
    base = (0.2, 0.3, 0.4)
    cubes = [dict(cube_colour(*_patch(c, base, seed=i))) for i, c in enumerate(COLOURS)]
    cubes.append(dict(cube_colour(*_mixed(parts, base))))
    assert _names(cubes) == [*COLOURS, colour]


def test_a_strong_part_of_no_strong_paints_hue_is_no_paint():
    """A white cube in a light of another colour than the floor's (s002/drop02: a glare)
    reads strongly cyan against the floor over most of it: no strong paint has that hue, so
    it is not measured as one (it read white all the same, but at 0.6 instead of 1.0). The
    same share of blue pixels is."""
    rng = np.random.default_rng(0)

    def rows(lab, n):
        return linear_from_lab(np.array(lab) + rng.normal(0, 1.0, (n, 3))).astype(np.float32)

    white = rows((123.1, -2.5, -26.1), 100)
    median = linear_from_lab(np.array((120.0, -15.0, -28.0)))[0]  # dull: chroma 32
    cyan = np.concatenate([white, rows((150.0, -35.0, -35.0), 150)])
    assert _strong_paint(cyan, median) is None
    blue = np.concatenate([white, rows((65.0, 28.3, -75.7), 150)])
    assert _strong_paint(blue, median).sum() == 150
