"""The settle detector on synthetic streams (and on rendered trays when the data set is around).

Streams are drawn here with numpy/cv2: a textured tray on a table, coloured squares that roll and
stop, a dark hand that comes and goes, then sensor noise, exposure drift and mains flicker on top.
Time is a fake clock handed to ``update``; nothing sleeps.
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vision.errors import VisionError
from vision.settle import SettleConfig, SettleDetector, SettleEvent, SettleState

W, H = 480, 270
TRAY = (100, 40, 380, 230)  # x0, y0, x1, y1: 280 px for 16 cm
CUBE = 17  # px, 1 cm
FPS = 15.0
RENDERED = Path("/work/shared/data/trays-rendered")

BGR = {
    "blue": (160, 60, 30),
    "black": (30, 30, 30),
    "red": (40, 40, 190),
    "brown": (40, 70, 110),
    "green": (50, 140, 50),
    "yellow": (40, 200, 230),
    "white": (235, 235, 235),
}


def _background(seed: int = 1) -> np.ndarray:
    """A table with grain and a cream tray with printed art, so texture is not a flat colour."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:H, 0:W].astype(np.float32)
    img = np.empty((H, W, 3), np.float32)
    grain = cv2.GaussianBlur(rng.normal(0, 12, (H, W)).astype(np.float32), (0, 0), 3)
    img[:] = (50, 80, 120)
    img += grain[:, :, None]
    x0, y0, x1, y1 = TRAY
    art = 18 * np.sin(xx / 9.0) * np.cos(yy / 13.0) + cv2.GaussianBlur(
        rng.normal(0, 30, (H, W)).astype(np.float32), (0, 0), 1.5
    )
    tray = np.array((170, 205, 225), np.float32) + art[:, :, None] * (0.8, 1.0, 1.0)
    img[y0:y1, x0:x1] = tray[y0:y1, x0:x1]
    cv2.rectangle(img, (x0, y0), (x1, y1), (90, 120, 150), 3)
    return np.clip(img, 0, 255).astype(np.uint8)


BASE = _background()
NOISE = [
    np.random.default_rng(10 + i).normal(0, 3.0, (H, W, 3)).astype(np.float32) for i in range(6)
]


@dataclass
class Roll:
    """Cubes rolling from the ramp (top left) and stopping dead at ``end`` positions."""

    start: float
    duration: float
    cubes: list[tuple[str, tuple[float, float]]]

    def positions(self, t: float) -> list[tuple[str, tuple[float, float]]] | None:
        if t < self.start:
            return None
        s = (t - self.start) / self.duration
        if s >= 1:
            return self.cubes
        out = []
        for i, (colour, (ex, ey)) in enumerate(self.cubes):
            amp = 40 * (0.3 + 0.7 * (1 - s))
            ang = 9 * (t - self.start) + i
            out.append((colour, (ex + amp * math.sin(ang), ey + amp * math.cos(1.3 * ang))))
        return out


@dataclass
class Hand:
    """A dark blob on an arm that reaches in from the bottom edge, optionally taking cubes."""

    start: float
    duration: float = 1.2
    target: tuple[float, float] = (240, 140)
    takes: set[int] = field(default_factory=set)  # indices into the scene's resting cubes
    size: float = 1.0  # 3: a hand close to a tower-mounted camera, most of the picture

    def where(self, t: float) -> tuple[float, float] | None:
        s = (t - self.start) / self.duration
        if not 0 <= s <= 1:
            return None
        reach = math.sin(math.pi * s)  # in and back out
        tx, ty = self.target
        return (tx + 15 * math.sin(7 * t), H + 60 - reach * (H + 60 - ty))


