"""What hardware/ says about the camera is what the code does: the field of view in mount.md, the
sensor mode it names, and the watchdog in the systemd unit."""

from __future__ import annotations

import math
import re
from pathlib import Path

from fake_picamera2 import SENSOR_MODES

from firmware.config import Config
from firmware.picamera_source import full_field_mode

HW = Path(__file__).resolve().parents[2] / "hardware"
MOUNT = (HW / "mount.md").read_text(encoding="utf-8")
TRAY_CM = (16, 10)


def seen_cm(height_cm: float, degrees: float) -> float:
    return 2 * height_cm * math.tan(math.radians(degrees / 2))


def table_rows() -> list[list[str]]:
    rows = [line for line in MOUNT.splitlines() if re.match(r"\| \d+ cm ", line)]
    assert len(rows) >= 4, "mount.md lost its field-of-view table"
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in rows]


def test_the_field_of_view_table_is_the_full_field_geometry():
    """Standard lens 66 x 41 degrees, Wide 102 x 67 (the full 16:9 sensor), to the cm."""
    for height, standard, fills, wide in table_rows():
        h = float(height.split()[0])
        for text, (across, along) in ((standard, (66, 41)), (wide, (102, 67))):
            w, d = (float(v) for v in re.findall(r"\d+", text)[:2])
            assert abs(w - seen_cm(h, across)) <= 1, (height, text)
            assert abs(d - seen_cm(h, along)) <= 1, (height, text)
        shares = [float(v) for v in re.findall(r"(\d+) %", fills)]
        truth = [100 * TRAY_CM[0] / seen_cm(h, 66), 100 * TRAY_CM[1] / seen_cm(h, 41)]
        for share, real in zip(shares, truth, strict=False):
            assert abs(share - real) <= 6, (height, fills, truth)


def test_the_cropped_mode_would_not_see_the_tray_at_the_recommended_height():
    """Why the full field matters: the 1536 x 864 crop is 2/3 of the sensor's width."""
    crop_across = math.degrees(2 * math.atan(math.tan(math.radians(33)) * 3072 / 4608))
    assert 45 < crop_across < 47
    assert seen_cm(18, crop_across) < TRAY_CM[0]


def test_the_guide_names_the_sensor_mode_the_code_picks():
    module3 = full_field_mode(
        [{"size": s, "bit_depth": b, "crop_limits": c} for s, b, c in SENSOR_MODES["imx708"]],
        (Config().camera.width, Config().camera.height),
    )
    assert module3 == {"output_size": (2304, 1296), "bit_depth": 10}
    assert "sensor mode 2304x1296, 10-bit: the sensor's full field of view" in MOUNT
    module2 = full_field_mode(
        [{"size": s, "bit_depth": b, "crop_limits": c} for s, b, c in SENSOR_MODES["imx219"]],
        (1152, 648),
    )
    assert module2["output_size"] == (1640, 1232) and "1640x1232" in MOUNT


def test_the_unit_waits_for_ready_and_watches_the_camera_loop():
    unit = (HW / "cubetower.service").read_text(encoding="utf-8")
    settings = dict(
        line.split("=", 1) for line in unit.splitlines() if re.match(r"^[A-Za-z]+=", line)
    )
    assert settings["Type"] == "notify"
    assert settings["NotifyAccess"] == "main"
    watchdog = int(settings["WatchdogSec"])
    defaults = Config()
    # the loop stops feeding it after stall_seconds; systemd must not fire before that
    assert watchdog > 2 * defaults.watcher.stall_seconds
    assert defaults.watcher.stall_seconds > defaults.camera.capture_timeout_seconds
