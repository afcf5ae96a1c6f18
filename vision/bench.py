"""Benchmark the cube counter on labelled pictures: ``python -m vision.bench DIR [DIR...]``.

Why: "good enough" has to be a number, and a learned detector needs more numbers than a share
of right trays: which cubes it misses or invents (and how many of those misses the picture does
not show at all: ``vision.train.unseen``), whether its confidence means what it says,
whether it survives what real cameras do to a picture (``--perturb``), whether a table's
confirmed drops help (``--calibrate``), and how fast it is on one core. Each DIR holds one
``labels.json`` or several in sub-folders (``vision.train.data.load_samples``); every picture
is counted with its session's ``empty.jpg`` as reference and without. Scoring is the training
code's (``fair_counts``, ``is_exact``, ``match``), so bench and validation agree.

The figures are the drops'. Each set-up's ``empty.jpg`` is scored on a line of its own: with
the reference it is read against itself, and a set rendered with two drops a set-up is a third
empty trays, so counting them in would flatter the share of exact trays
(``scripts/validate-models.py``, which judges retrained models, reads drops only too).
"""

from __future__ import annotations

import os

# before numpy and OpenCV load: one core, as on the device
os.environ["OMP_NUM_THREADS"] = "1"
os.environ["OPENBLAS_NUM_THREADS"] = "1"

import argparse
import itertools
import json
import resource
import sys
import time
from collections import Counter
from pathlib import Path

import cv2
import numpy as np

from vision.calibration import calibrate_from_drop
from vision.counter import count_cubes, load_image
from vision.detector import MODEL_DIR, CubeDetector
from vision.errors import VisionError
from vision.overlay import TAGS, draw_overlay
from vision.reading import COLOURS
from vision.train import unseen
from vision.train.data import (
    LOW_VISIBILITY_PX,
    MATCH_RADIUS_FRAC,
    Sample,
    fair_counts,
    find_label_files,
    is_exact,
    load_samples,
    match,
)

MODES = {"ref": "with reference", "noref": "without reference"}
BINS = (0.0, 0.5, 0.7, 0.8, 0.9, 0.95, 0.99, 1.0)
TRUTH_MARK = (255, 0, 255)  # failure pictures: a labelled cube missed or read in a wrong colour
# a clearly visible cube showing fewer pixels than this at 1152 x 648 (a whole cube shows
# ~1,300-1,700) is partly seen: mostly under another cube, some behind a wall or the tower
PARTLY_SEEN_PX = 750


def _jpeg(q):
    return lambda im: cv2.imdecode(cv2.imencode(".jpg", im, [cv2.IMWRITE_JPEG_QUALITY, q])[1], 1)


def _gain(b, g, r):
    return lambda im: np.clip(im * np.float32([b, g, r]) + 0.5, 0, 255).astype(np.uint8)


def _noise(im):
    seed = int(im[::7, ::5].sum())  # repeatable, and not the same noise on picture and reference
    d = np.random.default_rng(seed).integers(-1, 2, im.shape, dtype=np.int16)
    return np.clip(im.astype(np.int16) + d, 0, 255).astype(np.uint8)


def _resize(w, h):
    return lambda im: cv2.resize(im, (w, h), interpolation=cv2.INTER_AREA
                                 if w < im.shape[1] else cv2.INTER_LINEAR)


# name -> function on a BGR picture. Each is something the camera or its set-up does, so it is
# applied to the picture and to the empty-tray reference alike (same camera, same mount).
PERTURBATIONS = {
    "jpeg q95": _jpeg(95), "jpeg q30": _jpeg(30), "noise +-1": _noise,
    "brightness x0.6": _gain(0.6, 0.6, 0.6), "brightness x1.4": _gain(1.4, 1.4, 1.4),
    "warm cast": _gain(0.8, 1.0, 1.15), "cool cast": _gain(1.15, 1.0, 0.85),
    "resize 640x360": _resize(640, 360), "resize 1920x1080": _resize(1920, 1080),
    "rotate 180": lambda im: np.ascontiguousarray(np.rot90(im, 2)),
}