@dataclass
class Scene:
    """A timeline of rolls and hands; ``frame(t)`` draws it with the camera's faults."""

    rolls: list[Roll] = field(default_factory=list)
    hands: list[Hand] = field(default_factory=list)
    initial: list[tuple[str, tuple[float, float]]] = field(default_factory=list)
    noise: bool = True
    drift: float = 0.0  # relative gain change per second
    flicker: float = 0.0  # +- fraction, global
    banding: float = 0.0  # +- fraction, rolling-shutter bands
    lamp: float = 0.0  # per second, a light slowly brightening the right side of the picture
    # From time t on, auto exposure settled elsewhere: (t, gain, gamma of the tone curve change)
    tone: tuple[float, float, float] | None = None
    knock: tuple[float, float, float] | None = None  # from time t the camera sits (dx, dy) px off
    i: int = 0

    def cubes(self, t: float) -> list[tuple[str, tuple[float, float]]]:
        resting = list(self.initial)
        moving: list[tuple[str, tuple[float, float]]] = []
        events = sorted(
            [(r.start + r.duration, r) for r in self.rolls]
            + [(h.start + h.duration / 2, h) for h in self.hands],
            key=lambda e: e[0],
        )
        for when, ev in events:
            if isinstance(ev, Roll):
                pos = ev.positions(t)
                if pos is None:
                    continue
                if t >= when:
                    resting += pos
                else:
                    moving += pos
            elif t >= when:
                resting = [c for k, c in enumerate(resting) if k not in ev.takes]
        return resting + moving

    def frame(self, t: float) -> np.ndarray:
        img = BASE.copy()
        half = CUBE // 2
        for colour, (x, y) in self.cubes(t):
            x, y = round(x), round(y)
            cv2.rectangle(img, (x - half + 2, y - half + 2), (x + half + 2, y + half + 2),
                          (40, 50, 60), -1)  # shadow
            cv2.rectangle(img, (x - half, y - half), (x + half, y + half), BGR[colour], -1)
            cv2.rectangle(img, (x - half, y - half), (x + half, y + half),
                          tuple(int(c * 0.7) for c in BGR[colour]), 1)
        for hand in self.hands:
            p = hand.where(t)
            if p is not None:
                x, y, z = round(p[0]), round(p[1]), hand.size
                cv2.rectangle(img, (x - round(22 * z), y), (x + round(22 * z), H + 5),
                              (45, 60, 95), -1)
                cv2.ellipse(img, (x, y), (round(34 * z), round(42 * z)), 0, 0, 360,
                            (50, 70, 110), -1)
        if self.knock and t >= self.knock[0]:
            m = np.float32([[1, 0, self.knock[1]], [0, 1, self.knock[2]]])
            img = cv2.warpAffine(img, m, (W, H), borderMode=cv2.BORDER_REPLICATE)
        f = img.astype(np.float32)
        gain = 1.0 + self.drift * t + self.flicker * math.sin(2 * math.pi * 100 * t + 0.3)
        if self.banding:
            rows = np.arange(H, dtype=np.float32)
            band = 1.0 + self.banding * np.sin(2 * math.pi * (100 * t + rows / (H / 3.3)))
            f *= (gain * band)[:, None, None]
        else:
            f *= gain
        if self.lamp:
            f *= (1.0 + self.lamp * t * np.linspace(0, 1, W, dtype=np.float32))[None, :, None]
        if self.tone and t >= self.tone[0]:
            f = 255.0 * (np.clip(f * self.tone[1], 0, 255) / 255.0) ** self.tone[2]
        if self.noise:
            f += NOISE[self.i % len(NOISE)]
            self.i += 1
        return np.clip(f, 0, 255).astype(np.uint8)


def run(det: SettleDetector, scene: Scene, seconds: float, *, t0: float = 0.0, fps: float = FPS):
    """Feed the scene; return [(t, event)] and [(t, state)]."""
    events: list[tuple[float, SettleEvent]] = []
    states: list[tuple[float, SettleState]] = []
    n = round(seconds * fps)
    for k in range(n):
        t = t0 + k / fps
        ev = det.update(scene.frame(t), now=t)
        if ev is not None:
            events.append((t, ev))
        states.append((t, det.state))
    return events, states


