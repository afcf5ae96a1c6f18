"""The composed device with gpiozero's mock pins: buttons reach the loop, LEDs follow status.

Most tests read with a fake cube model (``tests/fake_detector.py``) that knows what is in each
demo picture, so they test the device, not the model; the few marked so use the packaged one.
"""

import os
import shutil
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest
from fake_detector import FakeDetector, demo_detector
from gpiozero.pins.mock import MockFactory, MockPWMPin
from table_access import playing
from table_games import SETUP_DROP

import vision.detector
from firmware.config import Config, with_overrides
from firmware.service import (
    ModelError,
    SharedDetector,
    build_device,
    choose_source,
    empty_reference_for,
    needs_a_yes,
    save_image_atomically,
)
from firmware.sources import (
    DEMO_DIR,
    STILL_WRITING_S,
    AwaitedCamera,
    CameraLibraryMissing,
    DemoSource,
    FolderSource,
    NoCamera,
    SourceError,
    SourceSettingError,
)
from vision import Cube, load_image


@pytest.fixture(scope="module")
def fake():
    return demo_detector()


@pytest.fixture
def factory():
    factory = MockFactory(pin_class=MockPWMPin)
    yield factory
    factory.reset()


@pytest.fixture
def device(tmp_path, factory, fake):
    frames = tmp_path / "frames"
    frames.mkdir()
    config = with_overrides(Config(), data_dir=str(tmp_path / "data"))
    device = build_device(config, FolderSource(frames), pin_factory=factory, detector=fake)
    yield device, frames, factory
    device.stop()


def test_read_now_button_makes_the_loop_read_again(device):
    device, frames, factory = device
    shutil.copy(DEMO_DIR / "drop11.jpg", frames / "a.jpg")
    device.watcher.step()
    reads = device.watcher.reads
    assert device.watcher.step() is False
    button = factory.pin(device.config.panel.read_now_pin)
    button.drive_low()
    button.drive_high()
    assert device.watcher.step() is True
    assert device.watcher.reads == reads + 1


def test_status_leds_follow_the_loop(device):
    device, frames, factory = device
    green = factory.pin(device.config.panel.status_led_pin)
    red = factory.pin(device.config.panel.error_led_pin)
    (frames / "bad.jpg").write_bytes(b"garbage")
    old = time.time() - STILL_WRITING_S - 1  # not one still being written: its writer stopped
    os.utime(frames / "bad.jpg", (old, old))
    device.watcher.step()
    assert device.panel.status == "error"
    assert red.state and not green.state


def test_the_phone_app_gets_the_configured_stream_slots(tmp_path, factory, fake):
    config = with_overrides(Config(), data_dir=str(tmp_path))
    config = replace(config, server=replace(config.server, streams=7))
    device = build_device(config, FolderSource(tmp_path), pin_factory=factory, detector=fake)
    try:
        assert device.streams.limit == 7 and device.streams.hub is device.hub
        health = device.app().test_client().get("/api/health").get_json()
        assert health["stream_slots"] == 7 and health["phones"] == 0
    finally:
        device.stop()


def test_panel_is_released_on_stop(tmp_path, factory, fake):
    config = with_overrides(Config(), data_dir=str(tmp_path))
    device = build_device(config, FolderSource(tmp_path), pin_factory=factory, detector=fake)
    device.start()
    device.stop()
    assert device.panel.status == "stopped"


def test_auto_source_falls_back_to_the_demo_without_a_pi_camera(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "picamera2", None)
    assert isinstance(choose_source("auto"), DemoSource)


def test_auto_source_shows_a_pi_camera_that_is_there_but_fails_not_the_demo(monkeypatch):
    """A busy camera (another program holds it) must be a fault the page shows: the demo's
    trays would be confirmed into the real game."""
    from fake_picamera2 import install

    rig = install(monkeypatch)
    rig.start_failures = 1
    with pytest.raises(SourceError, match="would not start") as refused:
        choose_source("auto")
    assert not isinstance(refused.value, NoCamera)


def test_auto_source_falls_back_to_the_demo_when_no_pi_camera_is_attached(monkeypatch):
    from fake_picamera2 import install

    rig = install(monkeypatch)
    rig.cameras = 0
    assert isinstance(choose_source("auto"), DemoSource)


