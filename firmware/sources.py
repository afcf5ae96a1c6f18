"""Where frames come from: the seam between the camera hardware and everything else.

Every source answers ``read()`` with the current :class:`Frame` (the same frame id again when
nothing new arrived, so the watcher can skip work) or raises :class:`FrameError` for a frame it
could not get this time; :class:`SourceError` is for a source that cannot start at all. Real camera
libraries are imported inside their source only, so a laptop without them runs everything else.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from vision import VisionError, load_image

log = logging.getLogger(__name__)

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff")
DEMO_DIR = Path(__file__).with_name("demo")
CAPTURE_SIZE = (1152, 648)


class SourceError(RuntimeError):
    """The source cannot be opened at all (no camera, no library, no folder)."""


class FrameError(RuntimeError):
    """This frame could not be had; the next call may succeed."""


class NoFrameYet(FrameError):
    """Nothing to look at yet (an empty folder): waiting, not a fault."""


@dataclass(frozen=True)
class Frame:
    image: np.ndarray
    frame_id: str
    captured_at: float  # unix seconds
    label: str = ""


class FrameSource:
    """Base for sources; ``name`` is shown to the players when something goes wrong."""

    name = "source"

    def read(self) -> Frame:  # pragma: no cover - interface
        raise NotImplementedError

    def close(self) -> None:
        """Release the device; sources without one have nothing to do."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class FolderSource(FrameSource):
    """The newest image file in a folder is the current frame.

    Lets a laptop stand in for the camera (copy a photo in and the tray "changes"), and lets any
    other program (a phone upload, ``rpicam-still`` in a loop) feed the device through the disk.
    """

    def __init__(self, folder: str | Path, wall_clock: Callable[[], float] = time.time):
        self.folder = Path(folder)
        if not self.folder.is_dir():
            raise SourceError(f"frame folder {self.folder} does not exist or is not a folder")
        self.name = f"folder {self.folder}"
        self._wall_clock = wall_clock
        self._cached: tuple[tuple, Frame] | None = None

    def _newest(self) -> Path | None:
        newest, newest_key = None, None
        for path in self.folder.iterdir():
            if path.suffix.lower() not in IMAGE_SUFFIXES or path.name.startswith("."):
                continue
            try:
                key = (path.stat().st_mtime_ns, path.name)
            except FileNotFoundError:  # removed while we looked
                continue
            if newest_key is None or key > newest_key:
                newest, newest_key = path, key
        return newest

    def read(self) -> Frame:
        path = self._newest()
        if path is None:
            raise NoFrameYet(f"no image in {self.folder} yet")
        try:
            stat = path.stat()
        except FileNotFoundError as exc:
            raise FrameError(f"{path.name} disappeared while being read") from exc
        key = (path.name, stat.st_mtime_ns, stat.st_size)
        if self._cached and self._cached[0] == key:
            return self._cached[1]
        try:
            image = load_image(path)
        except VisionError as exc:
            raise FrameError(f"{path.name}: {exc}") from exc
        frame = Frame(image, f"{path.name}@{stat.st_mtime_ns}", self._wall_clock(), path.name)
        self._cached = (key, frame)
        return frame


@dataclass(frozen=True)
class DemoStep:
    file: str
    seconds: float


def default_demo_script(folder: Path = DEMO_DIR) -> list[DemoStep]:
    """Empty tray, a drop, empty tray, the next drop...: what a game's phases look like."""
    drops = sorted(p.name for p in folder.glob("drop*.jpg"))
    steps: list[DemoStep] = []
    for drop in drops:
        steps += [DemoStep("empty.jpg", 3.0), DemoStep(drop, 9.0)]
    return steps


class DemoSource(FrameSource):
    """Replays bundled tray pictures on a timetable: the device shows something with no camera."""

    def __init__(
        self,
        folder: Path = DEMO_DIR,
        script: Sequence[DemoStep] | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
    ):
        self.folder = Path(folder)
        self.script = list(script) if script is not None else default_demo_script(self.folder)
        if not self.script:
            raise SourceError(f"demo folder {self.folder} holds no drop*.jpg pictures")
        self.name = "demo replay"
        self._clock = clock
        self._wall_clock = wall_clock
        self._start = clock()
        self._period = sum(step.seconds for step in self.script)
        self._images: dict[str, np.ndarray] = {}
        self._last: Frame | None = None

    def _step_now(self) -> tuple[int, int]:
        """(lap, index) of the step the timetable is at."""
        elapsed = self._clock() - self._start
        lap, into = divmod(elapsed, self._period)
        for index, step in enumerate(self.script):
            if into < step.seconds:
                return int(lap), index
            into -= step.seconds
        return int(lap), len(self.script) - 1

    def read(self) -> Frame:
        lap, index = self._step_now()
        frame_id = f"demo-{lap}-{index}"
        if self._last is not None and self._last.frame_id == frame_id:
            return self._last
        step = self.script[index]
        if step.file not in self._images:
            try:
                self._images[step.file] = load_image(self.folder / step.file)
            except VisionError as exc:
                raise FrameError(f"demo picture {step.file}: {exc}") from exc
        self._last = Frame(self._images[step.file], frame_id, self._wall_clock(), step.file)
        return self._last