A = [("red", (200, 120)), ("green", (260, 160)), ("yellow", (320, 100))]
B = [("blue", (150, 200)), ("white", (300, 200))]
C = [("black", (230, 80))]


def test_one_settled_event_per_drop_and_none_while_moving():
    scene = Scene(rolls=[Roll(1.0, 1.5, A), Roll(5.0, 1.2, B), Roll(9.0, 2.0, C)])
    det = SettleDetector()
    events, states = run(det, scene, 13.0)
    kinds = [ev.kind for _, ev in events]
    assert kinds == ["settled"] * 4  # the empty tray at start (nothing read yet), then 3 drops
    stops = [2.5, 6.2, 11.0]
    for (t, ev), stop in zip(events[1:], stops, strict=True):
        assert stop + 0.6 - 1e-9 <= t <= stop + 0.6 + 2 / FPS, (t, stop)
        assert ev.still_for == pytest.approx(0.6, abs=1.01 / FPS)
        assert ev.change_cubes is not None and ev.change_cubes >= 1.0
    for t, state in states:
        for roll in scene.rolls:
            if roll.start + 2 / FPS < t < roll.start + roll.duration:
                assert state is SettleState.MOVING, t


def test_event_frame_is_a_copy_of_the_settled_frame():
    scene = Scene(rolls=[Roll(0.5, 1.0, A)], noise=False)
    det = SettleDetector()
    events, _ = run(det, scene, 3.0)
    t, ev = events[-1]
    assert ev.frame.shape == (H, W, 3)
    assert np.array_equal(ev.frame, scene.frame(t))
    assert ev.time == t


@pytest.mark.parametrize(
    "faults",
    [
        {"noise": True},
        {"drift": -0.05},  # auto exposure sliding 30 % darker over six seconds
        {"drift": +0.04},
        {"flicker": 0.03},
        {"banding": 0.03},
        {"drift": -0.02, "flicker": 0.03, "banding": 0.03},
    ],
    ids=["noise", "drift-down", "drift-up", "flicker", "banding", "all"],
)
def test_quiet_tray_is_read_once_despite_noise_drift_and_flicker(faults):
    scene = Scene(initial=A + B, **faults)
    det = SettleDetector()
    events, states = run(det, scene, 6.0, fps=10.0)
    assert len(events) == 1
    assert events[0][0] == pytest.approx(0.6, abs=0.11)
    assert all(s is SettleState.SETTLED for t, s in states if t > 0.7)


def test_light_changing_over_minutes_does_not_pass_for_new_content():
    # After 45 s the right edge is 45 % brighter than at the start relative to the left edge:
    # no tone fit can undo that, only following the light while the tray is quiet can.
    scene = Scene(initial=A + B, lamp=0.01, hands=[Hand(45.0)])
    det = SettleDetector()
    events, states = run(det, scene, 48.0, fps=2.5)
    assert len(events) == 1
    assert any(s is SettleState.MOVING for t, s in states if 45 < t < 46.2)
    assert states[-1][1] is SettleState.SETTLED
    stale = SettleDetector()
    stale.update(scene.frame(0.0), now=0.0)
    assert stale._differs(stale._picture(scene.frame(45.0)), stale._picture(scene.frame(0.0))) > (
        stale.config.cube_fraction * stale.cube_area
    ), "the lamp is too weak to test anything"


def test_noise_estimate_raises_the_bar_for_a_grainy_camera():
    det = SettleDetector()
    base = BASE.astype(np.float32)
    grainy = [np.clip(base + n * 13.0, 0, 255).astype(np.uint8) for n in NOISE]  # sigma 40
    events = []
    for k in range(150):
        ev = det.update(grainy[k % len(grainy)], now=k / 10)
        events += [ev] if ev else []
    assert len(events) == 1
    assert det.threshold > SettleConfig().min_threshold


