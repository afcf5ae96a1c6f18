"""Batches re-shot on the training device: the same pictures and maps as the CPU path's."""

from __future__ import annotations

import argparse
from pathlib import Path

import cv2
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from vision.train import device_batches  # noqa: E402
from vision.train.__main__ import loss_fn, pick_augment, train  # noqa: E402
from vision.train.augment import Cached, random_affine, saturate, targets  # noqa: E402
from vision.train.batches import cache_samples, make_batch  # noqa: E402
from vision.train.data import load_samples  # noqa: E402
from vision.train.model import CubeNet  # noqa: E402

MINI = Path(__file__).resolve().parents[1] / "fixtures" / "vision" / "trays-mini"
W, H = 512, 288


@pytest.fixture(scope="module")
def picture() -> np.ndarray:
    return cache_samples(load_samples(MINI)[1:2])[0].image


def as_tensor(image: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(image.transpose(2, 0, 1)).float()[None]


def as_image(t: torch.Tensor) -> np.ndarray:
    return t[0].numpy().transpose(1, 2, 0)


def test_the_target_maps_are_the_cpu_paths_for_any_cubes():
    rng = np.random.default_rng(1)
    for trial in range(40):
        n = int(rng.integers(0, 30))
        cubes = np.zeros((n, 5), np.float32)
        cubes[:, 0] = rng.uniform(-10, W + 10, n)  # some cut by the edge or beyond it
        cubes[:, 1] = rng.uniform(-10, H + 10, n)
        cubes[:, 2] = rng.integers(0, 7, n)
        cubes[:, 3] = rng.random(n) < 0.7
        cubes[:, 4] = rng.random(n) < 0.8  # some barely visible
        if n > 3:  # two centres in one cell: the later one wins on both paths
            cubes[1, :2] = cubes[0, :2] + rng.normal(0, 2, 2)
        corners = None if trial % 3 == 0 else rng.uniform(0, [W, H], (4, 2)).astype(np.float32)
        want = targets(cubes, corners, W, H)
        padded = np.zeros((1, 32, 5), np.float32)
        padded[0, :n] = cubes
        present = np.zeros((1, 32), bool)
        present[0, :n] = True
        got = device_batches.target_maps(
            torch.from_numpy(padded), torch.from_numpy(present),
            torch.from_numpy(np.zeros((1, 4, 2), np.float32) if corners is None
                             else corners[None]),
            torch.tensor([corners is not None]), W, H)
        for name, a, b in zip(("heat", "weight", "colour", "offset", "mask"), want, got,
                              strict=True):
            assert np.allclose(a, b[0].numpy(), atol=1e-5), (trial, name)


def test_the_warp_is_opencvs(picture):
    rng = np.random.default_rng(2)
    h, w = picture.shape[:2]
    for trial in range(4):
        m = random_affine(rng, w, h, W, H, mirror=float(trial % 2))  # mirrored ones too
        want = cv2.warpAffine(picture, m, (W, H), flags=cv2.INTER_LINEAR,
                              borderMode=cv2.BORDER_CONSTANT).astype(np.float32)
        inside = cv2.warpAffine(np.full((h, w), 255, np.uint8), m, (W, H),
                                flags=cv2.INTER_NEAREST) > 0
        got, valid = device_batches.warp(as_tensor(picture), m[None], np.array([[w, h]]), W, H)
        diff = np.abs(as_image(got).round() - want)
        assert diff.mean() < 0.01 and diff.max() <= 1
        assert (valid[0, 0].numpy() == inside).mean() > 0.999


def test_the_saturation_is_the_cpu_paths(picture):
    for s in (0.0, 0.5, 1.3):
        want = saturate(picture, s).astype(np.float32)
        got = as_image(device_batches.saturate(as_tensor(picture), np.array([s])))
        assert np.abs(got - want).max() <= 1


def test_the_blur_is_opencvs(picture):
    for sigma in (0.3, 0.7, 1.1):
        want = cv2.GaussianBlur(picture, (0, 0), sigma).astype(np.float32)
        got = as_image(device_batches.gaussian_blur(as_tensor(picture), sigma)).round()
        assert np.abs(got - want).mean() < 0.05 and np.abs(got - want).max() <= 1


@pytest.mark.parametrize("quality", [30, 60, 90])
def test_the_jpeg_emulation_is_near_opencvs_jpeg(picture, quality):
    _ok, buf = cv2.imencode(".jpg", picture, [cv2.IMWRITE_JPEG_QUALITY, quality])
    real = cv2.imdecode(buf, cv2.IMREAD_COLOR).astype(np.float32)
    emulated = as_image(device_batches.jpeg(as_tensor(picture), np.array([quality])))
    lost = np.abs(picture - real).mean()  # what the real JPEG changed
    assert np.abs(emulated - real).mean() < 0.7 * lost
    assert np.abs(emulated - picture).mean() > 0.5 * lost  # it did compress


def test_a_lower_quality_gets_coarser_tables():
    luma, chroma = device_batches.quant_tables(np.array([25, 50, 95]))
    assert luma[1, 0, 0] == 16 and chroma[1, 0, 0] == 17  # quality 50: the standard tables
    assert (luma[0] >= luma[1]).all() and (luma[1] >= luma[2]).all()
    assert luma[0].sum() > luma[1].sum() > luma[2].sum()


def test_device_faults_follow_the_asked_rate(picture):
    images = as_tensor(picture).repeat(8, 1, 1, 1)
    untouched = device_batches.CameraFaults(np.random.default_rng(3), 8, rate=0.0)
    assert torch.equal(untouched.apply(images), images)
    usual = device_batches.CameraFaults(np.random.default_rng(3), 8)
    assert not torch.equal(usual.apply(images), images)


def square_item(x: float, y: float) -> Cached:
    image = np.full((H, W, 3), 60, np.uint8)
    image[round(y) - 4:round(y) + 4, round(x) - 4:round(x) + 4] = 230
    cubes = np.array([[x - 0.5, y - 0.5, 2, 1, 1]], np.float32)  # pixel centres at .5
    return Cached(image, image.copy(), 1.0, cubes, None)


def test_the_targets_land_on_the_moved_cubes():
    stream = device_batches.DeviceBatches([square_item(200, 120), square_item(330, 170)],
                                          batch=12, size=(W, H), seed=4)
    x, heat, _weight, colour, offset, mask = next(stream)
    for i in range(12):
        rows, cols = np.nonzero(mask[i].numpy())
        if len(rows) == 0:
            continue  # the affine moved the cube out of the picture
        cx = (cols[0] + offset[i, 0, rows[0], cols[0]].item()) * 4
        cy = (rows[0] + offset[i, 1, rows[0], cols[0]].item()) * 4
        brightness = x[i, 0:3].sum(0).numpy()
        bright = brightness > (brightness.max() + np.median(brightness)) / 2
        ys, xs = np.nonzero(bright)
        assert abs(xs.mean() - cx) < 1.5 and abs(ys.mean() - cy) < 1.5
        assert colour[i, rows[0], cols[0]] == 2
        assert heat[i, 0, rows[0], cols[0]] == 1


def test_device_batches_train_the_network_like_cpu_batches():
    items = cache_samples(load_samples(MINI)[:6])
    stream = device_batches.DeviceBatches(items, batch=4, size=(W, H), seed=0)
    drawn = next(stream)
    like = make_batch(items[:4], np.random.default_rng(0))
    for a, b in zip(drawn, like, strict=True):
        assert a.shape == b.shape and a.dtype == b.dtype
    assert not torch.equal(drawn[0], next(stream)[0])
    # the reference planes: present on some pictures (flag 0.5), zeros on the others
    assert set(torch.unique(drawn[0][:, 6]).tolist()) <= {0.0, 0.5}
    loss, _ = loss_fn(CubeNet()(drawn[0]), *drawn[1:])
    assert torch.isfinite(loss)


def test_device_augmentation_and_workers_do_not_mix():
    assert pick_augment("auto", "cpu", 0) == "cpu"
    assert pick_augment("auto", "cuda", 0) == "device"
    assert pick_augment("device", "cpu", 0) == "device"
    with pytest.raises(SystemExit, match="--workers"):
        pick_augment("device", "cpu", 3)


@pytest.mark.slow
def test_a_short_run_with_device_batches(tmp_path):
    args = argparse.Namespace(
        data=[MINI], out=tmp_path / "model", steps=4, minutes=10.0, batch=2, lr=3e-3,
        width=1.5, val_share=0.25, seed=0, threads=1, log_every=2, note="test",
        weights=None, reload_every=0, warmup=2, init=None, input=(256, 160), device="cpu",
        workers=0, save_every=0, views=["plain"], augment_on="device", crowd=1.0, mirror=0.5,
        crop=(192, 128), precision="bf16", channels=None, unshown=False, centres="projected",
        distil=0.0, as_rendered=False, faults=0.5)
    result = train(args)
    assert len(result["losses"]) == 4 and all(np.isfinite(result["losses"]))
    assert (tmp_path / "model" / "model.onnx").is_file()
    import onnx

    graph = onnx.load(str(tmp_path / "model" / "model.onnx")).graph
    kinds = {init.data_type for init in graph.initializer}
    assert onnx.TensorProto.FLOAT in kinds and onnx.TensorProto.BFLOAT16 not in kinds
