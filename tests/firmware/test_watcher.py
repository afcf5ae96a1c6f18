import os
import threading

import cv2
import numpy as np

from companion.store import NotSaved
from firmware.sources import FolderSource, Frame, FrameError, FrameSource, NoFrameYet
from firmware.watcher import ChangedFrameTrigger, Outcome, TrayWatcher
from vision import VisionError


class ScriptedSource(FrameSource):
    """Plays back a list of frame ids / exceptions, repeating the last one."""

    name = "scripted"

    def __init__(self, items):
        self.items = list(items)

    def read(self):
        item = self.items.pop(0) if len(self.items) > 1 else self.items[0]
        if isinstance(item, Exception):
            raise item
        return Frame(np.zeros((4, 4, 3), np.uint8), item, 0.0)


class Stream(FrameSource):
    """A live camera showing ``image`` (set it to change the tray), a new frame id each read."""

    name = "live"

    def __init__(self, image):
        self.n = 0
        self.image = image

    def read(self):
        self.n += 1
        return Frame(self.image, f"live-{self.n}", 0.0)


class RecordingSink:
    def __init__(self):
        self.readings, self.errors, self.states, self.messages = [], [], [], []

    def publish_reading(self, frame_id, reading, picture):
        self.readings.append((frame_id, reading, picture))

    def publish_error(self, frame_id, message):
        self.errors.append((frame_id, message))

    def set_status(self, state, message="", source=None):
        self.states.append(state)
        self.messages.append(message)


def reader(image):
    return Outcome({"counts": {"red": 1}, "uncertain": False}, b"jpg")


def test_reads_each_new_frame_once():
    sink = RecordingSink()
    watcher = TrayWatcher(ScriptedSource(["a", "a", "a", "b", "b"]), reader, sink)
    for _ in range(5):
        watcher.step()
    assert [r[0] for r in sink.readings] == ["a", "b"]
    assert sink.states[-1] == "read"


def test_read_now_rereads_the_current_frame():
    sink = RecordingSink()
    watcher = TrayWatcher(ScriptedSource(["a"]), reader, sink)
    watcher.step()
    watcher.step()
    watcher.request_read()
    watcher.step()
    assert [r[0] for r in sink.readings] == ["a", "a"]


def test_an_unreadable_frame_is_published_as_an_error_and_the_loop_goes_on():
    def picky(image):
        raise VisionError("tray not found")

    sink = RecordingSink()
    watcher = TrayWatcher(ScriptedSource(["a"]), picky, sink)
    assert watcher.step() is True
    assert sink.errors == [("a", "tray not found")]
    assert sink.states[-1] == "error"


def test_a_lost_camera_is_said_once_and_recovery_resumes_reading():
    lost = FrameError("webcam 0 gave no frame")
    sink = RecordingSink()
    watcher = TrayWatcher(ScriptedSource([lost, lost, lost, "a"]), reader, sink)
    for _ in range(4):
        watcher.step()
    assert len(sink.errors) == 1 and "webcam" in sink.errors[0][1]
    assert [r[0] for r in sink.readings] == ["a"]


def test_an_empty_folder_is_waiting_not_an_error():
    sink = RecordingSink()
    watcher = TrayWatcher(ScriptedSource([NoFrameYet("no image yet")]), reader, sink)
    watcher.step()
    assert sink.errors == [] and sink.states == ["waiting"]


def test_uncertain_readings_ask_the_players_to_check():
    sink = RecordingSink()
    watcher = TrayWatcher(
        ScriptedSource(["a"]), lambda i: Outcome({"uncertain": True}, None), sink
    )
    watcher.step()
    assert sink.states[-1] == "uncertain"
    watcher.step()  # the same tray, not read again: still asks for a check
    assert sink.states[-1] == "uncertain"


def test_run_survives_a_bug_in_one_step_and_stops_on_request():
    calls = []
    stop = threading.Event()

    def buggy(image):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("boom")
        stop.set()
        return Outcome({}, None)

    sink = RecordingSink()
    watcher = TrayWatcher(ScriptedSource(["a"]), buggy, sink, poll_seconds=0.0)
    watcher.request_read()
    thread = threading.Thread(target=watcher.run, args=(stop,))
    thread.start()
    watcher.request_read()
    thread.join(timeout=5)
    assert not thread.is_alive()
    assert "error" in sink.states


def test_changed_frame_trigger():
    trigger = ChangedFrameTrigger()
    frame = Frame(np.zeros((1, 1, 3), np.uint8), "x", 0.0)
    assert trigger.should_read(frame, 0.0)[0] is True
    assert trigger.should_read(frame, 1.0)[0] is False


