"""What the device learns about the table: tapped corners and colours from confirmed drops."""

import json
import shutil
from dataclasses import replace

import numpy as np
import pytest
from gpiozero.pins.mock import MockFactory

from firmware.config import Config, with_overrides
from firmware.service import build_device
from firmware.session import CornersError, SessionCalibration, parse_corners
from firmware.sources import DEMO_DIR, FolderSource
from vision import load_image

FRAME = (1152, 648)
# the demo's drop04 and drop06, as the players would confirm them (the render set's labels)
DROP04 = {"black": 2, "red": 3, "green": 1, "yellow": 1}
DROP06 = {"blue": 2, "black": 1, "red": 1, "brown": 2, "green": 1, "yellow": 1, "white": 1}
# the demo tray's floor as a player would tap it (the automatic outline of its empty picture)
CORNERS = [[423, 115], [830, 243], [740, 535], [329, 404]]


@pytest.mark.parametrize("bad, why", [
    ("a string", "list of four"),
    ([[1, 2], [3, 4], [5, 6]], "list of four"),
    ([[1, 2], [3, 4], [5, 6], [7]], "two numbers"),
    ([[1, 2], [3, 4], [5, 6], [True, 8]], "two numbers"),
    ([[1, 2], [3, 4], [5, 6], ["7", 8]], "two numbers"),
    ([[1, 2], [3, 4], [5, 6], [float("nan"), 8]], "finite"),
    ([[0, 0], [2000, 0], [100, 100], [0, 100]], "outside"),
    ([[10, 10], [11, 10], [11, 11], [10, 11]], "almost nothing"),
])
def test_corners_that_cannot_be_a_tray_are_refused_with_a_reason(bad, why):
    with pytest.raises(CornersError, match=why):
        parse_corners(bad, FRAME)


def test_four_corners_inside_the_picture_are_taken_in_any_order():
    shuffled = [CORNERS[2], CORNERS[0], CORNERS[3], CORNERS[1]]
    assert parse_corners(shuffled, FRAME) == [tuple(map(float, p)) for p in shuffled]


def test_corners_and_learned_colours_survive_a_restart(tmp_path):
    path = tmp_path / "calibration.json"
    session = SessionCalibration(path)
    frame = load_image(DEMO_DIR / "drop04.jpg")
    reference = load_image(DEMO_DIR / "empty.jpg")
    session.set_corners([tuple(p) for p in CORNERS], frame)
    assert session.learn(frame, DROP04, reference) is True
    learned = session.calibration.colours.to_dict()
    assert learned != SessionCalibration(tmp_path / "other.json").calibration.colours.to_dict()

    again = SessionCalibration(path)
    assert again.status() == {"corners": CORNERS, "colours_learned_from": 1}
    assert again.calibration.colours.to_dict() == learned


def test_a_drop_whose_count_the_counter_does_not_match_teaches_nothing(tmp_path):
    session = SessionCalibration(tmp_path / "calibration.json")
    frame = load_image(DEMO_DIR / "drop04.jpg")
    wrong = {**DROP04, "white": 2}  # the players say two more cubes than the counter finds
    assert session.learn(frame, wrong, load_image(DEMO_DIR / "empty.jpg")) is False
    assert session.status()["colours_learned_from"] == 0
    assert not (tmp_path / "calibration.json").exists()


def test_a_corrupt_calibration_file_is_ignored_not_fatal(tmp_path, caplog):
    path = tmp_path / "calibration.json"
    path.write_text('{"calibration": {"corners": [[1, 2]]')  # cut off by a power cut
    session = SessionCalibration(path)
    assert session.status() == {"corners": None, "colours_learned_from": 0}
    assert "ignoring calibration file" in caplog.text


def test_corners_the_counter_cannot_read_with_are_refused_and_nothing_changes(tmp_path):
    path = tmp_path / "calibration.json"
    session = SessionCalibration(path)
    flat = np.full((FRAME[1], FRAME[0], 3), 255, np.uint8)  # an all-white frame
    with pytest.raises(CornersError, match="cannot be read"):
        session.set_corners([tuple(p) for p in CORNERS], flat)
    assert session.status()["corners"] is None
    assert not path.exists()


@pytest.fixture
def device(tmp_path):
    frames = tmp_path / "frames"
    frames.mkdir()
    config = with_overrides(Config(), data_dir=str(tmp_path / "data"))
    config = replace(config, vision=replace(config.vision, empty_reference=str(
        DEMO_DIR / "empty.jpg")))
    device = build_device(config, FolderSource(frames), pin_factory=MockFactory())
    yield device, frames
    device.stop()


def _read(device, frames, name):
    shutil.copy(DEMO_DIR / name, frames / f"{len(list(frames.iterdir()))}-{name}")
    assert device.watcher.step() is True


def test_a_confirmed_drop_teaches_the_device_the_tables_colours(device):
    device, frames = device
    device.table.new_game(["Ann", "Bob"])
    _read(device, frames, "drop06.jpg")
    assert device.board.latest()["counts"] == {**dict.fromkeys(DROP06, 0), **DROP06}
    device.table.confirm_tray(device.board.latest()["counts"])  # the set-up drop
    assert device.session.status()["colours_learned_from"] == 1
    saved = json.loads((device.config.data_path / "calibration.json").read_text())
    assert saved["colours_learned_from"] == 1
    # the next reading is named with the learned colours
    _read(device, frames, "drop04.jpg")
    assert device.board.latest()["counts"] == {**dict.fromkeys(DROP06, 0), **DROP04}


def test_a_new_game_starts_the_colours_afresh_but_keeps_the_corners(device):
    device, frames = device
    device.table.new_game(["Ann", "Bob"])
    _read(device, frames, "drop06.jpg")
    device.set_corners(CORNERS)
    device.table.confirm_tray(device.board.latest()["counts"])
    assert device.session.status() == {"corners": CORNERS, "colours_learned_from": 1}
    device.table.new_game(["Cy", "Di"])
    assert device.session.status() == {"corners": CORNERS, "colours_learned_from": 0}


def test_tapped_corners_are_used_for_the_next_reading(device):
    device, frames = device
    seen = []
    keeper = device.watcher.read_frame.on_reading
    device.watcher.read_frame.on_reading = lambda image, r: (seen.append(r), keeper(image, r))
    _read(device, frames, "drop04.jpg")
    result = device.set_corners(CORNERS)
    assert result["corners"] == CORNERS
    assert device.watcher.step() is True  # read again at once, with the corners
    assert sorted(seen[-1].tray_corners) == sorted(map(tuple, CORNERS))
    device.set_corners(None)
    assert device.watcher.step() is True
    assert sorted(seen[-1].tray_corners) != sorted(map(tuple, CORNERS))
