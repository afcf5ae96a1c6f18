"""Train the cube detector: ``python -m vision.train DATA_DIR... [--out vision/model]``.

Reads every labelled folder given (any folder in the ``labels.json`` format, searched for
``labels.json`` files below it), keeps a share of the table set-ups apart for validation
(whole set-ups, never single pictures), trains ``CubeNet`` on randomly re-shot copies of the
rest (``vision.train.augment``), picks the counting threshold and calibrates the confidences
on the validation set-ups only, and writes ``model.onnx`` and ``model.json`` (checked to load
and agree in ``cv2.dnn``). Needs the ``train`` extra (PyTorch, onnx).
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
import torch
from torch.nn import functional

from vision.detector import MODEL_DIR, VIEWS, ModelConfig, check_views, from_view, in_view
from vision.errors import VisionError
from vision.netinput import to_planes
from vision.train import calibrate
from vision.train.augment import STRIDE, Cached, input_size, share
from vision.train.batches import DEFAULT_INPUT, Draws, batches, cache_samples
from vision.train.data import Sample, load_samples, split_by_session, without_visible_centres
from vision.train.device_batches import DeviceBatches
from vision.train.distil import distil_loss
from vision.train.export import export_onnx
from vision.train.model import (
    COLOUR,
    CORNER,
    CUBE,
    HEADS,
    OFFSET,
    OUTSIDE,
    CubeNet,
    check_channels,
)
from vision.train.unfold import measure_batch_norm, onnx_file, state_from_onnx
from vision.train.widen import group_widths, widen

# training batches whose pictures set the batch norms' statistics of weights unfolded from ONNX
MEASURE_BATCHES = 25


def pick_device(name: str) -> str:
    """``auto``: the GPU when PyTorch sees one, else the CPU."""
    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise SystemExit(f"--device {name}: PyTorch sees no GPU here")
    return name


def channel_widths(text: str) -> tuple[int, ...]:
    """``--channels``: five positive widths, one per stride (2, 4, 8, 16, 32)."""
    try:
        return check_channels(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r}: five positive widths, one per stride, as 16,24,40,96,160") from None


def autocast(args):
    """The network's pass in bfloat16 when ``--precision bf16``: on a CPU with AVX512-BF16 its
    forward and backward pass takes ~0.6 of the time (0.20 against 0.33 s for 16 pictures at
    512 x 288 on the two-core machine; making the batch, ~0.2 s, is unchanged). The loss is
    taken in float32 from the outputs, the weights stay float32, and the export is float32."""
    device_type = "cuda" if str(args.device).startswith("cuda") else "cpu"
    return torch.autocast(device_type, dtype=torch.bfloat16, enabled=args.precision == "bf16")


def pick_augment(name: str, device: str, workers: int) -> str:
    """Where the pictures are re-shot: ``auto`` is on the GPU when training on one (there the
    CPU's re-shooting is the bottleneck), else in this process or the batch workers."""
    if name == "auto":
        name = "device" if device.startswith("cuda") else "cpu"
    if name == "device" and workers > 0:
        raise SystemExit("--augment-on device makes the batches on the training device: "
                         "leave out --workers")
    return name


def training_batches(args, samples: list[Sample], items: list[Cached] | None, seed: int):
    """The endless batch iterator ``args.augment_on`` asks for."""
    draws = Draws(crowd=args.crowd, mirror=args.mirror, crop=args.crop, unshown=args.unshown,
                  visible_centres=args.centres == "visible", as_rendered=args.as_rendered,
                  faults=args.faults)
    if args.augment_on == "device":
        return DeviceBatches(items, args.batch, args.input, seed, args.device, draws)
    pin = args.device.startswith("cuda")  # page-locked batches copy to the GPU faster
    return batches(samples, items, args.batch, args.input, seed, args.workers, pin, draws)


def focal_loss(logits, gt, weight):
    """CenterNet's penalty-reduced focal loss, normalised by the number of centres."""
    p = torch.sigmoid(logits).clamp(1e-4, 1 - 1e-4)
    pos = (gt >= 1.0).float()
    pos_loss = -torch.log(p) * (1 - p) ** 2 * pos
    neg_loss = -torch.log(1 - p) * p ** 2 * (1 - gt) ** 4 * (1 - pos)
    n = (pos * weight).sum().clamp(min=1.0)
    return ((pos_loss + neg_loss) * weight).sum() / n


def loss_fn(out, heat, weight, colour, offset, mask):
    l_cube = focal_loss(out[:, CUBE], heat[:, 0], weight[:, 0])
    l_out = focal_loss(out[:, OUTSIDE], heat[:, 1], weight[:, 1])
    l_corner = focal_loss(out[:, CORNER], heat[:, 2], weight[:, 2])
    has = colour >= 0
    if has.any():
        logits = out[:, COLOUR].permute(0, 2, 3, 1)[has]
        l_colour = functional.cross_entropy(logits, colour[has])
    else:
        l_colour = out.sum() * 0
    off = torch.sigmoid(out[:, OFFSET])
    l_off = (torch.abs(off - offset).sum(1) * mask).sum() / mask.sum().clamp(min=1.0)
    total = l_cube + 0.5 * l_out + 0.5 * l_corner + l_colour + 0.5 * l_off
    return total, {"cube": l_cube.item(), "outside": l_out.item(), "corner": l_corner.item(),
                   "colour": l_colour.item(), "offset": l_off.item()}


def predict_maps(model: CubeNet, items: list[Cached], with_reference: bool,
                 size: tuple[int, int] = DEFAULT_INPUT,
                 views: tuple[str, ...] = ("plain",)) -> tuple[list[np.ndarray],
                                                              list[np.ndarray]]:
    """The network's maps of each picture, for calibrating on them: the plain view's, and
    those the device reads (every view's averaged, ``ModelConfig.views``; with the plain view
    alone, its maps again)."""
    model.eval()
    device = next(model.parameters()).device
    first, read = [], []
    with torch.no_grad():
        for item in items:
            h, w = item.image.shape[:2]
            canvas = np.zeros((size[1], size[0], 3), np.uint8)
            canvas[:h, :w] = item.image
            ref = None
            if with_reference and item.reference is not None:
                ref = np.zeros_like(canvas)
                ref[:h, :w] = item.reference
            blob = to_planes(canvas, ref)[None]
            maps = _forward(model, blob, device)
            first.append(maps)
            if len(views) > 1:  # as the device does it (vision.detector)
                maps = (maps + sum(from_view(_forward(model, in_view(blob, v), device), v, HEADS)
                                   for v in views[1:])) / len(views)
            read.append(maps)
    model.train()
    return first, read


def _forward(model: CubeNet, blob: np.ndarray, device) -> np.ndarray:
    return model(torch.from_numpy(blob).to(device))[0].cpu().numpy()


def _training_items(args, samples: list[Sample]) -> list[Cached]:
    """Training pictures fitted to the input, their targets as ``--unshown`` and ``--centres``
    ask (batch workers fit theirs through ``Draws``, from the same options)."""
    return cache_samples(samples, args.input, args.unshown, args.centres == "visible")


def _reload(args, samples: list[Sample], items: list[Cached] | None):
    """Add the pictures that appeared in the data folders since the last look (a renderer still
    running beside the training); validation set-ups stay apart by their names' hash. ``items``
    is None when batch workers fit the pictures themselves."""
    known = {s.path for s in samples}
    fresh: list[Sample] = []
    for folder in args.data:
        try:
            fresh += [s for s in load_samples(folder) if s.path not in known]
        except (OSError, ValueError) as exc:  # a labels file being rewritten right now
            print(f"reload skipped {folder}: {exc}", flush=True)
    fresh, _ = split_by_session(fresh, args.val_share, args.seed)
    if fresh:
        if items is not None:
            items = items + _training_items(args, fresh)
        samples = samples + fresh
        print(f"added {len(fresh)} pictures: {len(samples)} of "
              f"{len({s.session for s in samples})} set-ups now", flush=True)
    return samples, items


def read_weights(path: Path) -> tuple[dict, bool]:
    """An earlier run's weights: PyTorch weights (``--weights``), or a model folder or ONNX
    file (``vision.train.unfold``); and whether they came from ONNX."""
    from_onnx = onnx_file(path)
    if from_onnx is not None:
        state = state_from_onnx(from_onnx)
        print(f"unfolded {from_onnx}: {group_widths(state)} channels", flush=True)
        return state, True
    if not Path(path).is_file():
        raise SystemExit(f"--init {path}: no such file, nor a model folder with model.onnx")
    return torch.load(path, map_location="cpu"), False


def load_weights(model: CubeNet, path: Path, weights: tuple[dict, bool] | None = None) -> bool:
    """An earlier run's weights (``read_weights``, or ``weights`` already read from ``path``)
    into ``model``. Weights saved before the global-context branch existed load too: the
    branch starts at zero, so the network reads as it did. Weights of a narrower CubeNet are
    widened to ``model``'s width (``vision.train.widen``), reading the same. True when the
    weights came from ONNX and the batch norms' statistics still have to be measured on
    training batches (``measure_batch_norm``)."""
    missing: list[str] = []
    state, from_onnx = weights or read_weights(path)
    if "context.weight" in state and _narrower(state, model):
        was = group_widths(state)
        try:
            state = widen(state, model.state_dict())
        except ValueError as exc:
            raise SystemExit(f"{path} cannot be widened to this CubeNet: {exc}") from None
        print(f"widened {path} from {was} channels to {group_widths(state)}", flush=True)
    try:
        missing, unexpected = model.load_state_dict(state, strict=False)
        foreign = [*unexpected, *(k for k in missing if not k.startswith("context."))]
        problem = f"layers {foreign} do not match" if foreign else ""
    except RuntimeError as exc:  # a layer of another shape
        problem = str(exc)
    if problem:
        raise SystemExit(f"{path} does not fit this CubeNet (another --width?): {problem}")
    if missing:
        print(f"new layers start at zero: {', '.join(missing)}", flush=True)
    return from_onnx


def _narrower(state: dict, model: CubeNet) -> bool:
    old, new = group_widths(state), group_widths(model.state_dict())
    return old != new and all(a <= b for a, b in zip(old, new, strict=True))


def frozen_copy(model: CubeNet) -> CubeNet:
    """The starting network as ``--distil``'s teacher: reads as it did, never trained."""
    teacher = copy.deepcopy(model).eval()
    for p in teacher.parameters():
        p.requires_grad_(False)
    return teacher


def train(args) -> dict:
    """Train, calibrate and export; returns the per-step losses and where the model went."""
    if args.distil and not args.init:
        raise SystemExit("--distil keeps what the starting network knew: it needs --init")
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    args.device = pick_device(args.device)
    if args.as_rendered and args.augment_on == "auto":
        args.augment_on = "cpu"  # the device's batch maker always re-shoots
    args.augment_on = pick_augment(args.augment_on, args.device, args.workers)
    if args.weights:
        args.weights.parent.mkdir(parents=True, exist_ok=True)
    samples: list[Sample] = []
    for folder in args.data:
        samples += load_samples(folder)
    train_samples, val_samples = split_by_session(samples, args.val_share, args.seed)
    if not train_samples:
        raise SystemExit("no training pictures: every set-up fell in the validation share")
    sessions = lambda ss: len({s.session for s in ss})  # noqa: E731
    print(f"{len(train_samples)} training pictures of {sessions(train_samples)} set-ups, "
          f"{len(val_samples)} validation pictures of {sessions(val_samples)} set-ups",
          flush=True)
    t0 = time.time()
    # with batch workers, each worker fits the training pictures itself
    visible = args.centres == "visible"
    if visible and (old := without_visible_centres(train_samples + val_samples)):
        raise SystemExit("--centres visible: these folders' labels have no visible_xy (render "
                         "them again through vision/train/render.py): "
                         + ", ".join(map(str, old)))
    train_items = _training_items(args, train_samples) if args.workers <= 0 else None
    val_items = cache_samples(val_samples, args.input, visible_centres=visible)
    print(f"cached in {time.time() - t0:.0f} s", flush=True)

    # go on from an earlier run's weights (a warm restart of the schedule), at their own
    # widths unless --width or --channels asks for wider
    initial = read_weights(args.init) if args.init else None
    channels = args.channels
    if channels is None and args.width is None and initial is not None:
        channels = tuple(group_widths(initial[0]))
    model = CubeNet(args.width or 1.0, channels)
    unmeasured = initial is not None and load_weights(model, args.init, initial)
    model = model.to(args.device, memory_format=torch.channels_last)
    n_params = sum(p.numel() for p in model.parameters())
    makers = ("the training device" if args.augment_on == "device"
              else f"{max(1, args.workers)} process(es)")
    print(f"CubeNet: {n_params} parameters, training on {args.device} in {args.precision} "
          f"with batches from {makers}", flush=True)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    budget = args.minutes * 60
    start = time.time()
    step = 0
    avg: dict[str, float] = {}
    losses: list[float] = []
    stream = training_batches(args, train_samples, train_items, args.seed)
    if unmeasured:
        measured = measure_batch_norm(model, (
            next(stream)[0].to(args.device).contiguous(memory_format=torch.channels_last)
            for _ in range(MEASURE_BATCHES)))
        print(f"batch-norm statistics measured on {measured} training pictures", flush=True)
    teacher = frozen_copy(model) if args.distil else None
    while True:
        elapsed = time.time() - start
        if step >= args.steps or elapsed >= budget:
            break
        progress = max(step / args.steps, elapsed / budget)
        warm = min(1.0, (step + 1) / max(1, args.warmup))
        lr = args.lr * warm * 0.5 * (1 + math.cos(math.pi * progress))
        for g in opt.param_groups:
            g["lr"] = lr
        if args.reload_every and step and step % args.reload_every == 0:
            known = len(train_samples)
            train_samples, train_items = _reload(args, train_samples, train_items)
            if len(train_samples) != known:  # the workers hold the old list: start new ones
                stream = training_batches(args, train_samples, train_items, args.seed + step)
        x, heat, weight, colour, offset, mask = (
            t.to(args.device, non_blocking=True) for t in next(stream))
        x = x.contiguous(memory_format=torch.channels_last)
        with autocast(args):
            out = model(x)
        loss, parts = loss_fn(out.float(), heat, weight, colour, offset, mask)
        if teacher is not None:
            with torch.no_grad(), autocast(args):
                taught = teacher(x)
            kept = distil_loss(out, taught, (heat[:, 0] >= 1.0).sum())
            loss = loss + args.distil * kept
            parts["distil"] = kept.item()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
        for k, v in {"loss": loss.item(), **parts}.items():
            avg[k] = 0.98 * avg.get(k, v) + 0.02 * v
        step += 1
        if step % args.log_every == 0:
            print(f"step {step} {elapsed / 60:.1f} min lr {lr:.5f} "
                  + " ".join(f"{k} {v:.3f}" for k, v in avg.items()), flush=True)
        if args.weights and args.save_every and step % args.save_every == 0:
            torch.save(model.state_dict(), args.weights)  # a run cut short keeps its work
    del stream  # ends the worker processes
    print(f"trained {step} steps in {(time.time() - start) / 60:.1f} min", flush=True)
    if args.weights:  # before calibrating and exporting, which a run cut short may not reach
        torch.save(model.state_dict(), args.weights)

    config = ModelConfig(
        input_width=args.input[0], input_height=args.input[1], stride=STRIDE,
        labels=("blue", "black", "red", "brown", "green", "yellow", "white"), heads=HEADS,
        views=tuple(args.views),
        trained_on=args.note or ", ".join(str(d) for d in args.data))
    if val_items:
        passes = {mode: predict_maps(model, val_items, mode, args.input, config.views)
                  for mode in (True, False)}
        per_mode = {mode: read for mode, (_, read) in passes.items()}
        config = calibrate.fit(config, val_samples, val_items, per_mode, log=print)
        if len(config.views) > 1:
            once = {mode: first for mode, (first, _) in passes.items()}
            config = calibrate.views_level(config, val_samples, val_items, per_mode, once,
                                           log=print)
    model = model.cpu()
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    export_onnx(model, out_dir / "model.onnx", *args.input)
    (out_dir / "model.json").write_text(json.dumps(config.to_dict(), indent=1) + "\n")
    print(f"wrote {out_dir / 'model.onnx'} and model.json", flush=True)
    return {"losses": losses, "out": out_dir, "config": config}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vision.train", description=__doc__)
    ap.add_argument("data", nargs="+", type=Path, help="folders with labels.json")
    ap.add_argument("--out", type=Path, default=MODEL_DIR)
    ap.add_argument("--steps", type=int, default=20000)
    ap.add_argument("--minutes", type=float, default=60.0, help="stop after this long")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=3e-3)
    widths = ap.add_mutually_exclusive_group()  # both at once: argparse refuses, naming both
    widths.add_argument("--channels", type=channel_widths, metavar="C2,C4,C8,C16,C32",
                        help="each stride's width instead of --width (e.g. 16,24,40,96,160: "
                        "the deep stages wider, almost no slower)")
    widths.add_argument("--width", type=float, default=None,
                        help="scales every layer's channels of the base (default: the --init "
                        "weights' own widths, else 1; 1.5: ~2.4 times the time per picture); "
                        "not with --channels")
    ap.add_argument("--input", type=input_size, default=DEFAULT_INPUT, metavar="WxH",
                    help="the network's input size (default 512x288); a bigger one gives "
                    "each cube more pixels and costs time in proportion to its area")
    ap.add_argument("--val-share", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--reload-every", type=int, default=0,
                    help="look for new pictures in the data folders every so many steps")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--precision", choices=("fp32", "bf16"), default="fp32",
                    help="the training pass's arithmetic (bf16: bfloat16 autocast, faster "
                         "where the processor has it; the weights and the export stay fp32)")
    ap.add_argument("--device", default="auto",
                    help="cpu, cuda or auto (default: the GPU when PyTorch sees one)")
    ap.add_argument("--workers", type=int, default=0,
                    help="processes making augmented batches (0: the training process itself; "
                    "with a GPU, about the CPU cores less one)")
    ap.add_argument("--augment-on", choices=("auto", "cpu", "device"), default="auto",
                    help="where the pictures are re-shot: on the CPU (this process or "
                    "--workers) or on the training device (vision.train.device_batches); "
                    "auto: on the GPU when training on one")
    ap.add_argument("--save-every", type=int, default=1000,
                    help="also save --weights every so many steps")
    ap.add_argument("--log-every", type=int, default=50)
    ap.add_argument("--note", default="", help="what the data was, for model.json")
    ap.add_argument("--weights", type=Path, help="also keep the PyTorch weights here")
    ap.add_argument("--init", type=Path,
                    help="start from these PyTorch weights (--weights), or from a model folder "
                    "or ONNX file (e.g. vision/model, the shipped model)")
    ap.add_argument("--views", nargs="+", choices=tuple(VIEWS), default=["plain"],
                    help="the views of each picture the model reads and averages, starting "
                    "with plain (e.g. plain turned mirrored flipped: a pass each) when the "
                    "plain view is not sure, at a level chosen on validation; calibrated that "
                    "way too")
    ap.add_argument("--crowd", type=float, default=0.0,
                    help="draw crowded trays more often: weight 1 + CROWD x cubes / mean cubes")
    ap.add_argument("--unshown", action="store_true",
                    help="a cube the picture does not show (vision.train.unseen: in deep "
                    "shadow, labelled visible by geometry) is neither asked for nor punished, "
                    "like a barely visible one")
    ap.add_argument("--centres", choices=("projected", "visible"), default="projected",
                    help="where a cube is taught: its projected centre (the labels' xy) or the "
                    "centre of its own pixels (visible_xy, from vision/train/render.py since "
                    "2026-12-06; every folder must have it)")
    ap.add_argument("--mirror", type=share, default=0.0,
                    help="share of training pictures mirrored (any axis: mirrored, then turned)")
    ap.add_argument("--faults", type=share, default=1.0, metavar="RATE",
                    help="how often each camera fault (a lower-resolution camera, blur, noise, "
                    "JPEG) re-shoots a picture, as a share of the usual rates (1: as the "
                    "shipped model was trained; 0: never)")
    ap.add_argument("--crop", type=input_size, metavar="WxH",
                    help="train on random windows of this size out of each re-shot input "
                    "(e.g. 384x224: ~1.8 times the pictures an hour; the model still reads "
                    "the whole --input)")
    ap.add_argument("--distil", type=float, default=0.0, metavar="WEIGHT",
                    help="also match the --init network's own maps, at this weight beside the "
                         "labels' loss (learning without forgetting; vision/train/distil.py)")
    ap.add_argument("--warmup", type=int, default=200, help="steps of rising learning rate")
    ap.add_argument("--as-rendered", action="store_true",
                    help="a diagnostic, never a model to ship: train on the pictures exactly "
                    "as rendered, each with its empty tray (no re-shooting, no mirroring), to "
                    "measure how many of its own training trays the network can learn to read "
                    "(vision/README.md, 'Why not 98 %%')")
    args = ap.parse_args(argv)
    if args.as_rendered and (args.augment_on == "device" or args.crop or args.mirror):
        ap.error("--as-rendered trains on the pictures as they are: not with --crop, "
                 "--mirror or --augment-on device")
    if not args.distil >= 0:
        ap.error(f"--distil {args.distil}: a weight of 0 (off) or more")
    if args.crop is not None and (args.crop[0] > args.input[0] or args.crop[1] > args.input[1]):
        ap.error(f"--crop {args.crop[0]}x{args.crop[1]} is larger than the input "
                 f"{args.input[0]}x{args.input[1]}")
    try:
        check_views(args.views)
    except VisionError as exc:
        ap.error(f"--views: {exc}")
    train(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
