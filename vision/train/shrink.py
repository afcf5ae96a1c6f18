"""Copy a labelled folder with its pictures shrunk to fit the network's input, labels scaled.

Why: training fits every picture to the input size before anything else
(``vision.train.augment.Cached``), so a picture larger than the input carries nothing the
network sees, but it fills the 60 MiB a lent GPU machine's call can carry
(``scripts/gpu-train.sh pack``): the 378 pictures of ``trays-rendered-train`` at 1152 x 648
take 29 MiB, 10 MiB at 512 x 288. Shrunk, the same pack holds more set-ups.

    python -m vision.train.shrink SRC DST [--size 512x288]

SRC holds a ``labels.json``; DST gets the same layout. Each picture larger than the size is
scaled down (its aspect kept) and written again at JPEG quality 95 (PNG stays PNG); smaller
ones are copied as they are. The labels' picture-pixel fields follow each picture's scale:
cube centres (``xy``, ``visible_xy``) and the tray corners (``tray_corners_px``) by the
scale, visible pixels (``visible_px``) by its square, so which cubes count as barely visible
stays the same (``vision.train.data.LOW_VISIBILITY_PX`` scales with the picture's area). The
renderer's scratch folder (``_tmp``) is left out. A picture OpenCV cannot decode is copied as
it is, with a warning: the training names it when it reads it.
"""

from __future__ import annotations

import argparse
import copy
import json
import shutil
import sys
from pathlib import Path

import cv2
import numpy as np

from vision.detector import MODEL_DIR, ModelConfig
from vision.train.augment import input_size

PICTURE_SUFFIXES = {".jpg", ".jpeg", ".png"}


def shrink_picture(src: Path, dst: Path, width: int, height: int) -> float:
    """Write ``src`` to ``dst`` fitted within width x height; the scale applied (1.0: copied)."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    image = cv2.imdecode(np.fromfile(str(src), np.uint8), cv2.IMREAD_COLOR)
    if image is None:
        print(f"warning: cannot decode {src}: copied as it is", file=sys.stderr)
        shutil.copyfile(src, dst)
        return 1.0
    h, w = image.shape[:2]
    scale = min(1.0, width / w, height / h)
    if scale == 1.0:
        shutil.copyfile(src, dst)
        return 1.0
    small = cv2.resize(image, (max(1, round(w * scale)), max(1, round(h * scale))),
                       interpolation=cv2.INTER_AREA)
    params = [cv2.IMWRITE_JPEG_QUALITY, 95] if dst.suffix.lower() != ".png" else []
    ok, data = cv2.imencode(dst.suffix, small, params)
    if not ok:
        raise OSError(f"cannot encode {dst}")
    dst.write_bytes(data.tobytes())
    return scale


def scaled_record(record: dict, scale: float) -> dict:
    """A labels record with its picture-pixel fields scaled (the record itself at scale 1)."""
    if scale == 1.0:
        return record
    out = copy.deepcopy(record)
    for cube in out.get("cubes", ()):
        for key in ("xy", "visible_xy"):
            if key in cube:
                cube[key] = [round(v * scale, 2) for v in cube[key]]
        if "visible_px" in cube:
            cube["visible_px"] = round(cube["visible_px"] * scale * scale)
    meta = out.get("session_meta") or {}
    if "tray_corners_px" in meta:
        meta["tray_corners_px"] = [[round(v * scale, 2) for v in p]
                                   for p in meta["tray_corners_px"]]
    return out


def shrink_folder(src: Path, dst: Path, width: int, height: int) -> int:
    """Copy ``src`` (with ``labels.json``) into ``dst`` shrunk; how many pictures were shrunk."""
    labels = json.loads((src / "labels.json").read_text())
    scales: dict[str, float] = {}
    for picture in sorted(src.rglob("*")):
        rel = picture.relative_to(src)
        if rel.parts[0] == "_tmp" or not picture.is_file():
            continue
        if picture.suffix.lower() in PICTURE_SUFFIXES:
            scales[rel.as_posix()] = shrink_picture(picture, dst / rel, width, height)
    labels["images"] = [scaled_record(rec, scales.get(rec["file"], 1.0))
                        for rec in labels.get("images", [])]
    dst.mkdir(parents=True, exist_ok=True)
    (dst / "labels.json").write_text(json.dumps(labels, indent=1))
    return sum(1 for s in scales.values() if s < 1.0)


def model_input(model_dir: Path) -> tuple[int, int]:
    """The (width, height) the model in ``model_dir`` reads."""
    config = ModelConfig.from_dict(json.loads((model_dir / "model.json").read_text()))
    return config.input_width, config.input_height


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("src", type=Path, help="a folder holding labels.json")
    parser.add_argument("dst", type=Path, help="where the shrunk copy goes")
    parser.add_argument("--size", type=input_size, metavar="WxH",
                        help="to fit within (default: the packaged model's input)")
    args = parser.parse_args(argv)
    if not (args.src / "labels.json").is_file():
        parser.error(f"no labels.json in {args.src}")
    width, height = args.size or model_input(MODEL_DIR)
    shrunk = shrink_folder(args.src, args.dst, width, height)
    print(f"{args.dst}: {shrunk} pictures shrunk to fit {width} x {height}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
