"""``scripts/validate-models.py``: the choice between trained models reads what it says it reads."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MINI = ROOT / "tests" / "fixtures" / "vision" / "trays-mini"


def test_it_reads_the_validation_share_and_whole_validation_folders():
    run = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "validate-models.py"), "--data", str(MINI),
         "--val-share", "0.5", "--whole", str(MINI), "--models", str(ROOT / "vision" / "model")],
        capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    level = json.loads((ROOT / "vision" / "model" / "model.json").read_text())["unsure_below"]
    share, whole = lines[0], lines[3]
    assert share.startswith("training folders' validation share: ")
    assert whole.startswith(f"{MINI}: ") and "of 4 set-ups" in whole
    # a set-up in the share is a whole set-up, so the share never has more pictures than all
    n_share = int(share.split(": ")[1].split()[0])
    n_whole = int(whole.split(": ")[1].split()[0])
    assert 0 < n_share < n_whole
    for report in (lines[1], lines[4]):
        assert "exact trays" in report and "with the empty tray" in report
    for pictures, flag in ((n_share, lines[2]), (n_whole, lines[5])):
        # the model's own level, and what its unsure flag did with the wrong and right readings
        # (each picture read with and without the empty tray)
        assert flag.strip().startswith(f"unsure flag at its level {level}: wrong readings caught ")
        caught, wrong = (int(v) for v in flag.split("caught ")[1].split(",")[0].split("/"))
        flagged, right = (int(v) for v in flag.split("flagged ")[1].split(";")[0].split("/"))
        assert 0 <= caught <= wrong and 0 <= flagged <= right and wrong + right == 2 * pictures


def _script():
    spec = importlib.util.spec_from_file_location("validate_models",
                                                  ROOT / "scripts" / "validate-models.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_paired_split_of_two_models_and_its_mcnemar_p():
    script = _script()
    assert script.mcnemar_p(0, 0) == 1.0
    assert script.mcnemar_p(3, 3) == 1.0
    assert script.mcnemar_p(0, 6) == pytest.approx(2 / 64)  # six coins, all one way
    assert script.mcnemar_p(1, 4) == script.mcnemar_p(4, 1) == pytest.approx(2 * 6 / 32)
    here = {True: [True, True, False, True], False: [False, True, True, True]}
    there = {True: [True, False, False, False], False: [True, True, True, True]}
    line = script.paired(here, there, "vision/model")
    assert line == ("against vision/model, readings only this / only that one reads exactly: "
                    "with the empty tray 2 / 0 (p 0.50), without 0 / 1 (p 1.00)")


def test_a_second_model_is_compared_with_the_first_reading_by_reading():
    model = str(ROOT / "vision" / "model")
    run = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "validate-models.py"), "--whole", str(MINI),
         "--models", model, model],
        capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    # the same model twice: no reading is exact for one and not the other
    assert (f"against {model}, readings only this / only that one reads exactly: with the "
            "empty tray 0 / 0 (p 1.00), without 0 / 0 (p 1.00)") in run.stdout
