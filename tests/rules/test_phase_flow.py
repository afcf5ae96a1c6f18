"""The phase cycle and the cube ledger: drops, skips, bumps, round end, set-up order."""

from __future__ import annotations

import pytest
from amerigo_helpers import act, counts, finish_phase, forfeit, new_game, read

from companion.amerigo.errors import LimitReached, MalformedEvent, WrongStage
from companion.amerigo.game import Game
from companion.amerigo.offer import COLOURS


def test_phase_with_no_cubes_out_is_skipped():
    # "If a storage space is empty or no cubes fall out of the tower, skip this phase"
    g = new_game(tray=counts(blue=7, black=7))
    read(g)  # nothing fell out
    st = g.state_dict()
    assert st["phase"] == "black" and st["skipped_phases"][0]["why"] == "no cubes out"
    assert g.history()[-1]["outcome"] == (
        "the blue phase is skipped: no cube fell out; next: round 1, black phase")


def test_empty_storage_space_is_skipped():
    # set-up: no black cube fell out -> the black storage space is empty
    g = new_game(tray=counts(blue=7, red=1))
    read(g, blue=2)
    finish_phase(g)
    st = g.state_dict()
    assert st["phase"] == "red" and st["expects"] == "tray_read"
    assert st["skipped_phases"] == [{"round": 1, "phase": "black", "why": "storage empty"}]
    assert st["vision_bounds"]["red"] == 7


def test_bumped_cubes_wait_in_the_tray_and_drop_with_the_next_phase():
    # "leave the cubes in the tray until the start of the next phase. Drop these cubes into the
    # tower along with the cubes on the appropriate storage space for this phase."
    g = new_game(tray=counts(blue=7, black=1))
    read(g, blue=3)
    g.command({"type": "bump_read", "tray": counts(red=2, white=1)})
    st = g.state_dict()["cubes"]
    assert st["tray"]["red"] == 2 and st["tower"]["red"] == 5
    with pytest.raises(LimitReached, match="8 black but only 6 inside"):
        g.command({"type": "bump_read", "tray": counts(black=8)})
    finish_phase(g)
    st = g.state_dict()["cubes"]
    assert st["tray"] == counts() and st["tower"]["red"] == 7 and st["tower"]["white"] == 7
    # after this drop, before the reading: waits for the next phase too (test_rulebook_gaps.py)
    g.command({"type": "bump_read", "tray": counts(black=1)})
    assert g.state_dict()["cubes"]["tray"] == counts(black=1)


def test_tray_reading_beyond_the_tower_is_refused():
    g = new_game(tray=counts(blue=7, black=7))
    with pytest.raises(LimitReached, match="1 black but only 0 inside"):
        read(g, blue=2, black=1)


def test_round_has_seven_phases_then_round_end_then_five_rounds():
    g = new_game(players=["a", "b"], tray={c: 1 for c in COLOURS})
    seen = []
    while g.state.stage != "final":
        st = g.state_dict()
        if st["stage"] == "tray":
            seen.append((st["round"], st["phase"]))
            read(g, **{st["phase"]: 1})
        elif st["stage"] == "actions":
            forfeit(g)
        elif st["stage"] == "round_end":
            g.command({"type": "round_ended"})
        elif st["stage"] == "pirate":
            g.command({"type": "pirate_revealed", "value": 1})
    assert len(seen) == 35 and seen[6] == (1, "white") and seen[-1] == (5, "white")
    assert g.state_dict()["pirates"]["revealed"] == [6, 1, 1, 1, 1]
    with pytest.raises(WrongStage, match="expects final_scoring"):
        g.command({"type": "tray_read", "tray": counts()})
    # the tracks' VP spaces are not set: the players' words are asked for, by track, not by key
    with pytest.raises(MalformedEvent) as missing:
        g.command({"type": "final_scoring", "players": {"a": {"progress_vp": 3}}})
    assert str(missing.value) == ("enter a's VP on the special track: its VP spaces are not "
                                  "set, so final scoring needs them (special_vp)")


def test_setup_order_is_free_but_complete():
    g = Game()
    g.command({"type": "game_created"})
    g.command({"type": "players_seated", "players": ["a", "b"]})
    g.command({"type": "pirate_revealed", "value": 3})
    assert g.state_dict()["stage"] == "setup"
    g.command({"type": "setup_drop_read", "tray": counts(blue=1)})
    assert g.state_dict()["stage"] == "tray" and g.state_dict()["round"] == 1


def test_track_end_declared_when_the_track_is_unknown():
    # "If a player's disc reaches or has reached the end of the ... progress ... track without the
    # player being able to use all available action points that phase, he receives 2 gold"
    g = new_game(players=["a", "b"])
    read(g, blue=2, brown=4)
    act(g, "a", "brown", ap=1, at_end=True)
    assert g.state.players["a"].gold == 2 and g.state.players["a"].progress_at_end


def test_track_end_computed_when_the_track_is_known():
    g = new_game(players=["a", "b"], settings={"special_track_length": 3})
    read(g, blue=2, white=5)
    act(g, "a", "white")
    assert g.state.players["a"].special == 3 and g.state.players["a"].gold == 2


def test_expects_events_lists_what_is_missing_in_set_up():
    g = Game()
    g.command({"type": "game_created"})
    g.command({"type": "players_seated", "players": ["a", "b"]})
    st = g.state_dict()
    assert st["expects_events"] == ["setup_drop_read", "pirate_revealed"]
    g.command({"type": "setup_drop_read", "tray": counts()})  # nothing fell out at all
    st = g.state_dict()
    assert st["expects_events"] == ["pirate_revealed"] and st["setup_drop_read"] is True
    assert st["expects"] == "pirate_revealed"


def test_one_action_can_complete_two_islands():
    g = new_game(players=["a", "b"])
    read(g, blue=3)
    act(g, "a", "blue", posts=[{"island": "P", "big": False}, {"island": "Q", "big": True}],
        completes=["P", "Q"])
    p = g.state_dict()["players"][0]
    # 2 discoveries + 2 completions + 1 post x time marker 5 on each island
    assert p["vp"] == 3 + 3 + 3 + 3 + 5 + 5 and p["treasure_chests"] == 1
    assert g.state_dict()["islands"]["Q"]["completed_by"] == "a"
