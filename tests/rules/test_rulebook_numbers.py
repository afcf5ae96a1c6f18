"""Worked numbers of the rulebook that test_rulebook_examples.py did not check yet.

Quotes are from amerigo-dice-tower-rules-en.txt (the reference), with its line numbers. Each test
asserts the rulebook's own numbers; where the text leaves a number to the boards (time markers,
pirate markers) the test sets it explicitly instead of relying on a marked default.
"""

from __future__ import annotations

import pytest
from amerigo_helpers import (
    RULEBOOK_PLAYERS,
    act,
    arrange,
    counts,
    finish_phase,
    new_game,
    player,
    read,
)

from companion.amerigo.errors import LimitReached, MalformedEvent, NotEnough
from companion.amerigo.islands import Island
from companion.amerigo.offer import COLOURS
from companion.amerigo.players import Token


def _to_round_end(g):
    while g.state.stage != "round_end":
        if g.state.stage == "tray":
            read(g, **{g.state.colour: 1})
        finish_phase(g)


def _sheet(g, name):
    return next(s for s in g.score_sheet()["players"] if s["player"] == name)


def test_every_disc_starts_on_the_first_space():
    # l. 155: "Each player places 1 scoring disc on the first space of his progress, cannon and
    # gold tracks." l. 187: "Each player places his victory point disc on space 0/50"
    g = new_game()
    for name in RULEBOOK_PLAYERS:
        p = player(g, name)
        assert (p["vp"], p["cannons"], p["progress"]) == (0, 0, 0)
    assert player(g, "red")["gold"] == 0  # the first player gets no starting gold (l. 191)


def test_the_phases_follow_the_action_circuit():
    # l. 217: "For the first phase of a game round, the starting player drops all blue cubes"
    # l. 248: "(For the second phase, the black cubes; for the third phase, the red cubes; etc.)
    # After the phase in which the white cubes are dropped into the tower, the game round ends"
    g = new_game(players=["a", "b"], tray={c: 1 for c in COLOURS})
    seen = []
    while g.state.stage != "round_end":
        if g.state.stage == "tray":
            seen.append(g.state_dict()["phase"])
            read(g, **{g.state.colour: 1})
        finish_phase(g)
    assert seen == ["blue", "black", "red", "brown", "green", "yellow", "white"]
    assert g.state_dict()["round"] == 1


@pytest.mark.parametrize(("posts", "factor"), [(1, 1), (2, 3), (3, 6), (4, 10), (5, 15),
                                               (6, 21)])
def test_completion_table_every_row(posts, factor):
    # l. 361-365: "1 : 1x 4 : 10x / 2 : 3x 5 : 15x / 3 : 6x 6 : 21x. Each player locates the row
    # that corresponds to the number of his trading posts on this island, then multiplies this
    # number times the number on the topmost time marker." l. 357: "he scores 3 victory points
    # for completing the island in addition to the value of his tiles"
    g = new_game(players=["a", "b"], settings={"time_markers": [7, 6, 5, 4, 3]})
    read(g, blue=1, green=1)
    # posts placed in earlier phases (a 6th post of one player takes three Move Ships actions)
    g.state.islands["A"] = Island("A", big=False, posts={"a": posts, "b": 1})
    g.state.players["a"].posts["A"] = posts
    g.state.players["b"].posts["A"] = 1
    arrange(g, "a", villages=1)
    act(g, "a", "green", build=[{"island": "A", "tile": "village", "vp": 1}], completes="A")
    assert player(g, "a")["vp"] == 1 + 3 + factor * 7
    assert player(g, "b")["vp"] == 1 * 7
    assert g.state_dict()["islands"]["A"]["completion_payout"] == {"a": factor * 7, "b": 7}
    assert player(g, "a")["treasure_chests"] == 0  # a small island has no chest


def test_exactly_matching_the_pirates_fights_them_off_and_half_damage_rounds_up():
    # l. 453: "If a player goes down to zero cannons and still has not matched the pirates'
    # strength, he suffers damage equal to the full strength of the pirates"
    # l. 586: "If the token's owner cannot fight off the pirates completely, he loses only half of
    # the victory points, rounded up. Note: The player must still use as many cannons as possible"
    g = new_game(players=["a", "b", "c"], pirate=7)
    _to_round_end(g)
    arrange(g, "a", cannons=3, vp=20, tokens=[Token("pirates_half")])
    arrange(g, "b", cannons=6, vp=20)
    arrange(g, "c", cannons=7, vp=20)
    g.command({"type": "round_ended"})
    attack = g.state_dict()["pirates"]["last_attack"]["players"]
    assert attack["a"]["strength"] == 7 and attack["a"]["vp_lost"] == 4  # 7 / 2 = 3.5 -> 4
    assert (player(g, "a")["cannons"], player(g, "a")["vp"]) == (0, 16)
    assert (player(g, "b")["cannons"], player(g, "b")["vp"]) == (0, 13)  # full strength: 7
    assert attack["c"]["fought_off"] and player(g, "c")["cannons"] == 0
    assert player(g, "c")["vp"] == 20


