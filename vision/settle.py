"""Decide, from the camera's stream, when the tray is worth reading.

The counter is too slow to run on every frame and would report half-rolled cubes, so this watches a
tiny copy of each frame and says when the tray has come to rest with content that differs from what
was last read, and when it has come to rest looking like the empty tray.

Everything is measured on a ~160 px wide, blurred, brightness-normalised copy:

* Brightness: each frame is divided by its own per-channel mean, so auto-exposure drift, white
  balance drift and global mains flicker (all multiplicative) cancel from frame to frame. When a
  stored picture (the last one read, the empty tray) is compared with one taken minutes later, a
  brightness-dependent gain is fitted first (median per sixth of the brightness range), because
  exposure changes pass through the camera's tone curve and do not scale shadows and highlights
  alike; medians keep cubes or a hand from bending that fit.
* Per-pixel threshold: a pixel has changed when some channel differs by more than
  ``max(min_threshold, noise_k * noise)`` relative to the brighter of the pixel and the frame's
  mean. ``noise`` is measured continuously from consecutive frames (robust MAD), so a grainy
  low-light camera raises the bar by itself. ``min_threshold`` (8 %) sits above what rolling-
  shutter flicker bands (+-3 % each way) and JPEG leave behind, and far below the contrast of a
  cube on a tray.
* Area threshold: motion or new content needs at least ``cube_fraction`` (half) of one cube's
  area to change. One cube's size in work pixels comes from the tray corners when given (the floor
  is 16 x 10 cm) or from the assumption that the tray spans ``tray_width_fraction`` of the
  frame width. Changed pixels are counted, not summed, so one strongly changed cube and many
  faintly changed pixels are not confused. On the rendered trays one resting cube changes about
  two cube areas (the cube, its shadow, blur), four times the bar; an empty tray under another
  exposure changes none.

A knock on the tower moves the camera a pixel or two, which would make every later comparison with
a stored picture "new content" along every sharp edge; those comparisons undo a small shift found
by phase correlation first (and keep the smaller count), so only real change counts.

Stillness is measured against an anchor (the last frame that showed motion), not the previous
frame, so a cube creeping a fraction of a pixel per frame still counts as moving. While the tray
is quiet the anchor is renewed every ``still_seconds`` and the last-read picture every few seconds
(when it still matches), so light changing over minutes never adds up to "motion" or "new content".
"""

from __future__ import annotations

import functools
import itertools
import logging
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

import cv2
import numpy as np

from vision.errors import VisionError

log = logging.getLogger(__name__)

TRAY_LONG_CM = 16.0  # the tray's long inside edge; one cube is 1 cm
TRAY_AREA_CM2 = 16.0 * 10.0
_OPEN_KERNEL = np.ones((2, 2), np.uint8)
_REFRESH_READ_S = 5.0  # how often a quiet tray's last-read picture follows the light


class SettleState(StrEnum):
    MOVING = "moving"
    SETTLED = "settled"
    EMPTY = "empty"


@dataclass(frozen=True)
class SettleConfig:
    """Knobs, each in physical units (seconds, fractions of brightness, cubes)."""

    still_seconds: float = 0.6
    # Per-pixel change that counts a pixel as changed, as a fraction of the brighter of the pixel
    # and the frame's mean brightness. None: max(min_threshold, noise_k * measured noise).
    motion_threshold: float | None = None
    min_threshold: float = 0.08
    noise_k: float = 5.0
    # How much of one cube's area must change to count as motion or as new content.
    cube_fraction: float = 0.5
    # Without tray corners: the tray's long side spans about this much of the frame width.
    tray_width_fraction: float = 0.55
    work_width: int = 160
    # A frame whose brightest channel mean is below this (0-255) is a camera glitch, not a scene.
    dark_level: float = 8.0
    # Work pixels at or above this (0-255) are (partly) clipped; their ratio to a stored picture
    # means nothing, so they are left out of comparisons with stored pictures.
    saturated_level: int = 245

    def __post_init__(self) -> None:
        if self.still_seconds < 0:
            raise ValueError("still_seconds must be >= 0")
        if self.motion_threshold is not None and self.motion_threshold <= 0:
            raise ValueError("motion_threshold must be > 0")
        if self.work_width < 16:
            raise ValueError("work_width must be >= 16")


