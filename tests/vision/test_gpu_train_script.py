"""``scripts/gpu-train.sh``, the prepared run for a lent GPU machine, run here on the CPU: it
packs what the machine must be sent (pictures shrunk to the input), refuses more than a call
can carry, trains from the shipped model and compares the result with it on the
validation-only folders."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import cv2
import pytest

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "gpu-train.sh"
MINI = ROOT / "tests" / "fixtures" / "vision" / "trays-mini"


def script(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, timeout=600,
                          env={**os.environ, **env})


def test_pack_copies_labels_and_pictures_but_not_the_renderers_scratch(tmp_path):
    renders = tmp_path / "renders"
    subprocess.run(["cp", "-r", str(MINI), str(renders)], check=True)
    (renders / "_tmp").mkdir()
    (renders / "_tmp" / "scratch.png").write_bytes(b"x" * 100)
    data = tmp_path / "data"
    done = script("pack", str(renders), "--", str(MINI), env={"GPU_DATA": str(data)})
    assert done.returncode == 0, done.stderr
    assert "1 training and 1 validation folders" in done.stdout
    packed = sorted(p.relative_to(data / "train" / "renders").as_posix()
                    for p in (data / "train" / "renders").rglob("*") if p.is_file())
    wanted = sorted(p.relative_to(MINI).as_posix() for p in MINI.rglob("*")
                    if p.is_file() and p.suffix in {".jpg", ".png", ".json"})
    assert packed == wanted
    assert (data / "val" / "trays-mini" / "labels.json").is_file()
    # the fixture's 576 x 324 pictures are shrunk to the packaged model's 512 x 288 input
    picture = cv2.imread(str(data / "train" / "renders" / "s000" / "empty.jpg"))
    assert picture.shape[:2] == (288, 512)


def test_pack_refuses_a_folder_without_labels_and_more_than_a_call_carries(tmp_path):
    done = script("pack", str(tmp_path), env={"GPU_DATA": str(tmp_path / "data")})
    assert done.returncode == 2 and "no labels.json" in done.stderr
    big = tmp_path / "big"
    big.mkdir()
    (big / "labels.json").write_text('{"images": []}')
    (big / "s000").mkdir()
    (big / "s000" / "empty.jpg").write_bytes(os.urandom(61 * 1024 * 1024))
    done = script("pack", str(big), env={"GPU_DATA": str(tmp_path / "data")})
    assert done.returncode == 2 and "more than the 60 MiB" in done.stderr


def test_a_refused_pack_keeps_the_last_good_one(tmp_path):
    data = tmp_path / "data"
    assert script("pack", str(MINI), env={"GPU_DATA": str(data)}).returncode == 0
    before = sorted(p.relative_to(data).as_posix() for p in data.rglob("*"))
    done = script("pack", str(MINI), "--", str(tmp_path / "nowhere"), env={"GPU_DATA": str(data)})
    assert done.returncode == 2 and "no labels.json" in done.stderr
    other = tmp_path / "other" / MINI.name  # another folder of the same name
    other.parent.mkdir()
    subprocess.run(["cp", "-r", str(MINI), str(other)], check=True)
    done = script("pack", str(MINI), str(other), env={"GPU_DATA": str(data)})
    assert done.returncode == 2 and f"two train folders named {MINI.name}" in done.stderr
    assert sorted(p.relative_to(data).as_posix() for p in data.rglob("*")) == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("data.part")] == []


def test_pack_never_empties_a_folder_it_did_not_make(tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "keep.txt").write_text("mine")
    done = script("pack", str(MINI), env={"GPU_DATA": str(mine)})
    assert done.returncode == 2 and "was not made by 'pack'" in done.stderr
    assert (mine / "keep.txt").read_text() == "mine"
    packed = tmp_path / "packed"
    assert script("pack", str(MINI), env={"GPU_DATA": str(packed)}).returncode == 0
    assert script("pack", str(MINI), env={"GPU_DATA": str(packed)}).returncode == 0  # again


@pytest.mark.parametrize("widths, shape", [
    ("", "1.25 wide"),
    ("--channels 20,30,50,120,200", "widths as EXTRA gives"),  # instead of --width 1.25
])
def test_a_run_trains_writes_a_model_and_compares_it_with_the_shipped_one(tmp_path, widths,
                                                                          shape):
    data, out = tmp_path / "data", tmp_path / "out"
    out.mkdir()
    env = {"GPU_DATA": str(data), "OUT": str(out), "PYTHON": sys.executable,
           "EXTRA": f"--steps 2 --input 256x160 --batch 2 --warmup 1 --device cpu {widths}"}
    assert script("pack", str(MINI), "--", str(MINI), env=env).returncode == 0
    done = script("run", "1", env=env)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert (out / "model" / "model.onnx").is_file() and (out / "w.pt").is_file()
    assert "trained 2 steps" in (out / "train.log").read_text()
    assert shape in json.loads((out / "model" / "model.json").read_text())["trained_on"]
    report = (out / "validate.txt").read_text()
    assert "vision/model: exact trays" in report and f"{out}/model: exact trays" in report