def _pct(k: int, n: int) -> str:
    return f"{k}/{n} = {100.0 * k / n:.1f} %" if n else "0/0 = n/a"


BY_COLOUR_ROWS = ("trays off", "only it", "missed", "extra")


class Tally:
    """What one way of counting (one mode, one perturbation) did over a data set."""

    def __init__(self):
        self.n = self.exact = self.failed = 0
        self.missed = self.extra = self.wrong_colour = self.visible = 0
        self.confusion = np.zeros((len(COLOURS), len(COLOURS)), int)
        # per colour: wrong trays with its count off, those with only its count off, cubes of
        # it missed, cubes read as it where none is (rows in BY_COLOUR_ROWS' order)
        self.by_colour = np.zeros((len(BY_COLOUR_ROWS), len(COLOURS)), int)
        self.cubes: list[tuple[float, bool]] = []  # (confidence, right) of every counted cube
        self.flags = {"wrong": [0, 0], "right": [0, 0]}  # [said uncertain, of]
        self.by_mount: dict[str, list[int]] = {}  # mount -> [exact, n]
        self.wall: list[float] = []
        self.passes: list[int] = []  # network passes per timed reading (> 1: more views)
        self.cpu: list[float] = []
        self.wrong: list[str] = []
        self.failures: list[str] = []
        self.outline = [0, 0, []]  # [found, of labelled, mean corner errors as % of the diagonal]
        # clearly visible cubes the picture does not show (vision.train.unseen): [of them,
        # missed]; pictures that could be judged so: [exact if those went either way, of]
        self.unshown = [0, 0]
        self.excused = [0, 0]
        self.partly_seen = [0, 0]  # clearly visible cubes under PARTLY_SEEN_PX: [of them, missed]

    def add(self, sample: Sample, name: str, mount: str, reading, error, size=None,
            to_xy=None, zoom: float = 1.0, unshown: set[int] | None = None) -> bool:
        """Score one reading (None with ``error`` when it failed); whether it was exact.
        ``size``: the labelled picture's (w, h), which its ``visible_px`` are counted in (a
        resized copy has the same cubes barely visible); ``to_xy`` maps labelled positions
        onto the picture counted, ``zoom`` times as wide; ``unshown``: which in-tray cubes
        the picture does not show (``vision.train.unseen``), when that could be told."""
        self.n += 1
        tally = self.by_mount.setdefault(mount, [0, 0])
        tally[1] += 1
        if reading is None:
            self.failed += 1
            self.failures.append(f"{name}: failed: {error}")
            return False
        w, h = size
        fair = fair_counts(sample, w, h)
        ok = is_exact(reading.counts, fair)
        self.exact += ok
        tally[0] += ok
        flag = self.flags["right" if ok else "wrong"]
        flag[0] += reading.uncertain
        flag[1] += 1
        if not ok:
            got = {c: v for c, v in reading.counts.items() if v}
            want = {c: (lo if lo == hi else f"{lo}-{hi}") for c, (lo, hi) in fair.items() if hi}
            self.wrong.append(f"{name}: read {got or 'empty'}, truth {want or 'empty'}"
                              + (" (said uncertain)" if reading.uncertain else ""))
            off = [i for i, c in enumerate(COLOURS)
                   if not fair[c][0] <= reading.counts.get(c, 0) <= fair[c][1]]
            self.by_colour[0, off] += 1
            if len(off) == 1:
                self.by_colour[1, off[0]] += 1
        if sample.corners is not None and to_xy is None:
            self.add_outline(sample, reading, w, h)
        labelled, pairs, low = pair_cubes(sample, reading, w, h, to_xy, zoom)
        self.visible += sum(c.visible_px >= low for c in labelled)
        found = set(pairs.values())
        partly = PARTLY_SEEN_PX * low / LOW_VISIBILITY_PX
        for j, c in enumerate(labelled):
            if c.visible_px >= low and j not in found:
                self.missed += 1
                self.by_colour[2, c.colour] += 1
            if low <= c.visible_px < partly:
                self.partly_seen[0] += 1
                self.partly_seen[1] += j not in found
        if unshown is not None:
            self.add_unshown(reading.counts, fair, labelled, unshown, found)
        for i, cube in enumerate(reading.cubes):
            read = COLOURS.index(cube.colour)
            right = False
            if i in pairs:
                truth = labelled[pairs[i]].colour
                self.confusion[truth, read] += 1
                right = truth == read
                self.wrong_colour += not right
            else:
                self.extra += 1
                self.by_colour[3, read] += 1
            self.cubes.append((cube.confidence, right))
        return ok

    def add_unshown(self, counts, fair, labelled, unshown: set[int], found: set[int]) -> None:
        """Tally the cubes the picture does not show, and whether the tray would be exact if
        they went either way (each lowers its colour's fewest by one)."""
        self.unshown[0] += len(unshown)
        self.unshown[1] += len(unshown - found)
        excused = Counter(COLOURS[labelled[j].colour] for j in unshown)
        loose = {c: (lo - excused[c], hi) for c, (lo, hi) in fair.items()}
        self.excused[0] += is_exact(counts, loose)
        self.excused[1] += 1

    def add_outline(self, sample: Sample, reading, w: int, h: int) -> None:
        """How near the tray's outline came to the labelled floor corners (each found corner
        to its nearest labelled one), in % of the picture's diagonal."""
        self.outline[1] += 1
        if reading.tray_corners is None:
            return
        self.outline[0] += 1
        truth = np.array(sample.corners, float)
        found = np.array(reading.tray_corners, float)
        errors = [float(np.min(np.hypot(*(truth - p).T))) for p in found]
        self.outline[2].append(100.0 * float(np.mean(errors)) / float(np.hypot(w, h)))

    def summary(self) -> dict:
        return {"n": self.n, "exact": self.exact, "failed": self.failed, "missed": self.missed,
                "extra": self.extra, "wrong_colour": self.wrong_colour,
                "clearly_visible": self.visible, "confusion": self.confusion.tolist(),
                "unshown": {"cubes": self.unshown[0], "missed": self.unshown[1]},
                "partly_seen": {"cubes": self.partly_seen[0], "missed": self.partly_seen[1]},
                "exact_if_unshown_either_way": {"exact": self.excused[0], "n": self.excused[1]},
                "by_colour": {row: dict(zip(COLOURS, map(int, counts), strict=True))
                              for row, counts in zip(BY_COLOUR_ROWS, self.by_colour,
                                                     strict=True)},
                "by_mount": self.by_mount, "reliability": self.reliability(),
                "uncertain_flag": self.flags, "wrong_pictures": self.wrong,
                "outline": {"found": self.outline[0], "labelled": self.outline[1],
                            "corner_error_pct": self.outline[2]},
                "failures": self.failures}

    def reliability(self) -> list[dict]:
        out = []
        for lo, hi in itertools.pairwise(BINS):
            sel = [(c, r) for c, r in self.cubes if lo <= c < hi or (hi == 1.0 and c == 1.0)]
            out.append({"bin": [lo, hi], "n": len(sel),
                        "mean_confidence": float(np.mean([c for c, _ in sel])) if sel else None,
                        "right": float(np.mean([r for _, r in sel])) if sel else None})
        return out


