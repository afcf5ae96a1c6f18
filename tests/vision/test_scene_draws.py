"""The wider table draws of ``render.py --wider``, checked without Blender: against a stand-in
renderer that draws a print and a mood the way the shared one does."""

from __future__ import annotations

import colorsys
import json
import random
import sys

import pytest

from vision.train import render
from vision.train.scene_draws import (
    DIM,
    RANDOM_PRINT,
    RENDERER_MOODS,
    DimAmongMoods,
    random_print,
    side_stream,
)

# A stand-in for ../shared/tools/render/render_tray.py: the same names render.py uses, a set-up
# that draws its print and its mood from the stream as the real one does, one more draw after
# them, and a main() that writes each set-up's meta.
STAND_IN = '''
import json, random, sys
import cv2
COLOURS = ["blue", "black", "red", "brown", "green", "yellow", "white"]
TRAY_PALETTES = {"sea": ((43, 93, 122), (26, 51, 74)), "wood": ((139, 94, 60), (90, 58, 34))}
TRAY_X, TRAY_Y = 8.0, 5.0
DRAWS_MOOD = True

class Vector(tuple):
    def __new__(cls, v):
        return tuple.__new__(cls, v)
    x = property(lambda self: self[0])
    y = property(lambda self: self[1])

def world_to_camera_view(scene, camera, p):
    return Vector(((p[0] + 10) / 20, (p[1] + 10) / 20, 1.0))

def build_session(rng, profile, res, samples):
    name = rng.choice(list(TRAY_PALETTES))
    base, accent = TRAY_PALETTES[name]
    meta = {"tray": name, "base": list(base), "accent": list(accent)}
    if DRAWS_MOOD:
        meta["mood"] = rng.choice(["ceiling", "window", "lamp", "ring", "mixed"])
    meta["after"] = rng.random()
    return None, None, {}, None, meta

def main():
    out = sys.argv[sys.argv.index("--out") + 1]
    metas = [build_session(random.Random(f"dev:1:{s}"), "public", (100, 50), 8)[4]
             for s in range(40)]
    with open(out, "w") as f:
        json.dump(metas, f)
    return 0
'''


@pytest.fixture
def stand_in(tmp_path, monkeypatch):
    """A folder holding the stand-in renderer; sys.path, sys.argv and the imported module are
    put back afterwards."""
    folder = tmp_path / "renderer"
    folder.mkdir()
    (folder / "render_tray.py").write_text(STAND_IN)
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setattr(sys, "argv", list(sys.argv))
    monkeypatch.delitem(sys.modules, "render_tray", raising=False)
    return folder


def _render(folder, out, *extra) -> list[dict]:
    assert render.main(["--renderer", str(folder), "--out", str(out), *extra]) == 0
    return json.loads(out.read_text())


def test_a_random_print_is_any_colour_and_the_same_for_the_same_stream():
    prints = [random_print(random.Random(i)) for i in range(400)]
    assert prints[7] == random_print(random.Random(7))
    for base, accent in prints:
        assert all(0 <= c <= 255 for c in (*base, *accent))
    hsv = [colorsys.rgb_to_hsv(*(c / 255 for c in base)) for base, _ in prints]
    assert min(v for _, _, v in hsv) < 0.2  # dark prints, as the renderer's sea and dark green
    assert max(v for _, _, v in hsv) > 0.9  # and pale ones
    assert max(s for _, s, _ in hsv) > 0.75  # strong colours too, of every hue
    assert {int(h * 6) for h, s, _ in hsv if s > 0.3} == set(range(6))
    darker = sum(sum(accent) < sum(base) for base, accent in prints)
    assert 200 < darker < 360  # the accent most often darker, as the named palettes' are


def test_the_side_stream_leaves_the_set_up_stream_as_it_was():
    rng = random.Random("dev:144:3")
    before = rng.getstate()
    side = side_stream(rng)
    assert rng.getstate() == before
    assert side.random() == side_stream(random.Random("dev:144:3")).random()
    assert side.random() != random.Random("dev:144:3").random()


def test_the_mood_draw_may_answer_dim_and_the_stream_goes_on_as_before():
    moods = set()
    for seed in range(60):
        plain, wider = random.Random(seed), random.Random(seed)
        draws = DimAmongMoods(wider, random.Random(f"side {seed}"))
        assert draws.choice(["a", "b", "c"]) == plain.choice(["a", "b", "c"])
        mood = draws.choice(list(RENDERER_MOODS))
        plain.choice(list(RENDERER_MOODS))
        assert mood in (*RENDERER_MOODS, DIM) and draws.mood == mood
        moods.add(mood)
        assert draws.uniform(0, 1) == plain.uniform(0, 1)  # other draws pass through
        assert wider.getstate() == plain.getstate()
    assert moods == {*RENDERER_MOODS, DIM}


def test_wider_set_ups_get_a_random_print_and_may_be_dim(stand_in, tmp_path):
    plain = _render(stand_in, tmp_path / "plain.json")
    wider = _render(stand_in, tmp_path / "wider.json", "--wider", "1")
    named = sys.modules["render_tray"].TRAY_PALETTES
    assert named == {"sea": ((43, 93, 122), (26, 51, 74)),
                     "wood": ((139, 94, 60), (90, 58, 34))}  # put back after each set-up
    assert {m["tray"] for m in plain} == {"sea", "wood"}
    assert {m["mood"] for m in plain} <= set(RENDERER_MOODS)
    prints = set()
    for p, w in zip(plain, wider, strict=True):
        assert w["tray"] == RANDOM_PRINT
        assert [w["base"], w["accent"]] == w["tray_srgb"]  # the renderer looked up the print
        assert w["mood"] in (*RENDERER_MOODS, DIM)
        assert w["after"] == p["after"]  # every draw of the set-up's own stream was made
        assert len(w["tray_corners_px"]) == 4
        prints.add(json.dumps(w["tray_srgb"]))
    assert len(prints) == len(wider)  # a new print for every set-up
    assert any(m["mood"] == DIM for m in wider)


def test_a_share_of_the_set_ups_is_drawn_wider(stand_in, tmp_path):
    half = _render(stand_in, tmp_path / "half.json", "--wider", "0.5")
    wider = [m for m in half if m["tray"] == RANDOM_PRINT]
    assert 10 <= len(wider) <= 30
    assert all(m["tray"] in ("sea", "wood") and "tray_srgb" not in m
               for m in half if m not in wider)


def test_a_share_outside_zero_to_one_is_refused(stand_in, tmp_path, capsys):
    with pytest.raises(SystemExit):
        render.main(["--renderer", str(stand_in), "--wider", "1.5"])
    assert "between 0 and 1" in capsys.readouterr().err


def test_a_renderer_that_no_longer_draws_the_mood_is_noticed(stand_in, tmp_path):
    text = (stand_in / "render_tray.py").read_text()
    (stand_in / "render_tray.py").write_text(text.replace("DRAWS_MOOD = True",
                                                          "DRAWS_MOOD = False"))
    with pytest.raises(RuntimeError, match="--wider needs updating"):
        _render(stand_in, tmp_path / "x.json", "--wider", "1")
    assert sys.modules["render_tray"].TRAY_PALETTES["sea"] == ((43, 93, 122), (26, 51, 74))
