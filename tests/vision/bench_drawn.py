"""A second benchmark on drawn trays: ``python tests/vision/bench_drawn.py [--n 200] [--seed 0]``.

Why: ``python -m vision.bench`` scores the counter on 65 path-traced renders of 5 table set-ups,
and rounds of development on those very images may have tuned the counter to them. This bench
draws N random trays with ``synth`` from a fixed seed -- cubes, print, table, light cast,
exposure, wall shadow, glare, camera angle, noise and JPEG all drawn at random within plausible
ranges -- and scores each scene with the empty tray as reference and without. The exact share is
also broken down by each varied factor, so that a weak condition shows rather than hides in the
total.

Printed per mode: exact share; errors in cubes from the counts (a shortfall in one colour met by
an excess in another is a wrong colour, the rest missed or extra); how many wrong readings said
they were unsure; cubes short / in excess per colour; median and p95 ms per count; then the
exact share per level of each factor. ``-v`` lists the wrong readings with their scene.

Drawn scenes are simpler than photos or path-traced renders (flat paint, ideal squares, no
texture, no depth of field, cubes kept apart): a score here is a floor, not a ceiling. A factor
that scores low here will score no better on a real table.

The empty tray is drawn from the same scene with its own sensor noise (another noise seed), as a
second camera frame would have. Same seed, same scenes, same figures (timings aside).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

import cv2
import numpy as np

# synth, and the vision package of this checkout (not whichever one is installed), when run as
# a script: the bench measures the code it ships with
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import synth

from vision.counter import count_cubes
from vision.errors import VisionError
from vision.reading import COLOURS

MODES = ("ref", "noref")
TABLES_RGB = {  # plausible table tops
    "dark wood": (95, 70, 60),
    "light wood": (180, 150, 110),
    "pale grey": (200, 195, 190),
    "black": (40, 40, 45),
    "green felt": (50, 90, 60),
}
WARM = np.array([1.25, 1.0, 0.6])  # a tungsten lamp (RGB gains)
COOL = np.array([0.85, 1.0, 1.2])  # overcast daylight
FACTORS = ("print", "table", "oblique", "cast", "glare", "wall shadow", "exposure", "cubes")


@dataclasses.dataclass
class Case:
    scene: synth.Scene
    factors: dict[str, str]


def draw_case(seed: int, i: int) -> Case:
    """Scene i of the run with this seed: every parameter drawn from its own generator."""
    rng = np.random.default_rng([seed, i])
    n = int(rng.integers(1, 13))
    colours = [str(c) for c in rng.choice(list(COLOURS), n)]
    cubes = synth.scatter(colours, seed=int(rng.integers(2**31)))
    print_name = str(rng.choice(list(synth.PRINTS_RGB)))
    table_name = str(rng.choice(list(TABLES_RGB)))
    t = float(rng.uniform(-1, 1))  # -1 warm lamp .. 0 neutral .. 1 cool daylight
    cast = 1 + (WARM - 1) * max(-t, 0) + (COOL - 1) * max(t, 0)
    exposure = float(rng.uniform(0.6, 1.4))
    wall = float(rng.uniform(0.2, 0.6)) if rng.random() < 0.4 else 0.0
    glare = bool(rng.random() < 0.3)
    oblique = bool(rng.random() < 0.5)
    noise = float(rng.uniform(1, 4))
    jpeg = int(rng.integers(70, 96))
    scene = synth.Scene(
        cubes=cubes, print_rgb=synth.PRINTS_RGB[print_name], table_rgb=TABLES_RGB[table_name],
        cast=tuple(float(v) for v in cast), exposure=exposure, wall_shadow=wall, glare=glare,
        oblique=oblique, noise=noise, jpeg=jpeg, seed=int(rng.integers(2**31)),
    )
    factors = {
        "print": print_name,
        "table": table_name,
        "oblique": "oblique" if oblique else "straight",
        "cast": "warm" if t < -1 / 3 else "cool" if t > 1 / 3 else "neutral",
        "glare": "glare" if glare else "none",
        "wall shadow": "shadow" if wall else "none",
        "exposure": "dark <0.85" if exposure < 0.85 else "bright >1.15" if exposure > 1.15
        else "normal",
        "cubes": "1-3" if len(cubes) <= 3 else "4-7" if len(cubes) <= 7 else "8-12",
    }
    return Case(scene, factors)


def render_case(case: Case) -> tuple[np.ndarray, np.ndarray, dict[str, int]]:
    """The drop, the empty tray (its own noise) and the true counts."""
    frame, truth = synth.render(case.scene)
    empty = dataclasses.replace(case.scene, seed=case.scene.seed + 1)
    ref, _ = synth.render(empty, with_cubes=False)
    return frame, ref, synth.counts(truth)


def errors(found: dict[str, int], want: dict[str, int]) -> tuple[int, int, int]:
    """(missed, extra, wrong colour) from the counts alone: a shortfall in one colour matched by
    an excess in another is a colour swap; what is left over is missed or extra."""
    short = sum(max(want[c] - found.get(c, 0), 0) for c in COLOURS)
    excess = sum(max(found.get(c, 0) - want[c], 0) for c in COLOURS)
    wrong = min(short, excess)
    return short - wrong, excess - wrong, wrong


def _clip_to_box(poly: np.ndarray, x0: float, y0: float, x1: float, y1: float) -> np.ndarray:
    """The part of a polygon inside an axis-aligned box (Sutherland-Hodgman): exact where sides
    coincide, as a found side on the true one does (OpenCV's convex intersection is not)."""
    pts = [tuple(p) for p in poly]
    for axis, bound, sign in ((0, x0, 1), (0, x1, -1), (1, y0, 1), (1, y1, -1)):
        out = []
        for k, cur in enumerate(pts):
            prev = pts[k - 1]
            if (sign * (cur[axis] - bound) >= 0) != (sign * (prev[axis] - bound) >= 0):
                t = (bound - prev[axis]) / (cur[axis] - prev[axis])
                out.append(tuple(prev[j] + t * (cur[j] - prev[j]) for j in range(2)))
            if sign * (cur[axis] - bound) >= 0:
                out.append(cur)
        pts = out
        if not pts:
            break
    return np.array(pts, np.float32).reshape(-1, 2)


def outline_error(scene: synth.Scene, corners) -> dict | None:
    """How far the counter's floor outline is from the true floor, on the table's plane in cm:
    the largest corner distance, the share of the true floor outside the found quad (floor cut
    off) and of the found quad outside the floor (wall, rim or table taken in)."""
    if corners is None:
        return None
    found = synth.frame_to_table_cm(scene, corners).astype(np.float32)
    true = synth.floor_corners_cm()
    dist = np.linalg.norm(found[:, None, :] - true[None, :, :], axis=2)
    inside = _clip_to_box(found, *true[0], *true[2])
    inter = cv2.contourArea(inside) if len(inside) >= 3 else 0.0
    area_t, area_f = cv2.contourArea(true), cv2.contourArea(found)
    return {"corner_cm": float(dist.min(axis=0).max()),
            "cut": float(1 - inter / area_t), "extra": float(1 - inter / max(area_f, 1e-9))}


def outline_lines(rows: list[dict]) -> list[str]:
    """Right and wrong readings by how far their floor outline is off: how many failures start
    with the tray's outline, overall and per factor level."""
    bins = ((0.0, 0.25), (0.25, 0.5), (0.5, 1.0), (1.0, np.inf))

    def bin_of(r) -> str:
        o = r["outline"]
        if o is None:
            return "no outline"
        c = o["corner_cm"]
        return next(f"{a:g}-{b:g} cm" for a, b in bins if a <= c < b)

    names = [f"{a:g}-{b:g} cm" for a, b in bins] + ["no outline"]
    lines = ["outline: largest corner error (table cm) -> readings right / wrong"]
    for mode in MODES:
        rs = [r for r in rows if r["mode"] == mode]
        cells = []
        for nm in names:
            k = [r for r in rs if bin_of(r) == nm]
            cells.append(f"{nm}: {sum(r['exact'] for r in k)}/{sum(not r['exact'] for r in k)}")
        lines.append(f"  {mode:<5} " + ", ".join(cells))
    lines.append("outline off by >= 0.5 cm, per factor level: wrong readings of them / all "
                 "wrong, per mode")
    for f in FACTORS:
        levels = sorted({r["factors"][f] for r in rows})
        for lv in levels:
            cells = []
            for mode in MODES:
                rs = [r for r in rows if r["mode"] == mode and r["factors"][f] == lv]
                bad = [r for r in rs if not r["exact"]]
                off = [r for r in rs if r["outline"] is None or r["outline"]["corner_cm"] >= 0.5]
                cells.append(f"{mode} off {len(off)}/{len(rs)}, wrong&off "
                             f"{sum(not r['exact'] for r in off)}/{len(bad)}")
            lines.append(f"  {f:<12} {lv:<13} " + " | ".join(cells))
    return lines


def run(n: int, seed: int, log=None) -> list[dict]:
    """Count each drawn scene in both modes: one row per (scene, mode)."""
    cv2.setNumThreads(1)
    rows = []
    for i in range(n):
        case = draw_case(seed, i)
        frame, ref, want = render_case(case)
        for mode in MODES:
            t0 = time.perf_counter()
            try:
                reading = count_cubes(frame, ref if mode == "ref" else None)
                found, unsure = reading.counts, bool(reading.uncertain)
                failed = False
                outline = outline_error(case.scene, getattr(reading, "tray_corners", None))
            except VisionError:
                found, unsure, failed = {}, True, True
                outline = None
            ms = 1000 * (time.perf_counter() - t0)
            missed, extra, wrong = errors(found, want)
            rows.append({
                "i": i, "mode": mode, "exact": not failed and not (missed or extra or wrong),
                "missed": missed, "extra": extra, "wrong": wrong, "failed": failed,
                "unsure": unsure, "ms": ms, "factors": case.factors,
                "want": want, "found": dict(found), "outline": outline,
            })
        if log:
            log(i + 1, n)
    return rows


def _pct(k: int, n: int) -> str:
    return f"{100.0 * k / n:5.1f} %" if n else "    -  "


def summary(rows: list[dict]) -> dict:
    """Per mode: totals, error split, flags, timing, and exact share per factor level."""
    out = {}
    for mode in MODES:
        rs = [r for r in rows if r["mode"] == mode]
        bad = [r for r in rs if not r["exact"]]
        ms = np.array([r["ms"] for r in rs]) if rs else np.zeros(1)
        by: dict[str, dict[str, tuple[int, int]]] = {}
        for f in FACTORS:
            levels: dict[str, list[int]] = {}
            for r in rs:
                k = levels.setdefault(r["factors"][f], [0, 0])
                k[0] += r["exact"]
                k[1] += 1
            by[f] = {lv: (k[0], k[1]) for lv, k in sorted(levels.items())}
        out[mode] = {
            "n": len(rs),
            "exact": sum(r["exact"] for r in rs),
            "missed": sum(r["missed"] for r in rs),
            "extra": sum(r["extra"] for r in rs),
            "wrong": sum(r["wrong"] for r in rs),
            "failed": sum(r["failed"] for r in rs),
            "wrong_readings": len(bad),
            "wrong_flagged": sum(r["unsure"] for r in bad),
            "right_flagged": sum(r["unsure"] for r in rs if r["exact"]),
            "ms_median": float(np.median(ms)),
            "ms_p95": float(np.percentile(ms, 95)),
            "short": {c: sum(max(r["want"][c] - r["found"].get(c, 0), 0) for r in rs)
                      for c in COLOURS},
            "excess": {c: sum(max(r["found"].get(c, 0) - r["want"][c], 0) for r in rs)
                       for c in COLOURS},
            "by_factor": by,
        }
    return out


def report(summ: dict) -> list[str]:
    lines = []
    for mode in MODES:
        s = summ[mode]
        lines.append(
            f"{mode:<5}: exact {s['exact']}/{s['n']} = {_pct(s['exact'], s['n']).strip()} | "
            f"errors (cubes): missed {s['missed']}, extra {s['extra']}, wrong colour "
            f"{s['wrong']}, failed {s['failed']} | wrong but flagged unsure "
            f"{s['wrong_flagged']}/{s['wrong_readings']}, right but flagged "
            f"{s['right_flagged']}/{s['exact']} | ms median {s['ms_median']:.0f} "
            f"p95 {s['ms_p95']:.0f}"
        )
    for mode in MODES:
        s = summ[mode]
        lines.append(f"{mode:<5}: per colour, cubes short / in excess: " + ", ".join(
            f"{c} {s['short'][c]}/{s['excess'][c]}" for c in COLOURS))
    lines.append("")
    lines.append(f"{'factor':<12} {'level':<13} {'n':>4}  " + "  ".join(f"{m:>8}" for m in MODES))
    for f in FACTORS:
        for lv in summ[MODES[0]]["by_factor"][f]:
            n = summ[MODES[0]]["by_factor"][f][lv][1]
            cells = "  ".join(_pct(*summ[m]["by_factor"][f][lv]).rjust(8) for m in MODES)
            lines.append(f"{f:<12} {lv:<13} {n:>4}  {cells}")
    return lines


def wrong_lines(rows: list[dict], limit: int = 40) -> list[str]:
    out = []
    for r in rows:
        if r["exact"]:
            continue
        diff = {c: r["found"].get(c, 0) - r["want"][c] for c in COLOURS
                if r["found"].get(c, 0) != r["want"][c]}
        f = r["factors"]
        o = r.get("outline")
        off = (f" | outline {o['corner_cm']:.2f} cm, cut {o['cut']:.0%}, extra {o['extra']:.0%}"
               if o else "")
        out.append(
            f"  #{r['i']:<4} {r['mode']:<5} {'FAILED' if r['failed'] else diff} "
            f"{'(unsure)' if r['unsure'] else '(SURE)'} | {f['print']}, {f['table']}, "
            f"{f['oblique']}, {f['cast']}, {f['glare']}, wall {f['wall shadow']}, "
            f"exp {f['exposure']}, {f['cubes']} cubes{off}"
        )
    return out[:limit] + ([f"  ... {len(out) - limit} more"] if len(out) > limit else [])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("-v", "--verbose", action="store_true", help="list the wrong readings")
    ap.add_argument("--outline", action="store_true",
                    help="tabulate the floor outline's error against right / wrong readings")
    args = ap.parse_args(argv)

    def log(k, n):
        if k % 25 == 0 or k == n:
            print(f"  {k}/{n}", file=sys.stderr, flush=True)

    rows = run(args.n, args.seed, log)
    print(f"drawn trays: n={args.n} seed={args.seed} (a floor, not a ceiling)")
    print("\n".join(report(summary(rows))))
    if args.verbose:
        print("\nwrong readings:")
        print("\n".join(wrong_lines(rows)))
    if args.outline:
        print()
        print("\n".join(outline_lines(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
