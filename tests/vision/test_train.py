"""The training code on the bundled mini set: the network learns from the targets (the loss on
a batch falls as it trains on it), and a short run writes an ONNX model that loads in cv2.dnn
and counts (needs the ``train`` extra: PyTorch)."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import cv2
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from vision.counter import count_cubes, load_image  # noqa: E402
from vision.detector import CubeDetector  # noqa: E402
from vision.train.__main__ import (  # noqa: E402
    autocast,
    input_size,
    load_weights,
    loss_fn,
    pick_device,
    train,
)
from vision.train.__main__ import main as train_main  # noqa: E402
from vision.train.augment import (  # noqa: E402
    LUMA_BGR,
    Cached,
    augment,
    draw_faults,
    draw_saturation,
    random_affine,
    saturate,
    windowed,
)
from vision.train.batches import (  # noqa: E402
    Draws,
    batches,
    cache_samples,
    crowd_weights,
    draw,
    make_batch,
)
from vision.train.data import load_samples  # noqa: E402
from vision.train.model import CubeNet  # noqa: E402

MINI = Path(__file__).resolve().parents[1] / "fixtures" / "vision" / "trays-mini"


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_the_loss_falls_on_a_batch(precision):
    torch.manual_seed(0)
    items = cache_samples([s for s in load_samples(MINI) if s.cubes][:3])
    batch = make_batch(items, np.random.default_rng(0), plain=True)
    model = CubeNet()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    first = None
    for _ in range(25):
        with autocast(argparse.Namespace(device="cpu", precision=precision)):
            out = model(batch[0])
        assert out.dtype == (torch.bfloat16 if precision == "bf16" else torch.float32)
        loss, parts = loss_fn(out.float(), *batch[1:])
        first = first if first is not None else loss.item()
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert set(parts) == {"cube", "outside", "corner", "colour", "offset"}
    assert loss.item() < 0.6 * first


@pytest.mark.slow
def test_a_short_run_writes_a_model_that_opencv_loads(tmp_path):
    args = argparse.Namespace(
        data=[MINI], out=tmp_path / "model", steps=6, minutes=10.0, batch=2, lr=3e-3,
        width=1, val_share=0.25, seed=0, threads=1, log_every=3, note="test",
        weights=tmp_path / "kept" / "w.pt", reload_every=0, warmup=2, init=None,
        input=(256, 160), device="auto", workers=2, save_every=3,
        views=["plain", "turned", "mirrored"],
        augment_on="auto", crowd=0.0, mirror=0.5, crop=(192, 128), precision="fp32", channels=None,
        unshown=True, centres="projected", distil=0.0, as_rendered=False, faults=0.5)
    result = train(args)
    assert len(result["losses"]) == 6
    load_weights(CubeNet(), tmp_path / "kept" / "w.pt")
    detector = CubeDetector(tmp_path / "model")
    config = json.loads((tmp_path / "model" / "model.json").read_text())
    assert (config["input_width"], config["input_height"]) == (256, 160)
    assert config["trained_on"] == "test"
    assert config["views"] == ["plain", "turned", "mirrored"]
    assert 0 < config["cube_threshold"] < 1
    reading = count_cubes(load_image(MINI / "s000" / "drop11.jpg"), detector=detector)
    assert all(0 <= c.confidence <= 1 for c in reading.cubes)


def test_weights_from_before_the_context_branch_load_and_read_the_same(tmp_path):
    old = CubeNet()
    old.eval()
    x = torch.rand(1, 7, 64, 96) - 0.5
    with torch.no_grad():
        want = old(x)
    saved = {k: v for k, v in old.state_dict().items() if not k.startswith("context.")}
    torch.save(saved, tmp_path / "old.pt")
    new = CubeNet()
    load_weights(new, tmp_path / "old.pt")
    new.eval()
    with torch.no_grad():
        assert torch.allclose(new(x), want, atol=1e-6)
    torch.save(CubeNet(width=2).state_dict(), tmp_path / "wide.pt")
    with pytest.raises(SystemExit, match="does not fit"):
        load_weights(CubeNet(), tmp_path / "wide.pt")


# a worker that dies at shutdown shows only as a warning from the DataLoader's __del__
@pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")
def test_worker_processes_each_make_their_own_batches():
    samples = load_samples(MINI)[:4]
    items = cache_samples(samples, (256, 160))
    stream = batches(samples, items, batch=2, size=(256, 160), seed=0, workers=2)
    drawn = [next(stream) for _ in range(4)]
    x = [b[0] for b in drawn]
    assert all(t.shape == (2, 7, 160, 256) for t in x)
    assert all(not torch.equal(a, b) for i, a in enumerate(x) for b in x[i + 1:])
    workers = list(stream._workers)
    del stream  # dropped while the workers are still making batches, as training's end does
    for w in workers:
        w.join(10)
    # each worker ends cleanly: not aborted by its queue's feeder thread at exit (SIGABRT, -6)
    assert [w.exitcode for w in workers] == [0, 0]


def test_crowded_trays_are_drawn_more_often_only_when_asked():
    items = cache_samples(load_samples(MINI), (256, 160))
    cubes = np.array([it.cubes[:, 3].sum() for it in items])
    assert cubes.min() < cubes.max()
    assert crowd_weights(items, 0.0) is None
    weights = crowd_weights(items, 1.0)
    assert weights.sum() == pytest.approx(1.0)
    assert weights[cubes.argmax()] > weights[cubes.argmin()]
    picks = draw(np.random.default_rng(0), len(items), 20000, weights)
    share = np.bincount(picks, minlength=len(items)) / 20000
    assert share[cubes.argmax()] == pytest.approx(weights[cubes.argmax()], abs=0.02)
    plain = draw(np.random.default_rng(0), len(items), 20000, None)
    assert np.bincount(plain, minlength=len(items)).min() > 0


def test_saturation_keeps_each_pixels_grey_and_scales_its_colour():
    rng = np.random.default_rng(5)
    img = rng.integers(0, 256, (12, 16, 3), dtype=np.uint8)
    assert saturate(img, 1.0) is img
    grey = img.astype(np.float32) @ LUMA_BGR
    flat = saturate(img, 0.0).astype(np.float32)
    assert np.abs(flat - grey[..., None]).max() <= 0.5 + 1e-4  # every channel its grey
    half = saturate(img, 0.5).astype(np.float32)
    chroma = img.astype(np.float32) - grey[..., None]
    assert np.abs(half - (grey[..., None] + 0.5 * chroma)).max() <= 0.5 + 1e-4
    assert saturate(np.full((2, 2, 3), (250, 10, 10), np.uint8), 1.6).max() == 255  # clipped


def test_saturation_is_drawn_both_ways_and_often_left_alone():
    rng = np.random.default_rng(6)
    drawn = np.array([draw_saturation(rng) for _ in range(2000)])
    assert 0.35 < (drawn == 1.0).mean() < 0.65
    assert drawn.min() >= np.exp(-0.7) and drawn.max() <= np.exp(0.4)
    assert (drawn < 0.7).any() and (drawn > 1.3).any()


def test_camera_faults_come_at_the_asked_rate():
    def faults(rate, n=4000):
        rng = np.random.default_rng(9)
        return [draw_faults(rng, rate) for _ in range(n)]

    usual, half, none = faults(1.0), faults(0.5), faults(0.0)
    assert 0.2 < np.mean([f.low_res is not None for f in usual]) < 0.3
    assert 0.1 < np.mean([f.low_res is not None for f in half]) < 0.15
    assert 0.2 < np.mean([f.jpeg > 0 for f in half]) < 0.3
    assert all(f.low_res is None and f.blur is None and not f.noise and not f.jpeg
               for f in none)


def test_mirrored_pictures_keep_each_cube_on_its_own_colour_and_only_when_asked():
    # three cubes, red -> blue -> green turning one way: a turn keeps the way they turn, a
    # mirror reverses it; and each label still sits on its own colour
    image = np.full((90, 160, 3), 128, np.uint8)
    colours = {2: (0, 0, 230), 0: (230, 0, 0), 4: (0, 230, 0)}  # BGR: red, blue, green
    centres = {2: (50, 55), 0: (110, 55), 4: (80, 30)}
    for colour, (x, y) in centres.items():
        image[y - 5:y + 5, x - 5:x + 5] = colours[colour]
    cubes = np.array([[*centres[c], c, 1, 1] for c in (2, 0, 4)], np.float32)
    item = Cached(image, None, 1.0, cubes, None)

    def way(points):  # the sign of the triangle's area
        (ax, ay), (bx, by), (cx, cy) = points
        return np.sign((bx - ax) * (cy - ay) - (by - ay) * (cx - ax))

    rng = np.random.default_rng(3)
    mirrored = sum(np.linalg.det(random_affine(rng, 160, 90, 160, 90, mirror=0.5)[:, :2]) < 0
                   for _ in range(60))
    assert 15 < mirrored < 45
    assert all(np.linalg.det(random_affine(rng, 160, 90, 160, 90)[:, :2]) > 0
               for _ in range(40))
    for share in (0.0, 1.0):
        for _ in range(15):
            out, _ref, moved, _corners = augment(item, rng, 160, 90, mirror=share)
            assert way(moved[:, :2]) == (-1 if share else 1) * way(cubes[:, :2])
            for x, y, colour, _in, _keep in moved:
                if 3 <= x < 157 and 3 <= y < 87:
                    pixel = out[int(y), int(x)].astype(int)
                    channel = {2: 2, 0: 0, 4: 1}[int(colour)]
                    assert pixel[channel] > max(np.delete(pixel, channel)) + 30


def test_a_crop_is_a_window_of_the_whole_input_with_each_cube_on_its_own_colour():
    # the same picture and matrix, warped whole and through a window: the window's pixels and
    # cubes are the whole input's, moved by the window's corner
    image = np.full((90, 160, 3), 128, np.uint8)
    colours = {2: (0, 0, 230), 0: (230, 0, 0), 4: (0, 230, 0)}
    centres = {2: (30, 20), 0: (110, 55), 4: (80, 70)}
    for colour, (x, y) in centres.items():
        image[y - 5:y + 5, x - 5:x + 5] = colours[colour]
    cubes = np.array([[*centres[c], c, 1, 1] for c in (2, 0, 4)], np.float32)
    rng = np.random.default_rng(5)

    class WholePixels:  # windows at whole pixels, so that the pixels can be compared exactly
        def uniform(self, low, high):
            return float(rng.integers(math.ceil(low), math.floor(high) + 1))

    corners = set()
    for _ in range(30):
        m = random_affine(rng, 160, 90, 160, 96)
        w = windowed(m, rng, (160, 96), (96, 64))
        dx, dy = m[:, 2] - w[:, 2]
        assert 0 <= dx <= 64 and 0 <= dy <= 32 and np.array_equal(m[:, :2], w[:, :2])
        corners.add((round(float(dx)), round(float(dy))))
        w = windowed(m, WholePixels(), (160, 96), (96, 64))
        ox, oy = (round(float(v)) for v in m[:, 2] - w[:, 2])
        whole = cv2.warpAffine(image, m, (160, 96))
        part = cv2.warpAffine(image, w, (96, 64))
        assert np.abs(part.astype(int) - whole[oy:oy + 64, ox:ox + 96]).max() <= 1
    assert len(corners) > 20  # windows all over, not one place
    item = Cached(image, image.copy(), 1.0, cubes, np.array([[0, 0], [159, 0], [159, 89],
                                                             [0, 89]], np.float32))
    seen = 0
    for _ in range(40):
        out, ref, moved, _corners = augment(item, rng, 160, 96, crop=(96, 64))
        assert out.shape == (64, 96, 3) and (ref is None or ref.shape == out.shape)
        for x, y, colour, _in, _keep in moved:
            if 3 <= x < 93 and 3 <= y < 61:
                seen += 1
                pixel = out[int(y), int(x)].astype(int)
                channel = {2: 2, 0: 0, 4: 1}[int(colour)]
                assert pixel[channel] > max(np.delete(pixel, channel)) + 30
    assert seen > 30


def test_cropped_batches_have_the_crops_size_and_plain_ones_stay_whole():
    items = cache_samples(load_samples(MINI)[:3], (256, 160))
    rng = np.random.default_rng(0)
    draws = Draws(crop=(192, 128))
    x, heat, weight, colour, offset, mask = make_batch(items, rng, size=(256, 160), draws=draws)
    assert x.shape == (3, 7, 128, 192)
    assert heat.shape == weight.shape == (3, 3, 32, 48) and offset.shape == (3, 2, 32, 48)
    assert colour.shape == mask.shape == (3, 32, 48)
    assert make_batch(items, rng, plain=True, size=(256, 160), draws=draws)[0].shape \
        == (3, 7, 160, 256)


def test_as_rendered_batches_are_the_pictures_themselves_with_their_empty_tray():
    """``--as-rendered`` (a diagnostic of how much the network can learn) re-shoots nothing:
    two draws of one picture are the same input, the empty tray always beside it."""
    items = cache_samples(load_samples(MINI)[:1], (256, 160))
    draws = Draws(as_rendered=True)
    first = make_batch(items * 2, np.random.default_rng(0), size=(256, 160), draws=draws)[0]
    again = make_batch(items, np.random.default_rng(1), size=(256, 160), draws=draws)[0]
    assert torch.equal(first[0], first[1]) and torch.equal(first[0], again[0])
    assert float(first[0, 6].min()) > 0  # the plane saying the empty tray is there
    reshot = make_batch(items, np.random.default_rng(0), size=(256, 160), draws=Draws())[0]
    assert not torch.equal(reshot[0], first[0])


def test_as_rendered_is_refused_with_re_shooting_options(tmp_path, capsys):
    for extra in (["--mirror", "0.5"], ["--crop", "384x224"], ["--augment-on", "device"]):
        with pytest.raises(SystemExit):
            train_main([str(tmp_path), "--as-rendered", *extra])
        assert "--as-rendered" in capsys.readouterr().err


def test_a_crop_larger_than_the_input_is_refused_before_any_training(tmp_path, capsys):
    for bad in ("544x288", "512x320", "500x200"):
        with pytest.raises(SystemExit):
            train_main([str(tmp_path), "--crop", bad])
        assert "--crop" in capsys.readouterr().err


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
def test_asking_for_a_gpu_that_is_not_there_is_a_clear_error():
    assert pick_device("auto") == "cpu"
    with pytest.raises(SystemExit, match="no GPU"):
        pick_device("cuda")


def test_the_input_size_is_checked_before_any_training(tmp_path, capsys):
    assert input_size("512x288") == (512, 288)
    for bad in ("512x300", "512", "ax288", "32x32"):
        with pytest.raises(SystemExit):
            train_main([str(tmp_path), "--input", bad])
        assert "--input" in capsys.readouterr().err


def test_the_mirrored_share_is_checked_before_any_training(tmp_path, capsys):
    for bad in ("1.5", "-0.1", "half"):
        with pytest.raises(SystemExit):
            train_main([str(tmp_path), "--mirror", bad])
        assert "--mirror" in capsys.readouterr().err


def test_the_fault_rate_is_checked_before_any_training(tmp_path, capsys):
    for bad in ("2", "-0.5", "some"):
        with pytest.raises(SystemExit):
            train_main([str(tmp_path), "--faults", bad])
        assert "--faults" in capsys.readouterr().err


def test_training_refuses_a_folder_without_labels(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"labels\.json"):
        train_main([str(tmp_path), "--out", str(tmp_path / "m"), "--steps", "1"])


@pytest.mark.parametrize("train_mode", [False, True])
@pytest.mark.parametrize("wider", [{"width": 1.5}, {"channels": (16, 24, 40, 96, 160)}])
def test_narrower_weights_widen_to_a_network_that_reads_the_same(tmp_path, train_mode, wider):
    torch.manual_seed(1)
    narrow = CubeNet()
    with torch.no_grad():  # trained-looking batch-norm statistics, not the initial ones
        for m in narrow.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 2.0)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)
        narrow.context.weight.normal_(0, 0.1)
    torch.save(narrow.state_dict(), tmp_path / "narrow.pt")
    wide = CubeNet(**wider)
    load_weights(wide, tmp_path / "narrow.pt")
    x = torch.rand(2, 7, 64, 96) - 0.5
    for net in (narrow, wide):
        net.train(train_mode)
    with torch.no_grad():
        assert torch.allclose(wide(x), narrow(x), atol=1e-4)
    # the copies learn apart: their shares differ, so their gradients do too
    wide.train()
    wide(x).square().sum().backward()
    grad = wide.down16[0][0].weight.grad  # stride 16 grows from 64 to 96 either way
    assert not any(torch.allclose(grad[64 + i], grad[j]) for i in range(8) for j in range(64))
    torch.save(wide.state_dict(), tmp_path / "wide.pt")
    with pytest.raises(SystemExit, match="does not fit"):  # never narrowed
        load_weights(CubeNet(), tmp_path / "wide.pt")


def test_each_strides_width_can_be_set_and_a_wrong_list_is_refused(tmp_path, capsys):
    net = CubeNet(channels=(16, 24, 40, 96, 160))
    assert net.down32[1][0].out_channels == 160 and net.stem[0][0].out_channels == 16
    out = net(torch.rand(1, 7, 64, 96))
    assert out.shape == (1, 12, 16, 24)
    for bad in ("16,24,40,96", "16,24,40,96,0", "16,24,x,96,160"):
        with pytest.raises(SystemExit):
            train_main([str(tmp_path), "--channels", bad])
        assert "--channels" in capsys.readouterr().err
    with pytest.raises(ValueError, match="five positive widths"):
        CubeNet(channels=(16, 24))
    # both --width and --channels set the widths: refused, not one silently winning
    with pytest.raises(SystemExit):
        train_main([str(tmp_path), "--width", "1.25", "--channels", "16,24,40,96,160"])
    assert "not allowed with argument --width" in capsys.readouterr().err
