"""``python -m vision.bench`` prints every figure it promises, with numbers that parse, on the
shipped mini set (any model: these check the bench, not the model's quality)."""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import cv2
import numpy as np

from vision import bench
from vision.reading import COLOURS, Cube
from vision.train.data import LabelledCube, Sample

MINI = Path(__file__).resolve().parents[1] / "fixtures" / "vision" / "trays-mini"
SHARE = r"(\d+)/(\d+) = (\d+\.\d) %"


def _run(capsys, *args) -> str:
    assert bench.main([str(MINI), *args]) == 0
    return capsys.readouterr().out


def _shares(line: str) -> list[tuple[int, int, float]]:
    found = [(int(k), int(n), float(p)) for k, n, p in re.findall(SHARE, line)]
    assert found, line
    for k, n, p in found:
        assert 0 <= k <= n and abs(p - 100.0 * k / n) < 0.06, line
    return found


def _line(out: str, pattern: str) -> str:
    match = re.search(pattern, out, re.MULTILINE)
    assert match, f"no line like {pattern!r} in:\n{out}"
    return out[match.start():out.index("\n", match.start())]


def test_plain_run_prints_shares_cubes_reliability_flags_and_speed(capsys):
    out = _run(capsys, "--limit", "4")  # s000's drop and empty tray, s001's two drops
    assert re.search(r"^OpenCV \S+; model .*model\.onnx \d+\.\d\d MB", out, re.MULTILINE)
    assert "== " in out and "4 pictures (3 drops, 1 empty tray)" in out
    empty = _line(out, r"^empty trays read empty ")
    assert [n for _, n, _ in _shares(empty)] == [1, 1]  # with and without the reference
    for mode in ("with reference", "without reference"):
        (k, n, _), *_ = _shares(_line(out, rf"^exact tray {mode}\s*: "))
        assert n == 3
        assert re.search(rf"^cubes {mode}\s*: missed \d+ of \d+ clearly visible, extra \d+, "
                         r"wrong colour \d+; failed pictures 0$", out, re.MULTILINE)
        partly = _line(out, rf"^partly seen {mode}\s*: ")
        assert re.search(r": missed \d+ of \d+ clearly visible cubes that show under 750 pixels",
                         partly)
        unshown = _line(out, rf"^unshown cubes {mode}\s*: ")
        assert re.search(r": \d+ clearly visible cubes the picture does not show .*, \d+ missed; "
                         r"exact trays if they may go either way", unshown)
        (ke, ne, _), = _shares(unshown)
        assert ne == 3 and ke >= k  # each drop has its empty tray; excusing never loses
        flag = re.search(r"wrong trays said uncertain (\d+)/(\d+) = (?:n/a|\d+\.\d %); right "
                         r"trays said uncertain (\d+)/(\d+)",
                         _line(out, rf"^uncertain flag {mode}"))
        fw, nw, fr, nr = map(int, flag.groups())
        assert fw <= nw and fr <= nr and nw + nr == 3 and nr == k
        speed = _line(out, rf"^speed {mode}\s*: ")
        wall, wall95, cpu, cpu95 = map(float, re.findall(r"(\d+\.\d) ms", speed))
        assert 0 < wall <= wall95 and 0 < cpu <= cpu95
        turned = re.search(r"\(3 pictures, 576x324, 1 thread; more views read for (\d+)\)", speed)
        assert turned and int(turned.group(1)) <= 3
    rows = re.findall(r"^  (\d\.\d\d)-(\d\.\d\d)\s+\|\s+(\d+)\s+(\S+)\s+(\S+(?: %)?)\s+\|",
                      out, re.MULTILINE)
    assert [r[0] for r in rows] == ["0.00", "0.50", "0.70", "0.80", "0.90", "0.95", "0.99"]
    for _, _, n, mean, _ in rows:
        assert (mean == "-") == (n == "0")
    assert len(re.findall(r"^  (blue|black|red|brown|green|yellow|white)(\s+\d+){7}$",
                          out, re.MULTILINE)) == 14  # two 7 x 7 confusion matrices
    for mode in ("with reference", "without reference"):
        (k, n, _), *_ = _shares(_line(out, rf"^exact tray {mode}\s*: "))
        block = out[out.index(f"by colour {mode}"):]
        rows = {name: list(map(int, re.search(rf"^  {name}((?:\s+\d+){{7}})$", block,
                                                  re.MULTILINE).group(1).split()))
                for name in ("trays off", "only it", "missed", "extra")}
        missed, extra = map(int, re.search(r"missed (\d+) of \d+ clearly visible, extra (\d+)",
                                           _line(out, rf"^cubes {mode}")).groups())
        assert sum(rows["missed"]) == missed and sum(rows["extra"]) == extra
        assert all(o <= t for o, t in zip(rows["only it"], rows["trays off"], strict=True))
        # every wrong tray has at least one colour off; one with a single colour off is "only"
        assert sum(rows["only it"]) <= n - k <= sum(rows["trays off"])
    assert re.search(r"^peak RSS \d+ MB$", out, re.MULTILINE)


