"""The split by set-up: a session's side depends on its folder's name and its own name only,
never on how the command line spells the folder, so a run's validation share can be found again
from a relative path, an absolute one or the packed copy a lent GPU trains on."""

from __future__ import annotations

import json
import os
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.train.data import load_samples, split_by_session

ZEROS = {c: 0 for c in ("blue", "black", "red", "brown", "green", "yellow", "white")}


def labelled_folder(folder: Path, sessions: int) -> Path:
    """``sessions`` set-ups of one tiny picture each, in the labels format."""
    images = []
    for i in range(sessions):
        name = f"s{i:03d}"
        (folder / name).mkdir(parents=True)
        cv2.imwrite(str(folder / name / "drop01.jpg"), np.zeros((8, 8, 3), np.uint8))
        images.append({"file": f"{name}/drop01.jpg", "session": name, "counts": ZEROS,
                       "cubes": []})
    (folder / "labels.json").write_text(json.dumps({"images": images}))
    return folder


def held(root: Path) -> set[str]:
    _, val = split_by_session(load_samples(root), 0.25)
    return {s.path.parent.name for s in val}


def test_a_folder_splits_alike_however_it_is_spelled_or_wherever_it_is_copied(
        tmp_path, monkeypatch):
    original = labelled_folder(tmp_path / "renders" / "TRAIN-150", 40)
    copy = labelled_folder(tmp_path / "gpu-data" / "train" / "TRAIN-150", 40)
    absolute = held(original)
    assert 0 < len(absolute) < 40

    monkeypatch.chdir(tmp_path / "renders")
    assert held(Path("TRAIN-150")) == absolute
    assert held(Path("./TRAIN-150/")) == absolute
    assert held(Path("..") / "gpu-data" / "train" / "TRAIN-150") == absolute
    assert held(copy) == absolute
    monkeypatch.chdir(original)
    assert held(Path(".")) == absolute


def test_two_folders_with_the_same_session_names_stay_two_set_ups_split_apart(tmp_path):
    first = labelled_folder(tmp_path / "TRAIN-150", 40)
    second = labelled_folder(tmp_path / "TRAIN-153", 40)
    samples = load_samples(first) + load_samples(second)
    assert len({s.session for s in samples}) == 80
    assert held(first) != held(second)  # each folder's sessions are drawn on their own


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symbolic links")
def test_a_link_to_a_folder_splits_as_the_folder_it_points_at(tmp_path):
    original = labelled_folder(tmp_path / "TRAIN-150", 40)
    (tmp_path / "latest").symlink_to(original, target_is_directory=True)
    assert held(tmp_path / "latest") == held(original)