def _count(image, reference, detector, calibration=None):
    """(reading or None, error or None, wall ms, cpu ms); a refused picture never stops us."""
    w0, c0 = time.perf_counter(), time.process_time()
    try:
        reading, error = count_cubes(image, reference, calibration=calibration,
                                     detector=detector), None
    except (VisionError, cv2.error) as exc:
        reading, error = None, str(exc).strip().splitlines()[-1]
    return reading, error, 1000 * (time.perf_counter() - w0), 1000 * (time.process_time() - c0)


def _mounts(root: Path) -> dict[str, str]:
    """Session key (as ``load_samples`` makes it) -> camera mount, where the labels say."""
    out = {}
    for file in find_label_files(root):
        for rec in json.loads(file.read_text())["images"]:
            mount = ((rec.get("session_meta") or {}).get("camera") or {}).get("mount")
            if mount:
                out[f"{file.parent}:{rec['session']}"] = str(mount)
    return out


def pair_cubes(sample: Sample, reading, w: int, h: int, to_xy=None, zoom: float = 1.0):
    """The labelled in-tray cubes, {read cube index: labelled index} for the pairs found, and
    the visible pixels under which a labelled cube may go either way: one scoring for the
    tallies and the failure pictures."""
    labelled = [c for c in sample.cubes if c.in_tray]
    xy = [to_xy(c.x, c.y) if to_xy else (c.x, c.y) for c in labelled]
    pairs = dict(match([(c.x, c.y) for c in reading.cubes], xy, MATCH_RADIUS_FRAC * w * zoom))
    return labelled, pairs, sample.low_visibility_px(w, h)