def test_a_camera_that_will_not_open_at_start_leaves_the_game_playable(
        tmp_path, factory, fake, monkeypatch):
    """A loose ribbon at power-on: the score sheet, the history and typed counts stay on the
    phones, the tray card says what is wrong, and health says so too."""
    from fake_picamera2 import install

    rig = install(monkeypatch)
    rig.start_failures = 100
    config = with_overrides(Config(), data_dir=str(tmp_path / "data"), source="picamera")
    device = build_device(config, pin_factory=factory, detector=fake)
    try:
        assert isinstance(device.source, AwaitedCamera)
        device.watcher.step()
        client = playing(device.app().test_client(), device.table_code)
        status = device.board.status()
        assert status["state"] == "error" and "would not start" in status["message"]
        # a German phone reads our words in German (the camera library's own words as they are)
        german = client.get("/api/status", headers={"Accept-Language": "de-DE,de;q=0.9"})
        said = german.get_json()["message"]
        assert "would not start" in said and "alle 10 s neu versucht" in said, said
        assert client.get("/api/health").status_code == 503
        game = client.post("/api/game", json={"players": ["Eva", "Finn"]})
        assert game.status_code == 201
    finally:
        device.stop()


def test_a_mistyped_source_is_still_a_fault_not_an_awaited_camera(tmp_path, factory, fake):
    config = with_overrides(Config(), data_dir=str(tmp_path / "data"),
                            source=str(tmp_path / "nosuch"))
    with pytest.raises(SourceSettingError):
        build_device(config, pin_factory=factory, detector=fake)


def test_a_pi_camera_without_its_library_is_a_fault_not_an_awaited_camera(
        tmp_path, factory, fake, monkeypatch):
    """Only an install brings picamera2: trying again every 10 s all evening would help
    nothing, so the fault page says how to reinstall. ``auto`` still replays the demo."""
    monkeypatch.setitem(sys.modules, "picamera2", None)  # import fails
    config = with_overrides(Config(), data_dir=str(tmp_path / "data"), source="picamera")
    with pytest.raises(CameraLibraryMissing, match="python3-picamera2"):
        build_device(config, pin_factory=factory, detector=fake)
    assert isinstance(choose_source("auto"), DemoSource)


def test_the_demo_device_uses_the_demos_own_empty_tray(tmp_path, factory):
    """With the packaged model: any model worth shipping reads the empty tray as empty."""
    config = with_overrides(Config(), data_dir=str(tmp_path))
    device = build_device(config, DemoSource(), pin_factory=factory)
    try:
        assert device.watcher.read_frame.reference is not None
        assert device.watcher.step() is True  # the first picture: the empty tray
        assert device.board.latest()["total"] == 0
    finally:
        device.stop()


def test_the_newer_of_the_configured_and_the_calibrated_empty_tray_is_the_reference(tmp_path):
    """Calibration always writes DATA_DIR/empty.jpg: a configured picture must not take the
    evening's calibration back at the next start, nor a later configured one be ignored."""
    data, frames = tmp_path / "data", tmp_path / "frames"
    data.mkdir()
    frames.mkdir()
    configured = tmp_path / "my-empty.jpg"
    shutil.copy(DEMO_DIR / "empty.jpg", configured)
    shutil.copy(DEMO_DIR / "drop04.jpg", data / "empty.jpg")  # only to tell the two apart
    config = with_overrides(Config(), data_dir=str(data))
    config = replace(config, vision=replace(config.vision, empty_reference=str(configured)))
    source = FolderSource(frames)
    calibrated, chosen = load_image(data / "empty.jpg"), load_image(configured)

    os.utime(configured, (1_000_000, 1_000_000))  # calibrated after the file was configured
    assert np.array_equal(empty_reference_for(config, source), calibrated)
    os.utime(configured, (time.time() + 60,) * 2)  # the configured picture is the newer
    assert np.array_equal(empty_reference_for(config, source), chosen)
    configured.unlink()  # gone: the calibrated one, never nothing
    assert np.array_equal(empty_reference_for(config, source), calibrated)
    # the demo replay reads its own empty tray whatever is saved
    demo = empty_reference_for(config, DemoSource())
    assert np.array_equal(demo, load_image(DEMO_DIR / "empty.jpg"))


