"""The annotated picture: drawn where the cubes are, distinct for doubt, servable as JPEG."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vision.errors import VisionError
from vision.overlay import TAGS, draw_overlay, encode_jpeg
from vision.reading import COLOURS, Cube, TrayReading

H, W = 648, 1152


def _tray() -> np.ndarray:
    img = np.full((H, W, 3), (60, 90, 130), np.uint8)
    cv2.rectangle(img, (250, 200), (900, 620), (170, 205, 225), -1)
    return img


def _ring_pixels(before: np.ndarray, after: np.ndarray, x: int, y: int, r: int) -> np.ndarray:
    """Pixels of ``after`` in an annulus around (x, y) that the drawing changed."""
    yy, xx = np.mgrid[0:H, 0:W]
    d = np.hypot(xx - x, yy - y)
    ring = (d > r - 8) & (d < r + 8)
    changed = np.any(before != after, axis=2)
    return after[ring & changed]


def test_tags_are_two_letters_and_unambiguous():
    assert set(TAGS) == set(COLOURS)
    assert len(set(TAGS.values())) == len(COLOURS)
    assert all(len(t) == 2 for t in TAGS.values())


def test_shape_dtype_and_input_untouched():
    img = _tray()
    keep = img.copy()
    reading = TrayReading((Cube("red", 400, 400, 0.9), Cube("blue", 600, 450, 0.8)))
    out = draw_overlay(img, reading, tray_corners=[(250, 200), (900, 200), (900, 620), (250, 620)])
    assert out.shape == img.shape and out.dtype == np.uint8
    assert out is not img
    assert np.array_equal(img, keep)


def test_pixels_around_each_cube_change_and_the_tray_outline_is_drawn():
    img = _tray()
    reading = TrayReading((Cube("red", 400, 400, 0.9), Cube("white", 700, 500, 0.9)))
    corners = [(250, 200), (900, 200), (900, 620), (250, 620)]
    out = draw_overlay(img, reading, tray_corners=corners)
    r = round(0.8 * (650 * 420 / 160) ** 0.5)  # ring radius from the 16 x 10 cm floor
    for x, y in ((400, 400), (700, 500)):
        assert len(_ring_pixels(img, out, x, y, r)) > 100
        assert np.array_equal(out[y, x], img[y, x])  # the cube itself stays visible
    assert np.any(out[200, 575] != img[200, 575])  # on the top edge of the outline
    assert np.any(out[410, 250] != img[410, 250])


def test_uncertain_cube_is_drawn_differently():
    img = _tray()
    sure = draw_overlay(img, TrayReading((Cube("green", 500, 400, 0.9),)), cube_px=40)
    doubt = draw_overlay(img, TrayReading((Cube("green", 500, 400, 0.4, uncertain=True),)),
                         cube_px=40)
    ring_sure = _ring_pixels(img, sure, 500, 400, 32)
    ring_doubt = _ring_pixels(img, doubt, 500, 400, 32)
    orange = np.array((0, 140, 255))
    white = np.array((255, 255, 255))
    near = lambda px, c: np.count_nonzero(np.abs(px.astype(int) - c).max(axis=1) < 40)  # noqa: E731
    assert near(ring_doubt, orange) > 50 and near(ring_sure, orange) == 0
    assert near(ring_sure, white) > 50 and near(ring_doubt, white) < near(ring_sure, white) / 4
    # the summary says "check!" (orange chip) only for the doubtful reading
    assert near(doubt[:60].reshape(-1, 3), orange) > 200
    assert near(sure[:60].reshape(-1, 3), orange) == 0


def test_empty_reading_still_draws_the_summary():
    img = _tray()
    out = draw_overlay(img, TrayReading())
    band = np.any(out[:40] != img[:40], axis=2)
    assert band.mean() > 0.5
    assert np.array_equal(out[100:], img[100:])  # nothing drawn below the summary


def test_warnings_alone_ask_for_a_check():
    img = _tray()
    quiet = draw_overlay(img, TrayReading())
    warned = draw_overlay(img, TrayReading(warnings=("glare",)))
    assert not np.array_equal(quiet[:60], warned[:60])


def test_many_colours_fit_a_small_picture_and_odd_input_is_handled():
    cubes = tuple(
        Cube(c, 30 + 40 * i, 120, 0.9, uncertain=i % 2 == 0) for i, c in enumerate(COLOURS)
    )
    odd = (Cube("purple", 100, 60, 0.5), Cube("red", float("nan"), 1, 1), Cube("red", 1e12, 5, 1))
    reading = TrayReading((*cubes, *odd))
    small = cv2.resize(_tray(), (320, 180))
    out = draw_overlay(small, reading)
    assert out.shape == (180, 320, 3)
    grey = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)
    assert draw_overlay(grey, reading).shape == (180, 320, 3)
    bgra = cv2.cvtColor(small, cv2.COLOR_BGR2BGRA)
    assert draw_overlay(bgra, reading).shape == (180, 320, 3)
    with pytest.raises(VisionError):
        draw_overlay(np.zeros((10, 10, 3), np.float32), reading)
    with pytest.raises(VisionError):
        draw_overlay(small, reading, tray_corners=[(0, 0), (1, 1)])


_SMALL = cv2.resize(_tray(), (320, 180))


@settings(max_examples=30, deadline=None)
@given(
    cubes=st.lists(
        st.builds(
            Cube,
            colour=st.sampled_from(COLOURS),
            x=st.floats(-50, 400, allow_nan=False),
            y=st.floats(-50, 250, allow_nan=False),
            confidence=st.floats(0, 1),
            uncertain=st.booleans(),
        ),
        max_size=40,
    ),
    warned=st.booleans(),
    cube_px=st.one_of(st.none(), st.floats(1, 80)),
)
def test_any_reading_draws_without_touching_the_input(cubes, warned, cube_px):
    keep = _SMALL.copy()
    reading = TrayReading(tuple(cubes), ("glare",) if warned else ())
    out = draw_overlay(_SMALL, reading, cube_px=cube_px)
    assert out.shape == _SMALL.shape and out.dtype == np.uint8
    assert np.array_equal(_SMALL, keep)


def test_encode_jpeg_round_trips_and_respects_max_width():
    img = draw_overlay(_tray(), TrayReading((Cube("yellow", 500, 400, 0.9),)))
    data = encode_jpeg(img)
    assert data[:2] == b"\xff\xd8"
    back = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    assert back.shape == img.shape
    assert np.abs(back.astype(int) - img.astype(int)).mean() < 4
    small = cv2.imdecode(np.frombuffer(encode_jpeg(img, max_width=400), np.uint8), 1)
    assert small.shape == (225, 400, 3)
    same = cv2.imdecode(np.frombuffer(encode_jpeg(img, max_width=4000), np.uint8), 1)
    assert same.shape == img.shape
    assert len(encode_jpeg(img, quality=30)) < len(encode_jpeg(img, quality=95))
    grey = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
    assert cv2.imdecode(np.frombuffer(encode_jpeg(grey), np.uint8), 1).shape == img.shape
    with pytest.raises(ValueError):
        encode_jpeg(img, quality=0)
    with pytest.raises(ValueError):
        encode_jpeg(img, max_width=0)


def test_write_a_look(tmp_path):
    """Not an assertion on looks; keeps a picture around for a person to open."""
    cubes = (
        Cube("blue", 420, 380, 0.9),
        Cube("black", 470, 390, 0.9),
        Cube("brown", 640, 470, 0.4, uncertain=True),
        Cube("white", 780, 540, 0.9),
    )
    out = draw_overlay(_tray(), TrayReading(cubes),
                       tray_corners=[(250, 200), (900, 200), (900, 620), (250, 620)])
    path = tmp_path / "overlay.png"
    assert cv2.imwrite(str(path), out)
    assert path.stat().st_size > 1000


def test_tray_picture_is_cropped_to_the_tray_with_the_cubes_moved_along():
    from vision.overlay import tray_picture
    from vision.reading import Cube

    image = np.full((648, 1152, 3), 90, np.uint8)
    corners = ((400.0, 200.0), (800.0, 200.0), (800.0, 450.0), (400.0, 450.0))
    reading = TrayReading(cubes=(Cube("red", 600.0, 300.0, 0.9),), tray_corners=corners)
    picture = tray_picture(image, reading, margin=0.1)
    assert picture.shape[:2] == (300, 480)  # 250 + 2 x 25 high, 400 + 2 x 40 wide
    assert (picture[300 - 175 - 25 : 300 - 175 + 25, 240 - 20 : 240 + 20] != 90).any()
    whole = tray_picture(image, TrayReading(cubes=reading.cubes))
    assert whole.shape == image.shape
