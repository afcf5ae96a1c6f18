"""Labelled tray pictures, read from any folder in the ``labels.json`` format.

Why: training, validation and the benchmark must agree on what a sample is and which set-up
(session) it belongs to, since every split is by set-up, never by picture. A folder may hold
one ``labels.json`` or several in sub-folders (as ``trays-rendered-train/{public,clutter}``);
each session is keyed by the labels file's folder and its session name, so two batches that
both have an ``s000`` stay two set-ups. Which side of a split a session lands on is decided by
the name of that folder alone (``TRAIN-150:s000``), not by the path as a command line spells it,
so a folder named relatively or absolutely, or copied elsewhere (``scripts/gpu-train.sh pack``),
splits the same way.
"""

from __future__ import annotations

import json
import math
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

from vision.reading import COLOURS

# A cube the camera sees less of than this (pixels at 1152 x 648; scaled with the picture's
# area) may be counted either way: it is behind a wall or under another cube.
LOW_VISIBILITY_PX = 150
LOW_VISIBILITY_REF_AREA = 1152 * 648


@dataclass(frozen=True)
class LabelledCube:
    colour: int  # index into COLOURS
    x: float
    y: float
    in_tray: bool
    visible_px: int
    # the centre of the cube's own pixels, where labels have it (``visible_centres``): for a
    # cube partly under another, (x, y), its projected centre, is on the cube above
    visible_xy: tuple[float, float] | None = None

    def centre(self, visible: bool) -> tuple[float, float]:
        """Where the network is taught the cube is: its projected centre, or with ``visible``
        the centre of its own pixels where the labels have it."""
        if visible and self.visible_xy is not None:
            return self.visible_xy
        return self.x, self.y


@dataclass(frozen=True)
class Sample:
    """One labelled picture. ``corners`` are the tray floor's four corners when the labels
    have them (renders made through ``vision/train/render.py``)."""

    path: Path
    session: str
    counts: dict[str, int]
    cubes: tuple[LabelledCube, ...]
    empty_path: Path | None
    corners: tuple[tuple[float, float], ...] | None
    size: tuple[int, int] | None  # (width, height) when known without reading the image
    split_name: str = ""  # what the split hashes (``folder-name:session``); "" = ``session``

    @property
    def split_key(self) -> str:
        return self.split_name or self.session

    @property
    def is_empty_frame(self) -> bool:
        return self.path.name == "empty.jpg"

    def low_visibility_px(self, width: int, height: int) -> float:
        return LOW_VISIBILITY_PX * (width * height) / LOW_VISIBILITY_REF_AREA


def find_label_files(root: Path) -> list[Path]:
    root = Path(root)
    if (root / "labels.json").is_file():
        return [root / "labels.json"]
    return sorted(root.rglob("labels.json"))


def _read_labels(path: Path, tries: int = 5) -> list[dict]:
    """The records of a labels file; a renderer rewriting it right now gets a moment."""
    for attempt in range(tries):
        try:
            return json.loads(path.read_text())["images"]
        except json.JSONDecodeError:
            if attempt == tries - 1:
                raise
            time.sleep(0.5)
    return []


def _cube(label: dict) -> LabelledCube:
    seen = label.get("visible_xy")
    return LabelledCube(COLOURS.index(label["colour"]), float(label["xy"][0]),
                        float(label["xy"][1]), bool(label["in_tray"]),
                        int(label.get("visible_px", 10**6)),
                        None if seen is None else (float(seen[0]), float(seen[1])))