def test_calibrating_a_tray_too_dark_to_show_cubes_keeps_it_and_says_so(tmp_path, factory):
    """With the packaged model, which finds the tray's outline in the tower's shadow."""
    dark = Path(__file__).resolve().parents[1] / "fixtures" / "vision" / "dark-tray"
    for name, picture in (("dark", dark / "empty.jpg"), ("lit", DEMO_DIR / "empty.jpg")):
        frames = tmp_path / name / "frames"
        frames.mkdir(parents=True)
        shutil.copy(picture, frames / "now.jpg")
        config = with_overrides(Config(), data_dir=str(tmp_path / name / "data"))
        device = build_device(config, FolderSource(frames), pin_factory=factory)
        try:
            device.watcher.step()
            result = device.calibrate_empty()
        finally:
            device.stop()
        assert (tmp_path / name / "data" / "empty.jpg").is_file()  # kept either way
        if name == "dark":
            assert result["floor_too_dark"] > 0.6
        else:
            assert "floor_too_dark" not in result


def test_one_model_is_loaded_at_start_and_every_reading_uses_it(device):
    device, frames, _ = device
    fake = device.detector._detector
    assert isinstance(device.detector, SharedDetector) and isinstance(fake, FakeDetector)
    assert device.watcher.read_frame.detector is device.detector
    assert device.session.detector is device.detector
    fake.calls.clear()
    shutil.copy(DEMO_DIR / "empty.jpg", frames / "a.jpg")
    assert device.watcher.step() is True
    assert len(fake.calls) == 1
    client = playing(device.app().test_client(), device.table_code)
    assert client.post("/api/calibrate/empty").status_code == 200
    assert len(fake.calls) == 2
    assert client.post("/api/calibrate/corners", json={"corners": [
        [423, 115], [830, 243], [740, 535], [329, 404]]}).status_code == 200
    assert len(fake.calls) == 3
    time.sleep(0.01)
    shutil.copy(DEMO_DIR / "empty.jpg", frames / "b.jpg")
    assert device.watcher.step() is True  # with the reference, and again without it
    assert len(fake.calls) == 5


def test_a_missing_model_stops_the_start_with_a_clear_error(tmp_path, factory, monkeypatch):
    monkeypatch.setattr(vision.detector, "MODEL_DIR", tmp_path / "no-model")
    config = with_overrides(Config(), data_dir=str(tmp_path / "data"))
    with pytest.raises(ModelError, match=r"cannot load the cube model: no cube model in .*no-mod"):
        build_device(config, FolderSource(tmp_path), pin_factory=factory)
    assert not (tmp_path / "data").exists()  # refused before the database was opened


def test_a_broken_model_file_stops_the_start_with_a_clear_error(tmp_path, factory, monkeypatch):
    folder = tmp_path / "model"
    folder.mkdir()
    shutil.copy(vision.detector.MODEL_DIR / "model.json", folder / "model.json")
    (folder / "model.onnx").write_bytes(b"not a network")
    monkeypatch.setattr(vision.detector, "MODEL_DIR", folder)
    config = with_overrides(Config(), data_dir=str(tmp_path / "data"))
    with pytest.raises(ModelError, match="cannot load the cube model"):
        build_device(config, FolderSource(tmp_path), pin_factory=factory)


