"""Illegal commands raise a clear domain error naming what was wrong, and change nothing."""

from __future__ import annotations

import json

import pytest
from amerigo_helpers import arrange, counts, new_game, read

from companion.amerigo.errors import (
    LimitReached,
    MalformedEvent,
    NotEnough,
    NotOnOffer,
    OutOfTurn,
    RulesError,
    UnknownPlayer,
    WrongStage,
)


@pytest.fixture
def game():
    g = new_game()
    read(g, blue=4, black=1, red=1, green=2)
    return g


def refused(g, cmd, error, match):
    before_state = json.dumps(g.state_dict(), sort_keys=True)
    before_events = g.events
    with pytest.raises(error, match=match) as info:
        g.command(cmd)
    assert isinstance(info.value, RulesError)
    assert json.dumps(g.state_dict(), sort_keys=True) == before_state
    assert g.events == before_events
    return str(info.value)


def A(**kw):
    return {"type": "action", **kw}


def test_action_not_on_offer(game):
    msg = refused(game, A(player="red", choice="yellow"), NotOnOffer,
                  r"yellow \(Buy Production Tokens\) is not on offer for red")
    assert "available: blue, black, red, green" in msg


def test_spending_ap_not_available(game):
    refused(game, A(player="red", choice="black", ap=5), NotEnough, "has 4 AP .* not 5")


def test_spending_gold_not_owned(game):
    refused(game, A(player="white", choice="black", gold_spent=2), OutOfTurn, "red's turn")
    refused(game, A(player="red", choice="black", gold_spent=1), NotEnough,
            "red has 0 gold, cannot spend 1")


def test_thirteenth_trading_post(game):
    for name in ("red", "white", "blue", "yellow"):
        arrange(game, name, posts={"Z": 12})
    refused(game, A(player="red", choice="blue", posts=[{"island": "A", "big": False}]),
            LimitReached, "red has placed all 12 trading posts")
    assert "A" not in game.state_dict()["islands"]


def test_player_not_in_the_game(game):
    refused(game, A(player="green", choice="blue"), UnknownPlayer,
            "'green' is not a player in this game")
    refused(game, {"type": "chest_cashed", "player": "Bob"}, UnknownPlayer, "'Bob'")


@pytest.mark.parametrize(("cmd", "match"), [
    ({"type": "nonsense"}, "unknown event type 'nonsense'"),
    ({"v": 2, "type": "round_ended"}, "unsupported event version 2"),
    ({"type": "action", "player": "red"}, "missing field 'choice'"),
    ({"type": "action", "player": "red", "choice": "purple"}, "choice must be one of"),
    ({"type": "action", "player": "red", "choice": "blue", "ap": -1}, "ap must be a whole"),
    ({"type": "action", "player": "red", "choice": "blue", "apps": 1}, "unknown field.*apps"),
    ({"type": "tray_read", "tray": {"pink": 1}}, "unknown cube colour"),
    ({"type": "tray_read", "tray": [1, 2]}, "tray must be an object"),
    ({"type": "action", "player": "red", "choice": "black", "posts": []},
     "do not belong to choice 'black'"),
    ({"type": "action", "player": "red", "choice": "blue", "tokens_used": ["magic"]},
     "unknown progress token 'magic'"),
    ("{not json", "not valid JSON"),
    ([1, 2], "must be a JSON object"),
    ({"type": "action", "player": "red", "choice": "blue", "posts": [{"island": "New"}]},
     "island 'New' is mentioned for the first time"),
])
def test_malformed_events(game, cmd, match):
    refused(game, cmd, MalformedEvent, match)


def test_wrong_moment(game):
    refused(game, {"type": "tray_read", "tray": counts(blue=1)}, WrongStage,
            "reading the tray is not possible now: the game expects action")
    refused(game, {"type": "round_ended"}, WrongStage, "expects action")


def test_build_needs_own_post_and_tiles(game):
    game.command(A(player="red", choice="blue", posts=[{"island": "A", "big": False}]))
    refused(game, A(player="white", choice="green",
                    build=[{"island": "A", "tile": "village", "vp": 1}]),
            NotOnOffer, "white has no trading post on island 'A'")
    game.command(A(player="white", choice="blue", posts=[{"island": "A"}]))
    game.command(A(player="blue", choice="black"))
    game.command(A(player="yellow", choice="black"))
    assert game.state_dict()["phase"] == "black"  # the phase ended after the 4th action


def test_refused_event_in_a_file_names_the_line(tmp_path):
    from companion.amerigo.replay import main

    path = tmp_path / "bad.jsonl"
    path.write_text('{"v": 1, "type": "game_created"}\n'
                    '{"v": 1, "type": "players_seated", "players": ["a"]}\n')
    assert main([str(path)]) == 2
