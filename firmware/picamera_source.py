"""The Raspberry Pi camera through picamera2 (from the OS package python3-picamera2).

picamera2 is imported inside the source only, so a laptop without it runs everything else. What
it is asked for, and why:

- the sensor's full-field binned mode (``sensor={"output_size", "bit_depth"}``): asked for a
  1152 x 648 picture alone, picamera2 picks the Camera Module 3's cropped 1536 x 864 mode, which
  sees 46 x 28 degrees instead of 66 x 41, less than the tray at the mount's heights;
- focus: a Camera Module 3 (it has ``AfMode``) is focused by hand on the tray floor
  (``LensPosition`` in dioptres = 1000 / height in mm), or by one autofocus cycle at start whose
  result is then held; fixed-focus cameras (Module 2, HQ) are left alone;
- mains flicker: ``AeFlickerMode`` manual with the lamps' period, when the mains frequency is set;
- every capture has a timeout (``capture_array(wait=...)``), so a loose ribbon cannot hang the
  device: the camera is restarted instead;
- exposure and white balance held (``AeEnable``/``AwbEnable`` off with the ``ExposureTime``,
  ``AnalogueGain`` and ``ColourGains`` the camera had settled on) once the empty tray is
  calibrated, so the empty-tray reference and later frames are lit alike.

Its "RGB888" format is stored B, G, R in memory: exactly what OpenCV expects. picamera2 0.3.17 or
newer (Raspberry Pi OS Bookworm) is needed for capture timeouts and the sensor configuration.
"""

from __future__ import annotations

import contextlib
import logging
import math
import time
from collections.abc import Callable

import numpy as np

from firmware.frames import (
    CAPTURE_SIZE,
    CameraLibraryMissing,
    CameraSettings,
    CameraStalled,
    Frame,
    FrameError,
    FrameSource,
    NoCamera,
    Revival,
    SourceError,
)

log = logging.getLogger(__name__)

# libcamera's values for its enum controls (control_ids.yaml); picamera2 takes the plain numbers,
# which keeps libcamera itself out of this module's imports.
AF_MODE_MANUAL = 0
AE_FLICKER_MANUAL = 1

LOCKED_CONTROLS = ("ExposureTime", "AnalogueGain", "ColourGains")
LOCK_KIND = "picamera"


def full_field_mode(modes: list[dict], size: tuple[int, int]) -> dict | None:
    """The ``sensor`` configuration for the smallest mode that sees the sensor's whole field.

    ``modes`` is picamera2's ``sensor_modes``: each with its ``size``, ``bit_depth`` and
    ``crop_limits`` (the part of the sensor it reads). Among the modes reading the widest area,
    the smallest one still at least ``size`` (the binned mode: fast, and sharp enough); the
    deepest bit depth on a tie. None when the list says nothing about fields (not a raw sensor).
    """
    usable = [m for m in modes if m.get("crop_limits") and m.get("size") and m.get("bit_depth")]
    if not usable:
        return None

    def field(mode: dict) -> int:
        return int(mode["crop_limits"][2]) * int(mode["crop_limits"][3])

    widest = max(field(m) for m in usable)
    full = [m for m in usable if field(m) == widest]
    big_enough = [m for m in full if m["size"][0] >= size[0] and m["size"][1] >= size[1]]

    def cost(mode: dict) -> tuple[int, int]:
        return mode["size"][0] * mode["size"][1], -int(mode["bit_depth"])

    chosen = min(big_enough, key=cost) if big_enough else max(full, key=lambda m: cost(m)[0])
    width, height = (int(v) for v in chosen["size"])
    return {"output_size": (width, height), "bit_depth": int(chosen["bit_depth"])}


def lens_position(height_mm: float, limits: tuple | None) -> float:
    """Dioptres for a subject ``height_mm`` away, inside the lens's (min, max, default) range."""
    dioptres = 1000.0 / height_mm
    if limits:
        low, high = float(limits[0]), float(limits[1])
        if high > low:
            dioptres = min(max(dioptres, low), high)
    return round(dioptres, 3)


