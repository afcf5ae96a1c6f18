"""Where frames come from: the seam between the camera hardware and everything else.

Every source answers ``read()`` with the current :class:`Frame` (the same frame id again when
nothing new arrived, so the watcher can skip work) or raises :class:`FrameError` for a frame it
could not get this time; :class:`SourceError` is for a source that cannot start at all. Real camera
libraries are imported inside their source only, so a laptop without them runs everything else.
"""

from __future__ import annotations

import logging
import os
import stat
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from companion.text import Msg, said_by
from firmware.frames import (
    CAPTURE_SIZE,
    CameraLibraryMissing,
    CameraSettings,
    CameraStalled,
    Frame,
    FrameError,
    FrameSource,
    NoCamera,
    NoFrameYet,
    SourceError,
    SourceSettingError,
)
from firmware.picamera_source import PiCameraSource
from firmware.webcam_source import WebcamSource
from vision import VisionError, load_image

__all__ = [
    "CAPTURE_SIZE",
    "DEMO_DIR",
    "AwaitedCamera",
    "CameraLibraryMissing",
    "CameraSettings",
    "CameraStalled",
    "DemoSource",
    "DemoStep",
    "FolderSource",
    "Frame",
    "FrameError",
    "FrameSource",
    "NoCamera",
    "NoFrameYet",
    "PiCameraSource",
    "SourceError",
    "SourceSettingError",
    "WebcamSource",
    "default_demo_script",
    "open_source",
]

log = logging.getLogger(__name__)

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff")
DEMO_DIR = Path(__file__).with_name("demo")
# how long after its last change a picture in the frame folder may stay unreadable (empty, cut
# off) before its writer counts as broken
STILL_WRITING_S = 5.0


class FolderSource(FrameSource):
    """The newest image file in a folder is the current frame.

    Lets a laptop stand in for the camera (copy a photo in and the tray "changes"), and lets any
    other program (a phone upload, ``rpicam-still`` in a loop) feed the device through the disk.
    """

    def __init__(self, folder: str | Path, wall_clock: Callable[[], float] = time.time):
        self.folder = Path(folder)
        if not self.folder.is_dir():
            raise SourceSettingError(
                f"frame folder {self.folder} does not exist or is not a folder (the camera "
                "sources: demo, picamera, webcam[:N] or the path of a folder of pictures)")
        self.name = f"folder {self.folder}"
        self._wall_clock = wall_clock
        self._cached: tuple[tuple, Frame] | None = None
        self._unstattable: set[str] = set()  # names already said in the log as unreadable

    def _newest(self) -> tuple[Path, os.stat_result] | None:
        """The newest picture in the folder and its stat, or None when it holds none.

        Only regular files count: opening a FIFO (or a device) that happens to be called
        ``x.jpg`` blocks until something writes to it, which would freeze the camera loop for
        good. An entry that cannot be stat'ed (a symlink loop, no permission) is skipped like a
        non-image, so the other pictures are still read; it is said once in the log, not at
        every poll, and said again only if it comes back after having been fine or gone.
        """
        newest, newest_key = None, None
        try:
            paths = list(self.folder.iterdir())
        except OSError as exc:  # deleted, unmounted, no longer readable: the camera is gone
            raise FrameError(f"the frame folder {self.folder} is gone ({exc.strerror})") from exc
        unstattable: set[str] = set()
        for path in paths:
            if path.suffix.lower() not in IMAGE_SUFFIXES or path.name.startswith("."):
                continue
            try:
                info = path.stat()
            except FileNotFoundError:  # removed while we looked (or a dangling symlink)
                continue
            except OSError as exc:  # ELOOP, EACCES...: not a picture we can use
                unstattable.add(path.name)
                if path.name not in self._unstattable:
                    log.warning("skipping %s in the frame folder: %s", path.name,
                                exc.strerror or exc)
                continue
            if not stat.S_ISREG(info.st_mode):  # a FIFO, socket, device or folder
                continue
            key = (info.st_mtime_ns, path.name)
            if newest_key is None or key > newest_key:
                newest, newest_key = (path, info), key
        self._unstattable = unstattable  # forget the fixed or removed ones
        return newest

    def read(self) -> Frame:
        newest = self._newest()
        if newest is None and self._cached is not None:
            # it gave pictures: one that stops is a camera that stopped, not a tray to wait for
            raise FrameError(Msg("the frame folder {folder} holds no picture any more (the last "
                                 "was {last})", folder=str(self.folder),
                                 last=self._cached[1].label))
        if newest is None:
            raise NoFrameYet(Msg("no image in {folder} yet", folder=str(self.folder)))
        # The stat that found it a regular file also keys the frame: no second stat, so no
        # second chance to meet an entry that cannot be stat'ed, or a FIFO put in its place.
        path, info = newest
        key = (path.name, info.st_mtime_ns, info.st_size)
        if self._cached and self._cached[0] == key:
            return self._cached[1]
        try:
            image = load_image(path)
        except VisionError as exc:
            if self._wall_clock() - info.st_mtime < STILL_WRITING_S:
                # A program writing into the folder (an upload, ``rpicam-still``, a copy) makes
                # the file before it fills it: empty or cut off, it is a picture not there yet,
                # not a broken camera. The last picture stands meanwhile; one still unreadable
                # STILL_WRITING_S after its last change is a camera problem, in its own words.
                if self._cached is not None:
                    return self._cached[1]
                raise NoFrameYet(Msg("{name} in {folder} cannot be read yet: waiting for it to "
                                     "be written", name=path.name,
                                     folder=str(self.folder))) from exc
            raise FrameError(str(exc)) from exc  # its words name the file already
        frame = Frame(image, f"{path.name}@{info.st_mtime_ns}", self._wall_clock(), path.name)
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


