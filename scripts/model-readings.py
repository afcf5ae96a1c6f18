"""Print the packaged model's reading of every picture in labelled folders, one line each.

Why: the device on a Pi runs another OpenCV (4.11 with numpy 1.24, see pi-constraints.sh) than
the development machine; running this under both and comparing the outputs checks that the
model loads and reads alike there:

    python scripts/model-readings.py ../shared/data/trays-rendered > a.txt
    /path/to/pi-like-venv/bin/python scripts/model-readings.py ../shared/data/trays-rendered > b.txt
    diff a.txt b.txt
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import cv2

from vision.counter import count_cubes, load_image
from vision.train.data import load_samples


def main(folders: list[str]) -> int:
    cv2.setNumThreads(1)
    print(f"# OpenCV {cv2.__version__}", file=sys.stderr)
    for folder in folders:
        for sample in load_samples(Path(folder)):
            image = load_image(sample.path)
            for ref in (None, sample.empty_path):
                reading = count_cubes(image, None if ref is None else load_image(ref))
                cubes = " ".join(f"{c.colour}:{c.x:.0f},{c.y:.0f}:{c.confidence:.2f}"
                                 for c in sorted(reading.cubes, key=lambda c: (c.x, c.y)))
                name = f"{sample.path.parent.name}/{sample.path.name}"
                print(f"{name} ref={ref is not None} {cubes}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
