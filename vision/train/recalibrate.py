"""Settle an exported model's decoder numbers again, for other views, without retraining.

Why: which views a model reads (``ModelConfig.views``) changes the maps it decodes: an average
of four views is smoother than one of two, so the temperatures, the counting threshold, the
confidence map, the unsure level and the level below which the other views are read must be
chosen again for it. They are chosen exactly as a training run chooses them
(``vision.train.calibrate``), on the maps the device computes (``cv2.dnn``, through
``CubeDetector``), over folders that are validation set-ups from end to end: renders made only
for choosing, never trained on, never reported as held-out figures.

    python -m vision.train.recalibrate vision/model ~/trays/val-a ~/trays/val-b \
        --views plain turned mirrored flipped --out ~/run/model-views

Writes ``model.json`` (and a copy of ``model.onnx``) into ``--out``. ``--level-only`` keeps
every number but ``more_views_below``: numbers fitted on a few validation-only set-ups can fit
them, not the tables to come, where the training run's were fitted on its whole validation
share (for the shipped model, refitting on one set of 20 set-ups read the other set's trays
worse than the training's numbers did, and refitting on 107 read fresh ones no better, run 29:
``vision/README.md``).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from vision.counter import load_image
from vision.detector import VIEWS, CubeDetector, check_views
from vision.errors import VisionError
from vision.train import calibrate
from vision.train.data import load_samples


def view_maps(detector: CubeDetector, folders: list[Path]):
    """The validation samples, stand-ins for their fitted pictures (what calibration reads of
    them: the fitted size and the scale) and, per mode (with the empty tray or not), each
    picture's plain-view maps and the maps of all ``detector.config.views`` averaged."""
    samples = [s for folder in folders for s in load_samples(folder)]
    items, first, read = [], {True: [], False: []}, {True: [], False: []}
    references: dict[Path, np.ndarray] = {}
    for s in samples:
        image = load_image(s.path)
        reference = None
        if s.empty_path is not None:
            if s.empty_path not in references:
                references[s.empty_path] = load_image(s.empty_path)
            reference = references[s.empty_path]
        for with_reference in (True, False):
            ref = reference if with_reference else None
            plain, every, scale = detector.view_maps(image, ref)
            first[with_reference].append(plain)
            read[with_reference].append(every)
        h, w = image.shape[:2]
        fitted = np.empty((round(h * scale), round(w * scale), 0), np.uint8)
        items.append(SimpleNamespace(image=fitted, scale=scale))
    return samples, items, first, read


def recalibrate(model: Path, folders: list[Path], views: tuple[str, ...],
                level_only: bool = False, log=print):
    """The model's config with every decoder number chosen again for ``views`` (only
    ``more_views_below`` with ``level_only``)."""
    detector = CubeDetector(model)
    detector.config = dataclasses.replace(detector.config, views=views)
    samples, items, first, read = view_maps(detector, folders)
    log(f"{len(samples)} validation pictures of {len({s.session for s in samples})} set-ups, "
        f"views {'+'.join(views)}")
    config = detector.config
    if not level_only:
        config = calibrate.fit(config, samples, items, read, log=log)
    if len(views) > 1:
        config = calibrate.views_level(config, samples, items, read, first, log=log)
    else:
        config = dataclasses.replace(config, more_views_below=None)
    return config


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vision.train.recalibrate",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("model", type=Path, help="model folder (model.onnx, model.json)")
    ap.add_argument("data", nargs="+", type=Path, help="folders of validation set-ups only")
    ap.add_argument("--views", nargs="+", choices=tuple(VIEWS), default=["plain"])
    ap.add_argument("--out", type=Path, required=True, help="the recalibrated model's folder")
    ap.add_argument("--level-only", action="store_true",
                    help="keep the model's other numbers; choose only more_views_below")
    ap.add_argument("--note", default="", help="appended to model.json's trained_on")
    args = ap.parse_args(argv)
    try:
        check_views(args.views)
    except VisionError as exc:
        ap.error(f"--views: {exc}")
    config = recalibrate(args.model, args.data, tuple(args.views), args.level_only)
    if args.note:
        config = dataclasses.replace(config, trained_on=f"{config.trained_on}; {args.note}")
    args.out.mkdir(parents=True, exist_ok=True)
    if args.out.resolve() != args.model.resolve():
        shutil.copy(args.model / "model.onnx", args.out / "model.onnx")
    (args.out / "model.json").write_text(json.dumps(config.to_dict(), indent=1) + "\n")
    print(f"wrote {args.out / 'model.json'}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
