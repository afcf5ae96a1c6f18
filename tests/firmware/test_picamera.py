"""The Pi camera source against a fake picamera2 that records what it is asked to do."""

from __future__ import annotations

import logging

import pytest
from fake_picamera2 import SETTLED, install

from firmware.picamera_source import full_field_mode, lens_position
from firmware.sources import (
    CameraSettings,
    CameraStalled,
    FrameError,
    PiCameraSource,
    SourceError,
    open_source,
)


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


# sensor mode -----------------------------------------------------------------------------------


def test_the_camera_module_3_is_asked_for_its_full_field_binned_mode(monkeypatch):
    """1152 x 648 alone would get the cropped 1536 x 864 mode (46 x 28 degrees, not 66 x 41)."""
    rig = install(monkeypatch, model="imx708")
    source = PiCameraSource()
    [(_, main, sensor)] = rig.named("config")
    assert main == {"size": (1152, 648), "format": "RGB888"}  # B, G, R in memory: OpenCV's order
    assert sensor == {"output_size": (2304, 1296), "bit_depth": 10}
    frame = source.read()
    assert frame.image.shape == (648, 1152, 3) and frame.image.flags.c_contiguous


def test_the_camera_module_2_gets_its_full_field_binned_mode_too(monkeypatch):
    rig = install(monkeypatch, model="imx219")
    PiCameraSource()
    [(_, _, sensor)] = rig.named("config")
    assert sensor == {"output_size": (1640, 1232), "bit_depth": 10}  # not the cropped 1920 x 1080


def test_a_bigger_picture_gets_the_smallest_full_field_mode_that_holds_it():
    modes = [
        {"size": (2304, 1296), "bit_depth": 10, "crop_limits": (0, 0, 4608, 2592)},
        {"size": (4608, 2592), "bit_depth": 10, "crop_limits": (0, 0, 4608, 2592)},
        {"size": (1536, 864), "bit_depth": 10, "crop_limits": (768, 432, 3072, 1728)},
    ]
    assert full_field_mode(modes, (3000, 1700))["output_size"] == (4608, 2592)
    assert full_field_mode(modes, (9000, 9000))["output_size"] == (4608, 2592)  # the biggest
    assert full_field_mode([{"format": "MJPEG"}], (1152, 648)) is None  # not a raw sensor


def test_the_sensor_modes_are_listed_once_not_at_every_restart(monkeypatch):
    rig = install(monkeypatch, script=["stall"])
    source = PiCameraSource()
    with pytest.raises(CameraStalled):
        source.read()
    assert len(rig.named("sensor_modes")) == 1
    binned = {"output_size": (2304, 1296), "bit_depth": 10}
    assert [c[2] for c in rig.named("config")] == [binned, binned]


# focus -----------------------------------------------------------------------------------------


def test_the_camera_module_3_is_focused_by_hand_on_the_configured_height(monkeypatch):
    rig = install(monkeypatch, model="imx708")
    source = PiCameraSource(settings=CameraSettings(lens_height_mm=250))
    assert rig.controls["AfMode"] == 0  # manual
    assert rig.controls["LensPosition"] == pytest.approx(4.0)  # 1000 / 250 mm, in dioptres
    assert not rig.named("autofocus_cycle")
    assert source.focus == {"mode": "manual", "lens_position": 4.0, "height_mm": 250}
    # the focus is set before the camera starts, so the first picture is already sharp
    names = [c[0] for c in rig.calls]
    assert names.index("set_controls") < names.index("start")


def test_the_lens_position_stays_inside_what_the_lens_can_do():
    assert lens_position(40, (0.0, 15.0, 1.0)) == 15.0
    assert lens_position(300, (0.0, 15.0, 1.0)) == pytest.approx(3.333)
    assert lens_position(300, None) == pytest.approx(3.333)


def test_without_a_height_one_autofocus_cycle_runs_and_the_lens_is_held_there(monkeypatch):
    rig = install(monkeypatch, model="imx708", autofocus_position=4.2)
    source = PiCameraSource()
    [(_, wait)] = rig.named("autofocus_cycle")
    assert wait == PiCameraSource.AUTOFOCUS_SECONDS  # never waits for ever
    assert rig.controls["AfMode"] == 0 and rig.controls["LensPosition"] == 4.2  # held
    assert source.focus == {"mode": "autofocus", "focused": True, "lens_position": 4.2}