def checked_lock(controls: dict) -> dict:
    """A saved exposure lock as picamera2 controls, or ValueError saying what is wrong with it."""
    try:
        exposure = int(controls["ExposureTime"])
        gain = float(controls["AnalogueGain"])
        red, blue = (float(v) for v in controls["ColourGains"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"not an exposure lock ({exc!r})") from exc
    if exposure <= 0 or not all(math.isfinite(v) and v > 0 for v in (gain, red, blue)):
        raise ValueError("exposure time, gain and colour gains must be positive")
    return {"ExposureTime": exposure, "AnalogueGain": gain, "ColourGains": (red, blue)}


class PiCameraSource(FrameSource):
    live = True
    RESTART_AFTER_FAILURES = 5  # errors other than a timeout: a few in a row, then restart
    RETRY_SECONDS = 2.0  # between tries to start a camera that would not start again
    AUTOFOCUS_SECONDS = 5.0  # one autofocus sweep takes about a second
    SETTLE_FRAMES = (30, 150)  # exposure may settle after 30 frames (1 s), must by 150 (5 s)

    def __init__(
        self,
        size: tuple[int, int] = CAPTURE_SIZE,
        camera_num: int = 0,
        settings: CameraSettings | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ):
        try:
            from picamera2 import Picamera2
        except ImportError as exc:
            raise CameraLibraryMissing(
                "picamera2 is not installed. On a Raspberry Pi: `sudo apt install "
                "python3-picamera2` and a venv made with --system-site-packages "
                "(hardware/install.sh does both)."
            ) from exc
        if not Picamera2.global_camera_info():
            raise NoCamera(
                "no Raspberry Pi camera found (check the ribbon cable; "
                "`rpicam-hello --list-cameras` should list it)"
            )
        self.name = f"Pi camera {camera_num}"
        self.settings = settings or CameraSettings()
        self._factory = Picamera2
        self._size = tuple(size)
        self._camera_num = camera_num
        self._clock = clock
        self._sensor: dict | None = None  # the chosen sensor mode, found once
        self._held_lens: float | None = None  # where autofocus put the lens: kept from then on
        self._lock: dict | None = None  # exposure controls held since the calibration
        self._counter = 0
        self._failures = 0
        self._revival = Revival(
            clock, "the Pi camera stopped answering",
            lambda why, exc: f"{why}; it does not start again ({exc}); trying every few seconds",
        )
        self.focus: dict = {}  # how the lens was set, for the log and the health page
        self._camera = self._start()

    # starting ------------------------------------------------------------------------------

    def _start(self):
        camera = None
        try:
            camera = self._factory(self._camera_num)
            available = dict(camera.camera_controls)
            sensor = self._sensor_config(camera)
            main = {"size": self._size, "format": "RGB888"}
            if sensor:
                config = camera.create_video_configuration(main=main, sensor=sensor)
            else:
                config = camera.create_video_configuration(main=main)
            camera.configure(config)
            controls = self._controls(available)
            if controls:
                camera.set_controls(controls)
            camera.start()
            self._focus(camera, available)
        except Exception as exc:  # picamera2 raises a mix of RuntimeError/IndexError/OSError
            if camera is not None:  # or the next start finds the camera busy
                self._close_quietly(camera)
            raise SourceError(f"the Pi camera would not start: {exc}") from exc
        return camera

    def _sensor_config(self, camera) -> dict | None:
        if self._sensor is None:
            try:
                modes = list(camera.sensor_modes)
            except Exception as exc:  # reading the modes reconfigures the camera; may fail
                log.warning(
                    "%s: cannot list its sensor modes (%s); picamera2 picks one", self.name, exc
                )
                modes = []
            self._sensor = full_field_mode(modes, self._size) or {}
            if self._sensor:
                width, height = self._sensor["output_size"]
                log.info(
                    "%s: sensor mode %dx%d, %d-bit: the sensor's full field of view",
                    self.name, width, height, self._sensor["bit_depth"],
                )
        return self._sensor or None

    def _controls(self, available: dict) -> dict:
        """Flicker, focus and the held exposure: those of them this camera has."""
        wanted: dict = {}
        if self.settings.flicker_period_us:
            wanted["AeFlickerMode"] = AE_FLICKER_MANUAL
            wanted["AeFlickerPeriod"] = self.settings.flicker_period_us
        if "AfMode" in available:
            height = self.settings.lens_height_mm
            if height > 0:
                position = lens_position(height, available.get("LensPosition"))
                wanted |= {"AfMode": AF_MODE_MANUAL, "LensPosition": position}
                self.focus = {"mode": "manual", "lens_position": position, "height_mm": height}
            elif self._held_lens is not None:
                wanted |= {"AfMode": AF_MODE_MANUAL, "LensPosition": self._held_lens}
        else:
            self.focus = {"mode": "fixed"}
        if self._lock:
            wanted |= {"AeEnable": False, "AwbEnable": False, **self._lock}
        refused = sorted(set(wanted) - set(available))
        if refused:
            log.warning("%s has no control %s; going on without", self.name, ", ".join(refused))
        return {k: v for k, v in wanted.items() if k in available}

    def _focus(self, camera, available: dict) -> None:
        """One autofocus cycle when no height is set, then hold the lens where it ended."""
        if "AfMode" not in available or self.settings.lens_height_mm > 0:
            return
        if self._held_lens is not None:  # a restart: the lens goes back where it was
            return
        try:
            focused = camera.autofocus_cycle(wait=self.AUTOFOCUS_SECONDS)
            position = camera.capture_metadata(wait=self.settings.capture_timeout).get(
                "LensPosition"
            )
        except Exception as exc:  # a timeout included: the camera still gives pictures
            log.warning("%s: autofocus did not finish (%s)", self.name, exc)
            self.focus = {"mode": "autofocus", "focused": False}
            return
        self.focus = {"mode": "autofocus", "focused": bool(focused), "lens_position": position}
        if position is None:
            return
        self._held_lens = float(position)
        with contextlib.suppress(Exception):
            camera.set_controls({"AfMode": AF_MODE_MANUAL, "LensPosition": self._held_lens})
        distance = f"about {1000 / position:.0f} mm" if position > 0 else "far away"
        if focused:
            log.info(
                "%s: autofocus sharp at %s (LensPosition %.2f), held there; set "
                "lens_height_mm in [camera] to skip autofocus", self.name, distance, position,
            )
        else:
            log.warning(
                "%s: autofocus found nothing sharp (an empty, plain tray floor?); the lens "
                "stays at %s. Set lens_height_mm in [camera] to focus on the tray floor",
                self.name, distance,
            )

    # reading --------------------------------------------------------------------------------

    def read(self) -> Frame:
        if self._camera is None:
            self._start_again()
        timeout = self.settings.capture_timeout
        try:
            image = self._camera.capture_array("main", wait=timeout)
        except TimeoutError as exc:
            self._failures = 0
            why = f"the Pi camera gave no picture for {timeout:g} s (a loose ribbon cable?)"
            self._restart(why)
            raise CameraStalled(f"{why}; it has been restarted") from exc
        except Exception as exc:
            self._failures += 1
            why = f"the Pi camera gave no frame: {exc}"
            if self._failures >= self.RESTART_AFTER_FAILURES:
                self._failures = 0
                self._restart(why)
            raise FrameError(why) from exc
        self._failures = 0
        self._counter += 1
        return Frame(np.ascontiguousarray(image[:, :, :3]), f"pi-{self._counter}", time.time())

    def _restart(self, why: str) -> None:
        """A camera that stopped answering (loose ribbon, driver hiccup): start it afresh."""
        camera, self._camera = self._camera, None
        if camera is not None:
            self._close_quietly(camera)
        self._revival.restarted()
        log.warning("%s; restarting it (restart %d)", why, self.restarts)
        self._start_again(why)

    def _start_again(self, why: str = "") -> None:
        self._camera = self._revival.bring_back(self._start, self.RETRY_SECONDS, why)
        log.info("%s is back", self.name)

    @property
    def restarts(self) -> int:
        return self._revival.restarts

    # exposure -------------------------------------------------------------------------------

    def lock_exposure(self) -> dict:
        camera = self._camera
        if camera is None:
            raise FrameError(self._revival.lost or "the Pi camera is not running")
        available = dict(camera.camera_controls)
        self._lock = None
        free = {k: True for k in ("AeEnable", "AwbEnable") if k in available}
        try:
            if free:
                camera.set_controls(free)
            metadata = self._settled_metadata(camera)
        except TimeoutError as exc:
            raise CameraStalled(
                "the Pi camera gave no picture while settling its exposure"
            ) from exc
        except Exception as exc:  # restarted under us by the watch loop, or a driver error
            raise FrameError(f"the Pi camera could not settle its exposure: {exc}") from exc
        try:
            self._lock = checked_lock({k: metadata.get(k) for k in LOCKED_CONTROLS})
        except ValueError as exc:
            raise FrameError(f"the Pi camera did not report its exposure: {exc}") from exc
        try:
            camera.set_controls(self._controls(available))
        except Exception as exc:
            raise FrameError(f"the Pi camera refused its exposure settings: {exc}") from exc
        log.info("%s: exposure and white balance held at %s", self.name, self._lock)
        return {"camera": LOCK_KIND, "controls": _jsonable(self._lock)}

    def _settled_metadata(self, camera) -> dict:
        """The metadata of a frame once automatic exposure says it has converged."""
        least, most = self.SETTLE_FRAMES
        metadata: dict = {}
        for count in range(1, most + 1):
            metadata = camera.capture_metadata(wait=self.settings.capture_timeout)
            if count >= least and metadata.get("AeLocked", True):
                break
        else:
            log.warning("%s: exposure still moving after %d frames; held as it is", self.name, most)
        return metadata

    def use_exposure_lock(self, lock: dict | None) -> None:
        if lock is None:
            self._lock = None
            return
        if lock.get("camera") != LOCK_KIND:
            log.info(
                "%s: the saved exposure lock is for a %s; not used", self.name, lock.get("camera")
            )
            return
        try:
            self._lock = checked_lock(lock.get("controls") or {})
        except ValueError as exc:
            log.warning("%s: ignoring the saved exposure lock: %s", self.name, exc)
            return
        if self._camera is not None:
            self._camera.set_controls(self._controls(dict(self._camera.camera_controls)))
        log.info(
            "%s: exposure and white balance held at the calibration's %s", self.name, self._lock
        )

    # closing --------------------------------------------------------------------------------

    @staticmethod
    def _close_quietly(camera) -> None:
        with contextlib.suppress(Exception):
            camera.stop()
        with contextlib.suppress(Exception):
            camera.close()

    def close(self) -> None:
        camera, self._camera = self._camera, None
        if camera is None:
            return
        try:
            camera.stop()
        finally:
            camera.close()


def _jsonable(controls: dict) -> dict:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in controls.items()}