def test_perturb_and_calibrate_print_their_lines(capsys, tmp_path):
    out = _run(capsys, "--limit", "4", "--perturb", "--calibrate", "--json",
               str(tmp_path / "figures.json"))
    for name in bench.PERTURBATIONS:
        line = _line(out, rf"^  {re.escape(name)}\s*: ")
        assert len(_shares(line)) == 2
        assert len(re.findall(r"\(([+-]\d+\.\d)\)", line)) == 2, line
    assert re.search(r"^calibration learning: \d+ of 3 drops taught", out, re.MULTILINE)
    for mode in ("with reference", "without reference"):
        line = _line(out, rf"^  {mode}\s*: learned ")
        (_, n1, _), (_, n2, _) = _shares(line)
        assert n1 == n2 == 1  # s001's second drop: the only one after a session's first
        flags = re.search(r"wrong and not flagged: learned (\d+), unlearned (\d+); right and "
                          r"flagged: learned (\d+), unlearned (\d+)$", line)
        assert flags and all(int(k) <= 1 for k in flags.groups())
        assert int(flags[1]) + int(flags[3]) <= 1  # one reading: wrong or right, not both
    figures = json.loads((tmp_path / "figures.json").read_text())
    (fig,) = figures["sets"]
    assert fig["pictures"] == 4 and set(fig["perturb"]) == set(bench.PERTURBATIONS)
    assert (fig["drops"], fig["empty_trays"]) == (3, 1)
    assert fig["ref"]["n"] == fig["noref"]["n"] == 3 and len(fig["ref"]["reliability"]) == 7
    assert all(fig["perturb"][p][m]["n"] == 3 for p in bench.PERTURBATIONS for m in bench.MODES)
    assert fig["empty"]["ref"]["n"] == fig["empty"]["noref"]["n"] == 1
    learned = fig["calibrate"]["modes"]["ref"]
    assert learned["n"] == 1 and {"learned_quiet", "unlearned_quiet", "learned_doubted",
                                  "unlearned_doubted"} <= set(learned)


def test_an_unreadable_picture_is_reported_and_counted_wrong(capsys, tmp_path):
    folder = tmp_path / "set"
    shutil.copytree(MINI, folder)
    (folder / "s000" / "drop11.jpg").write_bytes(b"not a jpeg")
    assert bench.main([str(folder), "--limit", "3", "-v"]) == 0
    out = capsys.readouterr().out
    assert "could not count s000/drop11.jpg [ref]: failed: not an image file" in out
    for mode in ("with reference", "without reference"):
        (k, n, _), *_ = _shares(_line(out, rf"^exact tray {mode}\s*: "))
        assert n == 2 and k <= 1
        assert re.search(rf"^cubes {mode}\s*: .*failed pictures 1$", out, re.MULTILINE)


