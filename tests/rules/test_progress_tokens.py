"""The progress tokens of rulebook pages 11-12, one test each."""

from __future__ import annotations

import pytest
from amerigo_helpers import act, arrange, forfeit, new_game, player, read

from companion.amerigo.errors import NotEnough, NotOnOffer
from companion.amerigo.players import Token


def _opts(g, name):
    return {a["colour"]: a for a in g.state_dict()["options"][name]["actions"]}


def test_extra_ap_tokens():
    # "Each token depicts one action. Each time the token's owner chooses this action, he receives
    # 2 additional action points" / "either of the depicted actions ... 1 additional action point"
    g = new_game()
    read(g, blue=3, black=1, brown=1)
    arrange(g, "red", tokens=[Token("ap2:black"), Token("ap1:brown+blue")])
    o = _opts(g, "red")
    assert (o["black"]["ap"], o["brown"]["ap"], o["blue"]["ap"]) == (5, 4, 4)
    act(g, "red", "black")
    assert player(g, "red")["cannons"] == 5
    assert player(g, "red")["progress_tokens"][0]["used"] is False  # permanent


def test_ships_token_once():
    # "If the token's owner chooses the "Move Ships" action, he may use this token to gain 8
    # additional action points for each ship for this phase." (once only: settings default)
    g = new_game()
    read(g, blue=2, black=1)
    arrange(g, "red", tokens=[Token("ships8")])
    assert _opts(g, "red")["blue"]["ships_token_ap"] == 8
    act(g, "red", "blue", ap=10, tokens_used=["ships8"])
    assert g.state.last_action["ap_available"] == 10
    assert player(g, "red")["progress_tokens"] == [
        {"name": "ships8", "used": True, "usage": "once"}]
    with pytest.raises(NotOnOffer, match="cannot be used with Load Cannons"):
        act(g, "white", "black", tokens_used=["ships8"])


def test_swap_green_red():
    # "as long as at least one green or red cube is in the action space, the owner can choose the
    # "Plan" action or the "Build" action"
    g = new_game()
    read(g, blue=3, green=1)
    arrange(g, "red", tokens=[Token("swap_green_red")])
    assert _opts(g, "red")["red"]["via"] == "swap"
    assert "red" not in _opts(g, "white")
    act(g, "red", "red", take=[{"tile": "village"}])
    with pytest.raises(NotOnOffer, match="red \\(Plan\\) is not on offer for white"):
        act(g, "white", "red", take=[{"tile": "village"}])


def test_plan_two_landscapes():
    # "the token's owner may take two neutral landscape tiles instead of one as long as he pays"
    g = new_game()
    read(g, blue=2, red=5)
    arrange(g, "red", tokens=[Token("plan_two")])
    act(g, "red", "red", take=[{"tile": "landscape", "size": 2}, {"tile": "landscape", "size": 3}])
    assert player(g, "red")["supply"]["landscapes"] == [2, 3]
    arrange(g, "white", tokens=[Token("plan_two")])
    with pytest.raises(NotEnough, match="costs 6 AP"):
        act(g, "white", "red", take=[{"tile": "landscape", "size": 3},
                                     {"tile": "landscape", "size": 3}])


def test_order_jump():
    # "he can disregard the number of action points available and place his player order disc on
    # top of the current first player's disc."
    g = new_game()
    read(g, blue=1, white=1)
    arrange(g, "red", special=6)
    forfeit(g)  # red first
    arrange(g, "yellow", tokens=[Token("order_jump")])
    forfeit(g)
    forfeit(g)
    act(g, "yellow", "white", jump=True)
    assert g.state_dict()["player_order"][:2] == ["yellow", "red"]
    assert player(g, "yellow")["special_track"] == 6


def test_gold_per_post_and_gold_half():
    # "Each time the token's owner establishes a trading post, he receives 1 gold."
    # "he receives 1 gold for each 2 cubes in the action space (rounded up)"
    g = new_game()
    read(g, blue=3, black=2)
    arrange(g, "red", tokens=[Token("gold_per_post")])
    act(g, "red", "blue", posts=[{"island": "A", "big": False}, {"island": "B", "big": False}])
    assert player(g, "red")["gold"] == 2 and player(g, "red")["vp"] == 6
    arrange(g, "white", tokens=[Token("gold_half")], gold=0)
    assert g.state_dict()["options"]["white"]["gold_instead"] == 3
    assert g.state_dict()["options"]["blue"]["gold_instead"] == 2
    act(g, "white", "gold")
    assert player(g, "white")["gold"] == 3


def test_vp_instead_of_action():
    # "Instead of performing an action during a game phase, the token's owner scores as many
    # victory points as the number of cubes in the action space."
    g = new_game()
    read(g, blue=3, black=2)
    with pytest.raises(NotOnOffer, match="no usable progress token for VP"):
        act(g, "red", "vp")
    arrange(g, "red", tokens=[Token("vp_instead")])
    assert g.state_dict()["options"]["red"]["vp_instead"] == 5
    act(g, "red", "vp")
    assert player(g, "red")["vp"] == 5


def test_end_tokens_do_nothing_during_play():
    g = new_game()
    read(g, blue=3)
    arrange(g, "red", tokens=[Token("vp7")])
    with pytest.raises(NotOnOffer, match="not used on its own"):
        g.command({"type": "token_used", "player": "red", "token": "vp7"})
