"""``vision.train.shrink``: a labelled folder copied with its pictures fitted to the network's
input, its labels scaled alike, so that training sees the same samples from a smaller pack."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.train.data import fair_counts, load_samples
from vision.train.shrink import main, shrink_folder

MINI = Path(__file__).resolve().parents[1] / "fixtures" / "vision" / "trays-mini"


def by_name(folder: Path) -> dict:
    return {s.path.relative_to(folder).as_posix(): s for s in load_samples(folder)}


def test_pictures_fit_the_size_and_labels_follow_them(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(MINI, src)
    first = json.loads((src / "labels.json").read_text())
    session = first["images"][0]["session"]
    corners = [[100.0, 50.0], [100.0, 300.0], [500.0, 50.0], [500.0, 300.0]]
    first["images"][0].setdefault("session_meta", {})["tray_corners_px"] = corners
    (src / "labels.json").write_text(json.dumps(first))
    (src / "_tmp").mkdir()
    (src / "_tmp" / "scratch.png").write_bytes(b"x")

    shrunk = shrink_folder(src, tmp_path / "dst", 288, 162)

    before, after = by_name(src), by_name(tmp_path / "dst")
    assert shrunk == len(before) and set(after) == set(before)
    assert not (tmp_path / "dst" / "_tmp").exists()
    for name, old in before.items():
        new = after[name]
        h0, w0 = cv2.imread(str(old.path)).shape[:2]
        h1, w1 = cv2.imread(str(new.path)).shape[:2]
        assert (w1, h1) == (288, 162)
        scale = w1 / w0
        for a, b in zip(old.cubes, new.cubes, strict=True):
            assert (b.colour, b.in_tray) == (a.colour, a.in_tray)
            assert b.x == pytest.approx(a.x * scale, abs=0.01)
            assert b.y == pytest.approx(a.y * scale, abs=0.01)
            assert b.visible_px == pytest.approx(a.visible_px * scale * scale, abs=0.5)
        assert fair_counts(new, w1, h1) == fair_counts(old, w0, h0)
        if new.session.endswith(f":{session}"):
            assert new.corners == tuple((x * scale, y * scale) for x, y in corners)


def test_a_picture_already_small_enough_is_copied_byte_for_byte(tmp_path):
    assert shrink_folder(MINI, tmp_path / "dst", 4000, 4000) == 0
    for picture in MINI.rglob("*.jpg"):
        copied = tmp_path / "dst" / picture.relative_to(MINI)
        assert copied.read_bytes() == picture.read_bytes()
    assert json.loads((tmp_path / "dst" / "labels.json").read_text()) == json.loads(
        (MINI / "labels.json").read_text())


def test_a_folder_without_labels_or_a_bad_size_is_refused_clearly(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main([str(tmp_path), str(tmp_path / "dst")])
    assert "no labels.json" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([str(MINI), str(tmp_path / "dst"), "--size", "big"])
    assert "not WIDTHxHEIGHT" in capsys.readouterr().err


def test_training_caches_the_same_samples_from_the_shrunk_copy(tmp_path):
    """What the claim rests on: training fits every picture to the input first, so the shrunk
    copy gives it the same cubes, corners and nearly the same pixels (one more JPEG save)."""
    pytest.importorskip("torch")
    from vision.train.batches import DEFAULT_INPUT, cache_samples

    shrink_folder(MINI, tmp_path / "dst", *DEFAULT_INPUT)
    original = cache_samples(load_samples(MINI))
    shrunk = cache_samples(load_samples(tmp_path / "dst"))
    assert len(original) == len(shrunk)
    for a, b in zip(original, shrunk, strict=True):
        assert b.image.shape == a.image.shape
        assert np.abs(b.image.astype(int) - a.image.astype(int)).mean() < 2.0
        np.testing.assert_allclose(b.cubes, a.cubes, atol=0.02)
        assert (a.reference is None) == (b.reference is None)


def test_visible_centres_follow_the_scale(tmp_path):
    """``visible_xy`` (``vision.train.visible_centres``) is in picture pixels like ``xy``."""
    src = tmp_path / "src"
    shutil.copytree(MINI, src)
    labels = json.loads((src / "labels.json").read_text())
    for rec in labels["images"]:
        for cube in rec.get("cubes", ()):
            cube["visible_xy"] = [cube["xy"][0] + 10.0, cube["xy"][1] - 6.0]
    (src / "labels.json").write_text(json.dumps(labels))

    shrink_folder(src, tmp_path / "dst", 288, 162)

    before, after = by_name(src), by_name(tmp_path / "dst")
    for name, old in before.items():
        scale = cv2.imread(str(after[name].path)).shape[1] / cv2.imread(str(old.path)).shape[1]
        for a, b in zip(old.cubes, after[name].cubes, strict=True):
            assert b.visible_xy == pytest.approx((a.visible_xy[0] * scale,
                                                  a.visible_xy[1] * scale), abs=0.01)