def mark_truth(picture: np.ndarray, sample: Sample, reading) -> list[str]:
    """Draw on a failure picture what the overlay alone cannot show: each clearly visible
    labelled cube the reading missed (a magenta square, "missed" and its true colour) and each
    cube read in the wrong colour ("was" and its true colour). Why: a wrong reading's picture
    should say where it went wrong without the labels beside it. Returns the marks' words."""
    h, w = picture.shape[:2]
    labelled, pairs, low = pair_cubes(sample, reading, w, h)
    half = max(4, round(0.012 * w))
    marks = []
    found = set(pairs.values())
    for j, cube in enumerate(labelled):
        if cube.visible_px >= low and j not in found:
            x, y = round(cube.x), round(cube.y)
            cv2.rectangle(picture, (x - half, y - half), (x + half, y + half), TRUTH_MARK, 2)
            marks.append((f"missed {TAGS[COLOURS[cube.colour]]}", (x - half, y + half + 2)))
    for i, j in pairs.items():
        truth = COLOURS[labelled[j].colour]
        if reading.cubes[i].colour != truth:
            x, y = round(reading.cubes[i].x), round(reading.cubes[i].y)
            marks.append((f"was {TAGS[truth]}", (x - half, y + half + 2)))
    scale = max(0.3, 0.45 * w / 1152)
    for text, (x, y) in marks:
        (tw, th), base = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, scale, 1)
        x, y = min(max(x, 0), w - tw - 2), min(max(y, 0), h - th - base - 2)
        cv2.rectangle(picture, (x, y), (x + tw + 2, y + th + base + 2), TRUTH_MARK, -1)
        cv2.putText(picture, text, (x + 1, y + th + 1), cv2.FONT_HERSHEY_SIMPLEX, scale,
                    (255, 255, 255), 1, cv2.LINE_AA)
    return [text for text, _ in marks]