def test_slowly_creeping_cube_is_still_moving():
    det = SettleDetector()
    scene = Scene(initial=A)
    run(det, scene, 2.0)
    states = []
    for k in range(60):  # 0.6 px per frame: too little frame to frame, plenty against the anchor
        t = 2.0 + k / FPS
        scene.initial = [*A[:2], ("yellow", (320 - 0.6 * k, 100))]
        assert det.update(scene.frame(t), now=t) is None
        states.append(det.state)
    assert states.count(SettleState.MOVING) >= 50


def test_hand_that_takes_nothing_causes_no_reread():
    scene = Scene(initial=A + B, hands=[Hand(3.0), Hand(6.0, target=(150, 100))])
    det = SettleDetector()
    events, states = run(det, scene, 9.0)
    assert len(events) == 1  # the first read only
    assert any(s is SettleState.MOVING for t, s in states if 3.2 < t < 4.0)
    assert states[-1][1] is SettleState.SETTLED


@pytest.mark.parametrize("gain,gamma", [(0.85, 1.1), (1.15, 0.8)])
def test_exposure_settling_elsewhere_after_a_hand_is_not_new_content(gain, gamma):
    # Auto exposure reacts to the dark hand and comes back to a slightly different point, through
    # the camera's tone curve: shadows and highlights move by different factors.
    scene = Scene(initial=A + B, hands=[Hand(2.0)], tone=(2.6, gain, gamma))
    det = SettleDetector()
    events, _ = run(det, scene, 5.0)
    assert len(events) == 1
    scene = Scene(initial=A + B, hands=[Hand(2.0, takes={3})], tone=(2.6, gain, gamma))
    det = SettleDetector()
    events, _ = run(det, scene, 5.0)
    assert len(events) == 2, "a cube taken must still count as new content"


_FULL = Scene(initial=A + B, noise=False).frame(0.0)
_ONE_GONE = Scene(initial=A + B[:1], noise=False).frame(0.0)


def _exposed(img: np.ndarray, gain: float, gamma: float, k: int) -> np.ndarray:
    f = 255.0 * (np.clip(img.astype(np.float32) * gain, 0, 255) / 255.0) ** gamma
    return np.clip(f + NOISE[k % len(NOISE)], 0, 255).astype(np.uint8)


@settings(max_examples=15, deadline=None)
@given(
    gain=st.floats(0.8, 1.25),
    gamma=st.floats(0.88, 1.12),
    k=st.integers(0, 5),
)
def test_comparison_ignores_exposure_and_tone_but_not_one_cube(gain, gamma, k):
    det = SettleDetector()
    det.update(_FULL, now=0.0)
    stored = det._picture(_exposed(_FULL, 1.0, 1.0, k + 1))
    bar = det.config.cube_fraction * det.cube_area
    assert det._differs(det._picture(_exposed(_FULL, gain, gamma, k)), stored) < bar
    # the cube taken is the white one, off a cream tray: the faintest change there is
    assert det._differs(det._picture(_exposed(_ONE_GONE, gain, gamma, k)), stored) > 1.4 * bar


@pytest.mark.parametrize("dx,dy", [(3, 1), (-7, 5)])
def test_camera_knocked_a_few_pixels_is_not_new_content(dx, dy):
    # The hand bumps the tower: afterwards the whole picture sits a few pixels off.
    scene = Scene(initial=A + B, hands=[Hand(2.0)], knock=(2.6, dx, dy))
    det = SettleDetector()
    det.set_reference(BASE)
    events, _ = run(det, scene, 5.0)
    assert [e.kind for _, e in events] == ["settled"]
    scene = Scene(initial=A + B, hands=[Hand(2.0, takes={0, 1, 2, 3, 4})], knock=(2.6, dx, dy))
    det = SettleDetector()
    det.set_reference(BASE)
    events, _ = run(det, scene, 5.0)
    assert [e.kind for _, e in events] == ["settled", "emptied"]