@dataclass(frozen=True, eq=False)
class SettleEvent:
    """A one-time notice: read ``frame`` now ("settled"), or the tray is empty ("emptied")."""

    kind: str  # "settled" | "emptied"
    frame: np.ndarray  # a copy of the full-resolution frame that came to rest
    time: float  # monotonic seconds
    still_for: float  # seconds without motion before the event
    # Changed area versus the last read picture, in cubes (None: nothing read yet, or forced).
    change_cubes: float | None = None
    # Changed area versus the empty-tray reference, in cubes (None: no reference).
    reference_cubes: float | None = None


@dataclass
class _Picture:
    """A work image: brightness-normalised float planes, and the uint8 copy they came from."""

    norm: np.ndarray
    small: np.ndarray
    means: tuple[float, ...]
    _clipped: np.ndarray | None = None

    def clipped(self, level: int) -> np.ndarray:
        """Channels at or near clipping; dilated since blur smears clipping into neighbours."""
        if self._clipped is None:
            sat = (self.small >= level).astype(np.uint8)
            sat = cv2.dilate(sat, np.ones((3, 3), np.uint8))
            self._clipped = sat.reshape(self.small.shape).astype(bool)
        return self._clipped


class SettleDetector:
    """Feed every frame to ``update``; act on the events it returns.

    Not thread-safe; one instance per camera.
    """

    def __init__(
        self,
        config: SettleConfig | None = None,
        *,
        still_seconds: float | None = None,
        motion_threshold: float | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        cfg = config or SettleConfig()
        if still_seconds is not None:
            cfg = replace(cfg, still_seconds=still_seconds)
        if motion_threshold is not None:
            cfg = replace(cfg, motion_threshold=motion_threshold)
        self.config = cfg
        self._clock = clock or time.monotonic
        self._tray_corners: np.ndarray | None = None
        self._reference_frame: np.ndarray | None = None
        self._reset_geometry()
        self._noise = 0.01
        self._force = False
        self._note: str | None = None
        self._motion = 0.0
        self._dark_run = 0
        self._frames = 0

    # ---- public state -------------------------------------------------------------------------

    @property
    def state(self) -> SettleState:
        return self._state

    @property
    def note(self) -> str | None:
        """What was odd about the last frame (glitch, size change), in words; None if nothing."""
        return self._note

    @property
    def motion(self) -> float:
        """Changed area of the last frame against the still anchor, in cubes."""
        return self._motion

    @property
    def noise(self) -> float:
        """Measured noise of a frame-to-frame difference, as a fraction of mean brightness."""
        return self._noise

    @property
    def threshold(self) -> float:
        """The per-pixel change (fraction of mean brightness) in use now."""
        if self.config.motion_threshold is not None:
            return self.config.motion_threshold
        return max(self.config.min_threshold, self.config.noise_k * self._noise)

    @property
    def cube_area(self) -> float:
        """Area of one cube in work pixels, the unit of every area threshold here."""
        return self._cube_area

    # ---- configuration ------------------------------------------------------------------------

    def set_reference(self, frame: np.ndarray | None) -> None:
        """Remember the empty tray; ``None`` forgets it. Settling onto it emits "emptied"."""
        if frame is None:
            self._reference_frame = None
            self._reference = None
            return
        arr = self._validate(frame)
        if arr is None:
            raise VisionError("the empty-tray reference is empty; take it again")
        pic = self._picture(arr)
        if self._is_dark(pic):
            raise VisionError("the empty-tray reference is black; take it again")
        self._reference_frame = arr.copy()
        self._reference = pic if arr.shape == self._shape else None

    def set_tray(self, corners: Sequence[Sequence[float]] | np.ndarray | None) -> None:
        """Watch only inside the tray (four or more corners, frame pixels); None watches it all.

        Besides ignoring hands and cards on the table, the corners give the true size of a cube.
        Corners are the floor's (a reading's ``tray_corners``); the detector starts watching afresh.
        """
        if corners is None:
            self._tray_corners = None
        else:
            pts = np.asarray(corners, dtype=np.float64).reshape(-1, 2)
            if len(pts) < 3:
                raise VisionError("tray outline needs at least three corners")
            self._tray_corners = pts
        shape = self._shape
        self._reset_geometry()
        if shape is not None:
            self._shape = shape
            self._setup_geometry(shape)

    def request_read(self) -> None:
        """Make the next settle emit an event even if nothing changed (the "recount" button)."""
        self._force = True
        if self._state is not SettleState.MOVING:
            self._evaluated = False

    # ---- the per-frame step -------------------------------------------------------------------

    def update(self, frame: np.ndarray | None, now: float | None = None) -> SettleEvent | None:
        """Take one frame; return an event the first time the tray rests with new content.

        ``frame``: BGR, BGRA or grey; uint8 (uint16 and float 0..1 are converted). ``None``, empty
        and black frames are glitches: ignored, state kept, ``note`` says so. ``now``: monotonic
        seconds, default from the clock.
        """
        now = float(self._clock() if now is None else now)
        self._note = None
        arr = self._validate(frame)
        if arr is None:
            return self._glitch("no frame (camera read failed)")
        pic = self._picture(arr)
        if self._is_dark(pic):
            return self._glitch("black frame (camera glitch); ignored")
        if self._dark_run:
            log.info("camera back after %d glitch frame(s)", self._dark_run)
            self._dark_run = 0

        if arr.shape != self._shape:
            if self._shape is not None:
                self._note = (
                    f"frame size changed from {_fmt(self._shape)} to {_fmt(arr.shape)}; "
                    "watching afresh, the next settle is read"
                )
                log.warning(self._note)
            self._reset_geometry()
            self._shape = arr.shape
            self._setup_geometry(arr.shape)

        if self._anchor is None:
            self._start_motion(pic, now)
            return None

        thr = self.threshold
        changed = self._count(pic.norm, self._anchor.norm, thr)
        self._motion = changed / self._cube_area
        self._frames += 1
        if self._prev is not None and self._frames % 3 == 0:
            # Noise changes slowly; measuring it on every third frame saves a third of the cost.
            self._learn_noise(pic.norm, self._prev)
        self._prev = pic.norm

        if changed >= self._min_px:
            self._start_motion(pic, now)
            return None

        if now < self._still_since:  # the clock went back (a different clock passed in)
            self._still_since = self._anchor_time = now
        still_for = now - self._still_since
        if still_for < self.config.still_seconds - 1e-6:  # 1.4 - 0.8 < 0.6 in floating point
            return None
        if not self._evaluated:
            self._evaluated = True
            self._anchor, self._anchor_time = pic, now
            return self._on_settle(arr, pic, now, still_for)

        if now - self._anchor_time >= max(self.config.still_seconds, 0.2):
            # Quiet tray: follow slow drift so it never adds up to "motion".
            self._anchor, self._anchor_time = pic, now
        if self._last_read is not None and now - self._read_time >= _REFRESH_READ_S:
            # ... nor, over minutes of light changing, into "new content". The tone fit already
            # absorbs exposure; this absorbs what is not global (a lamp switched on, daylight).
            self._read_time = now
            if self._differs(pic, self._last_read) < self._min_px:
                self._last_read = pic
        return None

    # ---- internals ----------------------------------------------------------------------------

    def _reset_geometry(self) -> None:
        self._shape: tuple[int, ...] | None = None
        self._mask: np.ndarray | None = None
        self._cube_area: float = 1.0
        self._min_px: float = 1.0
        self._anchor: _Picture | None = None
        self._anchor_time = 0.0
        self._still_since = 0.0
        self._prev: np.ndarray | None = None
        self._last_read: _Picture | None = None
        self._last_kind: str | None = None
        self._read_time = 0.0
        self._reference: _Picture | None = None
        self._state = SettleState.MOVING
        self._evaluated = False

    def _setup_geometry(self, shape: tuple[int, ...]) -> None:
        h, w = shape[:2]
        ww = min(self.config.work_width, w)
        wh = max(1, round(h * ww / w))
        scale = ww / w
        if self._tray_corners is not None:
            pts = self._tray_corners * scale
            mask = np.zeros((wh, ww), np.uint8)
            cv2.fillPoly(mask, [np.round(pts).astype(np.int32)], 1)
            self._mask = mask.astype(bool)
            # The floor is 16 x 10 cm: its area over 160 is one cube's footprint, averaged over
            # the perspective (cubes near the camera look bigger than far ones).
            area = abs(cv2.contourArea(pts.astype(np.float32))) / TRAY_AREA_CM2
        else:
            area = (ww * self.config.tray_width_fraction / TRAY_LONG_CM) ** 2
        self._cube_area = max(area, 1.0)
        self._min_px = max(self.config.cube_fraction * self._cube_area, 2.0)
        if self._reference_frame is not None:
            if self._reference_frame.shape == shape:
                self._reference = self._picture(self._reference_frame)
            else:
                msg = (
                    f"empty-tray reference is {_fmt(self._reference_frame.shape)}, frames are "
                    f"{_fmt(shape)}; not used until set again for this size"
                )
                self._note = f"{self._note}; {msg}" if self._note else msg
                log.warning(msg)

    def _validate(self, frame: np.ndarray | None) -> np.ndarray | None:
        if frame is None:
            return None
        if not isinstance(frame, np.ndarray):
            raise VisionError(f"a frame must be a numpy image, not {type(frame).__name__}")
        if frame.size == 0:
            return None
        if frame.ndim == 3 and frame.shape[2] == 4:
            frame = frame[:, :, :3]
        if frame.ndim == 3 and frame.shape[2] == 1:
            frame = frame[:, :, 0]
        if frame.ndim not in (2, 3) or (frame.ndim == 3 and frame.shape[2] != 3):
            raise VisionError(f"a frame must be grey or BGR, got shape {frame.shape}")
        if frame.dtype != np.uint8:
            if frame.dtype == np.uint16:
                frame = (frame >> 8).astype(np.uint8)
            elif np.issubdtype(frame.dtype, np.floating):
                frame = np.clip(frame * 255.0, 0, 255).astype(np.uint8)
            else:
                raise VisionError(f"a frame must be uint8, got {frame.dtype}")
        return frame

    def _is_dark(self, pic: _Picture) -> bool:
        return max(pic.means) < self.config.dark_level

    def _glitch(self, what: str) -> None:
        self._note = what
        if self._dark_run == 0:
            log.warning(what)
        self._dark_run += 1
        return None

    def _picture(self, arr: np.ndarray) -> _Picture:
        h, w = arr.shape[:2]
        ww = min(self.config.work_width, w)
        wh = max(1, round(h * ww / w))
        # Bilinear to twice the size, then area-average: ~15x cheaper than one INTER_AREA pass from
        # full size, and still averages enough pixels to tame sensor noise.
        mid = cv2.resize(arr, (2 * ww, 2 * wh), interpolation=cv2.INTER_LINEAR)
        small = cv2.resize(mid, (ww, wh), interpolation=cv2.INTER_AREA)
        small = cv2.GaussianBlur(small, (3, 3), 0)
        if small.ndim == 2:
            small = small[:, :, None]
        means = cv2.mean(small)[: small.shape[2]]
        scale = tuple(1.0 / max(m, 1.0) for m in means) + (0.0,) * (4 - len(means))
        norm = cv2.multiply(small, scale, dtype=cv2.CV_32F)
        if norm.ndim == 2:
            norm = norm[:, :, None]
        return _Picture(norm, small, means)

    def _change(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Per pixel, the largest channel change relative to max(local, mean brightness).

        Gain and tone errors are multiplicative, so a white cube or glare (twice the mean) may
        move twice as far in absolute terms as the tray for the same relative error; pixels darker
        than the mean keep the absolute measure, where noise, not gain, dominates.
        """
        d = _relative(a, b)
        if d.ndim == 2:
            return d
        planes = cv2.split(d)
        m = planes[0]
        for p in planes[1:]:
            m = cv2.max(m, p)
        return m

    def _count(self, a: np.ndarray, b: np.ndarray, thr: float) -> int:
        hit = self._change(a, b) > thr
        if self._mask is not None:
            hit &= self._mask
        return int(np.count_nonzero(hit))

    def _differs(self, cur: _Picture, stored: _Picture) -> int:
        """Changed pixels between pictures possibly minutes apart (after tone fit and re-aim).

        Compared as they are first: that keeps full sensitivity (a light cube leaving a light
        tray changes little beyond its edges). Only if that finds a change and the camera seems
        to have moved is the picture shifted back and judged against the range half-pixel moves
        give (resampling leaves sharp edges up to half a pixel off); the smaller count wins, so
        a knock alone is not new content, while a real change shows in both.
        """
        level = self.config.saturated_level
        plain = self._count_stored(cur.norm, cur.clipped(level), stored, _relative, 0)
        if plain < self._min_px:
            return plain
        shifted = _align(cur.norm, cur.clipped(level), stored.norm)
        if shifted is None:
            return plain
        norm, clipped, border, shift = shifted
        # Half a pixel of slack only after a real knock: content changes alone pull the estimate
        # by up to ~0.15 px, and the slack costs sensitivity to faint cubes.
        change = _outside if shift >= _KNOCK else _relative
        return min(plain, self._count_stored(norm, clipped, stored, change, border))

    def _count_stored(self, norm, cur_clipped, stored: _Picture, change, border: int) -> int:
        clipped = cur_clipped | stored.clipped(self.config.saturated_level)
        matched = np.empty_like(norm)
        for c in range(norm.shape[2]):
            matched[:, :, c] = _tone_match(norm[:, :, c], stored.norm[:, :, c], ~clipped[:, :, c])
        d = change(matched, stored.norm).reshape(matched.shape)  # cv2 drops a lone channel
        # A clipped channel's ratio means nothing; judge that pixel by its other channels.
        d[clipped] = 0
        if border:  # what the shift brought in from outside the picture is not evidence
            d[:border], d[-border:], d[:, :border], d[:, -border:] = 0, 0, 0, 0
        hit = (d.max(axis=2) > self.threshold).astype(np.uint8)
        # A cube is a solid blob; one-pixel lines are edges re-blended by a different tone curve.
        hit = cv2.morphologyEx(hit, cv2.MORPH_OPEN, _OPEN_KERNEL)
        if self._mask is not None:
            hit &= self._mask
        return int(np.count_nonzero(hit))

    def _learn_noise(self, cur: np.ndarray, prev: np.ndarray) -> None:
        # The lower quartile of |difference| ignores anything covering under three quarters of
        # the frame (cubes, a hand close to a tower-mounted camera), so this can run on every
        # frame, moving or not; the noisiest channel sets the bar. For Gaussian noise the quartile
        # is 0.3186 sigma. Rising slowly keeps a passing arm from blinding the detector; falling
        # fast recovers from it.
        d = np.abs(cur[::2, ::2] - prev[::2, ::2]).reshape(-1, cur.shape[2])
        k = d.shape[0] // 4
        sigma = float(np.partition(d, k, axis=0)[k].max()) / 0.3186
        sigma = min(max(sigma, 0.001), 0.05)
        rate = 0.08 if sigma > self._noise else 0.25
        self._noise += rate * (sigma - self._noise)

    def _start_motion(self, pic: _Picture, now: float) -> None:
        self._anchor, self._anchor_time = pic, now
        self._still_since = now
        self._state = SettleState.MOVING
        self._evaluated = False

    def _on_settle(
        self, arr: np.ndarray, pic: _Picture, now: float, still_for: float
    ) -> SettleEvent | None:
        cubes = self._cube_area
        change: float | None = None
        if self._last_read is not None and not self._force:
            change_px = self._differs(pic, self._last_read)
            change = change_px / cubes
            if change_px < self._min_px:
                # Same picture as last read (a hand came and went): follow its lighting, stay quiet.
                self._last_read = pic
                self._state = (
                    SettleState.EMPTY if self._last_kind == "emptied" else SettleState.SETTLED
                )
                return None
        ref_cubes: float | None = None
        empty = False
        if self._reference is not None:
            ref_px = self._differs(pic, self._reference)
            ref_cubes = ref_px / cubes
            empty = ref_px < self._min_px
        self._force = False
        kind = "emptied" if empty else "settled"
        self._state = SettleState.EMPTY if empty else SettleState.SETTLED
        self._last_read, self._last_kind, self._read_time = pic, kind, now
        return SettleEvent(
            kind=kind,
            frame=arr.copy(),
            time=now,
            still_for=still_for,
            change_cubes=change,
            reference_cubes=ref_cubes,
        )


def _outside(cur: np.ndarray, stored: np.ndarray) -> np.ndarray:
    """Like ``_relative``, but against the range ``stored`` spans when moved by half a pixel.

    What is left after ``_align`` is a sub-pixel misregistration, which moves a sharp edge by
    less than a pixel; the values that edge could take are those of ``stored`` shifted half a
    pixel either way (and diagonally). Flat regions keep their exact value, so a cube arriving or
    leaving still counts in full.
    """
    c = stored
    p = cv2.copyMakeBorder(c, 1, 1, 1, 1, cv2.BORDER_REPLICATE).reshape(
        c.shape[0] + 2, c.shape[1] + 2, -1
    )
    n, s_, w, e = p[:-2, 1:-1], p[2:, 1:-1], p[1:-1, :-2], p[1:-1, 2:]
    nw, ne, sw, se = p[:-2, :-2], p[:-2, 2:], p[2:, :-2], p[2:, 2:]
    shifted = [(c + q) * 0.5 for q in (n, s_, w, e)]
    corners = ((n, w, nw), (n, e, ne), (s_, w, sw), (s_, e, se))
    shifted += [(c + a + b + d) * 0.25 for a, b, d in corners]
    lo, hi = c.copy(), c.copy()
    for q in shifted:
        np.minimum(lo, q, out=lo)
        np.maximum(hi, q, out=hi)
    d = np.maximum(np.maximum(cur - hi, lo - cur), 0.0)
    return d / np.maximum(np.maximum(cur, hi), 1.0)


def _relative(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """|a - b| / max(a, b, 1) per channel (1 = the frame's mean brightness)."""
    # A full 4-tuple: cv2 reads a bare 1.0 as Scalar(1, 0, 0, 0), i.e. channel 0 only.
    return cv2.divide(cv2.absdiff(a, b), cv2.max(cv2.max(a, b), (1.0, 1.0, 1.0, 1.0)))


_MAX_SHIFT = 4.0  # work px (~3 % of the width): beyond that the camera has really moved
# Below this (work px) a shift is not worth undoing; 1 px at 1152 px is 0.14 px here.
_MIN_SHIFT = 0.05
_KNOCK = 0.2  # work px; a 2 px knock at 1152 px is ~0.28 px here


def _align(
    cur: np.ndarray, clipped: np.ndarray, stored: np.ndarray
) -> tuple[np.ndarray, np.ndarray, int, float] | None:
    """Undo a small camera shift (a knock on the tower) before comparing with a stored picture.

    Without this, a 1-2 px knock at 1152 px makes the table grain, tray rim and any sharp edge
    look like a cube or two of change. Phase correlation locks onto the static scene, which
    dominates; new cubes are a small part of it. Returns the shifted picture, its clipped mask
    the border to ignore and the shift; None when there is no shift worth undoing.
    """
    h, w = cur.shape[:2]
    if h < 8 or w < 8:
        return None
    window = _hanning(w, h)
    (dx, dy), response = cv2.phaseCorrelate(
        np.ascontiguousarray(stored.mean(axis=2)), np.ascontiguousarray(cur.mean(axis=2)), window
    )
    shift = math.hypot(dx, dy)
    if response < 0.05 or shift < _MIN_SHIFT or shift > _MAX_SHIFT:
        return None
    return (
        _shifted(cur, dx, dy).reshape(cur.shape),
        _shifted(clipped, dx, dy, nearest=True).reshape(clipped.shape),
        math.ceil(shift) + 1,
        shift,
    )


def _shifted(img: np.ndarray, dx: float, dy: float, *, nearest: bool = False) -> np.ndarray:
    """``img`` moved back by (dx, dy): out(x, y) = img(x + dx, y + dy), edges replicated.

    Exact bilinear weights in numpy rather than ``cv2.warpAffine``: OpenCV 4.x rounds the
    sub-pixel position to 1/32 px and 5.x does not, and a 0.07 px shift rounded to 0.06 px moves
    enough edge pixels past the threshold to read an exposure change as a cube on one version
    and not the other. A pure shift is separable, so this is as cheap at the work size.
    """
    h, w = img.shape[:2]
    xs = np.clip(np.arange(w) + dx, 0, w - 1)
    ys = np.clip(np.arange(h) + dy, 0, h - 1)
    if nearest:
        return img[np.floor(ys + 0.5).astype(np.intp)][:, np.floor(xs + 0.5).astype(np.intp)]
    x0 = np.floor(xs).astype(np.intp)
    y0 = np.floor(ys).astype(np.intp)
    x1 = np.minimum(x0 + 1, w - 1)
    y1 = np.minimum(y0 + 1, h - 1)
    extra = (1,) * (img.ndim - 2)
    fx = (xs - x0).astype(np.float32).reshape(1, w, *extra)
    fy = (ys - y0).astype(np.float32).reshape(h, 1, *extra)
    rows = img[y0] * (1 - fy) + img[y1] * fy
    return (rows[:, x0] * (1 - fx) + rows[:, x1] * fx).astype(img.dtype, copy=False)


@functools.cache
def _hanning(w: int, h: int) -> np.ndarray:
    return cv2.createHanningWindow((w, h), cv2.CV_32F)


def _tone_match(cur: np.ndarray, stored: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Map ``cur`` onto ``stored``'s tone curve with a gain that depends on brightness.

    Auto exposure acts on raw light, but the picture has been through the camera's tone curve, so
    an exposure change lifts shadows and highlights by different factors (a plain gain fit leaves
    the table 10 % off when the tray matches). A median gain in each sixth of the brightness
    range follows that curve; a few cubes are a small share of any sixth, so they cannot bend it.
    """
    a, b, ok = cur[::2, ::2], stored[::2, ::2], valid[::2, ::2]
    ok = ok & (a > 0.02) & (b > 0.02)
    av, bv = a[ok], b[ok]
    if av.size < 48:
        return cur
    order = np.argsort(av, kind="stable")
    av, ratio = av[order], bv[order] / av[order]
    # Six equal-count slices of the sorted values are the brightness sixths.
    cuts = np.linspace(0, av.size, 7).astype(int)
    centres = np.array([av[(i + j) // 2] for i, j in itertools.pairwise(cuts)], np.float32)
    gains = np.array([np.median(ratio[i:j]) for i, j in itertools.pairwise(cuts)], np.float32)
    if centres[-1] - centres[0] < 1e-6:
        return cur * np.float32(np.median(gains))
    return cur * np.interp(cur, centres, gains).astype(np.float32)


def _fmt(shape: tuple[int, ...]) -> str:
    return f"{shape[1]}x{shape[0]}" + ("" if len(shape) == 2 else f"x{shape[2]}")
