"""A floor clipped in some channels is bounded by its colour in the others."""

from __future__ import annotations

import numpy as np

from vision import colours
from vision.colours import FLOOR_ALBEDO, FLOOR_OVER, ColourModel, cube_colour, floor_over
from vision.reading import COLOURS

MODEL = ColourModel.default()
# A pale sage green as a render's magenta-tinted light shows it against a cream print (cube /
# floor, B, G, R): lighter and greyer than the reference green.
SAGE = np.array([0.25, 0.37, 0.33], np.float32) / FLOOR_ALBEDO
OTHERS = ("black", "black", "yellow", "red", "blue", "green", "black")
# The frame's light (and print) as the other cubes show it: magenta-tinted.
TINT = np.array([0.59, 0.59, 0.75], np.float32)


def _reading(ratio, floor, n=200, seed=0):
    rng = np.random.default_rng(seed)
    floor = np.asarray(floor, np.float32)
    px = np.clip(ratio * floor * rng.uniform(0.9, 1.0, (n, 1)), 0, 1).astype(np.float32)
    fl = np.clip(np.tile(floor, (n, 1)) * rng.uniform(0.99, 1.01, (n, 1)), 0, 1)
    return dict(cube_colour(px, fl.astype(np.float32)))


def _frame():
    """Cubes on a floor whose red clips everywhere and green clips in the brightest spot only,
    where the pale green cube lies; elsewhere the floor's green is 1.15 x its blue."""
    model_ratio = {c: np.maximum(colours.linear_from_lab(np.array(MODEL.refs[c]))[0], 0)
                   for c in COLOURS}
    cubes = []
    for i, c in enumerate(OTHERS):
        b = 0.55 + 0.03 * i
        cubes.append(_reading(model_ratio[c] / FLOOR_ALBEDO * TINT, (b, 1.15 * b, 1.0), seed=i))
    cubes.append(_reading(SAGE, (0.93, 1.07, 1.0), seed=9))
    return cubes


def test_the_floor_hue_bounds_a_clipped_channel():
    cubes = _frame()
    high = np.array([c["high"] for c in cubes])
    assert high[-1].tolist() == [False, True, True] and not high[:-1, 1].any()
    over = floor_over(cubes, high)
    # green: at most 1.15 x 1.25 times the blue it reads, i.e. about 1.4 x what it reads
    assert 1.2 < over[-1, 1] < 1.6
    # red is clipped on every floor: nothing to bound it by
    assert over[-1, 2] == FLOOR_OVER
    assert (over[~high] == 1.0).all()


def test_a_pale_green_on_a_clipped_floor_is_not_black():
    """Read as if the floor's green could be twice what it reads, the pale green came within
    reach of black (whose ratio is low in every channel, though this cube's blue is not)."""
    cubes = _frame()
    MODEL.name_cubes(cubes)
    assert COLOURS[int(np.argmax(cubes[-1]["p"]))] == "green"
    assert cubes[-1]["p"][COLOURS.index("black")] < 0.2


def test_without_unclipped_floors_the_bound_stays_one_stop():
    cubes = _frame()[-1:]
    over = floor_over(cubes, np.array([c["high"] for c in cubes]))
    assert over[0].tolist() == [1.0, FLOOR_OVER, FLOOR_OVER]


def test_a_calibration_drop_bounds_its_clipped_floors_the_same_way(monkeypatch):
    """The confirmed drop's light is fitted with the same bounds as any frame's."""
    import vision.counter
    from vision.calibration import calibrate_from_drop

    cubes = _frame()
    monkeypatch.setattr(vision.counter, "measure_cubes", lambda *a, **k: (None, cubes, None))
    seen = []
    fit = ColourModel.fit_frame

    def spy(self, ratios, *args, **kwargs):
        seen.append(kwargs.get("high"))
        return fit(self, ratios, *args, **kwargs)

    monkeypatch.setattr(ColourModel, "fit_frame", spy)
    contents = {c: 0 for c in COLOURS}
    for c in (*OTHERS, "green"):
        contents[c] += 1
    calibrate_from_drop(np.zeros((4, 4, 3), np.uint8), contents)
    high = np.asarray(seen[-1], np.float32)
    assert high.shape == (len(cubes), 3)
    assert 1.2 < high[-1, 1] < 1.6 and high[-1, 2] == FLOOR_OVER


def test_a_floor_unlike_the_frames_keeps_the_one_stop_bound():
    """A clipped green over a blue so dark that the frame's floor colours would put the green
    far below full scale: that floor is not like the others (another print or light there), so
    its colour bounds nothing; it is not taken as exact either."""
    cubes = _frame()
    cubes[-1] = dict(cubes[-1], floor=np.array([0.1, 1.0, 1.0], np.float32))
    over = floor_over(cubes, np.array([c["high"] for c in cubes]))
    assert over[-1].tolist() == [1.0, FLOOR_OVER, FLOOR_OVER]


def test_a_partly_clipped_floor_is_not_bounded_by_its_own_reading():
    """Under the cube's brighter half 45 % of the floor's red is clipped: red is censored
    there, though its median (0.93) lies just under full scale. Only the floor's other
    channels can bound it (the frame's floors run up to twice as red as green, so a red up to
    2.5 x the green is possible); its own clipped reading bounds nothing (it once did, at the
    margin 1.25 over itself)."""
    floors = [(0.3, 0.45, 0.9), (0.3, 0.4, 0.8), (0.25, 0.4, 0.6), (0.2, 0.5, 0.55)]
    cubes = [{"floor": np.array(f, np.float32)} for f in floors]
    cubes[0]["floor"] = np.array((0.45, 0.5, 0.93), np.float32)
    high = np.zeros((len(cubes), 3), bool)
    high[0, 2] = True
    over = floor_over(cubes, high)
    assert over[0, 2] > 1.3
    assert over[0, 2] <= 0.5 * 2.0 * colours.FLOOR_HUE_MARGIN / 0.93 + 1e-6
    assert np.all(over[1:] == 1.0)