def test_settle_trigger_reads_a_live_stream_once_it_comes_to_rest():
    from firmware.watcher import SettleTrigger
    from vision.settle import SettleDetector

    rng = np.random.default_rng(1)
    tray = rng.integers(90, 110, (240, 320, 3), dtype=np.uint8)
    with_cube = tray.copy()
    with_cube[100:130, 150:180] = (30, 30, 200)

    now = [0.0]
    source = Stream(tray)
    sink = RecordingSink()
    watcher = TrayWatcher(
        source, reader, sink, SettleTrigger(SettleDetector(still_seconds=0.5)), clock=lambda: now[0]
    )
    for _ in range(10):  # a quiet empty tray settles once
        watcher.step()
        now[0] += 0.1
    first = len(sink.readings)
    source.image = with_cube  # a cube lands
    for _ in range(3):
        watcher.step()
        now[0] += 0.1
    assert len(sink.readings) == first  # not yet at rest for 0.5 s
    for _ in range(10):
        watcher.step()
        now[0] += 0.1
    assert len(sink.readings) == first + 1  # read exactly once after settling


def test_the_tray_outline_found_by_a_reading_goes_to_the_settle_detector():
    from firmware.watcher import SettleTrigger
    from vision.settle import SettleDetector

    corners = [[40.0, 30.0], [280.0, 30.0], [280.0, 200.0], [40.0, 200.0]]
    detector = SettleDetector(still_seconds=0.1)
    trigger = SettleTrigger(detector)
    seen = []
    detector.set_tray = seen.append  # observe the call, keep the detector real otherwise
    sink = RecordingSink()
    watcher = TrayWatcher(
        ScriptedSource(["a"]),
        lambda image: Outcome({"tray_corners": corners}, None),
        sink,
        trigger,
    )
    watcher.request_read()
    watcher.step()
    watcher.request_read()
    watcher.step()
    assert len(seen) == 1 and seen[0].tolist() == corners  # not again for the same outline
    trigger.set_tray([[x + 0.4, y - 0.3] for x, y in corners])  # a reading's jitter
    assert len(seen) == 1
    trigger.set_tray([[x + 30, y] for x, y in corners])  # the camera was knocked
    assert len(seen) == 2


def test_a_still_live_tray_is_not_read_over_and_over_when_the_outline_jitters():
    from firmware.watcher import SettleTrigger
    from vision.settle import SettleDetector

    rng = np.random.default_rng(2)
    tray = rng.integers(90, 110, (240, 320, 3), dtype=np.uint8)
    corners = np.array([[40.0, 30.0], [280.0, 30.0], [280.0, 200.0], [40.0, 200.0]])

    def jittery_reader(image):
        wobble = rng.normal(0, 0.3, corners.shape)
        return Outcome({"tray_corners": (corners + wobble).tolist()}, None)

    now = [0.0]
    sink = RecordingSink()
    watcher = TrayWatcher(
        Stream(tray),
        jittery_reader,
        sink,
        SettleTrigger(SettleDetector(still_seconds=0.5)),
        clock=lambda: now[0],
    )
    for _ in range(100):  # ten seconds of a quiet tray
        watcher.step()
        now[0] += 0.1
    assert 1 <= len(sink.readings) <= 2  # the first read, perhaps once more on the new outline


def test_frames_that_cannot_be_read_keep_status_and_health_in_error_until_one_reads(caplog):
    """Not "read"/ok at the next poll: the phones and /api/health say why while it lasts."""
    calls = []

    def too_small_then_fine(image):
        calls.append(1)
        if len(calls) <= 2:
            raise VisionError("image is too small")
        return Outcome({"uncertain": False}, None)

    sink = RecordingSink()
    watcher = TrayWatcher(ScriptedSource(["a", "a", "a", "b", "b", "c"]), too_small_then_fine, sink)
    with caplog.at_level("WARNING", logger="firmware.watcher"):
        for _ in range(5):  # a (failed), a, a, b (failed), b
            watcher.step()
            assert sink.states[-1] == "error" and sink.messages[-1] == "image is too small"
            health = watcher.health()
            assert not health["ok"] and "image is too small" in health["problem"]
    assert len(calls) == 2  # each unreadable frame tried once, not at every poll
    assert [e[0] for e in sink.errors] == ["a", "b"]  # each replaces the reading on the phones
    assert sum("could not read frame" in r.getMessage() for r in caplog.records) == 1
    watcher.step()  # c reads: well again
    assert sink.states[-1] == "read" and watcher.health()["ok"]
    assert "problem" not in watcher.health()