class WebcamSource(FrameSource):
    """A USB webcam through OpenCV; reopens the device when it drops off the bus."""

    REOPEN_AFTER_FAILURES = 5

    def __init__(self, index: int = 0, size: tuple[int, int] = CAPTURE_SIZE, capture_factory=None):
        import cv2

        self.index = index
        self.size = size
        self.name = f"webcam {index}"
        self._factory = capture_factory or cv2.VideoCapture
        self._failures = 0
        self._counter = 0
        self._capture = self._open()

    def _open(self):
        import cv2

        capture = self._factory(self.index)
        if capture is None or not capture.isOpened():
            raise SourceError(
                f"no webcam at index {self.index} (is it plugged in? `ls /dev/video*` lists them)"
            )
        capture.set(cv2.CAP_PROP_FRAME_WIDTH, self.size[0])
        capture.set(cv2.CAP_PROP_FRAME_HEIGHT, self.size[1])
        return capture

    def read(self) -> Frame:
        ok, image = self._capture.read()
        if not ok or image is None:
            self._failures += 1
            if self._failures >= self.REOPEN_AFTER_FAILURES:
                self._failures = 0
                self._capture.release()
                try:
                    self._capture = self._open()
                except SourceError as exc:
                    raise FrameError(f"webcam lost: {exc}") from exc
            raise FrameError(f"webcam {self.index} gave no frame")
        self._failures = 0
        self._counter += 1
        return Frame(image, f"webcam-{self._counter}", time.time())

    def close(self) -> None:
        self._capture.release()


class PiCameraSource(FrameSource):
    """The Raspberry Pi camera through picamera2 (from the OS package python3-picamera2).

    picamera2's "RGB888" format is stored B, G, R in memory: exactly what OpenCV expects.
    """

    RESTART_AFTER_FAILURES = 5

    def __init__(self, size: tuple[int, int] = CAPTURE_SIZE, camera_num: int = 0):
        try:
            from picamera2 import Picamera2
        except ImportError as exc:
            raise SourceError(
                "picamera2 is not installed. On a Raspberry Pi: `sudo apt install "
                "python3-picamera2` and a venv made with --system-site-packages "
                "(hardware/install.sh does both)."
            ) from exc
        if not Picamera2.global_camera_info():
            raise SourceError(
                "no Raspberry Pi camera found (check the ribbon cable; "
                "`rpicam-hello --list-cameras` should list it)"
            )
        self.name = f"Pi camera {camera_num}"
        self._factory = Picamera2
        self._size = tuple(size)
        self._camera_num = camera_num
        self._camera = self._start()
        self._counter = 0
        self._failures = 0

    def _start(self):
        try:
            camera = self._factory(self._camera_num)
            config = camera.create_video_configuration(
                main={"size": self._size, "format": "RGB888"}
            )
            camera.configure(config)
            camera.start()
        except Exception as exc:  # picamera2 raises a mix of RuntimeError/IndexError/OSError
            raise SourceError(f"the Pi camera would not start: {exc}") from exc
        return camera

    def _restart(self) -> None:
        """A camera that stopped answering (loose ribbon, driver hiccup): start it afresh."""
        with contextlib.suppress(Exception):
            self.close()
        try:
            self._camera = self._start()
        except SourceError as exc:
            raise FrameError(f"Pi camera lost: {exc}") from exc

    def read(self) -> Frame:
        try:
            image = self._camera.capture_array("main")
        except Exception as exc:
            self._failures += 1
            if self._failures >= self.RESTART_AFTER_FAILURES:
                self._failures = 0
                self._restart()
            raise FrameError(f"the Pi camera gave no frame: {exc}") from exc
        self._failures = 0
        self._counter += 1
        return Frame(np.ascontiguousarray(image[:, :, :3]), f"pi-{self._counter}", time.time())

    def close(self) -> None:
        try:
            self._camera.stop()
        finally:
            self._camera.close()


def open_source(spec: str, size: tuple[int, int] = CAPTURE_SIZE) -> FrameSource:
    """Turn ``--source`` text into a source: demo, picamera, webcam[:N] or a folder path.

    ``size`` (width, height) is what the live cameras are asked to deliver.
    """
    if spec == "demo":
        return DemoSource()
    if spec == "picamera":
        return PiCameraSource(size)
    if spec == "webcam" or spec.startswith("webcam:"):
        _, _, index = spec.partition(":")
        if index and not index.isdigit():
            raise SourceError(f"webcam index must be a number, got {index!r}")
        return WebcamSource(int(index or 0), size)
    return FolderSource(spec)