def test_a_hand_filling_the_view_does_not_blind_the_detector():
    scene = Scene(initial=A + B, hands=[Hand(2.0, duration=2.0, size=3.5, takes={1})])
    det = SettleDetector()
    events, _ = run(det, scene, 6.0)
    assert [e.kind for _, e in events] == ["settled", "settled"]
    assert det.threshold == pytest.approx(SettleConfig().min_threshold)


def test_hand_that_takes_one_cube_causes_one_read():
    scene = Scene(initial=A + B, hands=[Hand(3.0, takes={1})])
    det = SettleDetector()
    events, _ = run(det, scene, 6.0)
    assert [ev.kind for _, ev in events] == ["settled", "settled"]
    assert events[1][0] >= 3.6 + 0.6  # at rest 0.6 s after the cube was taken, hand gone
    assert events[1][1].change_cubes >= 0.5


def test_emptied_once_against_reference_even_at_other_exposure():
    empty_ref = np.clip(BASE.astype(np.float32) * 1.25, 0, 255).astype(np.uint8)
    scene = Scene(
        initial=A + B,
        hands=[Hand(2.0, takes={0, 1, 2, 3, 4})],
        rolls=[Roll(7.0, 1.0, C)],
    )
    det = SettleDetector()
    det.set_reference(empty_ref)
    events, states = run(det, scene, 10.0)
    assert [ev.kind for _, ev in events] == ["settled", "emptied", "settled"]
    assert events[0][1].reference_cubes > 3
    assert events[1][1].reference_cubes < 0.5
    assert any(s is SettleState.EMPTY for t, s in states if 4.0 < t < 7.0)
    assert states[-1][1] is SettleState.SETTLED


@pytest.mark.parametrize("tone", [None, (0.0, 1.1, 1.15), (0.0, 0.8, 0.85)])
def test_starting_on_the_empty_tray_says_empty(tone):
    det = SettleDetector()
    det.set_reference(BASE)
    events, _ = run(det, Scene(drift=-0.02, tone=tone), 4.0)
    assert [ev.kind for _, ev in events] == ["emptied"]
    assert det.state is SettleState.EMPTY


def test_black_frames_and_missing_frames_are_glitches_not_events():
    scene = Scene(initial=A)
    det = SettleDetector()
    events, _ = run(det, scene, 2.0)
    assert len(events) == 1
    black = np.zeros((H, W, 3), np.uint8)
    for k in range(5):
        assert det.update(black, now=2.0 + k / FPS) is None
        assert "black" in det.note
        assert det.state is SettleState.SETTLED
    assert det.update(None, now=2.4) is None
    assert "no frame" in det.note
    assert det.update(np.zeros((0, 0, 3), np.uint8), now=2.45) is None
    events, _ = run(det, scene, 2.0, t0=2.5)
    assert events == []
    assert det.note is None


def test_frame_size_change_is_reported_and_the_new_view_read():
    scene = Scene(initial=A)
    det = SettleDetector()
    det.set_reference(BASE)
    events, _ = run(det, scene, 2.0)
    assert len(events) == 1
    big = cv2.resize(scene.frame(2.0), (640, 360))
    assert det.update(big, now=2.0) is None
    assert "480x270x3 to 640x360x3" in det.note
    assert "reference" in det.note
    tall = cv2.resize(scene.frame(2.1), (300, 400))
    assert det.update(tall, now=2.1) is None
    assert "640x360x3 to 300x400x3" in det.note
    got = [det.update(tall, now=2.1 + k / FPS) for k in range(1, 15)]
    assert [e.kind for e in got if e] == ["settled"]


def test_clock_is_used_when_now_is_omitted():
    now = [0.0]
    det = SettleDetector(still_seconds=1.0, clock=lambda: now[0])
    scene = Scene(initial=A, noise=False)
    got = []
    for k in range(20):
        now[0] = k * 0.1
        got.append(det.update(scene.frame(now[0])))
    hits = [k for k, e in enumerate(got) if e]
    assert hits == [10]


