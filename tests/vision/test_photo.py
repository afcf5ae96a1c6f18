"""The counter on a real photograph: a blue toy brick (Duplo 2x2), not a drawing or a render.

The photo (``tests/fixtures/photos/duplo_brick_blue.png``, source and licence in the README
there) is a cut-out: the brick on a transparent background. Each test pastes it, scaled to about
1 cm across, onto a tray drawn like ``synth``'s (16 x 10 cm floor at 40 px/cm inside a table,
sensor noise, JPEG), gives the counter the floor's four corners, and asks for the count and the
colour. So the brick's pixels (paint, shading, highlights, a side face seen obliquely) are
photographed; only the tray around it is drawn.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
import synth

from vision.calibration import Calibration
from vision.colours import ColourModel, cube_colour, to_linear
from vision.counter import count_cubes
from vision.reading import COLOURS

PHOTO = Path(__file__).resolve().parents[1] / "fixtures" / "photos" / "duplo_brick_blue.png"
PX_PER_CM = 40
FLOOR_ORIGIN = (160, 70)  # floor's top-left corner in the frame (px)
FRAME = (540, 960)
TABLE_RGB = (95, 70, 60)

ONE = [(8.0, 5.0)]
TWO = [(4.0, 3.0), (11.0, 7.0)]
THREE = [(3.5, 2.5), (8.0, 5.0), (12.5, 7.5)]


def _photo() -> tuple[np.ndarray, np.ndarray]:
    """The brick's BGR pixels and its opacity (0..1), as photographed."""
    im = cv2.imread(str(PHOTO), cv2.IMREAD_UNCHANGED)
    assert im is not None and im.shape == (138, 150, 4), f"fixture missing or changed: {PHOTO}"
    return im[:, :, :3], im[:, :, 3].astype(np.float32) / 255.0


def _corners() -> list[tuple[float, float]]:
    x0, y0 = FLOOR_ORIGIN
    x1, y1 = x0 + 16 * PX_PER_CM, y0 + 10 * PX_PER_CM
    return [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]


def _tray(at_cm, print_name="cream", width_cm=1.0, seed=0, alpha_out=None,
          camera_noise=True) -> np.ndarray:
    """A frame of the drawn tray with the photographed brick pasted at each (x, y) in cm."""
    frame = np.empty((*FRAME, 3), np.float32)
    frame[:] = TABLE_RGB[::-1]
    x0, y0 = FLOOR_ORIGIN
    frame[y0 : y0 + 10 * PX_PER_CM, x0 : x0 + 16 * PX_PER_CM] = synth.PRINTS_RGB[print_name][::-1]
    bgr, alpha = _photo()
    s = width_cm * PX_PER_CM / bgr.shape[1]
    bgr = cv2.resize(bgr, None, fx=s, fy=s, interpolation=cv2.INTER_AREA).astype(np.float32)
    alpha = cv2.resize(alpha, None, fx=s, fy=s, interpolation=cv2.INTER_AREA)[:, :, None]
    h, w = alpha.shape[:2]
    for i, (cx, cy) in enumerate(at_cm):
        px, py = round(x0 + cx * PX_PER_CM - w / 2), round(y0 + cy * PX_PER_CM - h / 2)
        # every other brick mirrored, so that the pasted copies are not all alike
        b, a = (bgr[:, ::-1], alpha[:, ::-1]) if i % 2 else (bgr, alpha)
        roi = frame[py : py + h, px : px + w]
        frame[py : py + h, px : px + w] = a * b + (1 - a) * roi
        if alpha_out is not None:
            alpha_out[py : py + h, px : px + w] = np.maximum(
                alpha_out[py : py + h, px : px + w], a[:, :, 0]
            )
    if not camera_noise:  # a frame as clean as a denoising camera could make it
        return np.clip(frame, 0, 255).astype(np.uint8)
    rng = np.random.default_rng(seed)
    frame = np.clip(frame + rng.normal(0.0, 2.0, frame.shape), 0, 255).astype(np.uint8)
    ok, jpg = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, 85])
    assert ok
    return cv2.imdecode(jpg, cv2.IMREAD_COLOR)


