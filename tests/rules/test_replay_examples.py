"""The shipped example games replay to their final score sheets; the replay tool; fold speed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from companion.amerigo.game import Game
from companion.amerigo.replay import main

EXAMPLES = Path(__file__).resolve().parents[2] / "companion" / "amerigo" / "examples"

# The final sheets as replayed when the files were written (make_example_games.py): any change in
# the rules engine that changes a score shows up here.
EXPECTED = {
    "game-4p.jsonl": {"winner": "Ben", "totals": {"Ben": 92, "Dan": 75, "Ada": 72, "Cleo": 68}},
    "game-2p.jsonl": {"winner": "Eva", "totals": {"Eva": 70, "Finn": 64}},
}


def replay(path: Path, capsys) -> dict:
    assert main([str(path)]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("name", ["game-4p.jsonl", "game-2p.jsonl"])
def test_example_game_replays_to_the_final_sheet(name, capsys):
    out = replay(EXAMPLES / name, capsys)
    state, sheet = out["state"], out["score_sheet"]
    assert state["stage"] == "over" and state["round"] == 5 and sheet["final"]
    assert len(state["pirates"]["revealed"]) == 5
    for p in sheet["players"]:
        parts = (p["vp_before_final_scoring"] + p["gold"]["vp"] + p["goods"]["vp"]
                 + p["progress"]["vp"] + p["special_actions"]["vp"])
        assert parts == p["total"] and not p["missing_inputs"]
    cubes = state["cubes"]
    assert sum(sum(cubes[k].values()) for k in ("tower", "storage", "tray", "action_space")) == 49
    expected = EXPECTED[name]
    assert sheet["winner"] == expected["winner"]
    assert {r["player"]: r["total"] for r in sheet["ranking"]} == expected["totals"]
    # the log has a bit of everything the table does
    types = {json.loads(line)["type"] for line in (EXAMPLES / name).read_text().splitlines()}
    assert {"setup_drop_read", "tray_read", "action", "round_ended", "pirate_revealed",
            "final_scoring"} <= types


def test_replay_reports_the_line_of_a_bad_event(tmp_path, capsys):
    lines = (EXAMPLES / "game-2p.jsonl").read_text().splitlines()[:6]
    lines.insert(3, "")  # blank lines are skipped but still counted
    lines.append('{"v": 1, "type": "action", "player": "Zed", "choice": "blue"}')
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n")
    assert main([str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0
    assert "line 8:" in err and "'Zed' is not a player" in err


@pytest.mark.parametrize(("text", "match"), [
    ('{"v": 1, "type": "game_created"}\n{oops\n', "line 2: not valid JSON"),
    ('{"type": "game_created"}\n', 'line 1: missing version field "v"'),
    ('{"v": 1, "type": "game_created"}\n{"v": 1, "type": "round_ended"}\n',
     "line 2: ending the round is not possible now"),
])
def test_replay_errors(tmp_path, capsys, text, match):
    path = tmp_path / "g.jsonl"
    path.write_text(text)
    assert main([str(path)]) == 2
    assert match in capsys.readouterr().err


def test_replay_usage_and_missing_file(tmp_path, capsys):
    assert main([]) == 2
    assert main([str(tmp_path / "nope.jsonl")]) == 2
    assert "cannot read" in capsys.readouterr().err


def _log_of_500_events() -> list[dict]:
    """The 4-player example with undo+redo pairs added after actions, up to 500 events."""
    lines = [json.loads(x) for x in (EXAMPLES / "game-4p.jsonl").read_text().splitlines()]
    last_target = max(i for i, e in enumerate(lines) if "target" in e)
    g = Game()
    extra = 500 - len(lines)
    for i, e in enumerate(lines):
        g.apply(e)
        for _ in range(2):
            if i > last_target and e["type"] == "action" and extra >= 2:
                g.undo()
                g.redo()
                extra -= 2
    return g.events


def test_a_500_event_log_folds_to_the_same_end():
    """Speed is measured by ``python -m companion.bench``; here only the result counts."""
    events = _log_of_500_events()
    assert len(events) == 500
    game = Game.from_events(events)
    assert game.state_dict()["stage"] == "over"
