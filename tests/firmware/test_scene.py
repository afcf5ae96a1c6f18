"""The camera says when the tray is the last reading's, unchanged (firmware.scene)."""

from pathlib import Path

import cv2
import numpy as np
import pytest

from firmware.scene import SceneMemory
from firmware.sources import DEMO_DIR
from vision import load_image


def test_the_same_tray_re_saved_or_noisy_is_unchanged_and_one_cube_more_is_not(tmp_path):
    tray = load_image(DEMO_DIR / "drop01.jpg")
    memory = SceneMemory()
    assert memory.unchanged(tray) is False  # nothing read before
    assert memory.unchanged(tray) is True
    _, jpeg = cv2.imencode(".jpg", tray, [cv2.IMWRITE_JPEG_QUALITY, 85])
    assert memory.unchanged(cv2.imdecode(jpeg, cv2.IMREAD_COLOR)) is True
    noise = np.random.default_rng(1).integers(-4, 5, tray.shape)
    assert memory.unchanged(np.clip(tray + noise, 0, 255).astype(np.uint8)) is True
    h, w = tray.shape[:2]
    one_more = tray.copy()
    side = w // 46  # one cube at the camera's 1152 x 648: about 25 pixels
    one_more[h // 2:h // 2 + side, w // 2:w // 2 + side] = (40, 40, 200)
    assert memory.unchanged(one_more) is False
    assert memory.unchanged(load_image(DEMO_DIR / "drop02.jpg")) is False  # another drop


def test_the_last_tray_is_remembered_across_a_restart(tmp_path):
    path = tmp_path / "last-tray.png"
    tray = load_image(DEMO_DIR / "drop03.jpg")
    assert SceneMemory(path).unchanged(tray) is False
    assert path.is_file()
    assert SceneMemory(path).unchanged(tray) is True  # a new process, the same tray
    path.write_bytes(b"not a picture")
    assert SceneMemory(path).unchanged(tray) is False  # a spoilt file is set aside, not fatal



def test_a_full_card_is_said_in_its_own_words(tmp_path, caplog):
    """``cv2.imwrite`` only says False on a full card; the warning must say why."""
    full = Path("/dev/full")
    if not full.exists():
        pytest.skip("no /dev/full here")
    path = tmp_path / "last-tray.png"
    (tmp_path / "last-tray.png.partial.png").symlink_to(full)  # every write: no space left
    tray = cv2.imread(str(DEMO_DIR / "drop01.jpg"))
    with caplog.at_level("WARNING"):
        assert SceneMemory(path).unchanged(tray) is False
    assert "could not keep the tray thumbnail" in caplog.text
    assert "No space left on device" in caplog.text
