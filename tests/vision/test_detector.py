"""The learned detector's seam: loading a model folder, and decoding output maps by hand.

``decode`` is tested on maps built here (no network), so what it promises holds for any model;
only the loading tests touch the packaged ``vision/model``.
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from vision.detector import (
    MODEL_DIR,
    VIEWS,
    CubeDetector,
    ModelConfig,
    decode,
    from_view,
    in_view,
)
from vision.errors import VisionError
from vision.netinput import network_input
from vision.reading import COLOURS

HEADS = ("cube", "outside", "corner", *(f"colour:{i}" for i in range(7)), "dx", "dy")
CONFIG = ModelConfig(input_width=96, input_height=64, stride=4, labels=COLOURS, heads=HEADS,
                     cube_threshold=0.5, candidate_threshold=0.2, corner_threshold=0.25)
GH, GW = CONFIG.input_height // CONFIG.stride, CONFIG.input_width // CONFIG.stride
H = {name: i for i, name in enumerate(HEADS)}
LOW = -20.0  # a logit whose sigmoid is as good as zero


def _logit(p: float) -> float:
    return float(np.log(p / (1 - p)))


def blank() -> np.ndarray:
    """Output maps that say: nothing anywhere (offsets in the middle of their cells)."""
    maps = np.zeros((len(HEADS), GH, GW), np.float32)
    maps[[H["cube"], H["outside"], H["corner"]]] = LOW
    return maps


def put_cube(maps, row, col, colour, p=0.9, head="cube", dx=0.0, dy=0.0, strength=4.0):
    maps[H[head], row, col] = _logit(p)
    maps[H[f"colour:{COLOURS.index(colour)}"], row, col] = strength
    maps[H["dx"], row, col] = dx
    maps[H["dy"], row, col] = dy


# -- loading -------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def packaged() -> CubeDetector:
    return CubeDetector()


def test_the_packaged_model_loads_through_opencv_dnn(packaged):
    cfg = packaged.config
    assert cfg.labels == COLOURS
    assert {"cube", "outside", "corner", "dx", "dy"} <= set(cfg.heads)
    assert {f"colour:{i}" for i in range(len(COLOURS))} <= set(cfg.heads)
    assert 0 < cfg.candidate_threshold <= cfg.cube_threshold < 1
    picture = np.full((324, 576, 3), 128, np.uint8)
    maps, scale = packaged.maps(picture, None)
    assert maps.shape == (len(cfg.heads), cfg.input_height // cfg.stride,
                          cfg.input_width // cfg.stride)
    assert np.all(np.isfinite(maps))
    assert scale == pytest.approx(min(cfg.input_width / 576, cfg.input_height / 324))


def test_the_packaged_model_detects_with_and_without_a_reference(packaged):
    rng = np.random.default_rng(0)
    picture = rng.integers(0, 256, (324, 576, 3), dtype=np.uint8)
    for ref in (None, picture):
        found = packaged.detect(picture, ref)
        for c in found.candidates:
            assert c.colour_probs.shape == (len(COLOURS),)
            assert c.colour_probs.sum() == pytest.approx(1.0, abs=1e-5)
            assert 0.0 <= c.score <= 1.0
            assert -1 <= c.x <= 577 and -1 <= c.y <= 325
        assert found.corners is None or found.corners.shape == (4, 2)


def test_model_config_round_trips():
    assert ModelConfig.from_dict(CONFIG.to_dict()) == CONFIG
    assert json.loads(json.dumps(CONFIG.to_dict()))["labels"] == list(COLOURS)


def _copy_of_the_model(tmp_path):
    folder = tmp_path / "model"
    shutil.copytree(MODEL_DIR, folder)
    return folder


def test_a_model_json_with_an_unknown_key_is_refused_by_name(tmp_path):
    folder = _copy_of_the_model(tmp_path)
    body = json.loads((folder / "model.json").read_text())
    body["anchor_boxes"] = [1, 2]
    (folder / "model.json").write_text(json.dumps(body))
    with pytest.raises(VisionError, match=r"unknown keys \['anchor_boxes'\]") as caught:
        CubeDetector(folder)
    assert "allowed" in str(caught.value) and str(folder) in str(caught.value)


def test_a_model_json_missing_a_key_is_refused(tmp_path):
    folder = _copy_of_the_model(tmp_path)
    body = json.loads((folder / "model.json").read_text())
    del body["labels"]
    (folder / "model.json").write_text(json.dumps(body))
    with pytest.raises(VisionError, match=r"model\.json .* is not valid"):
        CubeDetector(folder)


def test_model_json_that_is_not_json_is_refused(tmp_path):
    folder = _copy_of_the_model(tmp_path)
    (folder / "model.json").write_text("{ half")
    with pytest.raises(VisionError, match=r"model\.json .* is not valid"):
        CubeDetector(folder)


def test_a_missing_model_folder_is_a_vision_error(tmp_path):
    with pytest.raises(VisionError, match=r"no cube model in .*nowhere"):
        CubeDetector(tmp_path / "nowhere")


def test_a_folder_without_the_network_is_a_vision_error(tmp_path):
    folder = _copy_of_the_model(tmp_path)
    (folder / "model.onnx").unlink()
    with pytest.raises(VisionError, match=r"model\.onnx and model\.json"):
        CubeDetector(folder)


def test_a_network_file_opencv_cannot_read_is_a_vision_error(tmp_path):
    folder = _copy_of_the_model(tmp_path)
    (folder / "model.onnx").write_bytes(b"this is not an ONNX file")
    with pytest.raises(VisionError, match="OpenCV cannot load"):
        CubeDetector(folder)


# -- decode -------------------------------------------------------------------------------

def test_two_cube_peaks_come_back_where_and_what_they_are():
    maps = blank()
    put_cube(maps, 3, 5, "red", p=0.95)
    put_cube(maps, 10, 18, "white", p=0.8, dx=_logit(0.25), dy=_logit(0.75))
    scale = 0.5  # the picture is twice the input's size
    found = decode(maps, CONFIG, scale)
    assert len(found.candidates) == 2
    first, second = found.candidates  # the surer first
    assert first.score == pytest.approx(0.95, abs=1e-4)
    assert (first.x, first.y) == pytest.approx(((5 + 0.5) * 4 / scale, (3 + 0.5) * 4 / scale))
    assert COLOURS[int(np.argmax(first.colour_probs))] == "red"
    assert first.colour_probs.sum() == pytest.approx(1.0)
    assert first.colour_probs[COLOURS.index("red")] == pytest.approx(
        np.exp(4) / (np.exp(4) + 6), abs=1e-4)
    assert second.score == pytest.approx(0.8, abs=1e-4)
    assert (second.x, second.y) == pytest.approx(((18 + 0.25) * 8, (10 + 0.75) * 8), abs=1e-3)
    assert COLOURS[int(np.argmax(second.colour_probs))] == "white"
    assert not first.outside and not second.outside
    assert found.corners is None


@pytest.mark.parametrize("view, flip_rows, flip_cols", [
    ("turned", True, True), ("mirrored", False, True), ("flipped", True, False)])
def test_maps_read_from_another_view_come_back_to_the_same_cube(view, flip_rows, flip_cols):
    # what a network sees in a picture turned half round, mirrored or flipped: the cube in the
    # opposite cell along each reversed axis, at the opposite offset within it
    maps = blank()
    put_cube(maps, 3, 5, "red", dx=_logit(0.25), dy=_logit(0.7))
    seen = blank()
    put_cube(seen, GH - 1 - 3 if flip_rows else 3, GW - 1 - 5 if flip_cols else 5, "red",
             dx=_logit(0.75 if flip_cols else 0.25), dy=_logit(0.3 if flip_rows else 0.7))
    back = from_view(seen, view, CONFIG.heads)
    assert back.shape == maps.shape
    want, got = decode(maps, CONFIG, 1.0), decode(back, CONFIG, 1.0)
    assert len(got.candidates) == 1
    assert (got.candidates[0].x, got.candidates[0].y) == pytest.approx(
        (want.candidates[0].x, want.candidates[0].y), abs=1e-4)
    averaged = decode((maps + back) / 2, CONFIG, 1.0)
    assert averaged.candidates[0].x == pytest.approx((5 + 0.25) * 4, abs=1e-4)
    blob = np.arange(2 * 3 * 4, dtype=np.float32).reshape(1, 2, 3, 4)
    assert np.array_equal(in_view(in_view(blob, view), view), blob)
    assert in_view(blob, view)[0, 0, 0, 0] == blob[0, 0, -1 if flip_rows else 0,
                                                    -1 if flip_cols else 0]


def test_every_view_is_read_and_averaged(tmp_path):
    config = json.loads((MODEL_DIR / "model.json").read_text())
    detectors = {}
    for name, views in (("plain", ["plain"]), ("all", list(VIEWS))):
        folder = tmp_path / name
        folder.mkdir()
        shutil.copy(MODEL_DIR / "model.onnx", folder / "model.onnx")
        (folder / "model.json").write_text(json.dumps({**config, "views": views}))
        detectors[name] = CubeDetector(folder)
    picture = np.random.default_rng(1).integers(0, 256, (324, 576, 3), dtype=np.uint8)
    plain, scale = detectors["plain"].maps(picture, None)
    averaged, scale2 = detectors["all"].maps(picture, None)
    assert averaged.shape == plain.shape and scale2 == scale
    assert not np.allclose(averaged, plain)
    # the same maps as one pass of the net per view, by hand
    net = detectors["plain"].net
    blob, _ = network_input(picture, None, config["input_width"], config["input_height"])
    by_hand = plain.copy()
    for view in list(VIEWS)[1:]:
        net.setInput(in_view(blob, view))
        by_hand += from_view(np.asarray(net.forward())[0], view, tuple(config["heads"]))
    np.testing.assert_allclose(averaged, by_hand / len(VIEWS), rtol=0, atol=1e-4)


@pytest.mark.parametrize("views", [[], ["turned"], ["plain", "plain"], ["plain", "sideways"]])
def test_model_json_views_must_start_plain_and_be_known(tmp_path, views):
    config = json.loads((MODEL_DIR / "model.json").read_text())
    with pytest.raises(VisionError, match="views must start with 'plain'"):
        ModelConfig.from_dict({**config, "views": views})


def test_the_temperatures_soften_the_scores():
    maps = blank()
    put_cube(maps, 3, 5, "green", p=0.95, strength=2.0)
    warm = ModelConfig(**{**CONFIG.__dict__, "cube_temperature": 2.0, "colour_temperature": 2.0})
    cold = decode(maps, CONFIG, 1.0).candidates[0]
    soft = decode(maps, warm, 1.0).candidates[0]
    assert soft.score == pytest.approx(1 / (1 + np.exp(-_logit(0.95) / 2)), abs=1e-4)
    assert soft.score < cold.score
    k = COLOURS.index("green")
    assert soft.colour_probs[k] < cold.colour_probs[k]


def test_the_cube_bias_shifts_the_tempered_centre_logit():
    maps = blank()
    put_cube(maps, 3, 5, "green", p=0.6)
    put_cube(maps, 10, 18, "red", p=0.9)
    surer = ModelConfig(**{**CONFIG.__dict__, "cube_temperature": 1.5, "cube_bias": 0.5})
    scores = sorted(c.score for c in decode(maps, surer, 1.0).candidates)
    want = sorted(1 / (1 + np.exp(-(_logit(p) / 1.5 + 0.5))) for p in (0.6, 0.9))
    assert scores == pytest.approx(want, abs=1e-4)


def test_candidates_below_the_candidate_threshold_are_left_out():
    maps = blank()
    put_cube(maps, 2, 2, "blue", p=0.9)
    put_cube(maps, 8, 8, "black", p=0.3)  # not counted, but a doubt worth a word
    put_cube(maps, 12, 20, "brown", p=0.1)  # below the candidate threshold: nothing
    found = decode(maps, CONFIG, 1.0)
    assert [round(c.score, 2) for c in found.candidates] == [0.9, 0.3]
    assert [COLOURS[int(np.argmax(c.colour_probs))] for c in found.candidates] == [
        "blue", "black"]


def test_only_the_local_peak_of_a_blob_is_a_candidate():
    maps = blank()
    maps[H["cube"], 4:7, 4:7] = _logit(0.6)
    maps[H["cube"], 5, 5] = _logit(0.9)
    assert len(decode(maps, CONFIG, 1.0).candidates) == 1


def test_cubes_outside_the_tray_are_flagged_and_a_spot_is_one_candidate():
    maps = blank()
    put_cube(maps, 3, 3, "yellow", p=0.9, head="outside")
    put_cube(maps, 9, 12, "red", p=0.9)
    maps[H["outside"], 9, 12] = _logit(0.4)  # the same spot, more likely a tray cube
    found = decode(maps, CONFIG, 1.0)
    assert len(found.candidates) == 2
    outside = [c for c in found.candidates if c.outside]
    assert len(outside) == 1 and outside[0].x == pytest.approx(3.5 * 4)
    assert COLOURS[int(np.argmax(outside[0].colour_probs))] == "yellow"


def test_peaks_in_the_padding_are_ignored():
    maps = blank()
    put_cube(maps, 2, 2, "blue")
    put_cube(maps, 2, GW - 2, "red")  # beyond the picture's right edge in the input
    found = decode(maps, CONFIG, 1.0, valid_size=(CONFIG.input_width // 2, CONFIG.input_height))
    assert [COLOURS[int(np.argmax(c.colour_probs))] for c in found.candidates] == ["blue"]


CORNER_CELLS = [(2, 3), (2, 20), (13, 20), (13, 3)]


def test_four_corner_peaks_are_four_points_in_picture_pixels():
    maps = blank()
    for r, c in CORNER_CELLS:
        maps[H["corner"], r, c] = _logit(0.9)
    scale = 0.25
    found = decode(maps, CONFIG, scale)
    assert found.corners is not None and found.corners.shape == (4, 2)
    want = sorted(((c + 0.5) * 4 / scale, (r + 0.5) * 4 / scale) for r, c in CORNER_CELLS)
    got = sorted(map(tuple, found.corners.tolist()))
    assert np.allclose(got, want, atol=1e-3), (got, want)


def test_a_corner_is_refined_between_its_cells():
    maps = blank()
    for r, c in CORNER_CELLS:
        maps[H["corner"], r, c] = _logit(0.9)
        maps[H["corner"], r, c + 1] = _logit(0.9 - 1e-3)  # nearly as strong: halfway between
    found = decode(maps, CONFIG, 1.0)
    xs = sorted(found.corners[:, 0].tolist())
    assert xs[0] == pytest.approx((3 + 1) * 4, abs=0.05)
    assert xs[-1] == pytest.approx((20 + 1) * 4, abs=0.05)


def test_the_four_strongest_corner_peaks_are_kept():
    maps = blank()
    for r, c in CORNER_CELLS:
        maps[H["corner"], r, c] = _logit(0.9)
    maps[H["corner"], 8, 10] = _logit(0.3)  # a weaker fifth
    corners = decode(maps, CONFIG, 1.0).corners
    assert len(corners) == 4 and [42.0, 34.0] not in corners.tolist()


@pytest.mark.parametrize("n", [0, 1, 3])
def test_fewer_than_four_corner_peaks_are_no_corners(n):
    maps = blank()
    for r, c in CORNER_CELLS[:n]:
        maps[H["corner"], r, c] = _logit(0.9)
    maps[H["corner"], 8, 10] = _logit(0.2)  # below the corner threshold
    assert decode(maps, CONFIG, 1.0).corners is None