class Bench:
    """One data set: loads each picture and reference once, counts in every asked way."""

    def __init__(self, root: Path, detector, limit: int | None):
        self.root = root
        self.detector = detector
        self.samples = load_samples(root)[:limit]
        self.mounts = _mounts(root)
        self.refs: dict[Path, tuple] = {}  # empty.jpg -> (image or None, error)
        self.tallies = {m: Tally() for m in MODES}  # the drops
        self.empty_trays = {m: Tally() for m in MODES}  # each set-up's empty.jpg
        self.perturbed = {(p, m): Tally() for p in PERTURBATIONS for m in MODES}
        # (exact, said it was unsure or could not read) of each picture's plain reading
        self.exact_plain: dict[tuple[Path, str], tuple[bool, bool]] = {}
        self.sizes: set[tuple[int, int]] = set()
        self.failures: Path | None = None  # where to draw wrong readings, when asked

    def save_failure(self, sample: Sample, mode: str, image, reading) -> None:
        """The wrong reading drawn on its picture, with the truth in the file name."""
        truth = "-".join(f"{c}{n}" for c, n in sample.counts.items() if n)
        read = "-".join(f"{c}{n}" for c, n in reading.counts.items() if n)
        stem = self.name(sample).replace("/", "_").rsplit(".", 1)[0]
        self.failures.mkdir(parents=True, exist_ok=True)
        out = self.failures / f"{stem}_{mode}_truth-{truth or 'none'}_read-{read or 'none'}.jpg"
        picture = draw_overlay(image, reading, tray_corners=reading.tray_corners)
        mark_truth(picture, sample, reading)
        cv2.imwrite(str(out), picture, [cv2.IMWRITE_JPEG_QUALITY, 85])

    def name(self, sample: Sample) -> str:
        return str(sample.path.relative_to(self.root))

    def reference(self, sample: Sample):
        if sample.empty_path is None:
            return None, "the session has no empty.jpg"
        if sample.empty_path not in self.refs:
            try:
                self.refs[sample.empty_path] = (load_image(sample.empty_path), None)
            except VisionError as exc:
                self.refs[sample.empty_path] = (None, f"reference: {exc}")
        return self.refs[sample.empty_path]

    def run(self, perturb: bool) -> None:
        for sample in self.samples:
            mount = self.mounts.get(sample.session, "?")
            try:
                image, error = load_image(sample.path), None
            except VisionError as exc:
                image, error = None, str(exc)
            ref, ref_error = self.reference(sample)
            hidden = None if image is None or ref is None else unseen.unshown(sample, image, ref)
            empty = sample.is_empty_frame
            for mode, tally in (self.empty_trays if empty else self.tallies).items():
                name = f"{self.name(sample)} [{mode}]"
                use = ref if mode == "ref" else None
                if image is None or (mode == "ref" and ref is None):
                    why = error or ref_error
                    self.exact_plain[(sample.path, mode)] = (
                        tally.add(sample, name, mount, None, why), True)
                    for p in PERTURBATIONS if perturb and not empty else ():
                        self.perturbed[(p, mode)].add(sample, f"{name[:-1]}, {p}]", mount,
                                                      None, why)
                    continue
                reading, err, wall, cpu = _count(image, use, self.detector)
                h, w = image.shape[:2]
                self.sizes.add((w, h))
                right = tally.add(sample, name, mount, reading, err, (w, h), unshown=hidden)
                self.exact_plain[(sample.path, mode)] = (
                    right, reading is None or reading.uncertain)
                if self.failures is not None and reading is not None and not right:
                    self.save_failure(sample, mode, image, reading)
                tally.wall.append(wall)
                tally.cpu.append(cpu)
                tally.passes.append(self.detector.last_passes)
                if perturb and not empty:
                    self.run_perturbed(sample, name, mount, mode, image, use)

    def run_perturbed(self, sample, name, mount, mode, image, ref) -> None:
        h, w = image.shape[:2]
        for p, fn in PERTURBATIONS.items():
            img2 = fn(image)
            ref2 = None if ref is None else fn(ref)
            h2, w2 = img2.shape[:2]
            if p == "rotate 180":
                def to_xy(x, y, w=w, h=h):
                    return w - x, h - y
            else:
                def to_xy(x, y, sx=w2 / w, sy=h2 / h):
                    return x * sx, y * sy
            reading, err, _, _ = _count(img2, ref2, self.detector)
            self.perturbed[(p, mode)].add(sample, f"{name[:-1]}, {p}]", mount, reading, err,
                                          (w, h), to_xy, w2 / w)

    def calibrate(self) -> dict:
        """Each session's drops in order: count with what the session learned so far, then
        teach the drop's true contents, as the players' confirmation does on the device.
        "unlearned" is the plain run's score of the same drops."""
        # "quiet": wrong readings that do not say they are unsure; "doubted": right ones that do
        res = {m: {"learned": 0, "unlearned": 0, "n": 0, "learned_quiet": 0,
                   "unlearned_quiet": 0, "learned_doubted": 0, "unlearned_doubted": 0}
               for m in MODES}
        taught = drops = 0
        sessions: dict[str, list[Sample]] = {}
        for s in self.samples:
            if not s.is_empty_frame:
                sessions.setdefault(s.session, []).append(s)
        for group in sessions.values():
            cal = None
            for k, sample in enumerate(group):
                drops += 1
                try:
                    image = load_image(sample.path)
                except VisionError:
                    image = None
                ref, _ = self.reference(sample)
                for mode, r in res.items() if k > 0 else ():
                    plain = self.exact_plain[(sample.path, mode)]
                    r["n"] += 1
                    _score(r, "unlearned", *plain)
                    if cal is None or image is None or (mode == "ref" and ref is None):
                        _score(r, "learned", *plain)  # nothing learned yet, or nothing to count
                        continue
                    reading, _, _, _ = _count(image, ref if mode == "ref" else None,
                                              self.detector, cal)
                    h, w = image.shape[:2]
                    _score(r, "learned", reading is not None and is_exact(
                        reading.counts, fair_counts(sample, w, h)),
                        reading is None or reading.uncertain)
                if image is None:
                    continue
                try:
                    cal = calibrate_from_drop(image, sample.counts, ref, calibration=cal,
                                              detector=self.detector)
                    taught += 1
                except (VisionError, cv2.error):
                    pass  # a miscounted or one-colour drop teaches nothing, as on the device
        return {"modes": res, "taught": taught, "drops": drops}


