"""Bad files and bad frames give a clear VisionError, never a crash or a silent zero."""

from __future__ import annotations

import numpy as np
import pytest

from vision.counter import count_cubes, load_image
from vision.errors import VisionError


def test_missing_file(tmp_path):
    with pytest.raises(VisionError, match="file not found"):
        load_image(tmp_path / "nope.jpg")


def test_empty_file(tmp_path):
    p = tmp_path / "empty.jpg"
    p.write_bytes(b"")
    with pytest.raises(VisionError, match="empty file"):
        load_image(p)


def test_corrupt_file(tmp_path):
    p = tmp_path / "corrupt.jpg"
    p.write_bytes(b"\xff\xd8\xff\xe0 this is not really a jpeg" * 10)
    with pytest.raises(VisionError, match="cannot decode"):
        load_image(p)


def test_text_file(tmp_path):
    p = tmp_path / "notes.png"
    p.write_text("hello")
    with pytest.raises(VisionError, match="not an image"):
        load_image(p)


def test_folder(tmp_path):
    with pytest.raises(VisionError, match="folder"):
        load_image(tmp_path)


@pytest.mark.parametrize(
    ("frame", "words"),
    [
        (np.zeros((480, 640, 3), np.float32), "uint8"),
        (np.zeros((480, 640, 5), np.uint8), "shape"),
        (np.zeros((10, 10, 3), np.uint8), "too small"),
        (np.zeros((480, 640, 3), np.uint8), "black"),
        (np.full((480, 640, 3), 255, np.uint8), "white"),
        (np.full((480, 640, 3), 120, np.uint8), "flat"),
        ("not an array", "numpy"),
    ],
)
def test_bad_frames(frame, words):
    with pytest.raises(VisionError, match=words):
        count_cubes(frame)


def test_noise_has_no_tray():
    rng = np.random.default_rng(1)
    frame = rng.integers(0, 256, (480, 640, 3), dtype=np.uint8)
    with pytest.raises(VisionError, match="tray"):
        count_cubes(frame)


def test_reference_of_other_size():
    rng = np.random.default_rng(2)
    a = rng.integers(0, 256, (480, 640, 3), dtype=np.uint8)
    b = rng.integers(0, 256, (240, 320, 3), dtype=np.uint8)
    with pytest.raises(VisionError, match="same camera"):
        count_cubes(a, b)


def test_unknown_colour_in_bounds():
    rng = np.random.default_rng(3)
    a = rng.integers(0, 256, (480, 640, 3), dtype=np.uint8)
    with pytest.raises(VisionError, match="colour"):
        count_cubes(a, bounds={"purple": 2})
