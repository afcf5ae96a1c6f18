"""Training goes on from the shipped model's ONNX file (``--init vision/model``): the unfolded
network reads as OpenCV reads the file, and after its batch norms are measured on training
batches it reads the same in training mode too (needs the ``train`` extra)."""

from __future__ import annotations

import copy
from pathlib import Path

import cv2
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from vision.detector import MODEL_DIR  # noqa: E402
from vision.train.__main__ import load_weights  # noqa: E402
from vision.train.__main__ import main as train_main  # noqa: E402
from vision.train.batches import cache_samples, make_batch  # noqa: E402
from vision.train.data import load_samples  # noqa: E402
from vision.train.export import export_onnx  # noqa: E402
from vision.train.model import CubeNet  # noqa: E402
from vision.train.unfold import measure_batch_norm, onnx_file  # noqa: E402

MINI = Path(__file__).resolve().parents[1] / "fixtures" / "vision" / "trays-mini"
SIZE = (256, 160)
SHIPPED_WIDTH = 1.25  # the shipped model's widths: CubeNet's base times 1.25


def opencv_maps(onnx_path: Path, x: torch.Tensor) -> np.ndarray:
    net = cv2.dnn.readNetFromONNX(str(onnx_path))
    net.setInput(x.numpy())
    return np.asarray(net.forward())


def network_reads(model: CubeNet, x: torch.Tensor, training: bool = False) -> np.ndarray:
    """What ``model`` reads of ``x``; in training mode on a copy (a training-mode pass moves
    the batch norms' running statistics)."""
    model = copy.deepcopy(model).train(training)
    with torch.no_grad():
        return model(x).numpy()


@pytest.fixture(scope="module")
def training_pictures() -> torch.Tensor:
    items = cache_samples([s for s in load_samples(MINI) if s.cubes][:4], SIZE)
    return make_batch(items, np.random.default_rng(0), size=SIZE)[0]


def test_the_shipped_model_unfolds_into_a_network_that_reads_as_opencv_does():
    model = CubeNet(width=SHIPPED_WIDTH)
    assert load_weights(model, MODEL_DIR) is True  # its batch norms are still to be measured
    x = torch.rand(1, 7, 288, 512) - 0.5
    want = opencv_maps(MODEL_DIR / "model.onnx", x)
    assert np.abs(network_reads(model, x) - want).max() < 1e-4 * np.abs(want).max()


def test_measured_batch_norms_read_the_same_in_training_mode(training_pictures):
    model = CubeNet(width=SHIPPED_WIDTH)
    load_weights(model, MODEL_DIR / "model.onnx")
    x = training_pictures
    before = network_reads(model, x)
    # unmeasured, a training step would see another network entirely
    assert np.abs(network_reads(model, x, training=True) - before).mean() > 0.5
    assert measure_batch_norm(model, [x[:2], x[2:]]) == len(x)
    after = network_reads(model, x)
    scale = np.abs(before).max()
    assert np.abs(after - before).max() < 1e-4 * scale  # what it reads did not change
    # normalised by these pictures' own statistics, it reads them as it did
    assert np.abs(network_reads(model, x, training=True) - before).max() < 1e-3 * scale


def test_an_exported_network_comes_back_with_its_weights(tmp_path, training_pictures):
    torch.manual_seed(1)
    trained = CubeNet(width=0.5)
    trained.train()
    with torch.no_grad():  # batch norms with statistics of their own, as after training
        for _ in range(3):
            trained(training_pictures)
    export_onnx(trained, tmp_path / "model.onnx", *SIZE)
    back = CubeNet(width=0.5)
    load_weights(back, tmp_path)
    x = training_pictures[:1]
    want = network_reads(trained, x)
    assert np.abs(network_reads(back, x) - want).max() < 1e-4 * np.abs(want).max()
    wider = CubeNet(width=0.75)  # and widened, as --width asks, it still reads the same
    load_weights(wider, tmp_path / "model.onnx")
    assert np.abs(network_reads(wider, x) - want).max() < 1e-3 * np.abs(want).max()


def test_what_init_cannot_use_is_a_clear_error(tmp_path):
    assert onnx_file(tmp_path) is None
    with pytest.raises(SystemExit, match="no such file, nor a model folder"):
        load_weights(CubeNet(), tmp_path / "nothing-here")
    other = torch.nn.Sequential(torch.nn.Conv2d(7, 4, 3, padding=1), torch.nn.ReLU())
    export_onnx(other, tmp_path / "other.onnx", 32, 32)
    with pytest.raises(SystemExit, match="not a CubeNet"):
        load_weights(CubeNet(), tmp_path / "other.onnx")
    with pytest.raises(SystemExit, match="does not fit"):
        load_weights(CubeNet(), MODEL_DIR)  # a wider network does not narrow


@pytest.mark.slow
def test_a_run_goes_on_from_the_shipped_model(tmp_path, capsys):
    train_main([str(MINI), "--init", str(MODEL_DIR), "--steps", "2", "--batch", "2",
                "--input", "256x160", "--val-share", "0.25", "--out", str(tmp_path / "m"),
                "--log-every", "1", "--device", "cpu"])
    said = capsys.readouterr().out
    assert "unfolded" in said
    assert "batch-norm statistics measured on 50 training pictures" in said
    assert (tmp_path / "m" / "model.onnx").is_file()
    # without --width it trains at the shipped model's own widths
    shipped = sum(p.numel() for p in CubeNet(width=SHIPPED_WIDTH).parameters())
    assert f"CubeNet: {shipped} parameters" in said


def test_a_run_narrower_than_its_init_is_a_clear_error(tmp_path):
    with pytest.raises(SystemExit, match="does not fit this CubeNet"):
        train_main([str(MINI), "--init", str(MODEL_DIR), "--width", "1", "--steps", "1",
                    "--batch", "2", "--input", "256x160", "--out", str(tmp_path / "m"),
                    "--device", "cpu"])