def test_the_shared_model_reads_one_frame_at_a_time():
    """The watch loop and a phone's request may read at once; an OpenCV network must not."""
    running, most = [0], [0]

    class Slow(FakeDetector):
        def detect(self, image, reference=None):
            running[0] += 1
            most[0] = max(most[0], running[0])
            time.sleep(0.02)
            running[0] -= 1
            return super().detect(image, reference)

    shared = SharedDetector(Slow())
    threads = [threading.Thread(target=shared.detect, args=(None,)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert most[0] == 1
    assert shared.config is shared._detector.config


def test_next_button_confirms_the_tray_into_the_game_and_undo_takes_it_back(device):
    device, frames, factory = device
    device.table.new_game(["Eva", "Finn"])
    shutil.copy(DEMO_DIR / "drop01.jpg", frames / "a.jpg")
    device.watcher.step()
    counts = device.board.latest()["counts"]
    next_button = factory.pin(device.config.panel.next_pin)
    next_button.drive_low()
    next_button.drive_high()
    game = device.table.snapshot()
    assert game["history"][-1]["type"] == "setup_drop_read"
    assert game["state"]["cubes"]["storage"] == counts
    undo = factory.pin(device.config.panel.undo_pin)
    undo.drive_low()
    undo.drive_high()
    assert device.table.snapshot()["history"][-1]["text"].startswith("Undo")


def _quick_hold_device(tmp_path, factory, fake, frames):
    """A device whose Undo counts as held after 0.05 s (the default is 2 s)."""
    config = with_overrides(Config(), data_dir=str(tmp_path / "data"))
    config = replace(config, panel=replace(config.panel, hold_time=0.05))
    return build_device(config, FolderSource(frames), pin_factory=factory, detector=fake)


def _hold(pin, done, seconds=5.0):
    """Hold the button down until ``done()`` (the hold's callback runs on gpiozero's thread)."""
    pin.drive_low()
    deadline = time.monotonic() + seconds
    while not done() and time.monotonic() < deadline:
        time.sleep(0.01)
    pin.drive_high()
    assert done()


def test_a_short_press_on_undo_undoes_and_holding_it_redoes(tmp_path, factory, fake):
    frames = tmp_path / "frames"
    frames.mkdir()
    device = _quick_hold_device(tmp_path, factory, fake, frames)
    try:
        device.table.new_game(["Eva", "Finn"])
        shutil.copy(DEMO_DIR / "drop01.jpg", frames / "a.jpg")
        device.watcher.step()
        next_button = factory.pin(device.config.panel.next_pin)
        next_button.drive_low()
        next_button.drive_high()
        dropped = device.table.snapshot()
        assert dropped["history"][-1]["type"] == "setup_drop_read"
        undo = factory.pin(device.config.panel.undo_pin)
        undo.drive_low()
        assert device.table.snapshot() == dropped  # a redo may be coming: undo on release
        undo.drive_high()
        undone = device.table.snapshot()
        assert undone["history"][-1]["type"] == "undo"
        assert undone["state"]["expects"] != dropped["state"]["expects"]
        _hold(undo, lambda: device.table.snapshot()["seq"] > undone["seq"])
        redone = device.table.snapshot()
        assert redone["seq"] == undone["seq"] + 1  # letting go after the hold undoes nothing
        assert redone["history"][-1]["text"].startswith("Redo")
        assert redone["state"] == dropped["state"]
        assert device.panel.status != "refused"
    finally:
        device.stop()


def test_holding_undo_with_nothing_to_redo_is_refused_and_shown(tmp_path, factory, fake):
    frames = tmp_path / "frames"
    frames.mkdir()
    device = _quick_hold_device(tmp_path, factory, fake, frames)
    try:
        device.watcher.sink.clock = lambda: 100.0
        game = device.table.new_game(["Eva", "Finn"])
        _hold(factory.pin(device.config.panel.undo_pin), lambda: device.panel.status == "refused")
        assert "nothing to redo" in device.board.status()["message"]
        assert device.board.status()["state"] == "refused"
        assert device.table.snapshot()["seq"] == game["seq"]
    finally:
        device.stop()


def test_a_refused_button_press_is_shown_not_raised(device):
    device, _, factory = device
    next_button = factory.pin(device.config.panel.next_pin)
    now = [100.0]
    device.watcher.sink.clock = lambda: now[0]
    next_button.drive_low()  # no game, no reading: refused
    next_button.drive_high()
    assert device.panel.status == "refused"
    assert "no good tray reading" in device.board.status()["message"]
    assert device.board.status()["message_msg"]["msg"]  # said in each phone's language
    # the camera loop's next looks (ten a second) leave the reason on the phones a while
    now[0] += 4.0
    device.watcher.step()
    assert device.panel.status == "refused" and device.board.status()["state"] == "refused"
    assert "no good tray reading" in device.board.status()["message"]
    now[0] += 1.5
    device.watcher.step()
    assert device.panel.status != "refused" and device.board.status()["state"] != "refused"


def test_next_on_a_drop_that_asks_says_a_phone_must_say_yes(device):
    """Next on an empty tray as the set-up drop: the device would ask first, which the panel
    cannot answer. The phones are told so, in words the page knows (app.js) and answers with its
    own button; nothing is used."""
    device, frames, factory = device
    device.watcher.sink.clock = lambda: 100.0
    game = device.table.new_game(["Eva", "Finn"])
    shutil.copy(DEMO_DIR / "empty.jpg", frames / "a.jpg")
    device.watcher.step()
    next_button = factory.pin(device.config.panel.next_pin)
    next_button.drive_low()
    next_button.drive_high()
    assert device.panel.status == "refused"
    said = device.board.status()["message_msg"]["msg"]
    assert said == needs_a_yes().template and "set-up drop?" not in said
    assert device.table.snapshot()["seq"] == game["seq"]
    script = (Path(__file__).parents[2] / "companion/web/static/app.js").read_text()
    assert f'"{said}"' in script


def test_a_camera_fault_waits_for_the_refusal_then_shows(device):
    """A camera that will not open is a fault all evening: it must not hide every refusal."""
    device, frames, factory = device
    now = [100.0]
    device.watcher.sink.clock = lambda: now[0]
    next_button = factory.pin(device.config.panel.next_pin)
    next_button.drive_low()
    next_button.drive_high()
    assert device.panel.status == "refused"
    shutil.rmtree(frames)
    device.watcher.step()
    assert device.panel.status == "refused"
    now[0] += 5.5
    device.watcher.step()
    assert device.panel.status == "error" and "is gone" in device.board.status()["message"]


def test_a_press_that_works_ends_an_earlier_refusal(device):
    device, frames, factory = device
    device.watcher.sink.clock = lambda: 100.0
    device.table.new_game(["Eva", "Finn"])
    next_button = factory.pin(device.config.panel.next_pin)
    next_button.drive_low()  # no reading yet: refused
    next_button.drive_high()
    assert device.panel.status == "refused"
    shutil.copy(DEMO_DIR / "drop01.jpg", frames / "a.jpg")
    device.watcher.step()
    next_button.drive_low()  # the set-up drop: taken
    next_button.drive_high()
    assert device.table.snapshot()["history"][-1]["type"] == "setup_drop_read"
    assert device.panel.status != "refused" and device.board.status()["state"] != "refused"


def test_calibrating_before_any_picture_is_refused_in_the_phones_language(device):
    device, _, _ = device
    client = playing(device.app().test_client(), device.table_code)
    german = {"Accept-Language": "de-DE,de;q=0.9"}
    for path, body in (("/api/calibrate/empty", None), ("/api/calibrate/corners",
                                                        {"corners": None})):
        refused = client.post(path, json=body, headers=german)
        assert refused.status_code == 409
        assert refused.get_json()["error"].startswith("noch kein Bild von der Kamera; wartet")
    refused = client.post("/api/calibrate/empty")
    assert refused.get_json()["error"].startswith("no picture from the camera yet; wait")


def test_calibrating_saves_the_current_frame_as_the_empty_tray(device):
    device, frames, _ = device
    client = playing(device.app().test_client(), device.table_code)
    refused = client.post("/api/calibrate/empty")
    assert refused.status_code == 409 and "no picture" in refused.get_json()["error"]
    shutil.copy(DEMO_DIR / "empty.jpg", frames / "empty-now.jpg")
    device.watcher.step()
    response = client.post("/api/calibrate/empty")
    assert response.status_code == 200, response.get_json()
    saved = device.config.data_path / "empty.jpg"
    assert response.get_json()["saved"] == str(saved) and saved.is_file()
    assert device.watcher.read_frame.reference is not None
    assert not [p for p in saved.parent.iterdir() if p.name.endswith(".partial")]


def test_calibrating_with_cubes_in_the_tray_asks_first(device):
    """A cube in the empty-tray picture would hide that cube from every later reading."""
    device, frames, _ = device
    shutil.copy(DEMO_DIR / "drop01.jpg", frames / "cubes.jpg")
    device.watcher.step()
    seen = device.board.latest()["total"]
    assert seen > 0
    client = playing(device.app().test_client(), device.table_code)
    asked = client.post("/api/calibrate/empty")
    assert asked.status_code == 409
    assert f"sees {seen} cubes" in asked.get_json()["confirm"]
    saved = device.config.data_path / "empty.jpg"
    assert not saved.exists() and device.watcher.read_frame.reference is None
    asked_about = device.watcher.last_frame.frame_id
    # the camera takes another picture before the players answer: the yes keeps the one asked
    # about (its cubes were what the players were told of), not one they never saw counted
    shutil.copy(DEMO_DIR / "empty.jpg", frames / "later.jpg")
    device.watcher.step()
    assert device.watcher.last_frame.frame_id != asked_about
    response = client.post("/api/calibrate/empty", json={"confirmed": True})
    assert response.status_code == 200 and response.get_json()["cubes_seen"] == seen
    assert response.get_json()["frame_id"] == asked_about
    assert saved.is_file()
    # a yes with no question standing keeps the latest picture
    again = client.post("/api/calibrate/empty", json={"confirmed": True})
    assert again.get_json()["frame_id"] == device.watcher.last_frame.frame_id


def test_a_yes_long_after_the_question_takes_a_new_picture(device):
    device, frames, _ = device
    shutil.copy(DEMO_DIR / "drop01.jpg", frames / "cubes.jpg")
    device.watcher.step()
    client = playing(device.app().test_client(), device.table_code)
    assert client.post("/api/calibrate/empty").status_code == 409
    shutil.copy(DEMO_DIR / "empty.jpg", frames / "later.jpg")
    device.watcher.step()
    device.ASKED_EMPTY_KEEP_SECONDS = -1.0  # the question has lapsed
    response = client.post("/api/calibrate/empty", json={"confirmed": True})
    assert response.get_json()["frame_id"] == device.watcher.last_frame.frame_id
    assert response.get_json()["cubes_seen"] == 0


def test_next_button_does_not_start_two_phases_with_one_reading(device):
    device, frames, factory = device
    game = device.table.new_game(["Eva", "Finn"])
    shutil.copy(DEMO_DIR / "drop01.jpg", frames / "a.jpg")
    device.watcher.step()
    next_button = factory.pin(device.config.panel.next_pin)
    next_button.drive_low()
    next_button.drive_high()
    game = device.table.snapshot()
    game = device.table.command(game["id"], game["seq"], {"type": "pirate_revealed", "value": 0})
    next_button.drive_low()  # the set-up drop's picture again: refused, shown on the LEDs
    next_button.drive_high()
    assert device.table.snapshot()["seq"] == game["seq"]
    assert device.panel.status == "refused"
    assert "before the set-up drop" in device.board.status()["message"]


def _empty_tray_read(device, frames, name="empty.jpg"):
    shutil.copy(DEMO_DIR / "empty.jpg", frames / name)
    assert device.watcher.step() is True
    return device.config.data_path / "empty.jpg"


def test_a_tray_read_empty_with_certainty_becomes_the_reference(device):
    device, frames, _ = device
    assert device.watcher.read_frame.reference is None
    saved = _empty_tray_read(device, frames)
    assert saved.is_file()
    assert device.watcher.read_frame.reference is not None
    assert device.board.latest()["total"] == 0


def test_a_tray_with_cubes_is_never_kept_as_the_reference(device):
    device, frames, _ = device
    shutil.copy(DEMO_DIR / "drop11.jpg", frames / "a.jpg")
    assert device.watcher.step() is True
    assert device.board.latest()["total"] > 0
    assert device.watcher.read_frame.reference is None
    assert not (device.config.data_path / "empty.jpg").exists()


def test_the_reference_is_refreshed_only_when_the_frame_reads_empty_without_it_too(
    device, monkeypatch
):
    device, frames, _ = device
    first = _empty_tray_read(device, frames, "a.jpg").stat().st_mtime_ns
    kept = device.watcher.read_frame.reference
    # a second opinion (the frame read without the reference) that sees a cube: keep the old one
    import firmware.service as service

    real = service.count_cubes

    def doubting(image, reference=None, **kw):
        reading = real(image, reference, **kw)
        if reference is None:
            return replace(reading, cubes=(Cube("red", 500.0, 300.0, 0.9, False),))
        return reading

    monkeypatch.setattr(service, "count_cubes", doubting)
    shutil.copy(DEMO_DIR / "empty.jpg", frames / "b.jpg")
    assert device.watcher.step() is True
    assert device.watcher.read_frame.reference is kept
    assert (device.config.data_path / "empty.jpg").stat().st_mtime_ns == first


def test_keeping_the_empty_tray_can_be_switched_off(tmp_path, factory, fake):
    frames = tmp_path / "frames"
    frames.mkdir()
    config = with_overrides(Config(), data_dir=str(tmp_path / "data"))
    config = replace(config, vision=replace(config.vision, auto_empty_reference=False))
    device = build_device(config, FolderSource(frames), pin_factory=factory, detector=fake)
    try:
        _empty_tray_read(device, frames)
        assert device.watcher.read_frame.reference is None
        assert not (tmp_path / "data" / "empty.jpg").exists()
    finally:
        device.stop()


def test_the_demo_replay_never_writes_a_reference_for_the_real_camera(tmp_path, factory, fake):
    config = with_overrides(Config(), data_dir=str(tmp_path))
    device = build_device(config, DemoSource(), pin_factory=factory, detector=fake)
    try:
        for _ in range(13):  # the whole replay, its empty tray and a drop read empty among it
            device.watcher.step()
        assert not (tmp_path / "empty.jpg").exists()
    finally:
        device.stop()


def test_the_table_code_is_kept_with_the_game_data_across_a_restart(tmp_path, factory, fake):
    config = with_overrides(Config(), data_dir=str(tmp_path / "data"))
    first = build_device(config, FolderSource(tmp_path), pin_factory=factory, detector=fake)
    code = first.table_code.value
    first.stop()
    factory.reset()
    again = build_device(config, FolderSource(tmp_path), pin_factory=factory, detector=fake)
    try:
        assert again.table_code.value == code
        assert (tmp_path / "data" / "table-code").read_text().strip() == code
    finally:
        again.stop()


def test_the_app_answers_to_the_machines_name_and_the_configured_ones(tmp_path, factory, fake):
    import socket

    server = replace(Config().server, allowed_hosts=("cubetower.club.lan",))
    config = with_overrides(replace(Config(), server=server), data_dir=str(tmp_path))
    device = build_device(config, FolderSource(tmp_path), pin_factory=factory, detector=fake)
    try:
        client = device.app().test_client()
        for host in (socket.gethostname(), f"{socket.gethostname()}.local:8000",
                     "cubetower.club.lan:8000", "10.0.0.7:8000"):
            assert client.get("/api/health", headers={"Host": host}).status_code == 200, host
        assert client.get("/api/health", headers={"Host": "rebound.example"}).status_code == 403
        refused = client.post("/api/tray/read")
        assert refused.status_code == 403 and refused.get_json()["join"] is True
    finally:
        device.stop()



def test_two_savers_of_the_same_picture_at_once_both_succeed_and_leave_one_whole(tmp_path):
    # the watch loop keeping an empty tray and a player pressing "calibrate" at the same moment
    path = tmp_path / "empty.jpg"
    errors: list[BaseException] = []

    def save_many(value):
        try:
            for _ in range(40):
                save_image_atomically(path, np.full((120, 160, 3), value, np.uint8))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=save_many, args=(v,)) for v in (40, 200)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    saved = cv2.imread(str(path))
    assert saved is not None
    assert min(abs(float(saved.mean()) - v) for v in (40, 200)) < 3  # one of them, whole
    assert [p.name for p in tmp_path.iterdir()] == ["empty.jpg"]  # no partial left over


def _phase_started_from_the_camera(device, frames, client):
    """A game whose blue phase began with the camera's reading of drop02 (the set-up drop
    typed by hand); the blue phase's actions are then all taken. The reading used, by id."""
    game = device.table.new_game(["Eva", "Finn"])
    for command in ({"type": "setup_drop_read", "tray": SETUP_DROP},
                    {"type": "pirate_revealed", "value": 0}):
        game = device.table.command(game["id"], game["seq"], command)
    shutil.copy(DEMO_DIR / "drop02.jpg", frames / "b.jpg")
    device.watcher.step()
    used = device.board.latest()
    body = {"base": game["seq"], "command": {"type": "tray_read", "tray": used["counts"]},
            "reading": used["id"]}
    response = client.post(f"/api/game/{game['id']}/command", json=body)
    assert response.status_code == 200, response.get_json()
    game = response.get_json()
    while game["state"]["stage"] == "actions":
        command = {"type": "action", "player": game["state"]["turn"], "choice": "gold"}
        game = device.table.command(game["id"], game["seq"], command)
    return game, used["id"]



def _next_phase_from(client, game, reading):
    body = {"base": game["seq"], "command": {"type": "tray_read", "tray": reading["counts"]},
            "reading": reading["id"]}
    return client.post(f"/api/game/{game['id']}/command", json=body)


def test_read_now_on_an_unchanged_tray_cannot_start_the_next_phase(device):
    """"Read the tray now" reads the same tray again under a new id: it is still the blue
    phase's drop, so it may not start the black phase (one reading, one phase)."""
    device, frames, _ = device
    client = playing(device.app().test_client(), device.table_code)
    game, used = _phase_started_from_the_camera(device, frames, client)
    assert game["state"]["stage"] == "tray" and game["state"]["phase"] == "black"
    device.watcher.request_read()
    device.watcher.step()
    again = device.board.latest()
    assert again["id"] > used and again["same_tray_as"] == used
    refused = _next_phase_from(client, game, again)
    assert refused.status_code == 400 and refused.get_json()["kind"] == "StaleReading"
    # the black cubes dropped: a changed tray is a new reading, and starts the black phase
    shutil.copy(DEMO_DIR / "drop05.jpg", frames / "c.jpg")
    device.watcher.step()
    fresh = device.board.latest()
    assert "same_tray_as" not in fresh
    assert _next_phase_from(client, game, fresh).status_code == 200


def test_after_a_restart_the_unchanged_tray_is_still_the_last_phases_drop(tmp_path, factory,
                                                                          fake):
    frames = tmp_path / "frames"
    frames.mkdir()
    config = with_overrides(Config(), data_dir=str(tmp_path / "data"))
    first = build_device(config, FolderSource(frames), pin_factory=factory, detector=fake)
    client = playing(first.app().test_client(), first.table_code)
    game, used = _phase_started_from_the_camera(first, frames, client)
    first.stop()  # the plug pulled: a new process on the same data and the same tray
    factory.reset()
    second = build_device(config, FolderSource(frames), pin_factory=factory, detector=fake)
    try:
        second.watcher.step()  # its first look reads the tray again
        again = second.board.latest()
        assert again["id"] > used and again["same_tray_as"] == used
        client = playing(second.app().test_client(), second.table_code)
        refused = _next_phase_from(client, game, again)
        assert refused.status_code == 400 and refused.get_json()["kind"] == "StaleReading"
    finally:
        second.stop()


def test_a_deleted_frame_folder_is_said_once_and_fails_the_health_check(device, caplog):
    device, frames, _ = device
    shutil.copy(DEMO_DIR / "drop01.jpg", frames / "a.jpg")
    device.watcher.step()
    client = device.app().test_client()
    assert client.get("/api/health").status_code == 200
    shutil.rmtree(frames)
    with caplog.at_level("WARNING"):
        for _ in range(5):
            device.watcher.step()  # no traceback, and said once, not every 0.1 s
    assert not [r for r in caplog.records if r.exc_info]
    assert sum("camera problem" in r.getMessage() for r in caplog.records) == 1
    status = device.board.status()
    assert status["state"] == "error" and "is gone" in status["message"]
    health = client.get("/api/health")
    assert health.status_code == 503 and "is gone" in health.get_json()["camera"]["problem"]
    frames.mkdir()  # there again, but emptied: a camera that stopped, said in each language
    device.watcher.step()
    german = client.get("/api/status", headers={"Accept-Language": "de-DE,de;q=0.9"})
    assert "enthält kein Bild mehr" in german.get_json()["message"]
    assert "holds no picture any more" in device.board.status()["message"]
    shutil.copy(DEMO_DIR / "drop02.jpg", frames / "b.jpg")  # back: the camera is well again
    device.watcher.step()
    assert client.get("/api/health").status_code == 200
