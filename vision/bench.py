"""Benchmark the counter on a labelled folder: ``python -m vision.bench DIR [--split holdout]``.

Why: "excellent" has to be a number. The folder follows the trays-rendered format (a
``labels.json`` and one sub-folder per session with ``empty.jpg`` and drops). For each image the
counter runs twice, with and without the session's ``empty.jpg`` as reference, single-threaded.

Printed: the share of images whose seven counts are all exactly right; per-colour confusion of
cubes matched to the labels by position; counting errors split into missed / extra / wrong
colour; median and p95 milliseconds per image; peak RSS. Cubes with ``visible_px`` under 150 may
be counted either way.

Fixed split (decided before tuning, never changed): sessions s000-s002 are for development,
s003-s004 are held out. ``--split`` picks dev, holdout or all (default: all, reported per split).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import resource
import sys
import time
from pathlib import Path

import cv2
import numpy as np

from vision.calibration import calibrate_from_drop
from vision.counter import count_cubes, load_image
from vision.errors import VisionError
from vision.reading import COLOURS

DEV_SESSIONS = ("s000", "s001", "s002")
LOW_VISIBILITY_PX = 150
MATCH_RADIUS_FRAC = 0.03  # of the image width: a found cube within this of a label is that cube


def _match(pred: list[tuple[str, float, float]], truth: list[dict], radius: float):
    """Greedy nearest matching of found cubes to labelled in-tray cubes."""
    pairs = []
    for i, (_, px, py) in enumerate(pred):
        for j, t in enumerate(truth):
            d = float(np.hypot(px - t["xy"][0], py - t["xy"][1]))
            if d <= radius:
                pairs.append((d, i, j))
    pairs.sort()
    used_p, used_t, matched = set(), set(), []
    for _, i, j in pairs:
        if i in used_p or j in used_t:
            continue
        used_p.add(i)
        used_t.add(j)
        matched.append((i, j))
    return matched, used_p, used_t


def _exact(counts: dict[str, int], label: dict) -> bool:
    for c in COLOURS:
        want = label["counts"][c]
        faint = sum(
            1 for t in label["cubes"]
            if t["in_tray"] and t["colour"] == c and t["visible_px"] < LOW_VISIBILITY_PX
        )
        if not (want - faint <= counts.get(c, 0) <= want):
            return False
    return True


class Tally:
    def __init__(self):
        self.n = 0
        self.exact = 0
        self.missed = 0
        self.extra = 0
        self.wrong = 0
        self.failed = 0
        self.confusion = np.zeros((len(COLOURS), len(COLOURS)), int)
        self.ms: list[float] = []  # wall clock
        self.cpu: list[float] = []  # this thread's CPU time (other load on the machine aside)
        self.wrong_files: list[str] = []
        self.wrong_flagged = 0  # wrong readings that said they were unsure
        self.right_flagged = 0  # right readings that asked anyway

    def add(self, label, reading, ms, width, cpu_ms=None):
        self.n += 1
        self.ms.append(ms)
        self.cpu.append(ms if cpu_ms is None else cpu_ms)
        if reading is None:
            self.failed += 1
            self.wrong_files.append(label["file"] + " (error)")
            return
        ok = _exact(reading.counts, label)
        self.exact += ok
        if not ok:
            self.wrong_files.append(label["file"])
            self.wrong_flagged += bool(reading.uncertain)
        else:
            self.right_flagged += bool(reading.uncertain)
        truth = [t for t in label["cubes"] if t["in_tray"]]
        pred = [(c.colour, c.x, c.y) for c in reading.cubes]
        matched, used_p, used_t = _match(pred, truth, MATCH_RADIUS_FRAC * width)
        for i, j in matched:
            a, b = COLOURS.index(truth[j]["colour"]), COLOURS.index(pred[i][0])
            self.confusion[a, b] += 1
            self.wrong += a != b
        self.missed += sum(
            1 for j, t in enumerate(truth)
            if j not in used_t and t["visible_px"] >= LOW_VISIBILITY_PX
        )
        self.extra += len(pred) - len(used_p)

    def report(self, title: str) -> list[str]:
        ms = np.array(self.ms) if self.ms else np.zeros(1)
        cpu = np.array(self.cpu) if self.cpu else np.zeros(1)
        lines = [
            f"{title}: exact {self.exact}/{self.n} = {100.0 * self.exact / max(self.n, 1):.1f} % | "
            f"errors: missed {self.missed}, extra {self.extra}, wrong colour {self.wrong}, "
            f"failed {self.failed} | wrong but flagged unsure {self.wrong_flagged}/"
            f"{self.n - self.exact - self.failed}, right but flagged {self.right_flagged}/"
            f"{self.exact} | "
            f"ms median {np.median(ms):.1f} p95 {np.percentile(ms, 95):.1f} "
            f"(cpu {np.median(cpu):.1f} / {np.percentile(cpu, 95):.1f})"
        ]
        return lines

    def confusion_lines(self) -> list[str]:
        head = "true\\found " + " ".join(f"{c[:6]:>6}" for c in COLOURS)
        rows = [head]
        for i, c in enumerate(COLOURS):
            rows.append(f"{c:<10} " + " ".join(f"{v:>6d}" for v in self.confusion[i]))
        return rows


def _timed_count(img, ref, calibration=None):
    """(reading or None, wall ms, cpu ms, error or None): a frame the counter refuses scores as
    failed rather than stopping the bench."""
    t0, c0 = time.perf_counter(), time.thread_time()
    try:
        reading, error = count_cubes(img, ref, calibration=calibration), None
    except VisionError as exc:
        reading, error = None, exc
    return reading, 1000 * (time.perf_counter() - t0), 1000 * (time.thread_time() - c0), error


def calibrated_lines(folder: Path, labels: list[dict]) -> list[str]:
    """Extra figure: each session calibrated from its first drop, as the players would confirm
    it ("that drop held ..."), then its other drops read with the empty tray and that
    calibration. The calibrating drop itself is left out of the score."""
    by_session: dict[str, list[dict]] = {}
    for x in labels:
        if not x["file"].endswith("empty.jpg"):
            by_session.setdefault(x["session"], []).append(x)
    tally = {"dev": Tally(), "holdout": Tally()}
    used = 0
    for sess, drops in sorted(by_session.items()):
        drops = sorted(drops, key=lambda x: x["file"])
        ref = load_image(folder / sess / "empty.jpg")
        cal = None
        for first in drops:
            if sum(first["counts"].values()) == 0:
                continue
            try:
                cal = calibrate_from_drop(load_image(folder / first["file"]), first["counts"], ref)
            except VisionError:
                continue
            break
        if cal is None:
            continue
        used += 1
        part = "dev" if sess in DEV_SESSIONS else "holdout"
        for label in drops:
            if label is first:
                continue
            img = load_image(folder / label["file"])
            reading, ms, cpu, _ = _timed_count(img, ref, cal)
            tally[part].add(label, reading, ms, img.shape[1], cpu)
    lines = []
    for part, t in tally.items():
        if t.n:
            lines += t.report(f"{part:<7} with reference + calibration drop")
    lines.append(f"  ({used} sessions calibrated from their first usable drop, not scored)")
    return lines + learning_lines(folder, by_session)


def learning_lines(folder: Path, by_session: dict[str, list[dict]]) -> list[str]:
    """Extra figure, as the device does it: every drop is read with what the session has learned
    so far, then taught (``calibrate_from_drop`` with the previous calibration) as if the
    players confirmed it. Scored from the first drop read with something learned, next to the
    same frames read without calibration, so the figure says whether learning helps."""
    learned, plain = Tally(), Tally()
    for sess, drops in sorted(by_session.items()):
        ref = load_image(folder / sess / "empty.jpg")
        cal = None
        for label in sorted(drops, key=lambda x: x["file"]):
            img = load_image(folder / label["file"])
            if cal is not None:
                for tally, calibration in ((learned, cal), (plain, None)):
                    reading, ms, cpu, _ = _timed_count(img, ref, calibration)
                    tally.add(label, reading, ms, img.shape[1], cpu)
            if sum(label["counts"].values()):
                # a drop the counter miscounts is not learned from (nor on the device)
                with contextlib.suppress(VisionError):
                    cal = calibrate_from_drop(img, label["counts"], ref, calibration=cal)
    return (learned.report("all     learning from every drop so far (as the device does)")
            + plain.report("all     the same frames, nothing learned"))


def run(folder: Path, split: str, verbose: bool, calibrate: bool = False) -> list[str]:
    cv2.setNumThreads(1)
    labels = json.loads((folder / "labels.json").read_text())["images"]
    if split == "dev":
        labels = [x for x in labels if x["session"] in DEV_SESSIONS]
    elif split == "holdout":
        labels = [x for x in labels if x["session"] not in DEV_SESSIONS]
    refs: dict[str, np.ndarray] = {}
    tallies = {(s, m): Tally() for s in ("dev", "holdout") for m in ("ref", "noref")}
    for label in labels:
        img = load_image(folder / label["file"])
        sess = label["session"]
        if sess not in refs:
            refs[sess] = load_image(folder / sess / "empty.jpg")
        part = "dev" if sess in DEV_SESSIONS else "holdout"
        for mode in ("ref", "noref"):
            ref = refs[sess] if mode == "ref" else None
            reading, ms, cpu, error = _timed_count(img, ref)
            if verbose and error is not None:
                print(f"  {label['file']} [{mode}]: {error}", file=sys.stderr)
            tallies[(part, mode)].add(label, reading, ms, img.shape[1], cpu)
            if verbose and reading is not None and not _exact(reading.counts, label):
                got = {c: v for c, v in reading.counts.items() if v}
                want = {c: v for c, v in label["counts"].items() if v}
                print(f"  {label['file']} [{mode}] got {got} want {want}", file=sys.stderr)

    lines = [f"benchmark: {folder} ({len(labels)} images, split {split}, 1 thread; "
             f"dev = {'-'.join(DEV_SESSIONS[::len(DEV_SESSIONS) - 1])}, holdout = the rest)"]
    for mode, name in (("ref", "with empty.jpg reference"), ("noref", "without reference")):
        both = Tally()
        for part in ("dev", "holdout"):
            t = tallies[(part, mode)]
            if t.n:
                lines += t.report(f"{part:<7} {name}")
            both.n += t.n
            both.exact += t.exact
            both.missed += t.missed
            both.extra += t.extra
            both.wrong += t.wrong
            both.failed += t.failed
            both.wrong_flagged += t.wrong_flagged
            both.right_flagged += t.right_flagged
            both.confusion += t.confusion
            both.ms += t.ms
            both.cpu += t.cpu
        lines += both.report(f"{'all':<7} {name}")
        lines.append(f"per-colour confusion ({name}, cubes matched by position):")
        lines += ["  " + r for r in both.confusion_lines()]
    if calibrate:
        lines += calibrated_lines(folder, labels)
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    lines.append(f"peak RSS {peak_kb / 1024:.0f} MB")
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vision.bench", description=__doc__.split("\n")[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--split", choices=("dev", "holdout", "all"), default="all")
    ap.add_argument("-v", "--verbose", action="store_true", help="list every wrong image")
    ap.add_argument("--calibrate", action="store_true",
                    help="also: calibrate each session from its first drop, score the rest; "
                    "and learn from every drop in turn, as the device does")
    args = ap.parse_args(argv)
    if not (args.folder / "labels.json").is_file():
        print(f"no labels.json in {args.folder}", file=sys.stderr)
        return 2
    for line in run(args.folder, args.split, args.verbose, args.calibrate):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