def test_the_empty_trays_are_scored_apart_from_the_drops(tmp_path, capsys):
    """Each set-up's empty.jpg is read against itself with the reference: it must not lift the
    drops' share, and a cube read where there is none must still be seen."""
    folder = tmp_path / "set"
    shutil.copytree(MINI, folder)
    labels = json.loads((folder / "labels.json").read_text())
    for image in labels["images"]:
        if image["file"].endswith("empty.jpg"):
            image["counts"]["white"] = 7  # labels that no reading of an empty tray meets
    (folder / "labels.json").write_text(json.dumps(labels))
    assert bench.main([str(folder), "--json", str(tmp_path / "f.json")]) == 0
    out = capsys.readouterr().out
    assert "9 pictures (5 drops, 4 empty trays)" in out
    assert [(k, n) for k, n, _ in _shares(_line(out, r"^empty trays read empty "))] == [
        (0, 4), (0, 4)]
    for mode in ("with reference", "without reference"):
        (_, n, _), *_ = _shares(_line(out, rf"^exact tray {mode}\s*: "))
        assert n == 5
    (fig,) = json.loads((tmp_path / "f.json").read_text())["sets"]
    assert fig["ref"]["n"] == 5 and fig["empty"]["noref"]["exact"] == 0
    assert len(fig["empty"]["noref"]["wrong_pictures"]) == 4


def test_a_folder_without_labels_is_refused(tmp_path, capsys):
    assert bench.main([str(tmp_path)]) == 2
    assert "cannot read labels" in capsys.readouterr().err


def test_the_by_colour_rows_name_the_colour_a_wrong_tray_got_wrong():
    black, red, blue = COLOURS.index("black"), COLOURS.index("red"), COLOURS.index("blue")
    truth = (LabelledCube(black, 100, 100, True, 900), LabelledCube(black, 300, 100, True, 900),
             LabelledCube(red, 500, 300, True, 900))
    sample = Sample(Path("s000/drop01.jpg"), "s000",
                    {c: {"black": 2, "red": 1}.get(c, 0) for c in COLOURS}, truth, None, None,
                    (1152, 648))
    # the second black cube missed, a blue one read on bare floor
    cubes = [Cube("black", 101, 99, 0.99, False), Cube("red", 500, 302, 0.99, False),
             Cube("blue", 900, 500, 0.7, True)]
    reading = SimpleNamespace(counts={"black": 1, "red": 1, "blue": 1}, cubes=cubes,
                              uncertain=True, tray_corners=None)
    tally = bench.Tally()
    assert not tally.add(sample, "s000/drop01.jpg", "?", reading, None, size=(1152, 648))
    rows = dict(zip(bench.BY_COLOUR_ROWS, tally.by_colour.tolist(), strict=True))
    assert rows["trays off"][black] == rows["trays off"][blue] == 1
    assert rows["trays off"][red] == 0 and sum(rows["only it"]) == 0
    assert rows["missed"][black] == 1 and sum(rows["missed"]) == 1
    assert rows["extra"][blue] == 1 and sum(rows["extra"]) == 1
    assert tally.summary()["by_colour"]["missed"]["black"] == 1


def _one_black_missed(*truth: LabelledCube):
    """A 1152 x 648 picture of ``truth`` and a reading that found one black cube at (101, 99)
    and the last red one (the second black cube, labelled at (300, 100), missed)."""
    counts = Counter(COLOURS[c.colour] for c in truth)
    sample = Sample(Path("s000/drop01.jpg"), "s000", {c: counts[c] for c in COLOURS}, truth,
                    None, None, (1152, 648))
    red = next(c for c in reversed(truth) if COLOURS[c.colour] == "red")
    cubes = [Cube("black", 101, 99, 0.99, False), Cube("red", red.x, red.y + 2, 0.99, False)]
    reading = SimpleNamespace(counts={"black": 1, "red": 1}, cubes=cubes, uncertain=False,
                              tray_corners=None)
    return sample, reading


