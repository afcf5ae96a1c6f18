"""What every frame source promises, and the settings a live camera is run with.

Kept apart from the sources themselves so the Pi camera and the webcam each live in their own
small module without importing one another (``firmware.sources`` re-exports all of this).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

CAPTURE_SIZE = (1152, 648)

T = TypeVar("T")


class SourceError(RuntimeError):
    """The source cannot be opened at all (no camera, no library, no folder)."""


class SourceSettingError(SourceError):
    """The source named cannot be one: a mistyped ``--source``, a folder that is not there, a
    webcam index that is no number. The fix is in the settings, not at the camera."""


class NoCamera(SourceError):
    """There is no such camera here at all (its library missing, none attached): unlike a
    camera that is there and fails or is busy, a reason to replay the demo instead."""


class CameraLibraryMissing(NoCamera):
    """The camera's library is not installed here: no camera on a laptop (``auto`` replays the
    demo), but a camera named in the settings that only an install can bring, so waiting for it
    helps nothing."""


class FrameError(RuntimeError):
    """This frame could not be had; the next call may succeed."""


class NoFrameYet(FrameError):
    """Nothing to look at yet (an empty folder): waiting, not a fault."""


class CameraStalled(FrameError):
    """The camera did not deliver a picture in time; the source has restarted it (or is trying)."""


@dataclass(frozen=True)
class Frame:
    image: np.ndarray
    frame_id: str
    captured_at: float  # unix seconds
    label: str = ""


@dataclass(frozen=True)
class CameraSettings:
    """How a live camera is run. Every number comes from the configuration; none is guessed here.

    ``lens_height_mm``: the lens above the tray floor; a Camera Module 3 is focused there by hand
    (0: one autofocus cycle at start, then the lens is held). ``mains_hz``: 50 or 60 makes the
    exposure avoid the lights' flicker (0: the camera's default, no flicker avoidance).
    ``capture_timeout``: seconds one picture may take before the camera counts as stalled and is
    restarted.
    """

    lens_height_mm: float = 0.0
    mains_hz: int = 0
    capture_timeout: float = 2.0

    @property
    def flicker_period_us(self) -> int | None:
        """Lamps on mains flicker at twice its frequency: 10 000 us at 50 Hz, 8 333 us at 60."""
        return round(1_000_000 / (2 * self.mains_hz)) if self.mains_hz else None


class FrameSource:
    """Base for sources; ``name`` is shown to the players when something goes wrong.

    ``live`` sources are cameras: a camera that stops delivering pictures is a fault the device
    reports (and systemd's watchdog acts on); a folder or the demo replay cannot stall.
    """

    name = "source"
    live = False

    def read(self) -> Frame:  # pragma: no cover - interface
        raise NotImplementedError

    def lock_exposure(self) -> dict | None:
        """Let the camera settle on the light once more, then hold exposure and white balance.

        Returns what was held, to be saved with the calibration (None: nothing to hold)."""
        return None

    def use_exposure_lock(self, lock: dict | None) -> None:
        """Hold the exposure saved by an earlier ``lock_exposure`` (None: let the camera adapt)."""

    def close(self) -> None:
        """Release the device; sources without one have nothing to do."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Revival:
    """How a stopped camera comes back: what stopped it, when to try again, how often it did.

    Why one class: the Pi camera and the webcam stop (a loose cable, a driver hiccup) and come
    back the same way: try at once, then every ``retry_seconds`` while it will not, and keep
    naming what first went wrong rather than the latest failed try.
    """

    def __init__(
        self, clock: Callable[[], float], stopped: str, lost: Callable[[str, Exception], str]
    ):
        self._clock = clock
        self._stopped = stopped  # the reason when nothing more precise is known
        self._lost_text = lost  # (why it stopped, why it will not start) -> the message
        self._retry_at = 0.0
        self._why = ""
        self.lost = ""  # what the players are told while it does not come back
        self.restarts = 0

    def restarted(self) -> None:
        """Count a restart; the first try to bring it back is at once."""
        self.restarts += 1
        self._retry_at = 0.0

    def bring_back(self, start: Callable[[], T], retry_seconds: float, why: str = "") -> T:
        """``start()``'s camera; CameraStalled (naming what first went wrong) if it will not."""
        self._why = why = why or self._why or self._stopped
        now = self._clock()
        if now < self._retry_at:
            raise CameraStalled(self.lost)
        try:
            camera = start()
        except SourceError as exc:
            self._retry_at = now + retry_seconds
            self.lost = self._lost_text(why, exc)
            raise CameraStalled(self.lost) from exc
        self._why = ""
        return camera


def call_with_timeout(function: Callable[[], T], timeout: float, what: str) -> T:
    """``function()``, or TimeoutError after ``timeout`` seconds.

    Why a thread: a camera driver that hangs blocks in C, where nothing else can interrupt it. The
    caller gets on with restarting the camera; the stuck thread is a daemon, so it never keeps the
    process from exiting, and it ends by itself if the call ever returns.
    """
    outcome: dict = {}
    done = threading.Event()

    def run() -> None:
        try:
            outcome["value"] = function()
        except BaseException as exc:  # handed to the caller, whatever it is
            outcome["error"] = exc
        finally:
            done.set()

    threading.Thread(target=run, name=f"capture {what}", daemon=True).start()
    if not done.wait(timeout):
        raise TimeoutError(f"{what} did not answer within {timeout:g} s")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]
