"""A USB webcam through OpenCV: reads that time out, a device reopened when it drops off the bus,
and exposure and white balance held after calibration where the webcam lets OpenCV do it.

Why each read runs in a helper thread: ``VideoCapture.read`` on a wedged UVC device blocks in the
driver (OpenCV's own V4L2 timeout is 10 s, and other backends have none), and a blocked watch loop
is a frozen device. A read that overruns is abandoned to its thread, which releases that capture
when the call finally returns; the source opens the webcam afresh meanwhile.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable

from firmware.frames import (
    CAPTURE_SIZE,
    CameraSettings,
    CameraStalled,
    Frame,
    FrameError,
    FrameSource,
    Revival,
    SourceError,
    call_with_timeout,
)

log = logging.getLogger(__name__)

# What OpenCV's V4L2 backend hands on to V4L2_CID_EXPOSURE_AUTO unchanged: 1 is manual exposure,
# 3 automatic (aperture priority), the two a UVC webcam offers.
V4L2_EXPOSURE_MANUAL = 1
V4L2_EXPOSURE_AUTO = 3
LOCK_KIND = "webcam"


class _Capture:
    """One opened VideoCapture, with the lock that keeps two calls out of it at once."""

    def __init__(self, capture):
        self.capture = capture
        self.lock = threading.Lock()
        self.abandoned = False

    def read(self):
        with self.lock:
            result = self.capture.read()
            if self.abandoned:  # its reader gave up on it long ago: nobody else will release it
                self.capture.release()
        return result

    def release(self) -> None:
        """Release now if nobody is inside; else the stuck read releases it when it returns."""
        self.abandoned = True
        if self.lock.acquire(blocking=False):
            try:
                self.capture.release()
            finally:
                self.lock.release()


def checked_lock(controls: dict) -> dict:
    """A saved webcam exposure lock, or ValueError."""
    checked = {}
    for key in ("exposure", "wb_temperature"):
        if key in controls:
            value = controls[key]
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"{key} must be a number, got {value!r}")
            if not math.isfinite(value) or (key == "wb_temperature" and value <= 0):
                raise ValueError(f"{key} {value!r} is not a setting a webcam takes")
            checked[key] = float(value)
    unknown = set(controls) - {"exposure", "wb_temperature"}
    if unknown:
        raise ValueError(f"unknown webcam controls {sorted(unknown)}")
    return checked


class WebcamSource(FrameSource):
    live = True
    REOPEN_AFTER_FAILURES = 5
    RETRY_SECONDS = 2.0  # between tries to open a webcam that is not there
    SETTLE_SECONDS = 2.0  # let automatic exposure find the light before holding it

    def __init__(
        self,
        index: int = 0,
        size: tuple[int, int] = CAPTURE_SIZE,
        capture_factory=None,
        settings: CameraSettings | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ):
        import cv2

        self.index = index
        self.size = size
        self.name = f"webcam {index}"
        self.settings = settings or CameraSettings()
        self._factory = capture_factory or cv2.VideoCapture
        self._clock = clock
        self._sleep = sleep
        self._lock: dict | None = None
        self._failures = 0
        self._counter = 0
        self._revival = Revival(
            clock, f"{self.name} stopped answering", lambda why, exc: f"{why}; webcam lost: {exc}"
        )
        self._held: _Capture | None = self._open()
        if self.settings.mains_hz:
            hz = self.settings.mains_hz
            log.warning(
                "%s: OpenCV cannot set a webcam's mains flicker filter; set it once with "
                "`v4l2-ctl -d /dev/video%d -c power_line_frequency=%d` (%d Hz)",
                self.name, index, 1 if hz == 50 else 2, hz,
            )

    def _open(self) -> _Capture:
        import cv2

        # OpenCV's own "can't open camera by index" warning, once per try (every 10 s while a
        # webcam is not plugged in, all evening), says less than the SourceError below
        # (OpenCV 5 has it under cv2.utils.logging, 4.x as cv2.get/setLogLevel; 2 is ERROR)
        logging_ = getattr(cv2.utils, "logging", cv2)
        level = logging_.getLogLevel()
        logging_.setLogLevel(2)
        try:
            capture = self._factory(self.index)
        finally:
            logging_.setLogLevel(level)
        if capture is None or not capture.isOpened():
            raise SourceError(
                f"no webcam at index {self.index} (is it plugged in? `ls /dev/video*` lists them)"
            )
        capture.set(cv2.CAP_PROP_FRAME_WIDTH, self.size[0])
        capture.set(cv2.CAP_PROP_FRAME_HEIGHT, self.size[1])
        if self._lock:
            self._apply(capture, self._lock)
        return _Capture(capture)

    def read(self) -> Frame:
        if self._held is None:
            self._open_again()
        held = self._held
        timeout = self.settings.capture_timeout
        try:
            ok, image = call_with_timeout(held.read, timeout, self.name)
        except TimeoutError as exc:
            why = f"webcam {self.index} gave no picture for {timeout:g} s"
            self._reopen(why)
            raise CameraStalled(f"{why}; it has been opened again") from exc
        except Exception as exc:  # an OpenCV error from a device that went away
            ok, image = False, None
            log.debug("%s read failed: %s", self.name, exc)
        if not ok or image is None:
            self._failures += 1
            why = f"webcam {self.index} gave no frame"
            if self._failures >= self.REOPEN_AFTER_FAILURES:
                self._reopen(why)
            raise FrameError(why)
        self._failures = 0
        self._counter += 1
        return Frame(image, f"webcam-{self._counter}", time.time())

    def _reopen(self, why: str) -> None:
        held, self._held = self._held, None
        if held is not None:
            held.release()
        self._failures = 0
        self._revival.restarted()
        log.warning("%s; opening it again (restart %d)", why, self.restarts)
        self._open_again(why)

    def _open_again(self, why: str = "") -> None:
        self._held = self._revival.bring_back(self._open, self.RETRY_SECONDS, why)

    @property
    def restarts(self) -> int:
        return self._revival.restarts

    # exposure -------------------------------------------------------------------------------

    def _call(self, function):
        """Run ``function(capture)`` between reads; FrameError when a read holds it too long."""
        held = self._held
        if held is None:
            raise FrameError(self._revival.lost or f"{self.name} is not open")
        if not held.lock.acquire(timeout=self.settings.capture_timeout):
            raise CameraStalled(f"{self.name} is stuck in a read")
        try:
            return function(held.capture)
        finally:
            held.lock.release()

    def _apply(self, capture, controls: dict) -> dict:
        """Set what ``controls`` holds; returns what the webcam took, logs what it refused."""
        import cv2

        steps = []
        if "exposure" in controls:
            steps += [("exposure", cv2.CAP_PROP_AUTO_EXPOSURE, V4L2_EXPOSURE_MANUAL),
                      ("exposure", cv2.CAP_PROP_EXPOSURE, controls["exposure"])]
        if "wb_temperature" in controls:
            steps += [("wb_temperature", cv2.CAP_PROP_AUTO_WB, 0),
                      ("wb_temperature", cv2.CAP_PROP_WB_TEMPERATURE, controls["wb_temperature"])]
        refused = set()
        for key, prop, value in steps:
            if not capture.set(prop, value):
                refused.add(key)
        if refused:
            log.warning(
                "%s refused to hold its %s; it keeps adjusting %s by itself",
                self.name, " and ".join(sorted(refused)), "them" if len(refused) > 1 else "it",
            )
        return {k: v for k, v in controls.items() if k not in refused}

    def lock_exposure(self) -> dict:
        import cv2

        def free(capture) -> None:
            capture.set(cv2.CAP_PROP_AUTO_EXPOSURE, V4L2_EXPOSURE_AUTO)
            capture.set(cv2.CAP_PROP_AUTO_WB, 1)

        def hold(capture) -> dict:
            found = {
                "exposure": capture.get(cv2.CAP_PROP_EXPOSURE),
                "wb_temperature": capture.get(cv2.CAP_PROP_WB_TEMPERATURE),
            }
            usable = {k: float(v) for k, v in found.items() if math.isfinite(v) and v > 0}
            if len(usable) < len(found):
                log.warning(
                    "%s does not report its %s; not held", self.name,
                    " and ".join(sorted(set(found) - set(usable))),
                )
            return self._apply(capture, usable)

        self._lock = None
        self._call(free)
        self._sleep(self.SETTLE_SECONDS)  # the watch loop keeps reading: the webcam adapts
        held = self._call(hold)
        self._lock = held or None
        log.info("%s: held %s", self.name, held or "nothing (it let OpenCV set neither)")
        return {"camera": LOCK_KIND, "controls": held}

    def use_exposure_lock(self, lock: dict | None) -> None:
        if lock is None or lock.get("camera") != LOCK_KIND:
            if lock is not None:
                log.info(
                    "%s: the saved exposure lock is for a %s; not used",
                    self.name, lock.get("camera"),
                )
            self._lock = None
            return
        try:
            self._lock = checked_lock(lock.get("controls") or {}) or None
        except ValueError as exc:
            log.warning("%s: ignoring the saved exposure lock: %s", self.name, exc)
            return
        if self._lock:
            self._call(lambda capture: self._apply(capture, self._lock))

    def close(self) -> None:
        held, self._held = self._held, None
        if held is not None:
            held.release()