def test_a_camera_problem_during_unreadable_frames_leaves_the_read_problem_behind():
    def never(image):
        raise VisionError("image is too small")

    lost = FrameError("webcam 0 gave no frame")
    sink = RecordingSink()
    watcher = TrayWatcher(ScriptedSource(["a", lost, "a"]), never, sink)
    watcher.step()
    watcher.step()
    assert "webcam" in watcher.health()["problem"]
    watcher.step()  # the camera is back, its (same) frame still cannot be read
    assert sink.states[-1] == "error" and sink.messages[-1] == "image is too small"
    assert not watcher.health()["ok"]


def test_an_unreadable_picture_in_a_folder_is_read_once_not_every_poll(tmp_path):
    cv2.imwrite(str(tmp_path / "tiny.png"), np.full((20, 20, 3), 128, np.uint8))
    calls = []

    def counter(image):
        calls.append(image.shape)
        if image.shape[0] < 32:
            raise VisionError("image is too small")
        return Outcome({"uncertain": False}, None)

    sink = RecordingSink()
    watcher = TrayWatcher(FolderSource(tmp_path), counter, sink)
    for _ in range(20):  # two seconds of polls
        watcher.step()
    assert len(calls) == 1 and sink.states[-1] == "error" and not watcher.health()["ok"]
    cv2.imwrite(str(tmp_path / "tray.png"), np.full((48, 64, 3), 128, np.uint8))
    os.utime(tmp_path / "tray.png", (os.stat(tmp_path / "tiny.png").st_mtime + 5,) * 2)
    watcher.step()
    assert len(calls) == 2 and sink.states[-1] == "read" and watcher.health()["ok"]


def test_a_live_tray_whose_reading_fails_is_not_read_again_until_it_changes():
    from firmware.watcher import SettleTrigger
    from vision.settle import SettleDetector

    rng = np.random.default_rng(3)
    tray = rng.integers(90, 110, (240, 320, 3), dtype=np.uint8)

    calls = []

    def failing(image):
        calls.append(1)
        raise VisionError("the empty-tray reference is too small")

    now = [0.0]
    sink = RecordingSink()
    watcher = TrayWatcher(
        Stream(tray), failing, sink, SettleTrigger(SettleDetector(still_seconds=0.5)),
        clock=lambda: now[0],
    )
    for _ in range(50):  # five seconds of a quiet tray
        watcher.step()
        now[0] += 0.1
    assert len(calls) == 1
    assert sink.states[-1] == "error" and "too small" in watcher.health()["problem"]


def test_a_reading_the_card_cannot_save_is_said_and_the_tray_read_again_later():
    """A full card: the drop must not be lost once there is room (each tray is read once)."""
    class FullCard(RecordingSink):
        full = True

        def publish_reading(self, frame_id, reading, picture):
            if self.full:
                raise NotSaved("the device could not save this, so nothing changed (database "
                               "or disk is full)")
            super().publish_reading(frame_id, reading, picture)

    now = [0.0]
    sink = FullCard()
    watcher = TrayWatcher(ScriptedSource(["a"]), reader, sink, clock=lambda: now[0])
    watcher.step()
    assert sink.readings == [] and sink.states[-1] == "error"
    assert "could not be saved" in sink.messages[-1] and "disk is full" in sink.messages[-1]
    watcher.step()  # the same tray, soon after: the problem stays shown
    assert sink.states[-1] == "error" and not watcher.health()["ok"]
    assert "could not be saved" in watcher.health()["problem"]
    sink.full = False
    now[0] += TrayWatcher.SAVE_AGAIN_SECONDS
    watcher.step()
    assert [r[0] for r in sink.readings] == ["a"] and sink.states[-1] == "read"
    watcher.step()
    assert len(sink.readings) == 1 and watcher.health()["ok"]


def test_a_problem_the_card_cannot_save_is_still_said_by_the_status(caplog):
    """A full card while the camera fails: no traceback per frame, the problem still shown."""
    class FullCard(RecordingSink):
        def publish_error(self, frame_id, message):
            raise NotSaved("the device could not save this (database or disk is full)")

    def picky(image):
        raise VisionError("tray not found")

    lost = FrameError("webcam 0 gave no frame")
    sink = FullCard()
    watcher = TrayWatcher(ScriptedSource(["a", lost, lost]), picky, sink)
    assert watcher.step() is True
    assert sink.states[-1] == "error" and sink.messages[-1] == "tray not found"
    assert watcher.health()["problem"].endswith("tray not found")
    assert watcher.step() is True and watcher.step() is False  # said once while it lasts
    assert sink.states[-1] == "error" and "webcam 0" in str(sink.messages[-1])
    saved = [r for r in caplog.records if "could not save the problem" in r.getMessage()]
    assert len(saved) == 2 and not any(r.exc_info for r in caplog.records)
