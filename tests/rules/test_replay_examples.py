"""The shipped example games replay to their final score sheets; the replay tool; fold speed."""

from __future__ import annotations

import json
import tracemalloc
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



def _refused(path: Path, capsys) -> str:
    """The replay of ``path`` stops with exit code 2 and one line of words (no traceback)."""
    assert main([str(path)]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert err.startswith(f"error: {path}: ") and "\n" not in err and not captured.out
    return err


@pytest.mark.parametrize(("data", "match"), [
    # what the walkthrough replayed: UTF-16's byte order mark, then junk
    (b"\xff\xfe\x00garbage\n", "not a text file of JSON lines (byte 0xff at line 1 is not UTF-8"),
    (b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01", "byte 0xff at line 1 is not UTF-8"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "byte 0x89 at line 1 is not UTF-8"),
    # a bad byte further down names its line, counted as an editor does (\r\n and \r end lines)
    (b'{"v": 1, "type": "game_created"}\r\n# caf\xc3\xa9\r\n\r{"note": "caf\xe9"}\n',
     "byte 0xe9 at line 4 is not UTF-8)"),
])
def test_a_file_that_is_not_utf8_text_is_refused_in_words(tmp_path, capsys, data, match):
    path = tmp_path / "bin.jsonl"
    path.write_bytes(data)
    assert match in _refused(path, capsys)


def test_a_log_saved_as_utf16_is_told_to_be_saved_as_utf8(tmp_path, capsys):
    path = tmp_path / "notepad.jsonl"
    path.write_text('{"v": 1, "type": "game_created"}\n', encoding="utf-16")
    assert "it looks like UTF-16: save it as UTF-8" in _refused(path, capsys)


@pytest.mark.parametrize(("line", "n"), [
    ("[" * 100_000, 1),  # the JSON decoder itself gives up (RecursionError)
    ('{"v": 1, "type": "game_created", "name": ' + "[" * 33 + "]" * 33 + "}", 2),
    ('{"v": 1, "type": "game_created", "settings": ' + '{"a": ' * 40 + "1" + "}" * 41, 2),
])
def test_nesting_deeper_than_the_limit_is_refused_in_words(tmp_path, capsys, line, n):
    path = tmp_path / "deep.jsonl"
    path.write_text("#\n" * (n - 1) + line + "\n")
    assert f"line {n}: lists or objects nested more than 32 deep" in _refused(path, capsys)


def test_nesting_up_to_the_limit_reaches_the_rules(tmp_path, capsys):
    path = tmp_path / "deep.jsonl"
    path.write_text('{"v": 1, "type": "game_created", "name": ' + "[" * 31 + "]" * 31 + "}\n")
    assert "line 1: name must be a non-empty text" in _refused(path, capsys)


def test_a_number_too_long_to_convert_is_refused_in_words(tmp_path, capsys):
    path = tmp_path / "g.jsonl"
    path.write_text('{"v": 1, "type": "game_created", "at": ' + "9" * 5000 + "}\n")
    assert "line 1: not valid JSON (a number with too many digits)" in _refused(path, capsys)


def test_a_byte_order_mark_at_the_start_of_the_file_is_skipped(tmp_path, capsys):
    """Windows Notepad saves UTF-8 with a BOM; the content is otherwise fine."""
    example = (EXAMPLES / "game-2p.jsonl").read_bytes()
    path = tmp_path / "notepad.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + example.replace(b"\n", b"\r\n"))
    sheet = replay(path, capsys)["score_sheet"]
    assert sheet["winner"] == EXPECTED["game-2p.jsonl"]["winner"]
    # ... at the very start only: one inside the file (two files joined) is still an error
    first, second = example.split(b"\n")[:2]
    path.write_bytes(first + b"\n\xef\xbb\xbf" + second + b"\n")
    assert "line 2: not valid JSON (Unexpected UTF-8 BOM" in _refused(path, capsys)


def test_only_newlines_end_lines_so_a_raw_line_separator_in_a_note_is_text(tmp_path, capsys):
    """U+2028, U+0085 and a form feed are line breaks to ``str.splitlines`` but not in JSON."""
    path = tmp_path / "g.jsonl"
    path.write_text('{"v": 1, "type": "game_created", "note": "a\u2028b\x85c"}\n'
                    '\x0c\n{"v": 1, "type": "round_ended"}\n', encoding="utf-8")
    err = _refused(path, capsys)
    assert "line 3: ending the round is not possible now" in err


def test_a_line_of_megabytes_is_refused_like_a_short_one(tmp_path, capsys):
    path = tmp_path / "big.jsonl"
    path.write_text('{"v": 1, "type": "game_created", "note": "' + "x" * 5_000_000 + '"}\n')
    err = _refused(path, capsys)
    assert err.endswith("line 1: a note is at most 500 characters, this one has 5000000")


def test_the_file_is_read_a_line_at_a_time(tmp_path, capsys):
    """A long log costs the memory of its longest line, not of a list of all its lines."""
    path = tmp_path / "long.jsonl"
    path.write_bytes(b"#\n" * 300_000 + b"{oops\n")
    tracemalloc.start()
    try:
        err = _refused(path, capsys)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "line 300001: not valid JSON" in err
    assert peak < 2_000_000  # all 300,000 lines at once: about 20 MB

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


def test_a_type_that_is_a_list_is_an_unknown_type_not_a_crash(tmp_path, capsys):
    log = tmp_path / "odd.jsonl"
    log.write_text('{"v": 1, "type": []}\n')
    assert main([str(log)]) == 2
    err = capsys.readouterr().err
    assert "line 1: unknown event type []" in err and "Traceback" not in err


def test_a_file_without_line_breaks_is_refused_before_it_fills_the_memory(tmp_path, capsys):
    endless = tmp_path / "zeros.jsonl"
    endless.write_bytes(b"\0" * (17 * 2**20))  # as /dev/zero, but with an end for the test
    assert main([str(endless)]) == 2
    assert "line 1 is longer than 16 MiB" in capsys.readouterr().err
