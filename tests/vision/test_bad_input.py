"""Bad files and bad frames give a clear VisionError, never a crash; pictures with no tray in
them are read (by the packaged model) as nothing, with a word of doubt."""

from __future__ import annotations

import cv2
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


def test_a_jpeg_cut_off_while_being_written_is_refused(tmp_path):
    whole = tmp_path / "whole.jpg"
    picture = np.random.default_rng(0).integers(0, 256, (120, 160, 3), dtype=np.uint8)
    ok, buf = cv2.imencode(".jpg", picture)
    assert ok
    whole.write_bytes(buf.tobytes())
    assert load_image(whole).shape == (120, 160, 3)
    cut = tmp_path / "cut.jpg"
    cut.write_bytes(buf.tobytes()[: len(buf) * 2 // 3])
    assert cv2.imread(str(cut)) is not None  # OpenCV alone would count half a picture
    with pytest.raises(VisionError, match="truncated JPEG"):
        load_image(cut)


def _claiming(data: bytes, width: int, height: int, ext: str) -> bytes:
    """A small picture's bytes whose header claims another size (what a decoder would allocate)."""
    data = bytearray(data)
    if ext == ".png":
        data[16:24] = width.to_bytes(4, "big") + height.to_bytes(4, "big")
    else:
        sof = data.index(b"\xff\xc0")
        data[sof + 5:sof + 9] = height.to_bytes(2, "big") + width.to_bytes(2, "big")
    return bytes(data)


@pytest.mark.parametrize("ext", [".jpg", ".png"])
def test_a_picture_too_large_to_decode_is_refused_before_decoding(tmp_path, ext):
    """A 14 MB JPEG of 30000 x 30000 pixels once took 5.5 GB to read: more than a Pi has."""
    _, buf = cv2.imencode(ext, np.full((64, 96, 3), 128, np.uint8))
    bomb = tmp_path / f"bomb{ext}"
    bomb.write_bytes(_claiming(buf.tobytes(), 30000, 30000, ext))
    with pytest.raises(VisionError, match="too large: 30000 x 30000 pixels"):
        load_image(bomb)
    # a camera's and a phone's pictures are read as before
    normal = tmp_path / f"normal{ext}"
    _, buf = cv2.imencode(ext, np.full((2000, 4000, 3), 128, np.uint8))
    normal.write_bytes(buf.tobytes())
    assert load_image(normal).shape == (2000, 4000, 3)


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
        (np.zeros((40, 640, 3), np.uint8), "too small"),
        (np.zeros((480, 640), np.uint16), "uint8"),
        (np.zeros((480, 640, 3, 1), np.uint8), "shape"),
        ("not an array", "numpy"),
        ([[0, 0, 0]], "numpy"),
    ],
)
def test_bad_frames(frame, words):
    with pytest.raises(VisionError, match=words):
        count_cubes(frame)


@pytest.mark.parametrize("value", [0, 120, 255], ids=["black", "grey", "white"])
def test_a_flat_picture_has_no_cubes_and_says_it_saw_no_tray(value):
    reading = count_cubes(np.full((480, 640, 3), value, np.uint8))
    assert reading.total == 0
    assert reading.tray_corners is None and reading.uncertain
    assert any("outline was not found" in w for w in reading.warnings)


def test_noise_is_read_without_a_crash_and_never_as_a_sure_tray_of_cubes():
    rng = np.random.default_rng(1)
    frame = rng.integers(0, 256, (480, 640, 3), dtype=np.uint8)
    reading = count_cubes(frame)
    assert reading.total == 0 or reading.uncertain


def test_reference_of_another_shape():
    rng = np.random.default_rng(2)
    a = rng.integers(0, 256, (480, 640, 3), dtype=np.uint8)
    b = rng.integers(0, 256, (480, 480, 3), dtype=np.uint8)
    with pytest.raises(VisionError, match="same camera"):
        count_cubes(a, b)


def test_a_bad_reference_is_named_as_the_reference():
    a = np.zeros((480, 640, 3), np.uint8)
    with pytest.raises(VisionError, match="reference must be 8-bit"):
        count_cubes(a, np.zeros((480, 640, 3), np.float32))


def test_unknown_colour_in_bounds():
    rng = np.random.default_rng(3)
    a = rng.integers(0, 256, (480, 640, 3), dtype=np.uint8)
    with pytest.raises(VisionError, match="colour"):
        count_cubes(a, bounds={"purple": 2})