def test_gold_per_post_does_not_pay_for_posts_before_the_token():
    # l. 611: "Each time the token's owner establishes a trading post, he receives 1 gold. Note:
    # This benefit does not apply to trading posts established before the owner acquired this
    # token."
    g = new_game(players=["a", "b"], tray=counts(blue=7, black=7))
    read(g, blue=3)
    act(g, "a", "blue", posts=[{"island": "A", "big": False}, {"island": "B", "big": False}])
    assert player(g, "a")["gold"] == 0
    finish_phase(g)
    arrange(g, "a", tokens=[Token("gold_per_post")])  # acquired now
    assert player(g, "a")["gold"] == 0
    read(g, black=2, blue=4)
    act(g, "a", "blue", posts=[{"island": "C", "big": False}])
    assert player(g, "a")["gold"] == 1  # the new post only, not A and B
    assert _sheet(g, "a")["gold"]["converted"] == 0  # and nothing more at the end


def test_gold5_once_only_and_not_again_at_the_end():
    # l. 607: "Once only, the token's owner receives 5 gold." l. 490: "First, convert treasure
    # chests and one-time (1x) progress tokens that grant gold into gold" -- a token already used
    # is face down and gives nothing more.
    g = new_game(players=["a", "b"])
    arrange(g, "a", tokens=[Token("gold5")])
    assert _sheet(g, "a")["gold"]["converted"] == 5  # unused: converted at the end
    g.command({"type": "token_used", "player": "a", "token": "gold5"})
    assert player(g, "a")["gold"] == 5
    assert _sheet(g, "a")["gold"] == {"track_before": 5, "converted": 0, "overflow_vp": 0,
                                      "track_vp": 5, "vp": 5}
    with pytest.raises(NotEnough, match="no unused progress token gold5"):
        g.command({"type": "token_used", "player": "a", "token": "gold5"})


def test_vp_instead_token_is_useless_during_final_scoring():
    # l. 627: "Instead of performing an action during a game phase, the token's owner scores as
    # many victory points as the number of cubes in the action space. Note: This token is useless
    # during final scoring."
    g = new_game(players=["a", "b"])
    arrange(g, "a", gold=4, vp=9, tokens=[Token("vp_instead")])
    arrange(g, "b", gold=4, vp=9)
    a, b = _sheet(g, "a"), _sheet(g, "b")
    assert a["progress"]["e_tokens"] == {} and a["total"] == b["total"] == 9 + 4


def test_white_joker_gives_exactly_the_5_ap():
    # l. 413: "With 5 AP available, the white player chooses the white action, treats the white
    # cubes as red (since the white disc is on a red space), and can now spend 5 AP to Plan."
    g = new_game(settings={"special_track_colours": ["white", "blue", "red", "black"]})
    read(g, blue=4, white=5)
    act(g, "red", "gold")
    arrange(g, "white", special=2)
    red = next(a for a in g.state_dict()["options"]["white"]["actions"] if a["colour"] == "red")
    assert red["ap"] == 5 and red["via"] == "white"
    with pytest.raises(NotEnough, match="costs 6 AP but white has 5"):
        act(g, "white", "red", via="white",
            take=[{"tile": "landscape", "size": 3}, {"tile": "village"}, {"tile": "village"},
                  {"tile": "village"}])


def test_starting_gold_for_two_and_three_players():
    # l. 191: "All other players receive one gold for each other player preceding them in player
    # order."
    g = new_game(players=["a", "b", "c"])
    assert [player(g, n)["gold"] for n in "abc"] == [0, 1, 2]
    g = new_game(players=["a", "b"])
    assert [player(g, n)["gold"] for n in "ab"] == [0, 1]


# --- the components' numbers (GAME COMPONENTS, l. 11-105) ------------------------------------


def test_16_village_tiles_per_player():
    # l. 47: "16 village tiles" (each player's components)
    g = new_game(players=["a", "b"])
    read(g, blue=1, red=3)
    arrange(g, "a", villages_taken=14)
    with pytest.raises(LimitReached, match="a has only 2 village tiles left"):
        act(g, "a", "red", take=[{"tile": "village"}] * 3)
    act(g, "a", "red", take=[{"tile": "village"}] * 2)
    assert player(g, "a")["supply"]["villages"] == 2


