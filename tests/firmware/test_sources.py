import os
import shutil
import sys
import threading
from pathlib import Path

import cv2
import numpy as np
import pytest

from firmware.sources import (
    DEMO_DIR,
    STILL_WRITING_S,
    AwaitedCamera,
    CameraSettings,
    CameraStalled,
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


def test_a_folder_emptied_after_its_pictures_is_a_camera_problem_until_one_comes(tmp_path):
    write_image(tmp_path / "a.png", 10, mtime=1000)
    source = FolderSource(tmp_path)
    source.read()
    (tmp_path / "a.png").unlink()
    with pytest.raises(FrameError, match=r"holds no picture any more \(the last was a\.png\)"):
        source.read()
    write_image(tmp_path / "b.png", 20, mtime=2000)
    assert source.read().label == "b.png"


def test_a_picture_still_being_written_is_waited_for_not_a_camera_problem(tmp_path):
    now = [1000.0]
    (tmp_path / "a.png").touch()  # made, not yet filled
    os.utime(tmp_path / "a.png", (now[0], now[0]))
    source = FolderSource(tmp_path, wall_clock=lambda: now[0])
    with pytest.raises(NoFrameYet, match=r"a\.png .* cannot be read yet: waiting"):
        source.read()
    write_image(tmp_path / "a.png", 10, mtime=1001)
    assert source.read().label == "a.png"
    (tmp_path / "b.png").touch()
    os.utime(tmp_path / "b.png", (2000, 2000))
    now[0] = 2001.0
    assert source.read().label == "a.png"  # the last picture stands meanwhile
    write_image(tmp_path / "b.png", 20, mtime=2002)
    assert source.read().label == "b.png"


def test_a_picture_that_stays_empty_is_a_camera_problem(tmp_path):
    (tmp_path / "a.png").touch()
    os.utime(tmp_path / "a.png", (1000, 1000))
    source = FolderSource(tmp_path, wall_clock=lambda: 1000 + STILL_WRITING_S + 1)
    with pytest.raises(FrameError, match=r"empty file: .*a\.png"):
        source.read()


def test_a_jpeg_cut_off_mid_copy_is_waited_for_then_a_camera_problem_if_it_stays_so(tmp_path):
    texture = np.random.default_rng(0).integers(0, 256, (120, 160, 3), np.uint8)
    whole = cv2.imencode(".jpg", texture)[1].tobytes()
    write_image(tmp_path / "a.png", 10, mtime=1000)
    now = [1001.0]
    source = FolderSource(tmp_path, wall_clock=lambda: now[0])
    assert source.read().label == "a.png"
    (tmp_path / "b.jpg").write_bytes(whole[: len(whole) // 2])  # the copy so far
    os.utime(tmp_path / "b.jpg", (2000, 2000))
    now[0] = 2000 + STILL_WRITING_S - 1
    assert source.read().label == "a.png"  # the last picture stands meanwhile
    now[0] = 2000 + STILL_WRITING_S + 1  # the writer stopped half way
    with pytest.raises(FrameError, match=r"truncated JPEG .*b\.jpg"):
        source.read()
    (tmp_path / "b.jpg").write_bytes(whole)
    os.utime(tmp_path / "b.jpg", (2010, 2010))
    assert source.read().label == "b.jpg"


def test_folder_source_reports_a_corrupt_image_as_a_frame_error(tmp_path):
    (tmp_path / "bad.jpg").write_bytes(b"not really a jpeg")
    os.utime(tmp_path / "bad.jpg", (1000, 1000))
    source = FolderSource(tmp_path, wall_clock=lambda: 1000 + STILL_WRITING_S + 1)
    with pytest.raises(FrameError, match=r"bad\.jpg"):
        source.read()


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


# webcam: timeouts and exposure ----------------------------------------------------------------


class ControlledCapture(FakeCapture):
    """A webcam whose read can hang, and whose controls answer like a UVC camera's."""

    def __init__(self, frames=(), refuse=(), hang=None):
        super().__init__(frames or [np.zeros((4, 4, 3), np.uint8)] * 100)
        self.props = {cv2.CAP_PROP_EXPOSURE: 156.0, cv2.CAP_PROP_WB_TEMPERATURE: 4600.0}
        self.refuse = set(refuse)
        self.hang = hang  # a threading.Event the next read waits on
        self.sets = []

    def set(self, prop, value):
        self.sets.append((prop, value))
        if prop in self.refuse:
            return False
        self.props[prop] = value
        return True

    def get(self, prop):
        return self.props.get(prop, -1.0)

    def read(self):
        if self.hang is not None:
            self.hang.wait(5)
        return super().read()


def test_a_webcam_read_that_hangs_times_out_and_the_webcam_is_opened_again():
    import threading

    release = threading.Event()
    stuck = ControlledCapture(hang=release)
    fresh = ControlledCapture()
    captures = [stuck, fresh]
    source = WebcamSource(
        0, capture_factory=lambda i: captures.pop(0), settings=CameraSettings(capture_timeout=0.1)
    )
    with pytest.raises(CameraStalled, match=r"no picture for 0\.1 s"):
        source.read()
    assert source.restarts == 1 and not captures  # a new capture is open
    assert source.read().frame_id == "webcam-1"
    assert not stuck.released  # still inside its read: released when that returns
    release.set()
    for _ in range(50):
        if stuck.released:
            break
        threading.Event().wait(0.02)
    assert stuck.released


def test_a_webcam_lock_holds_exposure_and_white_balance_where_it_settled():
    capture = ControlledCapture()
    naps = []
    source = WebcamSource(0, capture_factory=lambda i: capture, sleep=naps.append)
    lock = source.lock_exposure()
    assert lock == {"camera": "webcam", "controls": {"exposure": 156.0, "wb_temperature": 4600.0}}
    assert naps == [WebcamSource.SETTLE_SECONDS]  # automatic exposure had time to settle first
    assert capture.sets[-4:] == [
        (cv2.CAP_PROP_AUTO_EXPOSURE, 1), (cv2.CAP_PROP_EXPOSURE, 156.0),
        (cv2.CAP_PROP_AUTO_WB, 0), (cv2.CAP_PROP_WB_TEMPERATURE, 4600.0),
    ]
    # before holding, it was let loose to adapt to the light
    assert (cv2.CAP_PROP_AUTO_EXPOSURE, 3) in capture.sets[:-4]


def test_what_a_webcam_refuses_is_logged_and_not_saved(caplog):
    capture = ControlledCapture(refuse={cv2.CAP_PROP_WB_TEMPERATURE})
    source = WebcamSource(0, capture_factory=lambda i: capture, sleep=lambda s: None)
    with caplog.at_level("WARNING"):
        lock = source.lock_exposure()
    assert lock["controls"] == {"exposure": 156.0}
    assert "webcam 0 refused to hold its wb_temperature" in caplog.text
    assert source.read().image is not None  # and it goes on working


def test_a_saved_webcam_lock_is_applied_at_every_open():
    captures = [ControlledCapture(), ControlledCapture()]
    opened = list(captures)
    source = WebcamSource(0, capture_factory=lambda i: captures.pop(0))
    source.use_exposure_lock({"camera": "webcam", "controls": {"exposure": 80}})
    assert opened[0].props[cv2.CAP_PROP_EXPOSURE] == 80
    assert opened[0].props.get(cv2.CAP_PROP_AUTO_EXPOSURE) == 1
    opened[0].frames.clear()  # it stops giving frames: reopened after a few failures
    for _ in range(WebcamSource.REOPEN_AFTER_FAILURES):
        with pytest.raises(FrameError):
            source.read()
    assert opened[1].props[cv2.CAP_PROP_EXPOSURE] == 80


def test_a_pi_camera_lock_is_not_used_on_a_webcam():
    capture = ControlledCapture()
    source = WebcamSource(0, capture_factory=lambda i: capture)
    source.use_exposure_lock({"camera": "picamera", "controls": {"ExposureTime": 9000}})
    assert capture.sets == [(cv2.CAP_PROP_FRAME_WIDTH, 1152), (cv2.CAP_PROP_FRAME_HEIGHT, 648)]


def test_a_webcam_that_is_gone_is_retried_every_few_seconds():
    clock = FakeClock(100.0)
    image = np.zeros((4, 4, 3), np.uint8)
    captures = [FakeCapture([]), FakeCapture([], opened=False), FakeCapture([image])]
    opened = []

    def factory(index):
        opened.append(index)
        return captures.pop(0)

    source = WebcamSource(0, capture_factory=factory, clock=clock)
    for _ in range(WebcamSource.REOPEN_AFTER_FAILURES - 1):
        with pytest.raises(FrameError):
            source.read()
    with pytest.raises(CameraStalled, match="webcam lost"):
        source.read()  # reopening fails: unplugged
    with pytest.raises(CameraStalled, match="webcam lost"):
        source.read()  # not tried again yet
    assert len(opened) == 2
    clock.now += WebcamSource.RETRY_SECONDS
    assert source.read().frame_id == "webcam-1"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_named_pipe_called_like_a_picture_is_skipped_not_opened(tmp_path):
    """Opening a FIFO blocks until someone writes to it: it would freeze the camera loop."""
    write_image(tmp_path / "a.png", 10, mtime=1000)
    fifo = tmp_path / "x.jpg"
    os.mkfifo(fifo)
    os.utime(fifo, (2000, 2000))  # the newest entry, so it would be the one opened
    source = FolderSource(tmp_path)
    got: list = []
    reader = threading.Thread(target=lambda: got.append(source.read()), daemon=True)
    reader.start()
    reader.join(timeout=5)
    if reader.is_alive():  # stuck in open(): let it go (a writer that closes gives it EOF)
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        reader.join(timeout=5)
        pytest.fail("FolderSource opened the named pipe x.jpg and blocked")
    assert got[0].label == "a.png"
    (tmp_path / "a.png").unlink()
    fresh = FolderSource(tmp_path)  # a pipe alone is no picture at all
    with pytest.raises(NoFrameYet):
        fresh.read()


def test_an_entry_that_cannot_be_stated_is_skipped_and_said_once(tmp_path, caplog):
    """A symlink loop (ELOOP) must not make every poll fail: the other pictures still count."""
    write_image(tmp_path / "a.png", 10, mtime=1000)
    os.symlink("loop.jpg", tmp_path / "loop.jpg")  # points at itself
    source = FolderSource(tmp_path)
    with caplog.at_level("WARNING", logger="firmware.sources"):
        for _ in range(5):
            assert source.read().label == "a.png"
    warned = [r.getMessage() for r in caplog.records if "loop.jpg" in r.getMessage()]
    assert len(warned) == 1 and "skipping" in warned[0]


def test_a_picture_that_cannot_be_stated_for_permission_is_skipped(tmp_path, monkeypatch):
    write_image(tmp_path / "a.png", 10, mtime=1000)
    write_image(tmp_path / "b.png", 20, mtime=2000)
    real_stat = Path.stat

    def stat(self, *args, **kwargs):
        if self.name == "b.png":
            raise PermissionError(13, "Permission denied", str(self))
        return real_stat(self, *args, **kwargs)

    monkeypatch.setattr(Path, "stat", stat)
    assert FolderSource(tmp_path).read().label == "a.png"


class OpensOnTry:
    """A camera that will not open for the first ``failures`` tries."""

    def __init__(self, failures: int):
        self.failures, self.tries, self.locks = failures, 0, []

    def __call__(self):
        self.tries += 1
        if self.tries <= self.failures:
            raise SourceError("the Pi camera would not start: Device or resource busy")
        camera = DemoSource()
        camera.live = True  # as a camera is
        camera.use_exposure_lock = self.locks.append
        return camera


def test_an_awaited_camera_says_why_and_opens_on_a_later_try():
    clock = FakeClock()
    opener = OpensOnTry(failures=1)
    source = AwaitedCamera(opener, SourceError("no Raspberry Pi camera found"), retry_seconds=10,
                           clock=clock)
    source.use_exposure_lock({"AnalogueGain": 2.0})
    assert not source.live  # a camera never opened cannot stall: the watchdog is fed
    with pytest.raises(FrameError, match=r"no Raspberry Pi camera found \(tried again every 10 s"):
        source.read()
    assert opener.tries == 0  # not before its time
    clock.now = 10
    with pytest.raises(FrameError, match="Device or resource busy"):
        source.read()  # the latest reason
    clock.now = 15
    with pytest.raises(FrameError):
        source.read()
    assert opener.tries == 1
    clock.now = 20
    frame = source.read()
    assert frame.image.ndim == 3 and source.live and opener.tries == 2
    assert opener.locks == [{"AnalogueGain": 2.0}]  # the saved exposure, once it is there


def test_a_webcam_not_plugged_in_is_said_in_our_words_only(capfd):
    """OpenCV's own warning would come again at every try (every 10 s, all evening)."""
    with pytest.raises(SourceError, match="no webcam at index 97"):
        WebcamSource(97)
    assert "can't open camera" not in capfd.readouterr().err