def load_samples(root: Path) -> list[Sample]:
    """Every labelled picture under ``root`` (sorted by file name, so runs are repeatable)."""
    files = find_label_files(root)
    if not files:
        raise FileNotFoundError(f"no labels.json in or under {root}")
    out: list[Sample] = []
    for labels_file in files:
        folder = labels_file.parent
        records = _read_labels(labels_file)
        corners_by_session: dict[str, tuple] = {}
        for rec in records:
            meta = rec.get("session_meta") or {}
            if "tray_corners_px" in meta:
                corners_by_session[rec["session"]] = tuple(
                    (float(x), float(y)) for x, y in meta["tray_corners_px"])
        for rec in records:
            path = folder / rec["file"]
            if not path.is_file():
                continue  # a render that was interrupted before its picture was written
            session = rec["session"]
            empty = folder / session / "empty.jpg"
            cubes = tuple(_cube(c) for c in rec.get("cubes", ()))
            out.append(Sample(
                path=path,
                session=f"{folder}:{session}",
                counts={c: int(rec["counts"].get(c, 0)) for c in COLOURS},
                cubes=cubes,
                empty_path=empty if empty.is_file() else None,
                corners=corners_by_session.get(session),
                size=None,
                split_name=f"{folder.resolve().name}:{session}",
            ))
    out.sort(key=lambda s: str(s.path))
    return out


def without_visible_centres(samples: list[Sample]) -> list[Path]:
    """The labels folders holding a cube the picture shows but no ``visible_xy`` for it: labels
    rendered before ``vision/train/render.py`` added it, which ``--centres visible`` cannot use
    (mixed with the projected centres, a partly hidden cube would be taught at two places)."""
    return sorted({Path(s.session.rsplit(":", 1)[0]) for s in samples
                   if any(c.visible_px > 0 and c.visible_xy is None for c in s.cubes)})


def is_held(session: str, share: float, seed: int = 0) -> bool:
    """Whether a session belongs to the held-apart share: decided by a hash of its name, so a
    session keeps its side however many others are added later (renders still coming in)."""
    digest = zlib.crc32(f"{seed}:{session}".encode()) / 2**32
    return digest < share


def split_by_session(samples: list[Sample], holdout_share: float, seed: int = 0):
    """(train, held) with whole sessions on each side."""
    held = [s for s in samples if is_held(s.split_key, holdout_share, seed)]
    return [s for s in samples if not is_held(s.split_key, holdout_share, seed)], held


def fair_counts(sample: Sample, width: int, height: int) -> dict[str, tuple[int, int]]:
    """Per colour, the fewest and most cubes a right reading may give: a barely visible cube
    (``LOW_VISIBILITY_PX``) may be counted either way. Cubes the labels place in the tray but
    do not list (older labels) count as clearly visible."""
    low = sample.low_visibility_px(width, height)
    sure = dict.fromkeys(COLOURS, 0)
    maybe = dict.fromkeys(COLOURS, 0)
    for c in sample.cubes:
        if c.in_tray:
            (maybe if c.visible_px < low else sure)[COLOURS[c.colour]] += 1
    out = {}
    for colour in COLOURS:
        listed = sure[colour] + maybe[colour]
        extra = max(0, sample.counts[colour] - listed)
        out[colour] = (sure[colour] + extra, sure[colour] + maybe[colour] + extra)
    return out


def is_exact(counts: dict[str, int], fair: dict[str, tuple[int, int]]) -> bool:
    return all(lo <= counts.get(c, 0) <= hi for c, (lo, hi) in fair.items())


MATCH_RADIUS_FRAC = 0.03  # of the picture's width: a found cube this near a labelled one is it


def match(found: list[tuple[float, float]], labelled: list[tuple[float, float]],
          radius: float) -> list[tuple[int, int]]:
    """Greedy nearest pairs (found index, labelled index) within ``radius``."""
    pairs = []
    for i, (x, y) in enumerate(found):
        for j, (u, v) in enumerate(labelled):
            d = math.hypot(x - u, y - v)
            if d <= radius:
                pairs.append((d, i, j))
    pairs.sort()
    used_i, used_j, out = set(), set(), []
    for _, i, j in pairs:
        if i not in used_i and j not in used_j:
            used_i.add(i)
            used_j.add(j)
            out.append((i, j))
    return out
