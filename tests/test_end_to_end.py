"""Camera to phone on a laptop: a folder stands in for the camera, Flask's client for the phone."""

import os
import shutil
import time

import pytest
from table_access import playing

from firmware.config import Config, with_overrides
from firmware.service import build_device
from firmware.sources import DEMO_DIR, STILL_WRITING_S, FolderSource


@pytest.fixture
def device(tmp_path):
    frames = tmp_path / "frames"
    frames.mkdir()
    data = tmp_path / "data"
    data.mkdir()
    shutil.copy(DEMO_DIR / "empty.jpg", data / "empty.jpg")  # a calibrated device
    config = with_overrides(Config(), data_dir=str(data))
    device = build_device(config, FolderSource(frames))
    yield device, frames
    device.stop()


def test_copying_a_picture_in_gives_a_new_reading(device):
    device, frames = device
    client = playing(device.app().test_client(), device.table_code)
    device.watcher.step()
    assert client.get("/api/tray").get_json()["frame_id"] is None

    shutil.copy(DEMO_DIR / "drop01.jpg", frames / "a.jpg")
    assert device.watcher.step() is True
    first = client.get("/api/tray").get_json()
    assert first["frame_id"].startswith("a.jpg@")
    assert first["total"] == sum(first["counts"].values()) > 0
    assert first["ap"] == max(first["counts"].values())
    assert first["gold"] == -(-first["total"] // 3)
    assert first["actions"] == [c for c, n in first["counts"].items() if n]
    picture = client.get(first["picture"])
    assert picture.status_code == 200 and picture.data[:2] == b"\xff\xd8"

    assert device.watcher.step() is False  # same picture: not read again

    time.sleep(0.01)
    shutil.copy(DEMO_DIR / "empty.jpg", frames / "b.jpg")
    assert device.watcher.step() is True
    second = client.get("/api/tray").get_json()
    assert second["frame_id"].startswith("b.jpg@")
    assert second["total"] == 0 and second["actions"] == []


def test_a_corrupt_picture_reports_an_error_and_a_good_one_recovers(device):
    device, frames = device
    client = playing(device.app().test_client(), device.table_code)
    (frames / "a.jpg").write_bytes(b"\xff\xd8 half a jpeg")
    old = time.time() - STILL_WRITING_S - 1  # not one still being written: its writer stopped
    os.utime(frames / "a.jpg", (old, old))
    device.watcher.step()
    body = client.get("/api/tray").get_json()
    assert "error" in body and "a.jpg" in body["error"]
    time.sleep(0.01)
    shutil.copy(DEMO_DIR / "drop02.jpg", frames / "b.jpg")
    device.watcher.step()
    body = client.get("/api/tray").get_json()
    assert "error" not in body and body["total"] > 0
