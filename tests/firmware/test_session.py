"""What the device learns about the table: tapped corners and colours from confirmed drops.

The cube model is a fake here (``tests/fake_detector.py``: what it finds in each demo picture is
written down), so that these tests check the session's bookkeeping, not what a model reads.
"""

import json
import shutil
from dataclasses import replace

import numpy as np
import pytest
from fake_detector import (
    DEMO_CORNERS,
    FakeDetector,
    demo_counts,
    demo_detector,
    detections,
    row_of_cubes,
)
from gpiozero.pins.mock import MockFactory

from firmware.config import Config, with_overrides
from firmware.service import build_device
from firmware.session import CornersError, SessionCalibration, parse_corners
from firmware.sources import DEMO_DIR, FolderSource
from vision import VisionError, load_image
from vision.calibration import Calibration
from vision.reading import COLOURS

FRAME = (1152, 648)
CORNERS = DEMO_CORNERS  # the demo tray's floor as a player would tap it
# drop06 as the players confirm it: the two cubes the fake model takes for yellow are white
DROP06 = {**demo_counts("drop06.jpg"), "yellow": 0, "white": 2}
# drop04 as the fake model reads it: its one whitish cube as yellow
DROP04 = demo_counts("drop04.jpg")


@pytest.fixture(scope="module")
def fake():
    return demo_detector()


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


def test_corners_and_learned_colours_survive_a_restart(tmp_path, fake):
    path = tmp_path / "calibration.json"
    session = SessionCalibration(path, fake)
    frame = load_image(DEMO_DIR / "drop06.jpg")
    reference = load_image(DEMO_DIR / "empty.jpg")
    session.set_corners([tuple(p) for p in CORNERS], frame)
    assert session.learn(frame, DROP06, reference) is True
    learned = session.calibration.samples
    assert len(learned) == sum(DROP06.values())
    assert sorted(COLOURS[y] for _, y, _ in learned) == sorted(
        c for c, n in DROP06.items() for _ in range(n))
    assert session.calibration.bias() is not None
    assert session.calibration.knows_looks()

    again = SessionCalibration(path, fake)
    assert again.status() == {"corners": CORNERS, "colours_learned_from": 1}
    kept = again.calibration.samples  # the scores as saved: five decimals, colours two
    assert [y for _, y, _ in kept] == [y for _, y, _ in learned]
    assert np.allclose([p for p, _, _ in kept], [p for p, _, _ in learned], atol=1e-5)
    assert np.allclose([lab for _, _, lab in kept], [lab for _, _, lab in learned], atol=0.01)
    assert np.allclose(again.calibration.bias(), session.calibration.bias(), atol=1e-3)


def test_the_reference_and_the_sessions_calibration_go_to_the_model(tmp_path, fake):
    session = SessionCalibration(tmp_path / "calibration.json", fake)
    session.set_corners([tuple(p) for p in CORNERS], load_image(DEMO_DIR / "drop06.jpg"))
    frame, reference = load_image(DEMO_DIR / "drop06.jpg"), load_image(DEMO_DIR / "empty.jpg")
    fake.calls.clear()
    assert session.learn(frame, DROP06, reference)
    [(image, ref)] = fake.calls
    assert image is frame and np.array_equal(ref, reference)
    assert session.status()["corners"] == CORNERS  # learning keeps the corners


def test_a_drop_whose_count_the_counter_does_not_match_teaches_nothing(tmp_path, fake):
    session = SessionCalibration(tmp_path / "calibration.json", fake)
    frame = load_image(DEMO_DIR / "drop04.jpg")
    wrong = {**DROP04, "white": 2}  # the players say two more cubes than the counter finds
    assert session.learn(frame, wrong, load_image(DEMO_DIR / "empty.jpg")) is False
    assert session.status()["colours_learned_from"] == 0
    assert session.calibration.samples == []
    assert not (tmp_path / "calibration.json").exists()


def test_a_drop_of_one_colour_teaches_nothing(tmp_path):
    three_red = FakeDetector(detections(row_of_cubes({"red": 3}), CORNERS))
    session = SessionCalibration(tmp_path / "calibration.json", three_red)
    assert session.learn(load_image(DEMO_DIR / "drop01.jpg"), {"red": 3}, None) is False
    assert session.status()["colours_learned_from"] == 0


def test_forgetting_the_colours_keeps_the_corners(tmp_path, fake):
    path = tmp_path / "calibration.json"
    session = SessionCalibration(path, fake)
    frame = load_image(DEMO_DIR / "drop06.jpg")
    session.set_corners([tuple(p) for p in CORNERS], frame)
    assert session.learn(frame, DROP06, None)
    session.forget_colours()
    assert session.calibration.samples == []
    assert session.calibration.bias() is None
    assert session.status() == {"corners": CORNERS, "colours_learned_from": 0}
    assert SessionCalibration(path, fake).status() == session.status()


