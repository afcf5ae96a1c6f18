"""``scripts/soak.py``: the game-night soak runs against the real server and says what it saw
(a few seconds of it here, so that the script does not rot between long runs)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOAK = ROOT / "scripts" / "soak.py"


@pytest.mark.slow
def test_a_short_soak_prints_its_figures_and_a_summary():
    run = subprocess.run(
        [sys.executable, str(SOAK), "--minutes", "0.15", "--every", "3", "--phones", "2",
         "--keep-readings", "200"],
        capture_output=True, text=True, timeout=240, cwd=ROOT,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].startswith("== cubetower serve (pid ") and "MALLOC_ARENA_MAX=" in lines[0]
    samples = [line for line in lines if line.startswith("t=")]
    assert len(samples) >= 3
    assert all("rss=" in line and "threads=" in line and "db=" in line for line in samples)
    summary = lines[lines.index(next(s for s in lines if s.startswith("== summary:"))):]
    assert summary[1].startswith("rss MiB: first ") and "peak" in summary[1]
    assert any(s.startswith("latency ms p50/p95 (n): game ") for s in summary)
    assert "commands=" in run.stdout and "stream_connects=" in run.stdout
    assert lines[-1] == "== the server stopped on SIGTERM with exit status 0"


@pytest.mark.slow
def test_a_server_that_dies_during_the_soak_fails_it():
    soak = subprocess.Popen(
        [sys.executable, str(SOAK), "--minutes", "1", "--every", "1", "--phones", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT,
    )
    try:
        header = soak.stdout.readline()
        assert header.startswith("== cubetower serve (pid "), header
        os.kill(int(header.split("(pid ")[1].split(")")[0]), signal.SIGKILL)
        out, _ = soak.communicate(timeout=120)
    finally:
        if soak.poll() is None:
            soak.kill()
    assert soak.returncode == 1, out
    assert "the server ended during the run (exit status -9)" in out