def _count(at_cm, print_name="cream", *, reference: bool, seed=0):
    frame = _tray(at_cm, print_name, seed=seed)
    ref = _tray([], print_name, seed=seed + 100) if reference else None
    return count_cubes(frame, ref, calibration=Calibration(corners=_corners()))


def _only_blue(n: int) -> dict[str, int]:
    return {c: (n if c == "blue" else 0) for c in COLOURS}


def test_the_fixture_is_the_photographed_brick():
    bgr, alpha = _photo()
    opaque = bgr[alpha > 0.5].astype(np.float32)
    # a blue brick, blue over red and green on the whole, and shaded (a photograph: its
    # palette of 256 colours nearly all used, not a few flat fills)
    b, g, r = opaque.mean(axis=0)
    assert b > r + 30 and b > g + 20
    assert np.mean(opaque[:, 0] > opaque[:, 2]) > 0.6
    assert len(np.unique(opaque.astype(np.uint8), axis=0)) > 200


def test_the_empty_drawn_tray_has_no_cubes():
    # the control: whatever is counted below comes from the pasted photo
    assert _count([], reference=False).total == 0


@pytest.mark.parametrize("at_cm", [ONE, TWO, THREE], ids=["one", "two", "three"])
@pytest.mark.parametrize("seed", [0, 1])
def test_photographed_bricks_are_counted_and_named_blue(at_cm, seed):
    reading = _count(at_cm, "cream", reference=False, seed=seed)
    assert reading.counts == _only_blue(len(at_cm))


@pytest.mark.parametrize("print_name", ["cream", "grey", "pale"])
@pytest.mark.parametrize("at_cm", [ONE, THREE], ids=["one", "three"])
def test_photographed_bricks_with_the_empty_tray_as_reference(print_name, at_cm):
    reading = _count(at_cm, print_name, reference=True)
    assert reading.counts == _only_blue(len(at_cm))


@pytest.mark.parametrize("print_name", ["cream", "grey"])
def test_colour_naming_names_the_photographed_brick_blue(print_name):
    """The colour stage alone, on the brick's own photographed pixels against the floor."""
    alpha = np.zeros(FRAME, np.float32)
    frame = _tray(ONE, print_name, alpha_out=alpha)
    bare = _tray([], print_name, seed=1)
    inside = alpha > 0.99
    cube = cube_colour(to_linear(frame[inside]), to_linear(bare[inside]))
    cubes = [cube]
    ColourModel.default().name_cubes(cubes)
    assert COLOURS[int(np.argmax(cubes[0]["p"]))] == "blue"


@pytest.mark.parametrize("print_name", ["grey", "pale"])
@pytest.mark.parametrize("seed", [0, 1])
def test_a_slightly_small_brick_on_grey_or_pale_print_without_reference(print_name, seed):
    """Without the empty tray a photographed brick 0.9 cm across on the grey or the pale print
    showed only a bar of side and shadow, dropped as a sliver; a lone bar is now a cube
    (``counter._side_bar``)."""
    frame = _tray(ONE, print_name, width_cm=0.9, seed=seed)
    reading = count_cubes(frame, calibration=Calibration(corners=_corners()))
    assert reading.counts == _only_blue(1)


def test_bricks_on_a_perfectly_flat_noiseless_floor_are_found_without_reference():
    """A flat floor with no noise at all once made the edge statistics see only the bricks
    (the floor's lightness bands collapsed into one) and the counter found nothing."""
    frame = _tray(THREE, camera_noise=False)
    reading = count_cubes(frame, calibration=Calibration(corners=_corners()))
    assert reading.counts == {c: (3 if c == "blue" else 0) for c in COLOURS}