def test_37_neutral_landscape_tiles():
    # l. 37: "37 neutral landscape tiles"
    g = new_game(players=["a", "b"])
    read(g, blue=1, red=2)
    g.state.landscapes_taken = 37
    with pytest.raises(LimitReached, match="only 0 landscape tiles left"):
        act(g, "a", "red", take=[{"tile": "landscape", "size": 1}])
    g.state.landscapes_taken = 36
    act(g, "a", "red", take=[{"tile": "landscape", "size": 1}])
    assert player(g, "a")["supply"]["landscapes"] == [1]


@pytest.mark.parametrize(("take", "ok"), [(1, True), (6, True), (7, False), (0, False)])
def test_a_landscape_tile_is_1_to_6_squares(take, ok):
    # l. 296: "Taking a neutral landscape tile costs 1-6 AP, depending on its size."
    g = new_game(players=["a", "b"])
    read(g, blue=1, red=7)
    cmd = {"type": "action", "player": "a", "choice": "red",
           "take": [{"tile": "landscape", "size": take}]}
    if ok:
        g.command(cmd)
        assert g.state.last_action["ap_spent"] == take
    else:
        with pytest.raises(MalformedEvent, match="size"):
            g.command(cmd)


@pytest.mark.parametrize(("cost", "ok"), [(1, False), (2, True), (3, True), (4, True),
                                          (5, False)])
def test_production_tokens_cost_2_to_4(cost, ok):
    # l. 383: "buy production tokens for 2-4 AP ... The AP cost of a production token equals the
    # number on this token." l. 67: "3x 2, 4x 3, 3x 4 of each type"
    g = new_game(players=["a", "b"])
    read(g, blue=1, yellow=5)
    cmd = {"type": "action", "player": "a", "choice": "yellow",
           "production": [{"good": "sugar", "cost": cost}]}
    if ok:
        g.command(cmd)
        assert g.state.last_action["ap_spent"] == cost
        assert player(g, "a")["production"]["sugar"] == 2
    else:
        with pytest.raises(MalformedEvent, match="cost"):
            g.command(cmd)


@pytest.mark.parametrize(("cost", "of_this_cost"), [(2, 3), (3, 4), (4, 3)])
def test_production_tokens_per_good_and_cost(cost, of_this_cost):
    # l. 67: "50 production tokens – 3x 2, 4x 3, 3x 4 of each type"
    g = new_game()
    read(g, blue=1, yellow=4)
    g.state.production_bought = {f"coffee:{cost}": of_this_cost}
    with pytest.raises(LimitReached, match=f"there are only {of_this_cost} coffee production "
                                           f"tokens costing {cost}"):
        act(g, "red", "yellow", production=[{"good": "coffee", "cost": cost}])
    g.state.production_bought = {f"coffee:{cost}": of_this_cost - 1}
    act(g, "red", "yellow", production=[{"good": "coffee", "cost": cost}])
    assert player(g, "red")["production"]["coffee"] == 2


def test_8_commodity_tokens_of_each_type():
    # l. 59: "40 commodity tokens – 8 of each type"
    g = new_game(players=["a", "b"])
    read(g, blue=1, green=2)
    g.state.islands["A"] = Island("A", big=False, posts={"a": 1})  # posted in an earlier phase
    g.state.players["a"].posts["A"] = 1
    arrange(g, "a", villages=1)
    g.state.commodities_taken = {"sugar": 7}
    with pytest.raises(LimitReached, match="there are only 8 sugar commodity tokens"):
        act(g, "a", "green", build=[{"island": "A", "tile": "village", "vp": 1}],
            commodities={"sugar": 2})
    act(g, "a", "green", build=[{"island": "A", "tile": "village", "vp": 1}],
        commodities={"sugar": 1})
    assert player(g, "a")["commodities"]["sugar"] == 1


def test_5_treasure_chests_so_at_most_5_big_islands():
    # l. 75: "5 treasure chests – for big islands" l. 141: "Place one treasure chest on each big
    # island."
    g = new_game(players=["a", "b"])
    read(g, blue=3)
    for name in "PQRST":
        g.state.islands[name] = Island(name, big=True)
    with pytest.raises(LimitReached, match="island 'U' cannot be big: there are only 5 chests"):
        act(g, "a", "blue", posts=[{"island": "U", "big": True}])
    act(g, "a", "blue", posts=[{"island": "U", "big": False}])
    assert player(g, "a")["vp"] == 3


def test_24_progress_tokens():
    # l. 55: "24 progress tokens"
    g = new_game(players=["a", "b"])
    read(g, blue=1, brown=2)
    g.state.tokens_taken = 24
    with pytest.raises(LimitReached, match="only 0 progress tokens left"):
        act(g, "a", "brown", tokens_taken=["vp7"])
    g.state.tokens_taken = 23
    act(g, "a", "brown", tokens_taken=["vp7"])
    assert [t["name"] for t in player(g, "a")["progress_tokens"]] == ["vp7"]