def _score(r: dict, key: str, exact: bool, said: bool) -> None:
    """Count one reading under ``key``: exact, wrong without saying it was unsure ("quiet"),
    right but saying it was ("doubted")."""
    r[key] += exact
    r[f"{key}_quiet"] += not exact and not said
    r[f"{key}_doubted"] += exact and said


def _timing(t: Tally) -> dict:
    if not t.wall:
        return {}
    out = {k: {"median": float(np.median(v)), "p95": float(np.percentile(v, 95))}
           for k, v in (("wall_ms", t.wall), ("cpu_ms", t.cpu))}
    out["more_views_read"] = sum(n > 1 for n in t.passes)
    return out


def report(b: Bench, perturb: bool, calib: dict | None, verbose: bool) -> tuple[list, dict]:
    sessions = len({s.session for s in b.samples})
    empties = sum(s.is_empty_frame for s in b.samples)
    drops = len(b.samples) - empties
    trays = f"{empties} empty tray" + "s" * (empties != 1)
    lines = [f"== {b.root}: {len(b.samples)} pictures ({drops} drops, {trays}), "
             f"{sessions} sessions; the figures are the drops'"]
    out: dict = {"dir": str(b.root), "pictures": len(b.samples), "drops": drops,
                 "empty_trays": empties, "sessions": sessions}
    for mode, t in b.tallies.items():
        mounts = "" if set(t.by_mount) <= {"?"} else "  (" + ", ".join(
            f"{m} {_pct(*v)}" for m, v in sorted(t.by_mount.items())) + ")"
        lines.append(f"exact tray {MODES[mode]:<17}: {_pct(t.exact, t.n)}{mounts}")
    if empties:
        lines.append("empty trays read empty (each set-up's empty.jpg; with reference it is "
                     "its own): " + " | ".join(f"{MODES[m]} {_pct(t.exact, t.n)}"
                                               for m, t in b.empty_trays.items()))
    for mode, t in b.tallies.items():
        lines.append(f"cubes {MODES[mode]:<17}: missed {t.missed} of {t.visible} clearly "
                     f"visible, extra {t.extra}, wrong colour {t.wrong_colour}; "
                     f"failed pictures {t.failed}")
    for mode, t in b.tallies.items():
        lines.append(f"partly seen {MODES[mode]:<17}: missed {t.partly_seen[1]} of "
                     f"{t.partly_seen[0]} clearly visible cubes that show under {PARTLY_SEEN_PX} "
                     "pixels at 1152 x 648 (most lie partly under another cube)")
    for mode, t in b.tallies.items():
        if t.excused[1]:
            lines.append(
                f"unshown cubes {MODES[mode]:<17}: {t.unshown[0]} clearly visible cubes the "
                f"picture does not show (vision.train.unseen), {t.unshown[1]} missed; exact "
                f"trays if they may go either way {_pct(*t.excused)}")
    for mode, t in b.tallies.items():
        lines.append(f"confusion {MODES[mode]} (matched cubes; rows truth, columns read):")
        lines.append("  " + " " * 7 + "".join(f"{c[:6]:>7}" for c in COLOURS))
        lines += [f"  {c:<7}" + "".join(f"{v:>7d}" for v in t.confusion[i])
                  for i, c in enumerate(COLOURS)]
    for mode, t in b.tallies.items():
        lines.append(f"by colour {MODES[mode]} (trays off: wrong trays with its count wrong; "
                     "only it: no other count wrong; missed: its clearly visible cubes not "
                     "found; extra: read as it where no cube is):")
        lines.append("  " + " " * 9 + "".join(f"{c[:6]:>7}" for c in COLOURS))
        lines += [f"  {row:<9}" + "".join(f"{v:>7d}" for v in t.by_colour[i])
                  for i, row in enumerate(BY_COLOUR_ROWS)]
    lines.append("reliability (counted cubes; right = on a labelled in-tray cube, same colour):")
    lines.append(f"  {'confidence':<11}" + "".join(f"| {MODES[m]:<24}" for m in MODES))
    lines.append(f"  {'':<11}" + f"| {'n':>5} {'mean':>6} {'right':>7}     " * 2)
    rel = {m: t.reliability() for m, t in b.tallies.items()}
    for i, (lo, hi) in enumerate(itertools.pairwise(BINS)):
        cells = []
        for m in MODES:
            r = rel[m][i]
            mean = f"{r['mean_confidence']:.3f}" if r["n"] else "-"
            right = f"{100 * r['right']:.1f} %" if r["n"] else "-"
            cells.append(f"| {r['n']:>5} {mean:>6} {right:>7}     ")
        lines.append(f"  {f'{lo:.2f}-{hi:.2f}':<11}" + "".join(cells))
    for mode, t in b.tallies.items():
        found, labelled, errors = t.outline
        if labelled:
            e = np.array(errors) if errors else np.array([np.nan])
            lines.append(
                f"tray outline {MODES[mode]:<17}: found {_pct(found, labelled)}; mean corner "
                f"error median {np.median(e):.2f} %, p95 {np.percentile(e, 95):.2f} %, "
                f"worst {e.max():.2f} % of the diagonal "
                f"(at 1152 x 648: {np.median(e) * 13.22:.0f} / {np.percentile(e, 95) * 13.22:.0f}"
                f" / {e.max() * 13.22:.0f} px)")
    for mode, t in b.tallies.items():
        (fw, nw), (fr, nr) = t.flags["wrong"], t.flags["right"]
        lines.append(f"uncertain flag {MODES[mode]:<17}: wrong trays said uncertain "
                     f"{_pct(fw, nw)}; right trays said uncertain {_pct(fr, nr)}")
    sizes = ", ".join(f"{w}x{h}" for w, h in sorted(b.sizes)) or "-"
    for mode, t in b.tallies.items():
        tm = _timing(t)
        if tm:
            lines.append(
                f"speed {MODES[mode]:<17}: wall median {tm['wall_ms']['median']:.1f} ms p95 "
                f"{tm['wall_ms']['p95']:.1f} ms, cpu median {tm['cpu_ms']['median']:.1f} ms "
                f"p95 {tm['cpu_ms']['p95']:.1f} ms ({len(t.wall)} pictures, {sizes}, 1 thread; "
                f"more views read for {tm['more_views_read']})")
    out.update({m: {**t.summary(), "timing": _timing(t)} for m, t in b.tallies.items()})
    out["empty"] = {m: {"n": t.n, "exact": t.exact, "extra": t.extra, "failed": t.failed,
                        "wrong_pictures": t.wrong} for m, t in b.empty_trays.items()}
    if perturb:
        lines.append("perturbed (picture and reference alike): exact with reference | "
                     "without reference, points vs unperturbed")
        out["perturb"] = {}
        for p in PERTURBATIONS:
            cells, fig = [], {}
            for m, base in b.tallies.items():
                t = b.perturbed[(p, m)]
                delta = 100.0 * (t.exact / t.n - base.exact / base.n) if t.n else 0.0
                cells.append(f"{_pct(t.exact, t.n)} ({delta:+.1f})")
                fig[m] = {"n": t.n, "exact": t.exact, "delta_points": delta,
                          "missed": t.missed, "extra": t.extra, "wrong_colour": t.wrong_colour}
            lines.append(f"  {p:<17}: " + " | ".join(cells))
            out["perturb"][p] = fig
    if calib is not None:
        lines.append(f"calibration learning: {calib['taught']} of {calib['drops']} drops taught;"
                     " drops after each session's first:")
        for mode, r in calib["modes"].items():
            lines.append(f"  {MODES[mode]:<17}: learned {_pct(r['learned'], r['n'])}, "
                         f"unlearned {_pct(r['unlearned'], r['n'])}; wrong and not flagged: "
                         f"learned {r['learned_quiet']}, unlearned {r['unlearned_quiet']}; "
                         f"right and flagged: learned {r['learned_doubted']}, unlearned "
                         f"{r['unlearned_doubted']}")
        out["calibrate"] = calib
    counted = [*b.tallies.values(), *b.empty_trays.values()]
    failures = sorted({f for t in counted for f in t.failures})
    lines += [f"could not count {f}" for f in failures]
    if verbose:
        wrong = [w for t in counted for w in t.wrong]
        wrong += [w for t in b.perturbed.values() for w in t.wrong + t.failures]
        lines.append(f"wrong pictures ({len(wrong)}):")
        lines += [f"  {w}" for w in wrong]
    return lines, out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vision.bench",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("dirs", nargs="+", type=Path, help="labelled data sets (labels.json)")
    ap.add_argument("--perturb", action="store_true", help="also count perturbed copies")
    ap.add_argument("--calibrate", action="store_true",
                    help="also learn each session's colours drop by drop, as the device does")
    ap.add_argument("--limit", type=int, help="only the first N pictures of each data set")
    ap.add_argument("-v", "--verbose", action="store_true", help="list every wrong picture")
    ap.add_argument("--json", type=Path, help="write every figure to this file")
    ap.add_argument("--failures", type=Path, help="draw each wrong reading into this folder")
    ap.add_argument("--model", type=Path, help="model folder (default: the packaged model)")
    args = ap.parse_args(argv)
    cv2.setNumThreads(1)
    model_dir = args.model or MODEL_DIR
    try:
        detector = CubeDetector(model_dir)
    except VisionError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    onnx_mb = (model_dir / "model.onnx").stat().st_size / 2**20
    trained = detector.config.trained_on
    print(f"OpenCV {cv2.__version__}; model {model_dir} (model.onnx {onnx_mb:.2f} MB"
          + (f", trained on {trained}" if trained else "") + "); 1 thread")
    figures = {"opencv": cv2.__version__, "model": str(model_dir), "model_mb": onnx_mb,
               "sets": []}
    status = 0
    for root in args.dirs:
        try:
            bench = Bench(root, detector, args.limit)
            bench.failures = None if args.failures is None else args.failures / root.name
        except (FileNotFoundError, ValueError, KeyError) as exc:
            print(f"== {root}: cannot read labels: {exc}", file=sys.stderr)
            status = 2
            continue
        bench.run(args.perturb)
        calib = bench.calibrate() if args.calibrate else None
        lines, fig = report(bench, args.perturb, calib, args.verbose)
        print("\n".join(line.rstrip() for line in lines), flush=True)
        figures["sets"].append(fig)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {peak:.0f} MB")
    figures["peak_rss_mb"] = peak
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))
    return status


if __name__ == "__main__":
    sys.exit(main())
