"""The loop that watches the tray and reads it when there is something new to read.

One ``step()`` is one look at the camera, so tests drive the loop frame by frame with a fake clock;
``run()`` just repeats it. What counts as "something new" is a trigger: a still picture that changed
(a folder or the demo replay) or a live stream that has come to rest (the settle detector).

The loop also knows when a live camera last gave a picture: past ``stall_seconds`` without one the
device is unhealthy (``health()``, shown by ``/api/health``) and ``run()`` stops sending its
heartbeat, so systemd's watchdog restarts a process whose camera cannot be brought back.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar, Protocol

import numpy as np

from companion.store import StoreError
from companion.text import Msg, said_by
from firmware.sources import Frame, FrameError, FrameSource, NoFrameYet
from vision import VisionError
from vision.settle import SettleDetector

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Outcome:
    """What reading one frame produced, as plain data for the companion."""

    reading: dict
    picture: bytes | None


class Sink(Protocol):
    """Where readings go (the companion's TrayBoard)."""

    def publish_reading(self, frame_id: str, reading: dict, picture: bytes | None) -> dict: ...

    def publish_error(self, frame_id: str, message: str) -> dict: ...

    def set_status(self, state: str, message: str | Msg = "",
                   source: str | None = None) -> None: ...


class Trigger(Protocol):
    def should_read(self, frame: Frame, now: float) -> tuple[bool, str]:
        """(read this frame?, the device state to show: waiting / settling / read...)."""

    def set_reference(self, reference: np.ndarray | None) -> None: ...

    def set_tray(self, corners) -> None: ...


class ChangedFrameTrigger:
    """For sources of still pictures: each new picture is a tray at rest, read it once."""

    def __init__(self):
        self._last_id: str | None = None

    def set_reference(self, reference: np.ndarray | None) -> None:
        """Still pictures need no empty-tray reference to decide when to read."""

    def set_tray(self, corners) -> None:
        """Nor the tray's outline."""

    def should_read(self, frame: Frame, now: float) -> tuple[bool, str]:
        if frame.frame_id == self._last_id:
            return False, "read"
        self._last_id = frame.frame_id
        return True, "read"


class SettleTrigger:
    """For live cameras: read once each time the tray comes to rest with something new on it."""

    STATES: ClassVar[dict[str, str]] = {"moving": "settling", "settled": "read", "empty": "waiting"}

    def __init__(self, detector: SettleDetector, reference: np.ndarray | None = None):
        self.detector = detector
        self._corners = None
        self.set_reference(reference)

    def set_reference(self, reference: np.ndarray | None) -> None:
        """The empty tray, so the detector can say "emptied" rather than "new content"."""
        if reference is not None:
            self.detector.set_reference(reference)

    # The detector starts watching afresh on a new outline (and reads the tray again), so only
    # an outline that really moved (the camera was knocked) is passed on, not a reading's jitter.
    MOVED_SHARE = 0.02  # of the outline's diagonal: about 4 mm on a 16 x 10 cm floor

    def set_tray(self, corners) -> None:
        """Watch only the tray floor, so hands and cards on the table do not cause re-reads."""
        new = np.asarray(corners, dtype=np.float64).reshape(-1, 2)
        if self._corners is not None and new.shape == self._corners.shape:
            diagonal = float(np.ptp(self._corners, axis=0).max())
            moved = float(np.abs(new - self._corners).max())
            if moved <= self.MOVED_SHARE * diagonal:
                return
        self._corners = new
        self.detector.set_tray(new)

    def should_read(self, frame: Frame, now: float) -> tuple[bool, str]:
        event = self.detector.update(frame.image, now)
        return event is not None, self.STATES.get(str(self.detector.state), "read")


class TrayWatcher:
    def __init__(
        self,
        source: FrameSource,
        read_frame: Callable[[np.ndarray], Outcome],
        sink: Sink,
        trigger: Trigger | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        poll_seconds: float = 0.1,
        stall_seconds: float = 10.0,
        heartbeat: Callable[[], object] = lambda: None,
    ):
        self.source = source
        self.read_frame = read_frame
        self.sink = sink
        self.trigger = trigger or ChangedFrameTrigger()
        self.clock = clock
        self.poll_seconds = poll_seconds
        self.stall_seconds = stall_seconds
        self.heartbeat = heartbeat  # called while the camera delivers (systemd's watchdog)
        self._last_picture_at = clock()  # when the camera last gave a picture (or the start)
        self._read_requested = threading.Event()
        self._last_error: str | None = None  # the camera problem going on, if any
        # Why the frames the camera gives cannot be read (VisionError), while they cannot: kept
        # until a reading succeeds, so the status and /api/health do not go back to "read"/ok at
        # the next poll of the same unreadable frame.
        self._read_error: str | None = None
        self._errors = 0
        self.reads = 0
        self.last_frame: Frame | None = None  # for calibration from another thread
        self._read_state = "read"  # or "uncertain": how the last reading came out
        self._save_again_at: float | None = None  # when to read a tray whose reading was lost

    def request_read(self) -> None:
        """A player pressed "read now": read the next frame whatever the trigger says."""
        self._read_requested.set()

    def step(self) -> bool:
        """Look at the camera once; True when a reading (or a read error) was published."""
        now = self.clock()
        try:
            frame = self.source.read()
        except NoFrameYet as exc:
            self.sink.set_status("waiting", said_by(exc), source=self.source.name)
            return False
        except FrameError as exc:
            return self._frame_error(said_by(exc))
        self._last_error = None
        self._last_picture_at = now
        self.last_frame = frame
        wanted, state = self.trigger.should_read(frame, now)
        if self._read_requested.is_set():
            self._read_requested.clear()
            wanted = True
        if self._save_again_at is not None and now >= self._save_again_at:
            wanted = True  # the last reading could not be saved: read the tray again
        if not wanted:
            # The trigger does not read this frame again (each one is read once), so a failed
            # reading stays shown until one succeeds; a tray at rest keeps showing how its
            # reading came out (read or uncertain).
            if self._read_error is not None:
                self.sink.set_status("error", self._read_error, source=self.source.name)
            else:
                shown = self._read_state if state == "read" else state
                self.sink.set_status(shown, source=self.source.name)
            return False
        return self._read(frame)

    def _read(self, frame: Frame) -> bool:
        try:
            outcome = self.read_frame(frame.image)
        except VisionError as exc:
            message = str(exc)
            # Each failed frame replaces the reading on the phones, but the log says a problem
            # once while it lasts (frame after frame too small must not fill the SD card).
            if message != self._read_error:
                log.warning("could not read frame %s: %s", frame.frame_id, message)
            else:
                log.debug("could not read frame %s either: %s", frame.frame_id, message)
            self._read_error = message
            self._publish_error(frame.frame_id, message)
            self.sink.set_status("error", message, source=self.source.name)
            return True
        self._read_error = None
        self.reads += 1
        corners = outcome.reading.get("tray_corners")
        if corners:
            self.trigger.set_tray(corners)
        try:
            self.sink.publish_reading(frame.frame_id, outcome.reading, outcome.picture)
        except StoreError as exc:
            return self._not_saved(str(exc))
        self._save_again_at = None
        self._read_state = "uncertain" if outcome.reading.get("uncertain") else "read"
        self.sink.set_status(self._read_state, source=self.source.name)
        return True

    def _not_saved(self, reason: str) -> bool:
        """A reading the data file refused (a full card): said, kept as the problem shown, and
        the tray read again in ``SAVE_AGAIN_SECONDS``, so the drop is not lost once there is
        room (the trigger reads each tray once)."""
        message = f"the tray was read but the reading could not be saved: {reason}"
        if message != self._read_error:
            log.warning("%s", message)
        self._read_error = message
        self._save_again_at = self.clock() + self.SAVE_AGAIN_SECONDS
        self.sink.set_status("error", message, source=self.source.name)
        return True

    SAVE_AGAIN_SECONDS = 5.0

    def _frame_error(self, said: Msg | str) -> bool:
        """Say once per distinct problem; a camera that stays away must not flood the log. A
        ``Msg`` is said on each phone in its language; the log and health keep the English."""
        self.sink.set_status("error", said, source=self.source.name)
        message = str(said)
        if message == self._last_error:
            return False
        log.warning("camera problem: %s", message)
        self._last_error = message
        self._errors += 1
        self._publish_error(f"error-{self._errors}", message)
        return True

    def _publish_error(self, frame_id: str, message: str) -> None:
        """Replace the phones' reading by the problem; a data file that refuses it (a full
        card) leaves the problem said by the status alone, not a traceback per frame."""
        try:
            self.sink.publish_error(frame_id, message)
        except StoreError as exc:
            log.warning("could not save the problem %r: %s", message, exc)

    def seconds_without_picture(self) -> float:
        return max(0.0, self.clock() - self._last_picture_at)

    def stalled(self) -> bool:
        """A live camera that has given no picture for ``stall_seconds`` (a folder never is)."""
        return self.source.live and self.seconds_without_picture() > self.stall_seconds

    def health(self) -> dict:
        """Whether the camera delivers, in words a player (or a monitoring script) can use."""
        waited = self.seconds_without_picture()
        body = {
            # a camera that fails now is not ok, even one (a folder) that cannot stall; nor is
            # one whose pictures all fail to be read (too small, a bad empty-tray reference)
            "ok": not self.stalled() and self._last_error is None and self._read_error is None,
            "camera": self.source.name,
            "seconds_since_picture": round(waited, 1),
        }
        if self.stalled():
            body["problem"] = (
                f"the camera has given no picture for {waited:.0f} s"
                + (f" ({self._last_error})" if self._last_error else "")
            )
        elif self._last_error:
            body["problem"] = self._last_error
        elif self._read_error and self._save_again_at is not None:
            body["problem"] = self._read_error  # the card, not the camera (``_not_saved``)
        elif self._read_error:
            body["problem"] = f"the camera's pictures cannot be read: {self._read_error}"
        for key in ("restarts", "focus"):
            value = getattr(self.source, key, None)
            if value:
                body[key] = value
        return body

    def run(self, stop: threading.Event) -> None:
        """Repeat ``step`` until ``stop`` is set; an unexpected bug is logged, never fatal.

        Each pass that finds the camera delivering feeds systemd's watchdog."""
        self._last_picture_at = self.clock()  # the camera's time to deliver starts now
        while not stop.is_set():
            try:
                self.step()
            except Exception:  # keep the table's evening going; the log has the traceback
                log.exception("tray watcher step failed")
                self.sink.set_status("error", "internal error reading the tray; see the log")
            if not self.stalled():
                self.heartbeat()
            stop.wait(self.poll_seconds)
