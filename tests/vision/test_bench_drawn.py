"""The drawn-tray bench's bookkeeping: a perfect counter scores 100 %, errors split right."""

from __future__ import annotations

from types import SimpleNamespace

import bench_drawn
import pytest

from vision.reading import COLOURS


@pytest.fixture
def stub(monkeypatch):
    """Replace the counter by one that reads the drawn truth (or a spoiled copy of it)."""
    truths: dict[int, dict[str, int]] = {}
    real = bench_drawn.render_case

    def render_case(case):
        frame, ref, want = real(case)
        truths[id(frame)] = want
        return frame, ref, want

    def use(spoil=lambda counts: counts):
        def count(image, reference=None):
            return SimpleNamespace(counts=spoil(dict(truths[id(image)])), uncertain=False)

        monkeypatch.setattr(bench_drawn, "render_case", render_case)
        monkeypatch.setattr(bench_drawn, "count_cubes", count)

    return use


def test_a_perfect_counter_scores_everything(stub):
    stub()
    rows = bench_drawn.run(3, seed=0)
    assert len(rows) == 3 * len(bench_drawn.MODES)
    summ = bench_drawn.summary(rows)
    for mode in bench_drawn.MODES:
        s = summ[mode]
        assert (s["n"], s["exact"]) == (3, 3)
        assert s["missed"] == s["extra"] == s["wrong"] == s["failed"] == s["wrong_readings"] == 0
        assert set(s["by_factor"]) == set(bench_drawn.FACTORS)
        for levels in s["by_factor"].values():
            assert sum(n for _, n in levels.values()) == 3
            assert all(k == n for k, n in levels.values())
    lines = bench_drawn.report(summ)
    assert lines[0].startswith("ref  : exact 3/3 = 100.0 %")
    assert lines[1].startswith("noref: exact 3/3 = 100.0 %")
    for f in bench_drawn.FACTORS:
        assert any(line.startswith(f) and line.endswith("100.0 %") for line in lines)


def test_a_counter_that_sees_nothing_misses_every_cube(stub):
    stub(lambda counts: dict.fromkeys(counts, 0))
    rows = bench_drawn.run(3, seed=0)
    total = sum(sum(r["want"].values()) for r in rows if r["mode"] == "ref")
    s = bench_drawn.summary(rows)["ref"]
    assert (s["exact"], s["missed"], s["extra"], s["wrong"]) == (0, total, 0, 0)
    assert s["wrong_flagged"] == 0 and s["wrong_readings"] == 3


def test_errors_split_into_missed_extra_and_swapped():
    want = {**dict.fromkeys(COLOURS, 0), "red": 2, "white": 1}
    assert bench_drawn.errors(want, want) == (0, 0, 0)
    assert bench_drawn.errors({**want, "red": 1, "brown": 1}, want) == (0, 0, 1)
    assert bench_drawn.errors({**want, "red": 0, "brown": 1}, want) == (1, 0, 1)
    assert bench_drawn.errors({**want, "blue": 2}, want) == (0, 2, 0)


def test_the_scenes_follow_the_seed():
    a, b = bench_drawn.draw_case(0, 7), bench_drawn.draw_case(0, 7)
    assert a == b and a != bench_drawn.draw_case(1, 7)
    for i in range(20):
        case = bench_drawn.draw_case(0, i)
        assert 1 <= len(case.scene.cubes) <= 12
        assert 0.6 <= case.scene.exposure <= 1.4 and 70 <= case.scene.jpeg <= 95
