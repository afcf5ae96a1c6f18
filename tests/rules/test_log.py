"""The event log: undo and redo are events, corrections replace readings, history lines."""

from __future__ import annotations

import json

import pytest
from amerigo_helpers import act, counts, new_game, player, read

from companion.amerigo.errors import NothingToUndo, RulesError
from companion.amerigo.events import EVENT_TYPES, Event, describe
from companion.amerigo.game import Game


def snap(g):
    return json.dumps(g.state_dict(), sort_keys=True)


def test_undo_then_redo_is_identity():
    g = new_game()
    read(g, blue=4, black=2)
    s0 = snap(g)
    act(g, "red", "black")
    s1 = snap(g)
    g.undo()
    assert snap(g) == s0
    g.redo()
    assert snap(g) == s1
    assert [e["type"] for e in g.events[-3:]] == ["action", "undo", "undo"]
    assert g.history()[-1]["text"].startswith("Redo (takes back undo #")
    assert g.history()[-2]["text"].endswith("red: Load Cannons")


def test_undo_twice_goes_back_two_steps_and_redo_twice_restores():
    g = new_game()
    read(g, blue=4, black=2)
    s0 = snap(g)
    act(g, "red", "black")
    act(g, "white", "black")
    s2 = snap(g)
    g.undo()
    g.undo()
    assert snap(g) == s0
    g.redo()
    g.redo()
    assert snap(g) == s2
    with pytest.raises(NothingToUndo, match="nothing to redo"):
        g.redo()


def test_redo_after_a_new_event_is_refused():
    g = new_game()
    read(g, blue=4, black=2)
    act(g, "red", "black")
    g.undo()
    act(g, "red", "blue")
    with pytest.raises(NothingToUndo, match="something happened since the last undo"):
        g.redo()


def test_undo_crosses_phase_boundaries_exactly():
    g = new_game(players=["a", "b"], tray=counts(blue=7, black=3))
    read(g, blue=4, black=2)
    act(g, "a", "black")
    before_last = snap(g)
    act(g, "b", "gold")  # ends the phase: cubes go to storage, black is dropped
    assert g.state_dict()["phase"] == "black"
    g.undo()
    assert snap(g) == before_last


def test_correcting_an_earlier_tray_reading():
    # "a past mistake can be corrected": the blue phase's reading was 4 blue + 2 black, but there
    # were 5 blue. Red's action used 4 AP; with 5 AP his cannons become 5.
    g = new_game()
    n = len(g.events) + 1
    read(g, blue=4, black=2)
    act(g, "red", "black")
    assert player(g, "red")["cannons"] == 4
    g.command({"type": "tray_corrected", "target": n, "tray": counts(blue=5, black=2)})
    assert player(g, "red")["cannons"] == 5
    assert g.state_dict()["cubes"]["action_space"]["blue"] == 5
    # a correction that makes a later event illegal is refused, with the event number
    refusal = (r"^#\d+ in the history \(red: Load Cannons[^)]*\) would no longer be possible: "
               r"black \(Load Cannons\) is not")
    with pytest.raises(RulesError, match=refusal):
        g.command({"type": "tray_corrected", "target": n, "tray": counts(blue=5)})
    # and the correction itself can be undone
    g.undo()
    assert player(g, "red")["cannons"] == 4


def test_a_correction_to_the_counts_in_force_is_refused():
    """A Correct form sent without a change would only add a "corrected" line and an undo
    step; a correction back to the camera's counts, while another correction is in force, is a
    change and is taken."""
    g = new_game()
    n = len(g.events) + 1
    read(g, blue=4, black=2)
    seq = len(g.events)
    with pytest.raises(NothingToUndo, match=rf"^reading #{n} already says 4 blue, 2 black"):
        g.command({"type": "tray_corrected", "target": n, "tray": counts(blue=4, black=2)})
    assert len(g.events) == seq
    g.command({"type": "tray_corrected", "target": n, "tray": counts(blue=5, black=2)})
    with pytest.raises(NothingToUndo, match="nothing to correct"):
        g.command({"type": "tray_corrected", "target": n, "tray": counts(blue=5, black=2)})
    g.command({"type": "tray_corrected", "target": n, "tray": counts(blue=4, black=2)})
    assert g.state_dict()["cubes"]["action_space"]["blue"] == 4
    # a stored log holding such a correction still loads (written before this check)
    same = [*g.events, {"v": 1, "type": "tray_corrected", "target": n,
                        "tray": counts(blue=4, black=2)}]
    assert Game.from_events(same).state_dict()["cubes"]["action_space"]["blue"] == 4


def test_from_events_rebuilds_the_same_state():
    g = new_game()
    read(g, blue=4, black=2)
    act(g, "red", "black")
    g.undo()
    act(g, "red", "blue", posts=[{"island": "A", "big": True}])
    again = Game.from_events(g.events)
    assert snap(again) == snap(g)
    assert again.score_sheet() == g.score_sheet()


def test_undo_cannot_target_creation_or_undone_events():
    g = Game()
    g.command({"type": "game_created"})
    with pytest.raises(NothingToUndo, match="nothing to undo"):
        g.undo()
    with pytest.raises(NothingToUndo, match="creation cannot be undone"):
        g.command({"type": "undo", "target": 1})


def test_every_event_type_describes_itself():
    g = new_game()
    read(g, blue=4, black=2)
    act(g, "red", "black", ap=3)
    lines = [h["text"] for h in g.history()]
    assert lines[0] == "Game created"
    assert lines[1] == "Players in order: red, white, blue, yellow"
    assert "Tray read: 4 blue, 2 black" in lines
    assert lines[-1] == "red: Load Cannons 3 AP"
    samples = {
        "bump_read": {"tray": {"red": 1}},
        "tray_corrected": {"target": 5, "tray": {"red": 1}},
        "sheet_goods": {"player": "a", "goods": []},
        "chest_cashed": {"player": "a"},
        "token_used": {"player": "a", "token": "gold3"},
        "round_ended": {},
        "final_scoring": {},
        "undo": {"target": 3},
    }
    for t, body in samples.items():
        assert describe(Event.from_dict({"v": 1, "type": t, **body}).data)
    assert set(samples) | {"game_created", "players_seated", "setup_drop_read",
                           "pirate_revealed", "tray_read", "action"} == set(EVENT_TYPES)