class AwaitedCamera(FrameSource):
    """A live camera that would not open at start, tried again every ``retry_seconds``.

    Why not the fault page: a ribbon cable that came loose, or a camera another program holds,
    would otherwise hide the whole game (score sheet, history, typed counts) until someone
    fixed the camera. Meanwhile every read is a camera problem in words (the tray card says it,
    ``/api/health`` answers 503), and the game goes on with counts typed in. Not ``live`` until
    the camera opens: a camera that never started cannot stall, and systemd's watchdog must not
    restart a device that serves the game. Once opened it is the camera, exposure lock included.
    """

    def __init__(self, open_camera: Callable[[], FrameSource], why: SourceError, *,
                 retry_seconds: float = 10.0, clock: Callable[[], float] = time.monotonic):
        self._open = open_camera
        self._why: Msg | str = said_by(why)
        self._retry_seconds = retry_seconds
        self._clock = clock
        self._retry_at = clock() + retry_seconds
        self._camera: FrameSource | None = None
        self._lock: dict | None = None

    @property
    def name(self) -> str:
        return self._camera.name if self._camera else "the camera (not opened)"

    @property
    def live(self) -> bool:
        return self._camera.live if self._camera else False

    def read(self) -> Frame:
        if self._camera is None and self._clock() >= self._retry_at:
            try:
                camera = self._open()
            except SourceError as exc:
                self._why = said_by(exc)
                self._retry_at = self._clock() + self._retry_seconds
            else:
                camera.use_exposure_lock(self._lock)
                log.info("the camera opened after all: %s", camera.name)
                self._camera = camera
        if self._camera is None:
            raise FrameError(Msg("{why} (tried again every {seconds} s; the game goes on with "
                                 "counts typed in)", why=self._why,
                                 seconds=f"{self._retry_seconds:.0f}"))
        return self._camera.read()

    def lock_exposure(self) -> dict | None:
        return self._camera.lock_exposure() if self._camera else None

    def use_exposure_lock(self, lock: dict | None) -> None:
        self._lock = lock
        if self._camera:
            self._camera.use_exposure_lock(lock)

    def close(self) -> None:
        if self._camera:
            self._camera.close()


def open_source(
    spec: str, size: tuple[int, int] = CAPTURE_SIZE, settings: CameraSettings | None = None
) -> FrameSource:
    """Turn ``--source`` text into a source: demo, picamera, webcam[:N] or a folder path.

    ``size`` (width, height) is what the live cameras are asked to deliver, ``settings`` how they
    are run (focus, flicker, capture timeout).
    """
    if spec == "demo":
        return DemoSource()
    if spec == "picamera":
        return PiCameraSource(size, settings=settings)
    if spec == "webcam" or spec.startswith("webcam:"):
        _, _, index = spec.partition(":")
        if index and not index.isdigit():
            raise SourceSettingError(f"webcam index must be a number, got {index!r}")
        return WebcamSource(int(index or 0), size, settings=settings)
    return FolderSource(spec)
