"""Rendered trays: the small shipped copies always, the full set when ../shared is here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vision import bench
from vision.counter import count_cubes, load_image

MINI = Path(__file__).resolve().parents[1] / "fixtures" / "vision" / "trays-mini"
LABELS = {x["file"]: x for x in json.loads((MINI / "labels.json").read_text())["images"]}
# Frames the counter is known to miss with the reference, as strict xfails (none at present:
# the two cubes at the tower's mouth in s004/drop11 are found since the change is measured
# against the frame's own noise).
KNOWN_MISSES: dict[str, str] = {}
ALL_DROPS = sorted(f for f in LABELS if not f.endswith("empty.jpg"))
DROPS = [
    pytest.param(f, marks=pytest.mark.xfail(reason=KNOWN_MISSES[f], strict=True))
    if f in KNOWN_MISSES else f
    for f in ALL_DROPS
]


@pytest.mark.parametrize("name", DROPS)
def test_mini_renders_with_reference(name):
    label = LABELS[name]
    img = load_image(MINI / name)
    ref = load_image(MINI / label["session"] / "empty.jpg")
    reading = count_cubes(img, ref)
    assert bench._exact(reading.counts, label), (reading.counts, label["counts"])


@pytest.mark.parametrize("name", ALL_DROPS)
def test_mini_renders_without_reference_are_right_or_unsure(name):
    label = LABELS[name]
    reading = count_cubes(load_image(MINI / name))
    assert bench._exact(reading.counts, label) or reading.uncertain


# Empty trays read wrongly without the reference, as strict xfails (none at present: the
# corner of a lamp's hard shadow against a wall in s002, which the floor estimate takes for a
# change, is not edged like a cube and is dropped since floor-estimate pieces need edges of
# their own that are not long straight shadow edges).
EMPTY_MISSES: dict[str, str] = {}


@pytest.mark.parametrize("session", [
    pytest.param(s, marks=pytest.mark.xfail(reason=EMPTY_MISSES[s], strict=True))
    if s in EMPTY_MISSES else s
    for s in sorted({x["session"] for x in LABELS.values()})
])
def test_mini_empty_trays_read_zero(session):
    assert count_cubes(load_image(MINI / session / "empty.jpg")).total == 0


def test_bench_prints_every_figure(capsys):
    assert bench.main([str(MINI)]) == 0
    out = capsys.readouterr().out
    for words in ("with empty.jpg reference: exact", "without reference: exact", "missed",
                  "extra", "wrong colour", "ms median", "p95", "confusion", "peak RSS"):
        assert words in out
    # the mini set: every frame right with the reference but the known miss
    n, miss = len(LABELS), len(KNOWN_MISSES)
    assert f"all     with empty.jpg reference: exact {n - miss}/{n}" in out


def test_bench_refuses_a_folder_without_labels(tmp_path, capsys):
    assert bench.main([str(tmp_path)]) == 2


@pytest.mark.slow
def test_full_renders_do_not_regress(renders_dir):
    """A floor under today's figures on trays-rendered (see vision/bench.py), not the target."""
    lines = bench.run(renders_dir, "all", verbose=False)
    text = "\n".join(lines)

    def share(prefix: str) -> float:
        line = next(x for x in lines if x.startswith(prefix))
        return float(line.split("=")[1].split("%")[0])

    assert share("all     with empty.jpg reference") >= 98.0, text  # 65/65 now
    assert share("all     without reference") >= 95.0, text  # 63/65 now


def test_bench_calibrated_figures_include_learning_as_the_device_does(capsys):
    assert bench.main([str(MINI), "--calibrate"]) == 0
    out = capsys.readouterr().out
    learned = next(x for x in out.splitlines() if "learning from every drop so far" in x)
    plain = next(x for x in out.splitlines() if "the same frames, nothing learned" in x)
    # both score the same frames: the first drop of each session is only learned from
    assert learned.split("exact ")[1].split(" =")[0].split("/")[1] == \
        plain.split("exact ")[1].split(" =")[0].split("/")[1]


def test_a_black_cube_in_the_towers_deep_shadow_is_found_or_said_to_be_unsure(renders_dir):
    """s002/drop01 without reference: the black cube in the tower's shadow is no darker than
    that shadow by a clear factor, so its piece is dropped with the shadow; the reading must
    then say a cube may hide there (``segment._dark_left_out``), not read wrong and sure."""
    label = next(x for x in json.loads((renders_dir / "labels.json").read_text())["images"]
                 if x["file"] == "s002/drop01.jpg")
    reading = count_cubes(load_image(renders_dir / "s002" / "drop01.jpg"))
    assert bench._exact(reading.counts, label) or any(
        "dark patch" in w for w in reading.warnings), (reading.counts, reading.warnings)
