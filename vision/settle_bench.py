"""Per-frame cost of ``SettleDetector.update``: it runs on every camera frame on a Pi 4.

``python -m vision.settle_bench [--frames N] [--width W --height H]`` prints median and p95
microseconds per update on one thread, for a quiet tray (the common case) and a moving one.
"""

from __future__ import annotations

import argparse
import time

import cv2
import numpy as np

from vision.settle import SettleDetector


def _frames(width: int, height: int, count: int, moving: bool) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    base = np.empty((height, width, 3), np.uint8)
    base[:] = (60, 90, 130)
    cv2.rectangle(base, (width // 5, height // 8), (4 * width // 5, 7 * height // 8),
                  (170, 205, 225), -1)
    noise = [rng.normal(0, 3, base.shape).astype(np.int16) for _ in range(4)]
    side = max(width // 30, 4)
    out = []
    for k in range(count):
        img = base.copy()
        x = width // 2 + (int(120 * np.sin(k / 3)) if moving else 0)
        cv2.rectangle(img, (x, height // 2), (x + side, height // 2 + side), (40, 40, 190), -1)
        out.append(np.clip(img.astype(np.int16) + noise[k % 4], 0, 255).astype(np.uint8))
    return out


def bench(
    width: int = 1152, height: int = 648, frames: int = 400
) -> dict[str, tuple[float, float]]:
    """Median and p95 microseconds of ``update`` for a quiet tray, a moving one, and the frames
    that end in an event (compared with the last read picture and the empty tray)."""
    cv2.setNumThreads(1)
    results = {}
    for name, moving in (("quiet", False), ("moving", True)):
        stream = _frames(width, height, 16, moving)
        det = SettleDetector()
        times = []
        for k in range(frames):
            f = stream[k % len(stream)]
            t0 = time.perf_counter()
            det.update(f, now=k / 30)
            times.append((time.perf_counter() - t0) * 1e6)
        times = times[20:]  # warm-up
        results[name] = (float(np.median(times)), float(np.percentile(times, 95)))
    # Events: the tray alternates between two contents, each held 1 s at 30 fps.
    two = [_frames(width, height, 1, False)[0], _frames(width, height, 2, True)[1]]
    det = SettleDetector()
    det.set_reference(two[0])
    times = []
    for k in range(max(frames, 300)):
        f = two[(k // 30) % 2]
        t0 = time.perf_counter()
        ev = det.update(f, now=k / 30)
        if ev is not None:
            times.append((time.perf_counter() - t0) * 1e6)
    results["event"] = (float(np.median(times)), float(np.percentile(times, 95)))
    return results


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--width", type=int, default=1152)
    ap.add_argument("--height", type=int, default=648)
    ap.add_argument("--frames", type=int, default=400)
    args = ap.parse_args(argv)
    res = bench(args.width, args.height, args.frames)
    print(f"SettleDetector.update on {args.width}x{args.height} BGR, 1 thread, "
          f"{args.frames} frames (cv2 {cv2.__version__})")
    for name, (med, p95) in res.items():
        print(f"  {name:7s} median {med:7.0f} us   p95 {p95:7.0f} us")


if __name__ == "__main__":
    main()