def test_a_clock_that_jumps_back_delays_but_does_not_break():
    scene = Scene(initial=A, noise=False)
    det = SettleDetector()
    events, _ = run(det, scene, 1.0, t0=100.0)
    assert len(events) == 1
    det.request_read()
    events, _ = run(det, scene, 1.0, t0=0.0)
    assert len(events) == 1 and events[0][0] == pytest.approx(0.6, abs=1.01 / FPS)


def test_grey_bgra_and_uint16_frames_are_accepted_and_junk_refused():
    scene = Scene(initial=A, noise=False)
    for conv in (
        lambda f: cv2.cvtColor(f, cv2.COLOR_BGR2GRAY),
        lambda f: cv2.cvtColor(f, cv2.COLOR_BGR2BGRA),
        lambda f: f.astype(np.uint16) * 257,
    ):
        det = SettleDetector()
        got = [det.update(conv(scene.frame(k / 10)), now=k / 10) for k in range(10)]
        assert len([e for e in got if e]) == 1
    # a grey camera goes through the whole cycle, stored comparisons included
    grey = lambda img: cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)  # noqa: E731
    det = SettleDetector()
    det.set_reference(grey(BASE))
    scene = Scene(initial=A, hands=[Hand(2.0, takes={0, 1, 2})])
    kinds = []
    for k in range(60):
        ev = det.update(grey(scene.frame(k / 10)), now=k / 10)
        kinds += [ev.kind] if ev else []
    assert kinds == ["settled", "emptied"]
    det = SettleDetector()
    with pytest.raises(VisionError):
        det.update("not a frame", now=0.0)  # type: ignore[arg-type]
    with pytest.raises(VisionError):
        det.update(np.zeros((4, 4, 5), np.uint8), now=0.0)
    with pytest.raises(VisionError):
        det.set_reference(np.zeros((H, W, 3), np.uint8))


def test_request_read_forces_one_event_on_a_quiet_tray():
    scene = Scene(initial=A)
    det = SettleDetector()
    events, _ = run(det, scene, 2.0)
    det.request_read()
    events, _ = run(det, scene, 2.0, t0=2.0)
    assert len(events) == 1
    assert events[0][1].change_cubes is None


def test_tray_outline_ignores_hands_on_the_table_and_sizes_the_cube():
    x0, y0, x1, y1 = TRAY
    det = SettleDetector()
    det.set_tray([(x0, y0), (x1, y0), (x1, y1), (x0, y1)])
    scene = Scene(initial=A, hands=[Hand(2.0, target=(40, 150)), Hand(4.0, target=(440, 150))])
    events, states = run(det, scene, 6.0)
    assert len(events) == 1
    assert all(s is SettleState.SETTLED for t, s in states if t > 0.7)
    # the 16 x 10 cm floor holds 160 cube footprints, whatever the frame size
    assert det.cube_area == pytest.approx(280 * 190 * (160 / W) ** 2 / 160, rel=0.02)


def test_explicit_motion_threshold_and_config():
    det = SettleDetector(SettleConfig(still_seconds=0.3), motion_threshold=0.5)
    assert det.config.still_seconds == 0.3
    assert det.threshold == 0.5
    with pytest.raises(ValueError):
        SettleConfig(still_seconds=-1)


# ---- the rendered trays, on machines that have them ----------------------------------------------


@functools.cache
def _full_noise(h: int, w: int) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """Sensor noise as (up, down) uint8 halves, so adding it is two saturating cv2 calls."""
    out = []
    for i in range(3):
        n = np.random.default_rng(i).normal(0, 3, (h, w, 3))
        out.append((np.clip(n, 0, 255).astype(np.uint8), np.clip(-n, 0, 255).astype(np.uint8)))
    return tuple(out)