def test_a_restart_puts_the_lens_back_without_a_new_autofocus_cycle(monkeypatch):
    rig = install(monkeypatch, model="imx708", autofocus_position=4.2, script=["stall"])
    source = PiCameraSource()
    with pytest.raises(CameraStalled):
        source.read()
    assert len(rig.named("autofocus_cycle")) == 1
    last_start_controls = [c[1] for c in rig.named("set_controls")][-1]
    assert last_start_controls == {"AfMode": 0, "LensPosition": 4.2}


def test_an_autofocus_that_finds_nothing_sharp_says_what_to_set(monkeypatch, caplog):
    install(monkeypatch, model="imx708", autofocus_position=None)
    with caplog.at_level(logging.WARNING):
        source = PiCameraSource()
    assert source.focus["focused"] is False
    assert "lens_height_mm" in caplog.text
    assert source.read().image is not None  # the camera still works


@pytest.mark.parametrize("height", [0, 250])
def test_a_fixed_focus_camera_module_2_gets_no_focus_controls(monkeypatch, height):
    """set_controls with AfMode would raise on a Module 2: picamera2 refuses unknown controls."""
    rig = install(monkeypatch, model="imx219")
    source = PiCameraSource(settings=CameraSettings(lens_height_mm=height, mains_hz=50))
    assert "AfMode" not in rig.controls and "LensPosition" not in rig.controls
    assert not rig.named("autofocus_cycle")
    assert source.focus == {"mode": "fixed"}
    assert source.read().image.shape == (648, 1152, 3)


# flicker ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("hz", "period"), [(50, 10_000), (60, 8_333)])
def test_mains_flicker_is_avoided_for_the_configured_mains(monkeypatch, hz, period):
    rig = install(monkeypatch)
    PiCameraSource(settings=CameraSettings(mains_hz=hz, lens_height_mm=250))
    assert rig.controls["AeFlickerMode"] == 1  # manual: the period below
    assert rig.controls["AeFlickerPeriod"] == period


def test_no_mains_setting_leaves_flicker_alone(monkeypatch):
    rig = install(monkeypatch)
    PiCameraSource(settings=CameraSettings(lens_height_mm=250))
    assert "AeFlickerMode" not in rig.controls


# timeouts and restarts -------------------------------------------------------------------------


def test_every_capture_has_the_configured_timeout(monkeypatch):
    rig = install(monkeypatch)
    source = PiCameraSource(settings=CameraSettings(capture_timeout=1.5))
    source.read()
    source.read()
    assert [c[2] for c in rig.captures()] == [1.5, 1.5]


def test_a_stalled_capture_restarts_the_camera_at_once_and_says_so(monkeypatch):
    rig = install(monkeypatch, script=["stall"])
    source = PiCameraSource()
    with pytest.raises(CameraStalled, match="no picture for 2 s"):
        source.read()
    assert rig.named("stop") and rig.named("close")  # the stuck camera was let go
    assert len(rig.named("start")) == 2 and rig.open == 1
    assert source.restarts == 1
    assert source.read().frame_id == "pi-1"  # and it delivers again


def test_a_camera_that_does_not_come_back_is_retried_every_few_seconds(monkeypatch):
    clock = Clock()
    rig = install(monkeypatch, script=["stall"])
    source = PiCameraSource(clock=clock)
    rig.start_failures = 2
    with pytest.raises(CameraStalled, match="no picture"):
        source.read()  # restart fails: no camera now
    with pytest.raises(CameraStalled, match="does not start again"):
        source.read()  # too soon to try again: nothing is asked of the camera
    assert len(rig.named("init")) == 2 and rig.open == 0
    clock.now += PiCameraSource.RETRY_SECONDS
    with pytest.raises(CameraStalled, match="does not start again"):
        source.read()  # tried again, still gone
    assert len(rig.named("init")) == 3
    clock.now += PiCameraSource.RETRY_SECONDS
    assert source.read().frame_id == "pi-1"  # back
    assert rig.open == 1


def test_driver_errors_restart_the_camera_after_a_few_in_a_row(monkeypatch):
    failures = PiCameraSource.RESTART_AFTER_FAILURES
    rig = install(monkeypatch, script=["fail"] * failures)
    source = PiCameraSource()
    for _ in range(failures):
        with pytest.raises(FrameError, match="no frame"):
            source.read()
    assert len(rig.named("start")) == 2  # started again
    assert source.read().image.shape == (648, 1152, 3)