def test_cubes_the_picture_does_not_show_are_tallied_and_may_go_either_way_beside_the_rule():
    black, red = COLOURS.index("black"), COLOURS.index("red")
    sample, reading = _one_black_missed(
        LabelledCube(black, 100, 100, True, 900), LabelledCube(black, 300, 100, True, 900),
        LabelledCube(red, 500, 300, True, 900))
    tally = bench.Tally()
    # the second black cube, missed, is one the picture does not show; the red one is shown
    assert not tally.add(sample, "a", "?", reading, None, size=(1152, 648), unshown={1})
    # the red cube is unshown but found; the missed black one is not excused
    assert not tally.add(sample, "b", "?", reading, None, size=(1152, 648), unshown={2})
    tally.add(sample, "c", "?", reading, None, size=(1152, 648))  # no empty tray to tell by
    assert tally.exact == 0 and tally.missed == 3
    summary = tally.summary()
    assert summary["unshown"] == {"cubes": 2, "missed": 1}
    assert summary["exact_if_unshown_either_way"] == {"exact": 1, "n": 2}


def test_partly_seen_cubes_are_tallied_in_the_labelled_pictures_pixels():
    black, red = COLOURS.index("black"), COLOURS.index("red")
    # at 1152 x 648: a whole cube, one half under another (missed), one barely visible
    sample, reading = _one_black_missed(
        LabelledCube(black, 100, 100, True, 1500), LabelledCube(black, 300, 100, True, 600),
        LabelledCube(red, 500, 300, True, 100), LabelledCube(red, 700, 300, True, 700))
    tally = bench.Tally()
    tally.add(sample, "a", "?", reading, None, size=(1152, 648))
    assert tally.summary()["partly_seen"] == {"cubes": 2, "missed": 1}
    # labels of a picture half as wide and high: a quarter of the pixels is the same share
    small = bench.Tally()
    small.add(sample, "a", "?", reading, None, size=(576, 324))
    # now only the 100-pixel cube (missed) is partly seen, over 150 / 4 and under 750 / 4
    assert small.summary()["partly_seen"] == {"cubes": 1, "missed": 1}


def test_a_failure_picture_marks_the_missed_cube_and_the_wrong_colour_where_they_are():
    black, red = COLOURS.index("black"), COLOURS.index("red")
    truth = (LabelledCube(black, 100, 100, True, 900), LabelledCube(black, 300, 100, True, 900),
             LabelledCube(red, 500, 300, True, 900), LabelledCube(red, 700, 300, True, 20))
    sample = Sample(Path("s000/drop01.jpg"), "s000",
                    {c: {"black": 2, "red": 2}.get(c, 0) for c in COLOURS}, truth, None, None,
                    (1152, 648))
    # the second black cube missed, the red one read brown, the barely visible red one missed
    cubes = [Cube("black", 101, 99, 0.99, False), Cube("brown", 500, 302, 0.8, True)]
    reading = SimpleNamespace(counts={"black": 1, "brown": 1}, cubes=cubes, uncertain=True,
                              tray_corners=None)
    picture = np.full((648, 1152, 3), 128, np.uint8)
    words = bench.mark_truth(picture, sample, reading)
    assert sorted(words) == ["missed bk", "was rd"]  # the barely visible cube may go either way
    magenta = np.all(picture == bench.TRUTH_MARK, axis=2)
    assert magenta[85:116, 285:316].any() and not magenta[85:116, 85:116].any()
    assert magenta[300:340, 480:560].any() and not magenta[280:320, 680:720].any()


def test_failures_writes_each_wrong_reading_with_truth_and_reading_in_its_name(tmp_path):
    folder = tmp_path / "set"
    shutil.copytree(MINI, folder)
    labels = json.loads((folder / "labels.json").read_text())
    for image in labels["images"]:
        image["counts"]["white"] = 7  # seven white cubes no picture shows: every reading wrong
    (folder / "labels.json").write_text(json.dumps(labels))
    assert bench.main([str(folder), "--limit", "1", "--failures", str(tmp_path / "out")]) == 0
    drawn = sorted((tmp_path / "out" / "set").glob("*.jpg"))
    assert len(drawn) == 2  # with and without the reference
    assert all("white7" in p.name and "_read-" in p.name for p in drawn)
    assert cv2.imread(str(drawn[0])) is not None