def test_a_corrupt_calibration_file_is_ignored_not_fatal(tmp_path, caplog):
    path = tmp_path / "calibration.json"
    path.write_text('{"calibration": {"corners": [[1, 2]]')  # cut off by a power cut
    session = SessionCalibration(path)
    assert session.status() == {"corners": None, "colours_learned_from": 0}
    assert "ignoring calibration file" in caplog.text


def test_a_file_of_the_rule_based_counter_keeps_its_corners_not_its_colours(tmp_path, fake):
    """Before the learned detector the file kept a colour model ("colours": references in Lab);
    the device must start with such a file: its corners hold, its colours mean nothing now."""
    path = tmp_path / "calibration.json"
    old_colours = {"refs": {c: [50.0, 0.0, 0.0] for c in COLOURS},
                   "spread": {c: 6.0 for c in COLOURS}, "light_sigma": 0.3, "tint_sigma": 0.1}
    path.write_text(json.dumps({
        "calibration": {"corners": CORNERS, "colours": old_colours},
        "colours_learned_from": 3,
    }))
    session = SessionCalibration(path, fake)
    assert session.status() == {"corners": CORNERS, "colours_learned_from": 0}
    assert session.calibration.samples == []
    assert session.calibration.bias() is None
    # and it is written in the new form at the next change
    frame = load_image(DEMO_DIR / "drop06.jpg")
    assert session.learn(frame, DROP06, None)
    body = json.loads(path.read_text())
    assert "colours" not in body["calibration"] and body["colours_learned_from"] == 1
    assert Calibration.from_dict(body["calibration"]).corners == [tuple(p) for p in CORNERS]


def test_corners_the_counter_cannot_read_with_are_refused_and_nothing_changes(tmp_path):
    class Broken(FakeDetector):
        def detect(self, image, reference=None):
            raise VisionError("the model cannot read this picture")

    path = tmp_path / "calibration.json"
    session = SessionCalibration(path, Broken())
    frame = load_image(DEMO_DIR / "drop04.jpg")
    with pytest.raises(CornersError, match="cannot be read"):
        session.set_corners([tuple(p) for p in CORNERS], frame)
    assert session.status()["corners"] is None
    assert not path.exists()


@pytest.fixture
def device(tmp_path, fake):
    frames = tmp_path / "frames"
    frames.mkdir()
    config = with_overrides(Config(), data_dir=str(tmp_path / "data"))
    config = replace(config, vision=replace(config.vision, empty_reference=str(
        DEMO_DIR / "empty.jpg")))
    device = build_device(config, FolderSource(frames), pin_factory=MockFactory(), detector=fake)
    yield device, frames
    device.stop()


def _read(device, frames, name):
    shutil.copy(DEMO_DIR / name, frames / f"{len(list(frames.iterdir()))}-{name}")
    assert device.watcher.step() is True


def test_a_confirmed_drop_teaches_the_device_the_tables_colours(device):
    device, frames = device
    device.table.new_game(["Ann", "Bob"])
    _read(device, frames, "drop06.jpg")
    assert device.board.latest()["counts"] == demo_counts("drop06.jpg")  # white read as yellow
    device.table.confirm_tray(DROP06)  # the set-up drop, as the players correct it
    assert device.session.status()["colours_learned_from"] == 1
    saved = json.loads((device.config.data_path / "calibration.json").read_text())
    assert saved["colours_learned_from"] == 1
    # the next reading is named with what was learned: the whitish cube is white now
    _read(device, frames, "drop04.jpg")
    assert device.board.latest()["counts"] == {**DROP04, "yellow": 0, "white": 1}


def test_a_new_game_starts_the_colours_afresh_but_keeps_the_corners(device):
    device, frames = device
    device.table.new_game(["Ann", "Bob"])
    _read(device, frames, "drop06.jpg")
    device.set_corners(CORNERS)
    device.table.confirm_tray(DROP06)
    assert device.session.status() == {"corners": CORNERS, "colours_learned_from": 1}
    device.table.new_game(["Cy", "Di"])
    assert device.session.status() == {"corners": CORNERS, "colours_learned_from": 0}
    _read(device, frames, "drop04.jpg")
    assert device.board.latest()["counts"] == DROP04  # the whitish cube is yellow again


def test_tapped_corners_are_used_for_the_next_reading(device):
    device, frames = device
    seen = []
    keeper = device.watcher.read_frame.on_reading
    device.watcher.read_frame.on_reading = lambda image, r: (seen.append(r), keeper(image, r))
    _read(device, frames, "drop04.jpg")
    tapped = [[400, 100], [850, 230], [760, 560], [310, 420]]  # a little around the floor
    result = device.set_corners(tapped)
    assert result["corners"] == tapped
    assert device.watcher.step() is True  # read again at once, with the corners
    assert sorted(seen[-1].tray_corners) == sorted(map(tuple, tapped))
    device.set_corners(None)
    assert device.watcher.step() is True
    assert sorted(seen[-1].tray_corners) == sorted(map(tuple, CORNERS))  # the model's again


