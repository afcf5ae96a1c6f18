"""Settings: printed numbers the text lacks are marked defaults, overridable per game."""

from __future__ import annotations

import pytest
from amerigo_helpers import act, arrange, new_game, player, read

from companion.amerigo.errors import MalformedEvent
from companion.amerigo.players import Token
from companion.amerigo.settings import DEFAULT_TIME_MARKERS, Settings


def test_defaults_are_reported_as_unconfirmed():
    st = new_game().state_dict()
    assert st["settings"]["time_markers"] == list(DEFAULT_TIME_MARKERS)
    assert "time_markers" in st["unconfirmed_settings"]
    assert "token_usage.ships8" in st["unconfirmed_settings"]
    assert "token_usage.gold3" not in st["unconfirmed_settings"]  # the text says "Once only"


def test_time_markers_override_changes_the_completion_payout():
    g = new_game(players=["a", "b"], settings={"time_markers": [7, 6, 5, 4, 3]})
    read(g, blue=3)
    act(g, "a", "blue", posts=[{"island": "S", "big": False}], completes="S")
    assert player(g, "a")["vp"] == 3 + 3 + 1 * 7  # discovery, completion, 1 post x marker


def test_known_tracks_are_scored_by_the_engine():
    g = new_game(players=["a", "b"], settings={
        "progress_track_length": 6, "progress_track_vp": {"2": 1, "5": 4},
        "special_track_length": 4, "special_track_vp": {"3": 2}})
    read(g, blue=2, brown=3)
    act(g, "a", "brown", ap=3, tokens_taken=["vp7"])
    assert player(g, "a")["progress_vp"] == 1
    sheet = g.score_sheet()["players"][0]
    assert sheet["progress"] == {"e_tokens": {"vp7": 7}, "track_vp": 1, "vp": 8}
    assert sheet["missing_inputs"] == []


def test_token_usage_override_makes_a_token_once_only():
    g = new_game(players=["a", "b"], settings={"token_usage": {"ap2": "once"}})
    read(g, blue=2, black=1)
    arrange(g, "a", tokens=[Token("ap2:black")])
    opts = {x["colour"]: x for x in g.state_dict()["options"]["a"]["actions"]}
    assert opts["black"]["ap"] == 4
    act(g, "a", "black")
    assert player(g, "a")["progress_tokens"] == [
        {"name": "ap2:black", "used": True, "usage": "once"}]
    assert g.state.settings.token_usage["ships8"] == "once"  # the other defaults are kept


def test_track_end_gold_is_shown_in_the_options():
    g = new_game()
    read(g, blue=4, black=5)
    arrange(g, "red", cannons=10)
    black = next(a for a in g.state_dict()["options"]["red"]["actions"] if a["colour"] == "black")
    assert black["track_end_gold"] == 2


@pytest.mark.parametrize(("data", "match"), [
    ({"time_markers": [1, 2]}, "time_markers must be 5"),
    ({"colour": 1}, "unknown setting"),
    ({"token_usage": {"ships8": "sometimes"}}, "permanent/once/end"),
    ({"progress_track_vp": {"x": 1}}, "not a space number"),
    ({"special_track_colours": ["pink"]}, "action colours"),
    ({"tile_vp_max": -1}, "tile_vp_max must be a whole number"),
    ({"pirate_marker_max": "6"}, "pirate_marker_max must be a whole number"),
    ({"pirate_markers": [1, 2, 3]}, "the 6 numbers printed on the pirate markers"),
])
def test_bad_settings(data, match):
    with pytest.raises(MalformedEvent, match=match):
        Settings.from_dict(data)
    with pytest.raises(MalformedEvent, match=match):
        new_game(settings=data)
