"""Recalibrating an exported model for other views: every decoder number chosen again on
validation-only folders, through the maps the device computes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from vision.counter import count_cubes, load_image
from vision.detector import MODEL_DIR, CubeDetector
from vision.train import calibrate
from vision.train.recalibrate import main, recalibrate, view_maps

MINI = Path(__file__).resolve().parents[1] / "fixtures" / "vision" / "trays-mini"


def test_view_maps_are_the_plain_pass_and_the_devices_average():
    detector = CubeDetector()
    detector.config = detector.config.__class__(
        **{**detector.config.__dict__, "views": ("plain", "mirrored")})
    samples, items, first, read = view_maps(detector, [MINI])
    assert len(items) == len(samples) == len(first[True]) == len(read[False])
    image = load_image(samples[1].path)
    h, w = image.shape[:2]
    assert items[1].image.shape[:2] == (round(h * items[1].scale), round(w * items[1].scale))
    both, _ = detector.maps(image, None)
    np.testing.assert_allclose(read[False][1], both, atol=1e-5)
    assert not np.allclose(first[False][1], both)
    assert detector.config.views == ("plain", "mirrored")  # left as it was given


@pytest.mark.slow
def test_a_recalibrated_model_loads_and_reads_with_its_views(tmp_path, capsys):
    out = tmp_path / "model"
    assert main([str(MODEL_DIR), str(MINI), "--views", "plain", "flipped", "--out", str(out),
                 "--note", "test"]) == 0
    config = json.loads((out / "model.json").read_text())
    assert config["views"] == ["plain", "flipped"]
    assert config["more_views_below"] in (*calibrate.VIEW_LEVELS, None)
    assert config["cube_threshold"] in calibrate.THRESHOLDS
    assert config["trained_on"].endswith("; test")
    assert (out / "model.onnx").read_bytes() == (MODEL_DIR / "model.onnx").read_bytes()
    said = capsys.readouterr().out
    assert "views flipped read when the plain view is below" in said
    detector = CubeDetector(out)
    reading = count_cubes(load_image(MINI / "s000" / "drop11.jpg"), detector=detector)
    assert detector.last_passes in (1, 2)
    assert all(0 <= c.confidence <= 1 for c in reading.cubes)


def test_level_only_keeps_every_other_number(capsys):
    shipped = CubeDetector().config
    config = recalibrate(MODEL_DIR, [MINI], ("plain", "turned", "flipped"), level_only=True)
    assert config.views == ("plain", "turned", "flipped")
    assert config.more_views_below in (*calibrate.VIEW_LEVELS, None)
    kept = {k: v for k, v in config.__dict__.items() if k not in ("views", "more_views_below")}
    assert kept == {k: v for k, v in shipped.__dict__.items()
                    if k not in ("views", "more_views_below")}
    assert "views turned+flipped read when the plain view is below" in capsys.readouterr().out


@pytest.mark.parametrize("views", [["turned"], ["plain", "plain"]])
def test_views_that_do_not_start_plain_are_refused_before_any_work(views, capsys, tmp_path):
    with pytest.raises(SystemExit) as caught:
        main([str(MODEL_DIR), str(MINI), "--views", *views, "--out", str(tmp_path / "m")])
    assert caught.value.code == 2
    assert "--views: views must start with 'plain'" in capsys.readouterr().err
    assert not (tmp_path / "m").exists()
