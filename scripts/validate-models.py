"""Which of several trained models reads the validation set-ups best: the choice a retrain makes.

Why: a new model ships only if it beats the one it would replace, and that comparison must not
use the held-out sets whose figures the README reports (choosing on them would make their
figures optimistic). This reads the same validation share that ``python -m vision.train`` keeps
apart (whole set-ups, by a hash of their names) from the training folders, and counts exact
trays with and without the empty-tray reference for each model folder given, and how well each
model's unsure flag separates its wrong readings from its right ones: at the model's own
``unsure_below``, and the level the retrain's rule (``calibrate.unsure_level``) would choose on
these readings. A model that reads as many trays right but doubts its wrong ones less is worse.

    python scripts/validate-models.py --data ~/renders/train-a ~/renders/train-b \
        --whole ~/renders/val-hi --models vision/model ~/run3/model

``--whole`` adds folders that are validation set-ups from end to end (renders made only for
choosing, e.g. at the camera's full 1152 x 648 where the training renders are smaller): a
model with a bigger input shows what it gains there.

Each model after the first is also compared with the first reading by reading: how many
readings only it reads exactly, how many only the first does, and the exact two-sided
McNemar p of that split. Why: the rules that judge a run ask for "no fewer" exact readings of
80, and a difference of one to four readings there is often a coin's worth; the paired split
says how much of a difference is the models' and how much the draw of set-ups.

Prints two lines per model and group of pictures (three after the first); exits 0.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from vision import VisionError, count_cubes, load_image
from vision.counter import LOW_CONFIDENCE_DOUBTS
from vision.detector import CubeDetector
from vision.train.calibrate import unsure_level
from vision.train.data import fair_counts, is_exact, load_samples, split_by_session


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", nargs="*", type=Path, default=[], help="training folders")
    ap.add_argument("--whole", nargs="*", type=Path, default=[],
                    help="folders of validation set-ups only (never trained on)")
    ap.add_argument("--models", nargs="+", type=Path, required=True, help="model folders")
    ap.add_argument("--val-share", type=float, default=0.1, help="as given to vision.train")
    ap.add_argument("--seed", type=int, default=0, help="as given to vision.train")
    args = ap.parse_args(argv)
    samples = [s for folder in args.data for s in load_samples(folder)]
    _, held = split_by_session(samples, args.val_share, args.seed)
    held = [s for s in held if not s.is_empty_frame]
    groups = {"training folders' validation share": held}
    for folder in args.whole:
        groups[str(folder)] = [s for s in load_samples(folder) if not s.is_empty_frame]
    for name, group in groups.items():
        print(f"{name}: {len(group)} validation pictures of "
              f"{len({s.session for s in group})} set-ups")
        if not group:
            continue
        pictures = _pictures(group)
        first = None
        for folder in args.models:
            exact = _report(folder, pictures)
            if first is None:
                first = exact
            else:
                print("    " + paired(exact, first, args.models[0]))
    return 0


def mcnemar_p(only_here: int, only_there: int) -> float:
    """The exact two-sided McNemar p: how likely a split of the discordant readings at least
    this uneven is when neither model is better (each discordant reading a fair coin)."""
    n = only_here + only_there
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(min(only_here, only_there) + 1)) / 2 ** n
    return min(1.0, 2 * tail)


def paired(exact: dict[bool, list[bool]], first: dict[bool, list[bool]], first_name) -> str:
    """One model's exact readings against the first model's, reading by reading."""
    parts = []
    for with_reference, words in ((True, "with the empty tray"), (False, "without")):
        pairs = list(zip(exact[with_reference], first[with_reference], strict=True))
        here = sum(a and not b for a, b in pairs)
        there = sum(b and not a for a, b in pairs)
        parts.append(f"{words} {here} / {there} (p {mcnemar_p(here, there):.2f})")
    return (f"against {first_name}, readings only this / only that one reads exactly: "
            + ", ".join(parts))


def _pictures(samples) -> list:
    """Each drop with its set-up's empty tray (read once a set-up) and its fair counts."""
    references: dict[Path, object] = {}
    pictures = []
    for s in samples:
        image = load_image(s.path)
        reference = None
        if s.empty_path and s.empty_path.exists():
            if s.empty_path not in references:
                references[s.empty_path] = load_image(s.empty_path)
            reference = references[s.empty_path]
        h, w = image.shape[:2]
        pictures.append((image, reference, fair_counts(s, w, h)))
    return pictures


def _report(folder: Path, pictures: list) -> dict[bool, list[bool]]:
    """Print the model's two lines; per mode (with the empty tray or not), each picture's
    reading exact or not (a failed reading is not)."""
    detector = CubeDetector(folder)
    exact: dict[bool, list[bool]] = {True: [], False: []}
    trays = []  # (exact, lowest confidence, doubted at any level) per reading
    for image, reference, fair in pictures:
        for with_reference in (True, False):
            ref = reference if with_reference else None
            try:
                reading = count_cubes(image, ref, detector=detector)
            except VisionError:
                exact[with_reference].append(False)
                continue
            exact_tray = is_exact(reading.counts, fair)
            exact[with_reference].append(exact_tray)
            trays.append((exact_tray, min((c.confidence for c in reading.cubes), default=1.0),
                          any(d.kind not in LOW_CONFIDENCE_DOUBTS for d in reading.doubts)))
    n = len(pictures)
    hits = {mode: sum(exact[mode]) for mode in exact}
    print(f"  {folder}: exact trays {hits[True]}/{n} ({100 * hits[True] / n:.1f} %) with the "
          f"empty tray, {hits[False]}/{n} ({100 * hits[False] / n:.1f} %) without")
    own = detector.config.unsure_below
    chosen, table = unsure_level(trays)
    caught, wrong, flagged, right = unsure_level(trays, levels=(own,))[1][own]
    line = (f"    unsure flag at its level {own}: wrong readings caught {caught}/{wrong}, right "
            f"ones flagged {flagged}/{right}")
    if chosen is not None and chosen != own:
        c2, _, f2, _ = table[chosen]
        line += (f"; the retrain's rule would choose {chosen} ({c2}/{wrong} caught, "
                 f"{f2}/{right} flagged)")
    print(line)
    return exact


if __name__ == "__main__":
    sys.exit(main())