def test_the_held_exposure_survives_a_restart_and_new_corners_or_colours(tmp_path, fake):
    path = tmp_path / "calibration.json"
    lock = {"camera": "picamera",
            "controls": {"ExposureTime": 9000, "AnalogueGain": 1.5, "ColourGains": [2.0, 1.4]}}
    session = SessionCalibration(path, fake)
    session.set_camera_lock(lock)
    session.forget_colours()
    again = SessionCalibration(path, fake)
    assert again.camera_lock == lock
    assert again.status()["exposure_held"] == lock["controls"]
    again.set_camera_lock(None)
    assert SessionCalibration(path, fake).camera_lock is None


def test_a_held_exposure_that_is_not_a_table_is_ignored(tmp_path, fake):
    path = tmp_path / "calibration.json"
    path.write_text('{"calibration": {}, "camera_lock": [1, 2]}')
    assert SessionCalibration(path, fake).camera_lock is None


def test_a_drop_corrected_while_in_the_tray_teaches_its_corrected_colours(device):
    """Players confirm the camera's reading, then see a cube misnamed and correct it: the
    misreading must not stay taught (the next drop's whitish cube would go on being yellow)."""
    device, frames = device
    snap = device.table.new_game(["Ann", "Bob"])
    _read(device, frames, "drop06.jpg")
    snap = device.table.confirm_tray(demo_counts("drop06.jpg"))  # as read: whites as yellow
    drop = snap["seq"]
    assert device.session.status()["colours_learned_from"] == 1
    device.table.command(snap["id"], snap["seq"],
                         {"type": "tray_corrected", "target": drop, "tray": DROP06})
    assert device.session.status()["colours_learned_from"] == 1
    assert sorted(COLOURS[y] for _, y, _ in device.session.calibration.samples) == sorted(
        c for c, n in DROP06.items() for _ in range(n))
    _read(device, frames, "drop04.jpg")
    assert device.board.latest()["counts"] == {**DROP04, "yellow": 0, "white": 1}


def test_an_undone_drop_or_one_corrected_after_the_tray_changed_unteaches(device):
    device, frames = device
    snap = device.table.new_game(["Ann", "Bob"])
    _read(device, frames, "drop06.jpg")
    snap = device.table.confirm_tray(demo_counts("drop06.jpg"))
    drop = snap["seq"]
    snap = device.table.command(snap["id"], snap["seq"], {"type": "undo"})
    assert device.session.status()["colours_learned_from"] == 0
    assert device.session.calibration.samples == []
    snap = device.table.command(snap["id"], snap["seq"], {"type": "undo", "redo": True})
    assert device.session.status()["colours_learned_from"] == 1  # the same tray, taught again

    _read(device, frames, "empty.jpg")  # the tray is cleared: the drop's picture is gone
    device.table.command(snap["id"], snap["seq"],
                         {"type": "tray_corrected", "target": drop, "tray": DROP06})
    assert device.session.status()["colours_learned_from"] == 0
    assert device.session.calibration.samples == []


def test_what_a_drop_taught_is_taken_back_after_a_restart_too(device):
    """A power cut between a drop and its correction: the corrected drop's colours must still
    go (the record of what each drop taught is in the calibration file, not only in memory)."""
    device, frames = device
    snap = device.table.new_game(["Ann", "Bob"])
    _read(device, frames, "drop06.jpg")
    snap = device.table.confirm_tray(demo_counts("drop06.jpg"))
    path, taught = device.session.path, len(device.session.calibration.samples)
    assert taught > 0
    restarted = SessionCalibration(path, device.session.detector)
    assert len(restarted.calibration.samples) == taught
    assert restarted.unlearn((snap["id"], snap["seq"]))
    assert restarted.calibration.samples == [] and restarted.status()["colours_learned_from"] == 0
    assert not SessionCalibration(path, device.session.detector).unlearn((snap["id"], snap["seq"]))


def test_a_damaged_record_of_what_drops_taught_keeps_the_colours(tmp_path, fake, caplog):
    path = tmp_path / "calibration.json"
    samples = [[[0.9, 0.02, 0.02, 0.02, 0.02, 0.01, 0.01], 0]]
    path.write_text(json.dumps({"calibration": {"corners": None, "samples": samples},
                                "colours_learned_from": 1, "taught": [[[1, 5], "junk"]]}))
    session = SessionCalibration(path, fake)
    assert len(session.calibration.samples) == 1 and session.status()["colours_learned_from"] == 1
    assert not session.unlearn((1, 5))
    assert "ignoring what each drop taught" in caplog.text
