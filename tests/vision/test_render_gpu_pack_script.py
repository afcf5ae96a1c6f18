"""``scripts/render-gpu-pack.sh``: renders the lent GPU run's seeds and packs them. The shared
renderer needs Blender, so here a stand-in for the renderer's Python writes the test fixture's
labelled pictures wherever it is told to: what is checked is the script's own work (every seed
asked for once, with its set-up count and profile; a folder rendered whole kept on a second
run; a failed render named; the pack made)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "render-gpu-pack.sh"
MINI = ROOT / "tests" / "fixtures" / "vision" / "trays-mini"

STAND_IN = """#!/usr/bin/env bash
# the renderer's Python, standing in: logs its arguments, copies the fixture to --out
echo "$*" >> "{log}"
[ -n "${{FAIL:-}}" ] && case "$*" in *"--seed $FAIL "*) exit 1 ;; esac
while [ $# -gt 0 ]; do
    if [ "$1" = "--out" ]; then mkdir -p "$2" && cp -r "{mini}"/. "$2"/; fi
    shift
done
"""


@pytest.fixture
def setup(tmp_path):
    log = tmp_path / "calls.log"
    python = tmp_path / "python"
    python.write_text(STAND_IN.format(log=log, mini=MINI))
    python.chmod(0o755)
    renderer = tmp_path / "renderer"
    renderer.mkdir()
    (renderer / "render_tray.py").write_text("")
    env = {**os.environ, "RENDER_PY": str(python), "RENDERER": str(renderer),
           "GPU_DATA": str(tmp_path / "gpu-data")}
    return tmp_path, log, env


def run(tmp_path, env, **extra):
    return subprocess.run([str(SCRIPT), str(tmp_path / "renders")], capture_output=True,
                          text=True, timeout=300, env={**env, **extra})


def seed_of(call: str) -> str:
    return call.split("--seed ")[1].split()[0]


def test_every_seed_is_rendered_once_and_packed(setup):
    tmp_path, log, env = setup
    done = run(tmp_path, env)
    assert done.returncode == 0, done.stderr
    calls = log.read_text().splitlines()
    seeds = sorted(seed_of(c) for c in calls)
    assert seeds == ["150", "151", "152", "153", "154", "155", "8116", "8117"]
    wider = {seed_of(c) for c in calls if "--wider 1" in c}
    assert wider == {"152", "154", "8117"}
    clutter = {seed_of(c) for c in calls if "--profile clutter" in c}
    assert clutter == {"151", "155"}
    assert all("--drops 8" in c and "--res 512x288" in c for c in calls)
    assert "6 training and 2 validation folders" in done.stdout
    assert (tmp_path / "gpu-data" / "val" / "VALWIDE-8117" / "labels.json").is_file()

    again = run(tmp_path, env)  # every folder whole already: nothing rendered again
    assert again.returncode == 0, again.stderr
    assert len(log.read_text().splitlines()) == len(calls)


def test_a_failed_render_is_named_and_nothing_is_packed(setup):
    tmp_path, log, env = setup
    done = run(tmp_path, env, FAIL="151")
    assert done.returncode == 1
    assert "rendering TRAIN-151 failed" in done.stderr
    assert not (tmp_path / "gpu-data").exists()
    # the next try renders what failed, and keeps what was whole
    log.write_text("")
    done = run(tmp_path, env)
    assert done.returncode == 0, done.stderr
    assert "--seed 151 " in log.read_text() and "--seed 150 " not in log.read_text()


def test_a_missing_renderer_is_said(tmp_path):
    done = subprocess.run([str(SCRIPT), str(tmp_path)], capture_output=True, text=True,
                          env={**os.environ, "RENDER_PY": str(tmp_path / "none")})
    assert done.returncode == 2 and "no renderer Python" in done.stderr
