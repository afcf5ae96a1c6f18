"""Calibrating the empty tray holds the camera's exposure, saved and restored at start."""

from __future__ import annotations

import json
import time
from dataclasses import replace

import pytest
from fake_detector import demo_detector
from fake_picamera2 import SETTLED, install
from gpiozero.pins.mock import MockFactory, MockPWMPin

from firmware.cli import main
from firmware.config import Config, with_overrides
from firmware.service import build_device, camera_settings
from firmware.session import SessionCalibration
from firmware.sources import DemoSource, PiCameraSource

LOCK = {"camera": "picamera",
        "controls": {"ExposureTime": 12_345, "AnalogueGain": 2.5, "ColourGains": [1.9, 1.6]}}


@pytest.fixture
def factory():
    factory = MockFactory(pin_class=MockPWMPin)
    yield factory
    factory.reset()


def pi_config(tmp_path, **camera):
    config = with_overrides(Config(), data_dir=str(tmp_path))
    return replace(
        config,
        camera=replace(config.camera, lens_height_mm=250, **camera),
        watcher=replace(config.watcher, poll_seconds=0.02),
    )


def start_device(config, factory):
    source = PiCameraSource(settings=camera_settings(config))
    device = build_device(config, source, pin_factory=factory, detector=demo_detector())
    device.start()
    deadline = time.monotonic() + 5
    while device.watcher.last_frame is None and time.monotonic() < deadline:
        time.sleep(0.02)
    return device


def test_calibrating_holds_the_settled_exposure_and_saves_it_with_the_calibration(
    tmp_path, monkeypatch, factory
):
    rig = install(monkeypatch)
    device = start_device(pi_config(tmp_path), factory)
    try:
        before = time.time()
        result = device.calibrate_empty()
    finally:
        device.stop()
    assert result["exposure_held"] == LOCK["controls"]
    assert rig.controls["AeEnable"] is False and rig.controls["AwbEnable"] is False
    assert {k: rig.controls[k] for k in SETTLED} == SETTLED
    # the reference is a picture taken after the exposure was held
    assert int(result["frame_id"].split("-")[1]) > 1
    assert device.watcher.last_frame.captured_at >= before
    saved = json.loads((tmp_path / "calibration.json").read_text())
    assert saved["camera_lock"] == LOCK
    assert (tmp_path / "empty.jpg").is_file()
    assert device.session.status()["exposure_held"] == LOCK["controls"]


def test_the_saved_exposure_is_held_from_the_next_start(tmp_path, monkeypatch, factory):
    SessionCalibration(tmp_path / "calibration.json").set_camera_lock(LOCK)
    rig = install(monkeypatch)
    device = start_device(pi_config(tmp_path), factory)
    device.stop()
    assert rig.controls["AeEnable"] is False
    assert rig.controls["ExposureTime"] == 12_345 and rig.controls["ColourGains"] == (1.9, 1.6)


def test_with_lock_exposure_off_nothing_is_held_or_restored(tmp_path, monkeypatch, factory):
    SessionCalibration(tmp_path / "calibration.json").set_camera_lock(LOCK)
    rig = install(monkeypatch)
    device = start_device(pi_config(tmp_path, lock_exposure=False), factory)
    try:
        result = device.calibrate_empty()
    finally:
        device.stop()
    assert "AeEnable" not in rig.controls and "exposure_held" not in result


def test_a_still_source_has_no_exposure_to_hold(tmp_path, factory):
    device = build_device(
        with_overrides(Config(), data_dir=str(tmp_path)), DemoSource(),
        pin_factory=factory, detector=demo_detector(),
    )
    device.watcher.step()
    result = device.calibrate_empty()
    device.stop()
    assert "exposure_held" not in result
    assert not (tmp_path / "calibration.json").exists()


def test_the_calibrate_command_holds_and_saves_the_exposure_too(tmp_path, monkeypatch, capsys):
    rig = install(monkeypatch)
    config = tmp_path / "c.toml"
    config.write_text("[camera]\nlens_height_mm = 250\n")
    status = main(["calibrate", "--source", "picamera", "--data-dir", str(tmp_path),
                   "--config", str(config), "--wait", "0.2"])
    assert status == 0, capsys.readouterr().err
    assert "exposure and white balance held" in capsys.readouterr().out
    assert json.loads((tmp_path / "calibration.json").read_text())["camera_lock"] == LOCK
    assert rig.open == 0  # the camera was closed again for the service


def test_the_calibrate_command_lights_the_tray_while_it_settles_and_lets_the_pins_go(
    tmp_path, monkeypatch, capsys, factory
):
    """The service that switches the light is stopped for the command: without the light the
    camera would hold the exposure of an unlit tray."""
    import sys

    from gpiozero import Device

    install(monkeypatch)
    monkeypatch.setattr(Device, "pin_factory", factory)  # what open_panel uses by default
    camera = sys.modules["picamera2"].Picamera2
    taken = camera.capture_array
    light_at_capture = []

    def capture_and_look(self, *args, **kwargs):
        light_at_capture.append(factory.pin(18).state)
        return taken(self, *args, **kwargs)

    monkeypatch.setattr(camera, "capture_array", capture_and_look)
    status = main(["calibrate", "--source", "picamera", "--data-dir", str(tmp_path),
                   "--wait", "0.2"])
    assert status == 0, capsys.readouterr().err
    assert light_at_capture and all(light_at_capture)
    assert not factory.pin(18).state  # off again
    from firmware.panel import Panel, PanelConfig, open_panel

    service_panel = open_panel(PanelConfig(), on_read_now=print, on_undo=print, on_next=print,
                               pin_factory=factory)
    assert isinstance(service_panel, Panel)  # the pins are free for the service
    service_panel.close()
    assert (tmp_path / "empty.jpg").is_file()


def test_the_calibrate_command_leaves_the_light_alone_when_the_panel_has_none(
    tmp_path, monkeypatch, capsys, factory
):
    from gpiozero import Device

    install(monkeypatch)
    monkeypatch.setattr(Device, "pin_factory", factory)
    config = tmp_path / "c.toml"
    config.write_text("[panel]\nlight_enabled = false\n")
    status = main(["calibrate", "--source", "picamera", "--data-dir", str(tmp_path),
                   "--config", str(config), "--wait", "0.2"])
    assert status == 0, capsys.readouterr().err
    assert 18 not in factory.pins  # nothing opened the light's pin