def _noisy(img: np.ndarray, k: int, gain: float = 1.0) -> np.ndarray:
    up, down = _full_noise(*img.shape[:2])[k % 3]
    if gain != 1.0:
        img = cv2.convertScaleAbs(img, alpha=gain)
    return cv2.subtract(cv2.add(img, up), down)


@pytest.mark.skipif(not (RENDERED / "s000").is_dir(), reason="rendered trays not on this machine")
def test_rendered_tray_stream():
    empty = cv2.imread(str(RENDERED / "s000" / "empty.jpg"))
    drop = cv2.imread(str(RENDERED / "s000" / "drop05.jpg"))
    assert empty is not None and drop is not None
    k = [0]

    def noisy(img: np.ndarray, gain: float = 1.0) -> np.ndarray:
        k[0] += 1
        return _noisy(img, k[0], gain)

    det = SettleDetector()
    det.set_reference(empty)
    got: list[tuple[float, str]] = []
    t = 0.0

    def feed(img_fn, seconds):
        nonlocal t
        for _ in range(round(seconds * 5)):
            ev = det.update(img_fn(), now=t)
            if ev:
                got.append((t, ev.kind))
            t += 0.2

    feed(lambda: noisy(empty), 1.0)
    # cubes tumbling: the picture flips between mid-air states
    feed(lambda: noisy(np.roll(drop, 8 * (k[0] % 5), axis=1 - k[0] % 2)), 1.0)
    feed(lambda: noisy(drop, 1.0 - 0.01 * (t - 2.0)), 2.0)  # with exposure drifting
    # a hand over the tray that takes nothing
    hand = drop.copy()
    feed(lambda: noisy(cv2.circle(hand.copy(), (300 + 30 * (k[0] % 4), 500), 90, (40, 50, 70), -1)),
         0.8)
    feed(lambda: noisy(drop, 0.97), 2.0)
    feed(lambda: noisy(cv2.circle(hand.copy(), (500, 400 + 20 * (k[0] % 3)), 90, (40, 50, 70), -1)),
         0.8)
    feed(lambda: noisy(empty, 1.05), 2.0)
    assert [kind for _, kind in got] == ["emptied", "settled", "emptied"]
    assert 2.6 - 1e-9 <= got[1][0] <= 2.8 + 1e-9


@pytest.mark.skipif(not (RENDERED / "labels.json").is_file(), reason="rendered trays not here")
@pytest.mark.parametrize("session", ["s000", "s001", "s002", "s003", "s004"])
def test_rendered_session_one_event_per_drop(session):
    """Every drop of a session in turn, with a hand between: the event kinds follow the labels."""
    if not (RENDERED / session).is_dir():
        pytest.skip(f"{session} not here")
    labels = {d["file"]: d for d in json.loads((RENDERED / "labels.json").read_text())["images"]}
    files = sorted(p.name for p in (RENDERED / session).glob("drop*.jpg"))
    empty = cv2.imread(str(RENDERED / session / "empty.jpg"))
    h, w = empty.shape[:2]
    det = SettleDetector()
    det.set_reference(empty)
    k = 0
    expected, got = [], []

    def show(img, frames):
        nonlocal k
        for _ in range(frames):
            k += 1
            ev = det.update(_noisy(img, k), now=k / 5)
            if ev:
                got.append(ev.kind)

    show(empty, 4)
    expected.append("emptied")
    last = "emptied"
    for name in files:
        img = cv2.imread(str(RENDERED / session / name))
        for j in range(2):  # the hand that emptied the tray, then the cubes falling in
            hand = img.copy()
            cv2.circle(hand, (w // 2 + 60 * j, h - 40 * j), h // 5, (40, 50, 70), -1)
            show(hand, 1)
        show(img, 4)  # 0.6 s still after the first frame at rest
        kind = "emptied" if sum(labels[f"{session}/{name}"]["counts"].values()) == 0 else "settled"
        if kind == "settled" or last != "emptied":
            expected.append(kind)
        last = kind
    assert got == expected