def test_a_start_that_fails_half_way_closes_the_camera(monkeypatch):
    rig = install(monkeypatch)

    def broken_start(self):
        raise RuntimeError("Failed to start camera: Device or resource busy")

    monkeypatch.setattr(__import__("sys").modules["picamera2"].Picamera2, "start", broken_start)
    with pytest.raises(SourceError, match="would not start"):
        PiCameraSource()
    assert rig.open == 0  # closed, so the next start does not find it busy


def test_close_stops_and_releases_the_camera(monkeypatch):
    rig = install(monkeypatch)
    source = PiCameraSource()
    source.close()
    assert [c[0] for c in rig.calls[-2:]] == ["stop", "close"] and rig.open == 0
    source.close()  # twice is harmless


def test_no_camera_attached_says_what_to_check(monkeypatch):
    install(monkeypatch, cameras=0)
    with pytest.raises(SourceError, match="no Raspberry Pi camera"):
        PiCameraSource()


def test_open_source_passes_the_size_and_settings_on(monkeypatch):
    rig = install(monkeypatch)
    source = open_source("picamera", (1536, 864), CameraSettings(lens_height_mm=200))
    assert rig.named("config")[0][1]["size"] == (1536, 864)
    assert rig.controls["LensPosition"] == 5.0
    source.close()


# exposure lock ---------------------------------------------------------------------------------


def test_locking_holds_the_exposure_and_colours_the_camera_settled_on(monkeypatch):
    rig = install(monkeypatch)
    source = PiCameraSource(settings=CameraSettings(lens_height_mm=250))
    lock = source.lock_exposure()
    assert lock == {
        "camera": "picamera",
        "controls": {"ExposureTime": 12_345, "AnalogueGain": 2.5, "ColourGains": [1.9, 1.6]},
    }
    assert rig.controls["AeEnable"] is False and rig.controls["AwbEnable"] is False
    assert {k: rig.controls[k] for k in SETTLED} == SETTLED
    # it let the automatic exposure run first, and read the settled values from the metadata
    metadata_reads = rig.named("capture_metadata")
    assert len(metadata_reads) >= PiCameraSource.SETTLE_FRAMES[0]
    assert all(wait == 2.0 for _, wait in metadata_reads)
    assert rig.controls["LensPosition"] == 4.0  # focus untouched


def test_locking_again_first_lets_the_camera_adapt_to_the_new_light(monkeypatch):
    rig = install(monkeypatch)
    source = PiCameraSource(settings=CameraSettings(lens_height_mm=250))
    source.lock_exposure()
    rig.calls.clear()
    source.lock_exposure()
    first = rig.named("set_controls")[0][1]
    assert first == {"AeEnable": True, "AwbEnable": True}


def test_a_saved_lock_is_held_from_the_start_and_after_a_restart(monkeypatch):
    rig = install(monkeypatch, script=["ok", "stall"])
    source = PiCameraSource(settings=CameraSettings(lens_height_mm=250))
    source.use_exposure_lock(
        {"camera": "picamera",
         "controls": {"ExposureTime": 9000, "AnalogueGain": 1.5, "ColourGains": [2.0, 1.4]}}
    )
    assert rig.controls["AeEnable"] is False
    assert rig.controls["ExposureTime"] == 9000 and rig.controls["ColourGains"] == (2.0, 1.4)
    source.read()
    with pytest.raises(CameraStalled):
        source.read()
    restarted = rig.named("set_controls")[-1][1]  # the new camera's first controls
    assert restarted["ExposureTime"] == 9000 and restarted["AwbEnable"] is False


@pytest.mark.parametrize(
    "lock",
    [
        {"camera": "webcam", "controls": {"exposure": 150}},
        {"camera": "picamera", "controls": {"ExposureTime": -5, "AnalogueGain": 1,
                                            "ColourGains": [1, 1]}},
        {"camera": "picamera", "controls": {"ExposureTime": 900}},
    ],
)
def test_a_lock_for_another_camera_or_a_broken_one_is_not_used(monkeypatch, lock):
    rig = install(monkeypatch)
    source = PiCameraSource(settings=CameraSettings(lens_height_mm=250))
    source.use_exposure_lock(lock)
    assert "AeEnable" not in rig.controls
    assert source.read().image is not None


def test_a_camera_that_stalls_while_settling_is_reported(monkeypatch):
    rig = install(monkeypatch)
    source = PiCameraSource(settings=CameraSettings(lens_height_mm=250))
    rig.metadata_script = ["stall"]
    with pytest.raises(CameraStalled, match="settling"):
        source.lock_exposure()
