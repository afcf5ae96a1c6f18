import os
import shutil
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from firmware.sources import (
    DEMO_DIR,
    DemoSource,
    DemoStep,
    FolderSource,
    FrameError,
    NoFrameYet,
    PiCameraSource,
    SourceError,
    WebcamSource,
    open_source,
)


class FakeClock:
    def __init__(self, now=0.0):
        self.now = now

    def __call__(self):
        return self.now


def write_image(path: Path, value: int, mtime: float | None = None) -> Path:
    cv2.imwrite(str(path), np.full((48, 64, 3), value, np.uint8))
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def test_folder_source_serves_the_newest_image_and_notices_a_new_one(tmp_path):
    write_image(tmp_path / "a.png", 10, mtime=1000)
    source = FolderSource(tmp_path)
    first = source.read()
    assert first.label == "a.png" and first.image[0, 0, 0] == 10
    assert source.read() is first  # unchanged file: same frame, no decode
    write_image(tmp_path / "b.png", 200, mtime=2000)
    second = source.read()
    assert second.label == "b.png" and second.frame_id != first.frame_id
    assert second.image[0, 0, 0] == 200


def test_folder_source_ignores_other_files_and_says_when_empty(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    source = FolderSource(tmp_path)
    with pytest.raises(NoFrameYet, match="no image"):
        source.read()


def test_folder_source_reports_a_corrupt_image_as_a_frame_error(tmp_path):
    (tmp_path / "bad.jpg").write_bytes(b"not really a jpeg")
    with pytest.raises(FrameError, match=r"bad\.jpg"):
        FolderSource(tmp_path).read()


def test_folder_source_needs_a_folder(tmp_path):
    with pytest.raises(SourceError, match="does not exist"):
        FolderSource(tmp_path / "missing")


def test_demo_source_follows_its_timetable_and_loops():
    clock = FakeClock()
    script = [DemoStep("empty.jpg", 2.0), DemoStep("drop01.jpg", 5.0)]
    source = DemoSource(DEMO_DIR, script, clock=clock)
    first = source.read()
    assert first.label == "empty.jpg"
    assert source.read() is first
    clock.now = 2.5
    assert source.read().label == "drop01.jpg"
    clock.now = 7.5  # second lap
    again = source.read()
    assert again.label == "empty.jpg" and again.frame_id != first.frame_id


def test_default_demo_alternates_empty_tray_and_drops():
    source = DemoSource()
    files = [step.file for step in source.script]
    assert files[0] == "empty.jpg" and files[1].startswith("drop")
    assert len(files) == 2 * len(list(DEMO_DIR.glob("drop*.jpg")))


class FakeCapture:
    def __init__(self, frames, opened=True):
        self.frames = list(frames)
        self.opened = opened
        self.released = False

    def isOpened(self):
        return self.opened

    def set(self, *_):
        return True

    def read(self):
        if not self.frames:
            return False, None
        return True, self.frames.pop(0)

    def release(self):
        self.released = True


def test_webcam_source_reads_frames_and_reopens_a_lost_camera():
    image = np.zeros((4, 4, 3), np.uint8)
    captures = [FakeCapture([image]), FakeCapture([image, image])]
    opened = []

    def factory(index):
        opened.append(index)
        return captures.pop(0)

    source = WebcamSource(2, capture_factory=factory)
    assert source.read().frame_id == "webcam-1"
    for _ in range(WebcamSource.REOPEN_AFTER_FAILURES):
        with pytest.raises(FrameError):
            source.read()
    assert opened == [2, 2]  # reopened after the failures
    assert source.read().frame_id == "webcam-2"


def test_webcam_source_that_cannot_open_says_so():
    with pytest.raises(SourceError, match="no webcam at index 0"):
        WebcamSource(0, capture_factory=lambda i: FakeCapture([], opened=False))


def test_picamera_without_the_library_gives_install_advice(monkeypatch):
    monkeypatch.setitem(sys.modules, "picamera2", None)  # import fails
    with pytest.raises(SourceError, match="python3-picamera2"):
        PiCameraSource()


def test_open_source_understands_the_spec(tmp_path):
    assert isinstance(open_source("demo"), DemoSource)
    assert isinstance(open_source(str(tmp_path)), FolderSource)
    with pytest.raises(SourceError, match="must be a number"):
        open_source("webcam:abc")


def test_demo_pictures_are_shipped_in_the_package():
    assert (DEMO_DIR / "empty.jpg").is_file()
    assert shutil.disk_usage(DEMO_DIR)  # the folder is real, not a link into ../shared
    assert not DEMO_DIR.is_symlink()
