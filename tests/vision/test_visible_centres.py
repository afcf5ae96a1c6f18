"""A cube's visible centre (``vision.train.visible_centres``): the centre of its own pixels in
the renderer's object-index pass, so that a cube partly under another is taught where it is
seen, and how it reaches the labels, a pack and the training targets."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.reading import COLOURS
from vision.train.data import LabelledCube, load_samples, without_visible_centres
from vision.train.render import _CentreAddingJson, _IndexKeepingCv2
from vision.train.visible_centres import add_visible_centres, index_centres

MINI = Path(__file__).resolve().parents[1] / "fixtures" / "vision" / "trays-mini"
RED, BROWN = COLOURS.index("red"), COLOURS.index("brown")


def _index(red_k: int, brown_k: int) -> np.ndarray:
    """A 40 x 60 pass: a red cube (index ``RED*7+red_k+1``), its left part covered by a brown
    one lying on it."""
    idx = np.zeros((40, 60), np.float32)
    idx[10:20, 20:30] = RED * 7 + red_k + 1     # the red cube, 10 x 10 at x 20..30
    idx[8:22, 14:24] = BROWN * 7 + brown_k + 1  # the brown one over its left side
    return idx


def test_index_centres_are_each_objects_pixel_count_and_centre_in_label_coordinates():
    centres = index_centres(_index(2, 0))
    red, brown = RED * 7 + 3, BROWN * 7 + 1
    assert set(centres) == {red, brown}  # the background (0) is no object
    assert centres[red] == (60, pytest.approx(27.0), pytest.approx(15.0))  # x 24..30 seen
    assert centres[brown] == (140, pytest.approx(19.0), pytest.approx(15.0))
    # a pass read with three channels is the same pass
    assert index_centres(np.dstack([_index(2, 0)] * 3)) == centres


def test_a_partly_hidden_cube_gets_the_centre_of_what_is_seen_of_it():
    cubes = [{"colour": "red", "xy": [25.0, 15.0], "visible_px": 60},
             {"colour": "brown", "xy": [19.0, 15.0], "visible_px": 140},
             {"colour": "white", "xy": [50.0, 30.0], "visible_px": 0}]  # behind a wall
    add_visible_centres(cubes, index_centres(_index(2, 0)), COLOURS)
    assert cubes[0]["visible_xy"] == [27.0, 15.0]  # not 25: its left side is under the brown
    assert cubes[1]["visible_xy"] == [19.0, 15.0]
    assert "visible_xy" not in cubes[2]


def test_equal_counts_of_one_colour_go_to_the_nearest_and_each_object_is_used_once():
    idx = np.zeros((40, 80), np.float32)
    idx[5:10, 5:10] = RED * 7 + 1
    idx[5:10, 60:65] = RED * 7 + 2  # the same 25 pixels, far to the right
    cubes = [{"colour": "red", "xy": [61.0, 7.0], "visible_px": 25},
             {"colour": "red", "xy": [62.0, 7.0], "visible_px": 25}]
    add_visible_centres(cubes, index_centres(idx), COLOURS)
    assert cubes[0]["visible_xy"] == [62.5, 7.5]
    assert cubes[1]["visible_xy"] == [7.5, 7.5]  # the nearest was taken


def test_a_cube_no_object_matches_is_a_clear_error():
    cubes = [{"colour": "red", "xy": [25.0, 15.0], "visible_px": 61}]
    with pytest.raises(RuntimeError, match=r"red cube at .*61 visible pixels"):
        add_visible_centres(cubes, index_centres(_index(2, 0)), COLOURS)


def test_the_renderers_json_writes_each_pictures_centres_from_the_pass_read_for_it(tmp_path):
    """The stand-ins for the renderer's ``cv2`` and ``json`` (``vision/train/render.py``):
    the index pass it reads is kept, and the picture's cubes get their centres when its labels
    are written; any other picture read changes nothing."""
    index_file = tmp_path / "index_0001.png"
    cv2.imwrite(str(index_file), _index(2, 0).astype(np.uint8))
    cv2.imwrite(str(tmp_path / "d01.png"), np.zeros((4, 4, 3), np.uint8))
    reader = _IndexKeepingCv2(cv2)
    writer = _CentreAddingJson(json, reader, COLOURS)
    assert reader.IMREAD_UNCHANGED == cv2.IMREAD_UNCHANGED  # the rest of cv2 passes through

    reader.imread(str(index_file), cv2.IMREAD_UNCHANGED)
    reader.imread(str(tmp_path / "d01.png"))
    labels = {"images": [{"file": "s000/empty.jpg", "cubes": []},
                         {"file": "s000/drop01.jpg",
                          "cubes": [{"colour": "red", "xy": [25.0, 15.0], "visible_px": 60}]}]}
    with open(tmp_path / "labels.json", "w") as out:
        writer.dump(labels, out, indent=1)
    written = json.loads((tmp_path / "labels.json").read_text())
    assert written["images"][1]["cubes"][0]["visible_xy"] == [27.0, 15.0]
    assert reader.centres is None  # used once: the next picture needs its own pass


def _mini_with_centres(tmp_path: Path, shift: float) -> Path:
    """The mini fixture, every shown cube given a visible centre ``shift`` px right of ``xy``."""
    folder = tmp_path / "mini"
    shutil.copytree(MINI, folder)
    labels = json.loads((folder / "labels.json").read_text())
    for rec in labels["images"]:
        for cube in rec.get("cubes", ()):
            if cube.get("visible_px", 1) > 0:
                cube["visible_xy"] = [cube["xy"][0] + shift, cube["xy"][1]]
    (folder / "labels.json").write_text(json.dumps(labels))
    return folder


def test_labels_with_and_without_visible_centres_load_and_old_ones_are_named(tmp_path):
    cube = LabelledCube(RED, 10.0, 20.0, True, 500, (12.0, 21.0))
    assert cube.centre(visible=False) == (10.0, 20.0)
    assert cube.centre(visible=True) == (12.0, 21.0)
    assert LabelledCube(RED, 10.0, 20.0, True, 500).centre(visible=True) == (10.0, 20.0)

    old, new = load_samples(MINI), load_samples(_mini_with_centres(tmp_path, 3.0))
    assert without_visible_centres(old) == [MINI]
    assert without_visible_centres(new) == []
    shown = [(a, b) for s, t in zip(old, new, strict=True)
             for a, b in zip(s.cubes, t.cubes, strict=True) if a.visible_px > 0]
    assert shown and all(b.visible_xy == (a.x + 3.0, a.y) for a, b in shown)


def test_training_targets_follow_the_centres_asked_for(tmp_path):
    pytest.importorskip("torch")  # the Pi's set has none: training is a development tool
    from vision.train.batches import cache_samples

    samples = [s for s in load_samples(_mini_with_centres(tmp_path, 4.0)) if s.cubes][:2]
    projected = cache_samples(samples, (256, 160))
    visible = cache_samples(samples, (256, 160), visible_centres=True)
    for p, v in zip(projected, visible, strict=True):
        assert np.allclose(v.cubes[:, 0], p.cubes[:, 0] + 4.0 * p.scale)
        assert np.array_equal(v.cubes[:, 1:], p.cubes[:, 1:])


def test_training_on_visible_centres_refuses_labels_without_them(tmp_path):
    pytest.importorskip("torch")
    from vision.train.__main__ import main

    with pytest.raises(SystemExit, match=r"have no visible_xy.*trays-mini"):
        main([str(MINI), "--centres", "visible", "--steps", "1", "--out",
              str(tmp_path / "model")])
