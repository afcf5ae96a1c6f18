"""Measure the default colour references from labelled frames: ``python -m vision.fitcolours DIR``.

Why: the defaults in ``vision.colours`` must come from somewhere reproducible, and from the
development split only (sessions s000-s002 of trays-rendered; s003-s004 stay held out). For each
development frame the counter's own measurements (with the session's empty tray as reference)
are matched by position to the labelled cubes; per colour, the reference is the median of the
floor-normalised Lab and the spread a robust standard deviation (1.4826 x MAD); cubes with a
clipped channel (only a bound) are left out. Each frame's print/light factors are refitted with
the current model and the medians recomputed, three times.

Prints Python literals to paste into ``vision/colours.py``. ``--left-out`` prints each colour's
reference measured apart from itself instead (``left_out``: how the white's default was made).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import cv2
import numpy as np

from vision.bench import DEV_SESSIONS, LOW_VISIBILITY_PX, _match
from vision.colours import MIN_SPREAD, ColourModel, lab_from_linear, toned
from vision.counter import load_image, measure_cubes
from vision.errors import VisionError
from vision.reading import COLOURS


def collect(folder: Path, sessions=DEV_SESSIONS) -> list[tuple[int, list[tuple[str, np.ndarray]]]]:
    """Per frame: [(true colour, the cube's measurement)] for matched, clearly visible cubes."""
    labels = json.loads((folder / "labels.json").read_text())["images"]
    out = []
    refs: dict[str, np.ndarray] = {}
    for i, label in enumerate(labels):
        if label["session"] not in sessions:
            continue
        sess = label["session"]
        refs.setdefault(sess, load_image(folder / sess / "empty.jpg"))
        img = load_image(folder / label["file"])
        try:
            _, cubes, _ = measure_cubes(img, refs[sess])
        except VisionError:
            continue
        truth = [t for t in label["cubes"]
                 if t["in_tray"] and t["visible_px"] >= 4 * LOW_VISIBILITY_PX]
        pred = [("?", c["xy"][0], c["xy"][1]) for c in cubes]
        matched, _, _ = _match(pred, truth, 0.02 * img.shape[1])
        frame = [(truth[j]["colour"], cubes[k]) for k, j in matched
                 if not cubes[k]["ambiguous"]]
        if frame:
            out.append((i, frame))
    return out


def fit(frames, rounds: int = 3) -> ColourModel:
    model = ColourModel.default()
    for _ in range(rounds):
        samples: dict[str, list[np.ndarray]] = {c: [] for c in COLOURS}
        for _, frame in frames:
            cubes = [dict(c) for _, c in frame]
            model.name_cubes(cubes)
            for (colour, _), c in zip(frame, cubes, strict=True):
                if _clipped(c):
                    continue  # a clipped channel: the reading is only a bound
                samples[colour].append(lab_from_linear(
                    toned(c["ratio"][None], c["contrast"]) / c["gains"])[0])
        refs, spread = {}, {}
        for c in COLOURS:
            v = np.array(samples[c]) if samples[c] else np.array([model.refs[c]])
            med = np.median(v, axis=0)
            mad = 1.4826 * np.median(np.abs(v - med), axis=0) if len(v) > 3 else model.sds()[0]
            refs[c] = tuple(round(float(x), 1) for x in med)
            spread[c] = tuple(round(float(x), 1) for x in np.maximum(mad, MIN_SPREAD))
        model = ColourModel(refs, spread)
    return model


def _clipped(cube: dict) -> bool:
    return bool(np.any(cube.get("low", False)) or np.any(cube.get("high", False)))


def left_out(frames, sessions, model: ColourModel | None = None) -> dict[str, tuple]:
    """Per colour, its reference read in the print and light its session's other colours set.

    Why: a reference measured in frames whose print and light it helped fit keeps much of
    whatever it started from. The development split's whites clip on the cream and grey prints,
    so 11 of its 12 unclipped whites lie on one print (s001's wood); read in frames fitted with
    themselves they called that print untinted, and the white reference kept the wood's tint
    (b -41, where the other colours put it at -26). Every frame with a white was then pulled
    towards "no tint" on the wood, and a brown there read as black (s001/drop02).

    Here the session's other cubes, pooled over all its frames (one print; the cube / floor
    ratio cancels each frame's light), fit the print, light and contrast with their colours
    known, and the colour's unclipped cubes are read in that frame; the reference is their
    median over the sessions. ``sessions``: the session of each of ``frames``.
    """
    model = model or ColourModel.default()
    refs: dict[str, tuple] = {}
    for colour in COLOURS:
        samples = []
        for sess in sorted(set(sessions)):
            cubes = [(name, c) for (_, frame), s in zip(frames, sessions, strict=True)
                     if s == sess for name, c in frame]
            rest = [(name, c) for name, c in cubes if name != colour]
            if len(rest) == len(cubes) or not rest:
                continue
            gains, _, contrast = model.fit_light(
                np.array([c["ratio"] for _, c in rest], np.float32),
                low=np.array([c["low"] for _, c in rest], bool),
                high=np.array([c["high"] for _, c in rest], bool),
                names=[COLOURS.index(name) for name, _ in rest])
            samples += [lab_from_linear(toned(c["ratio"][None], contrast) / gains)[0]
                        for name, c in cubes if name == colour and not _clipped(c)]
        ref = np.median(samples, axis=0) if samples else np.array(model.refs[colour])
        refs[colour] = tuple(round(float(x), 1) for x in ref)
    return refs


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m vision.fitcolours", description=__doc__.split("\n")[0]
    )
    ap.add_argument("folder", type=Path)
    ap.add_argument("--left-out", action="store_true",
                    help="each colour read in the light its session's other colours set")
    args = ap.parse_args(argv)
    cv2.setNumThreads(1)
    frames = collect(args.folder)
    if args.left_out:
        labels = json.loads((args.folder / "labels.json").read_text())["images"]
        refs = left_out(frames, [labels[i]["session"] for i, _ in frames])
        for c in COLOURS:
            print(f'    "{c}": {refs[c]},')
        return 0
    model = fit(frames)
    n = sum(len(f) for _, f in frames)
    print(f"# from {n} cubes in {len(frames)} frames of {DEV_SESSIONS}")
    print("DEFAULT_REFS: dict[str, tuple[float, float, float]] = {")
    for c in COLOURS:
        print(f'    "{c}": {model.refs[c]},')
    print("}")
    print("DEFAULT_SPREAD: dict[str, tuple[float, float, float]] = {")
    for c in COLOURS:
        print(f'    "{c}": {model.spread[c]},')
    print("}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
