"""Every worked example of the rulebook, as a test (quotes from amerigo-dice-tower-rules-en.txt)."""

from __future__ import annotations

import pytest
from amerigo_helpers import (
    RULEBOOK_PLAYERS,
    SETUP_REMAINING,
    SETUP_TRAY,
    act,
    arrange,
    counts,
    finish_phase,
    forfeit,
    new_game,
    player,
    read,
)

from companion.amerigo.errors import LimitReached, NotEnough, NotOnOffer
from companion.amerigo.game import Game
from companion.amerigo.offer import COLOURS


def test_setup_drop_leaves_the_example_cubes_in_the_tower():
    # "Example: Still remaining in the tower are 2x red and yellow; 3x blue, black and green; and
    # 4x brown and white."
    g = Game()
    g.command({"type": "game_created"})
    g.command({"type": "players_seated", "players": RULEBOOK_PLAYERS})
    assert g.state_dict()["vision_bounds"] == dict.fromkeys(COLOURS, 7)  # all 49 dropped
    g.command({"type": "setup_drop_read",
               "tray": {c: 7 - n for c, n in SETUP_REMAINING.items()}})
    cubes = g.state_dict()["cubes"]
    assert cubes["tower"] == SETUP_REMAINING
    assert cubes["storage"] == {c: 7 - n for c, n in SETUP_REMAINING.items()}


def test_starting_gold_and_order_example():
    # "The starting player is red. White, in second, receives 1 gold, while blue receives 2 gold
    # and yellow 3 gold."
    g = new_game()
    assert [player(g, n)["gold"] for n in RULEBOOK_PLAYERS] == [0, 1, 2, 3]
    assert g.state_dict()["player_order"] == RULEBOOK_PLAYERS


def test_first_phase_example_offer_and_turn_order():
    # "The player takes the 4 blue cubes and tosses them into the tower." (4 blue in storage after
    # the set-up example.) "Place the 4 blue, 1 black, 1 red and 2 green cubes ... With 4 being the
    # largest number of cubes of a single color, the players can spend 4 AP on either the blue,
    # black, red or green action this phase."
    g = new_game(tray=SETUP_TRAY)
    st = g.state_dict()
    assert st["phase"] == "blue" and st["expects"] == "tray_read"
    assert st["cubes"]["storage"]["blue"] == 0
    assert st["vision_bounds"]["blue"] == 7  # 3 inside + 4 dropped
    read(g, blue=4, black=1, red=1, green=2)
    st = g.state_dict()
    assert st["offer"] == {"actions": ["blue", "black", "red", "green"], "ap": 4, "gold": 3,
                           "total": 8}
    for name in RULEBOOK_PLAYERS:
        assert [a["colour"] for a in st["options"][name]["actions"]] == [
            "blue", "black", "red", "green"]
        assert {a["ap"] for a in st["options"][name]["actions"]} == {4}
    # "The red player decides which action he wants to take this phase, followed by white, blue
    # and yellow."
    assert st["phase_order"] == RULEBOOK_PLAYERS and st["turn"] == "red"
    # "After all players have performed their actions, move all cubes from the action space to
    # their respective storage spaces" -> then the black cubes are dropped.
    finish_phase(g)
    st = g.state_dict()
    assert st["phase"] == "black" and st["cubes"]["action_space"] == counts()
    assert st["cubes"]["storage"]["blue"] == 4 and st["cubes"]["storage"]["black"] == 0
    # 4 black in storage since set-up + the 1 from the action space, all dropped: 7 inside
    assert st["cubes"]["tower"]["black"] == 7


def test_move_ships_discovery_example():
    # "He decides to move only 3 spaces to land on an anchor space and establish a trading post.
    # ... The first player to establish a trading post on an island scores 3 victory points"
    g = new_game(tray=SETUP_TRAY)
    read(g, blue=4, black=1, red=1, green=2)
    act(g, "red", "blue", ap=4, posts=[{"island": "A", "big": False}])
    assert player(g, "red")["vp"] == 3 and player(g, "red")["trading_posts"] == {"A": 1}
    # "the red player moves his ship to another anchor point on this same island. He then places a
    # second trading post on this island, but he scores no victory points as this island has
    # already been discovered." (here: the next player on the same island)
    act(g, "white", "blue", posts=[{"island": "A"}])
    assert player(g, "white")["vp"] == 0 and g.state_dict()["islands"]["A"]["posts"] == {
        "red": 1, "white": 1}
    # "Note: A player may establish more than one trading post on each island." (one per ship)
    act(g, "blue", "blue", posts=[{"island": "B", "big": True}, {"island": "B"}])
    assert player(g, "blue")["vp"] == 3 and player(g, "blue")["trading_posts"] == {"B": 2}
    with pytest.raises(LimitReached, match="2 ships"):
        act(g, "yellow", "blue", posts=[{"island": "C", "big": True}] * 3)


def test_load_cannons_example():
    # "With 4 AP available, the red player moves his cannon disc 4 spaces to the right"
    g = new_game()
    read(g, blue=4, black=1, red=1, green=2)
    act(g, "red", "black")
    assert player(g, "red")["cannons"] == 4 and player(g, "red")["gold"] == 0


def test_plan_example():
    # "With 4 AP available, the red player takes one 2-square neutral landscape tile as well as a
    # 4-square and a 3-square village tile" (village: 1 AP "regardless of its size")
    g = new_game()
    read(g, blue=4, black=1, red=1, green=2)
    act(g, "red", "red", take=[{"tile": "landscape", "size": 2}, {"tile": "village"},
                               {"tile": "village"}])
    assert player(g, "red")["supply"] == {"villages": 2, "landscapes": [2]}
    # "A player can take only one neutral landscape tile during each game phase."
    with pytest.raises(LimitReached, match="only 1 neutral landscape"):
        act(g, "white", "red", take=[{"tile": "landscape", "size": 1},
                                     {"tile": "landscape", "size": 1}])


def test_progress_example_takes_a_token():
    # "With 5 AP available, the blue player moves his progress disc past the victory point space.
    # Then he collects one progress token"
    g = new_game(settings={"progress_track_length": 20, "progress_track_vp": {"4": 1}})
    read(g, blue=4, brown=5)
    forfeit(g)
    forfeit(g)
    act(g, "blue", "brown", tokens_taken=["ap2:black"])
    p = player(g, "blue")
    assert p["progress"] == 5 and p["progress_tokens"] == [
        {"name": "ap2:black", "used": False, "usage": "permanent"}]
    assert p["progress_vp"] == 1
    with pytest.raises(NotEnough, match="passed 0 VP space"):
        act(g, "yellow", "brown", ap=2, tokens_taken=["vp7"])


def test_build_example_big_island_and_commodities():
    # "In order to build the three expansion tiles shown here, the red player must spend 4 AP."
    # "The red player has built his tiles on a big island, so he earns 10 victory points (VP)."
    # "The red player placed his tiles on two commodity tokens: sugar and cotton."
    g = new_game()
    read(g, blue=4, green=4)
    act(g, "red", "blue", posts=[{"island": "big1", "big": True}])  # discovery: 3 VP
    arrange(g, "red", villages=2, landscapes=[2])
    finish_phase(g)
    while g.state.colour != "green":
        read(g, **{g.state.colour: 1})
        finish_phase(g)
    read(g, green=4)
    act(g, "red", "green", build=[
        {"island": "big1", "tile": "landscape", "size": 2, "vp": 4},
        {"island": "big1", "tile": "village", "vp": 3},
        {"island": "big1", "tile": "village", "vp": 3},
    ], commodities={"sugar": 1, "cotton": 1})
    p = player(g, "red")
    assert p["vp"] == 3 + 10
    assert g.state.last_action["ap_spent"] == 4
    assert p["commodities"]["sugar"] == 1 and p["commodities"]["cotton"] == 1
    assert p["supply"] == {"villages": 0, "landscapes": []}


def test_island_completion_example_17_vp():
    # "In the second game round, the red player builds a 2-square village tile and completes this
    # island. He scores 2 VP for the built tile, 3 VP for completing the island, and 12 VP (3x4)
    # for having 2 trading posts on the island. In sum, he scores 17 VP in addition to claiming
    # the treasure chest. The blue player scores 4 VP (1x4) for his 1 trading post on this island."
    g = new_game()
    read(g, blue=4, green=1)
    act(g, "red", "blue", posts=[{"island": "X", "big": True}, {"island": "X"}])
    forfeit(g)
    act(g, "blue", "blue", posts=[{"island": "X"}])
    forfeit(g)
    while g.state.stage != "round_end":
        if g.state.stage == "tray":
            read(g, **{g.state.colour: 1})
        finish_phase(g)
    g.command({"type": "round_ended"})
    g.command({"type": "pirate_revealed", "value": 0})
    assert g.state_dict()["round"] == 2 and g.state_dict()["time_marker"] == 4
    while g.state.colour != "green" or g.state.stage != "tray":
        if g.state.stage == "tray":
            read(g, **{g.state.colour: 1})
        finish_phase(g)
    read(g, green=1)
    arrange(g, "red", villages=1)
    red_before, blue_before = player(g, "red")["vp"], player(g, "blue")["vp"]
    act(g, "red", "green", build=[{"island": "X", "tile": "village", "vp": 2}], completes="X")
    assert player(g, "red")["vp"] - red_before == 17
    assert player(g, "blue")["vp"] - blue_before == 4
    assert player(g, "red")["treasure_chests"] == 1
    assert g.state_dict()["islands"]["X"]["completed"]


def test_buy_production_example():
    # "With 5 AP available, the red player buys two cotton production tokens for 5 AP"
    g = new_game()
    read(g, blue=4, yellow=5)
    act(g, "red", "yellow", production=[{"good": "cotton", "cost": 2},
                                       {"good": "cotton", "cost": 3}])
    assert player(g, "red")["production"]["cotton"] == 3  # 1 printed + 2 bought
    with pytest.raises(NotEnough, match="costs 6 AP"):
        act(g, "white", "yellow", production=[{"good": "coffee", "cost": 4},
                                             {"good": "coffee", "cost": 2}])


def test_change_player_order_example():
    # "With 5 AP available, the yellow player advances his disc 4 spaces to land on the blue disc
    # on the red space. He is the new start player next phase. He forfeits the remaining 1 AP."
    g = new_game(players=["red", "white", "yellow", "blue"])
    read(g, blue=4, white=5)
    forfeit(g)
    forfeit(g)
    arrange(g, "blue", special=4, special_height=0)  # the blue disc already on that space
    act(g, "yellow", "white", advance=4)
    # order within this phase is fixed ...
    assert g.state_dict()["turn"] == "blue"
    assert g.state_dict()["player_order"][0] == "yellow"
    assert player(g, "yellow")["gold"] == 2  # no track-end gold: the track is not at its end
    forfeit(g)
    assert g.state_dict()["phase_order"] == []  # phase over
    read(g, black=1)
    # ... and he is the new start player next phase
    assert g.state_dict()["phase_order"][:2] == ["yellow", "blue"]


@pytest.mark.parametrize("colours", [None, ["white", "blue", "red", "black"]])
def test_white_joker_example(colours):
    # "With 5 AP available, the white player chooses the white action, treats the white cubes as
    # red (since the white disc is on a red space), and can now spend 5 AP to Plan."
    settings = {"special_track_colours": colours} if colours else None
    g = new_game(settings=settings)
    read(g, blue=4, white=5)
    forfeit(g)
    arrange(g, "white", special=2)
    opts = g.state_dict()["options"]["white"]
    assert "red" in [a["colour"] for a in opts["actions"]]
    act(g, "white", "red", via="white",
        take=[{"tile": "landscape", "size": 3}, {"tile": "village"}, {"tile": "village"}])
    assert player(g, "white")["supply"] == {"villages": 2, "landscapes": [3]}
    if colours:  # the board is known: the joker is red only
        assert [a["colour"] for a in opts["actions"]] == ["blue", "white", "red"]


def test_joker_needs_an_advanced_disc():
    # "A player who has advanced at least once on the special action track will have his disc on a
    # non-white space."
    g = new_game()
    read(g, blue=4, white=5)
    with pytest.raises(NotOnOffer, match=r"red .* is not on offer"):
        act(g, "red", "red", via="white")


def test_gold_example_10_cubes_at_9_gold():
    # "Since 10 cubes lie in the action space, the blue player collects 4 gold. He already had 9
    # gold, so he places his gold disc on space 12 and immediately scores 1 VP"
    g = new_game()
    read(g, blue=4, black=3, green=3)
    assert g.state_dict()["options"]["blue"]["gold_instead"] == 4
    forfeit(g)
    forfeit(g)
    arrange(g, "blue", gold=9)
    act(g, "blue", "gold")
    assert player(g, "blue")["gold"] == 12 and player(g, "blue")["vp"] == 1


def test_cannon_track_end_example():
    # "With 5 AP available, the red player chooses the black action. He already has 10 cannons, so
    # he can add only 2 more. The remaining cannons are converted to 2 gold."
    g = new_game()
    read(g, blue=4, black=5)
    arrange(g, "red", cannons=10)
    act(g, "red", "black")
    assert player(g, "red")["cannons"] == 12 and player(g, "red")["gold"] == 2
    # "Note: If a player has already reached the end of one of these tracks during an earlier phase
    # and he takes this action again, he still receives 2 gold."
    arrange(g, "white", cannons=12)
    act(g, "white", "black", ap=0)
    assert player(g, "white")["gold"] == 1 + 2
    # Using every AP exactly up to the end wastes nothing: no gold.
    arrange(g, "blue", cannons=7)
    act(g, "blue", "black")
    assert player(g, "blue")["cannons"] == 12 and player(g, "blue")["gold"] == 2


def test_buying_ap_with_gold_example():
    # "With 2 AP available, the red player chooses the brown action, then spends 1 gold for 1
    # additional AP. Now he can advance 3 spaces on the progress track"
    g = new_game()
    read(g, blue=2, brown=1)
    arrange(g, "red", gold=1)
    act(g, "red", "brown", gold_spent=1, ap=3, tokens_taken=["vp7"])
    assert player(g, "red")["progress"] == 3 and player(g, "red")["gold"] == 0
    with pytest.raises(NotEnough, match="has 1 gold, cannot spend 2"):
        act(g, "white", "brown", gold_spent=2)
    with pytest.raises(NotEnough, match="has 2 AP"):
        act(g, "white", "brown", ap=3)


def _to_round_end(g):
    while g.state.stage != "round_end":
        if g.state.stage == "tray":
            read(g, **{g.state.colour: 1})
        finish_phase(g)


def test_pirates_examples_6_against_4_and_8():
    # "Six pirates are attacking the players. The blue player has only four cannons, so he must
    # move his cannon disc to 0 and lose 6 VP." "the yellow player has 8 cannons, so he reduces
    # his cannon disc to 2 and successfully fights off the pirates."
    g = new_game(pirate=6)
    _to_round_end(g)
    arrange(g, "blue", cannons=4, vp=10)
    arrange(g, "yellow", cannons=8, vp=10)
    arrange(g, "red", cannons=0, vp=2)  # "leaves his victory point disc on the 0/50 space"
    g.command({"type": "round_ended"})
    assert (player(g, "blue")["cannons"], player(g, "blue")["vp"]) == (0, 4)
    assert (player(g, "yellow")["cannons"], player(g, "yellow")["vp"]) == (2, 10)
    assert player(g, "red")["vp"] == 0
    attack = g.state_dict()["pirates"]["last_attack"]
    assert attack["strength"] == 6 and attack["players"]["blue"]["vp_lost"] == 6
    # "Reveal one more pirate marker." "Example: At the end of the next round, 10 pirates will
    # attack the players."
    assert g.state_dict()["expects"] == "pirate_revealed"
    g.command({"type": "pirate_revealed", "value": 4})
    assert g.state_dict()["pirates"]["strength"] == 10
    assert g.state_dict()["round"] == 2 and g.state_dict()["phase"] == "blue"


def test_pirate_tokens():
    g = new_game(pirate=6)
    _to_round_end(g)
    # "The pirates' strength increases by 2 for all other players."
    arrange(g, "red", cannons=6, tokens=[_tok("pirates_plus2")])
    # "he loses only half of the victory points, rounded up" (after using his cannons)
    arrange(g, "white", cannons=3, vp=20, tokens=[_tok("pirates_half")])
    # "he receives 2 gold" when fought off
    arrange(g, "blue", cannons=8, tokens=[_tok("pirates_gold")], gold=0)
    arrange(g, "yellow", cannons=7, vp=20)
    g.command({"type": "round_ended"})
    a = g.state_dict()["pirates"]["last_attack"]["players"]
    assert a["red"]["strength"] == 6 and a["red"]["fought_off"]
    assert a["white"]["strength"] == 8 and player(g, "white")["vp"] == 20 - 4
    assert player(g, "white")["cannons"] == 0
    assert player(g, "blue")["gold"] == 2 and player(g, "blue")["cannons"] == 0
    assert a["yellow"]["strength"] == 8 and player(g, "yellow")["vp"] == 12


def test_pirate_gold_token_even_at_strength_0():
    # "Note: Even if the pirates' strength is 0, the token's owner receives 2 gold."
    g = new_game(pirate=0)
    _to_round_end(g)
    arrange(g, "red", tokens=[_tok("pirates_gold")])
    g.command({"type": "round_ended"})
    assert player(g, "red")["gold"] == 2


def _tok(name, used=False):
    from companion.amerigo.players import Token

    return Token(name, used)


def test_final_scoring_example():
    # "he converts his treasure chest (3 gold) and his progress token (5 gold) into 8 gold, which
    # takes his gold track from 10 to 12; the remaining 6 gold is immediately converted into 6 VP.
    # Then he scores an additional 12 VP for his gold track."
    # Goods: "Cotton: 12 VP (3 x 4) Tobacco: 1 VP (1 x 1) Sugar: 0 VP (0 x 2) Coconut: 2 VP (2 x 1)
    # Coffee: 4 VP (2 x 2)". Progress: "7 VP from one progress token and 12 VP from a progress
    # token that lets him score his gold track a second time. He also scores 10 VP from the
    # progress track itself." Special actions: "6 VP from the special action track."
    g = new_game(players=["red", "blue"])
    arrange(g, "red", gold=10, chests=1, vp=50,
            tokens=[_tok("gold5"), _tok("vp7"), _tok("vp_gold")],
            commodities={"cotton": 3, "tobacco": 1, "sugar": 0, "coconut": 2, "coffee": 2},
            production={"cotton": 4, "tobacco": 1, "sugar": 2, "coconut": 1, "coffee": 2})
    _play_out(g)
    g.command({"type": "final_scoring", "players": {
        "red": {"progress_vp": 10, "special_vp": 6}, "blue": {"progress_vp": 0, "special_vp": 0}}})
    sheet = g.score_sheet()
    red = next(s for s in sheet["players"] if s["player"] == "red")
    assert red["gold"] == {"track_before": 10, "converted": 8, "overflow_vp": 6, "track_vp": 12,
                           "vp": 18}
    assert red["goods"]["per_good"] == {"cotton": 12, "tobacco": 1, "sugar": 0, "coconut": 2,
                                        "coffee": 4}
    assert red["goods"]["vp"] == 19
    assert red["progress"] == {"e_tokens": {"vp7": 7, "vp_gold": 12}, "track_vp": 10, "vp": 29}
    assert red["special_actions"]["vp"] == 6
    assert red["total"] == red["vp_before_final_scoring"] + 18 + 19 + 29 + 6
    assert sheet["final"] and sheet["winner"] == "red"
    # the game itself is not changed by scoring
    assert player(g, "red")["gold"] == 10 and player(g, "red")["treasure_chests"] == 1


def _play_out(g):
    while g.state.stage != "final":
        if g.state.stage == "tray":
            read(g, **{g.state.colour: 1})
        elif g.state.stage == "round_end":
            g.command({"type": "round_ended"})
        elif g.state.stage == "pirate":
            g.command({"type": "pirate_revealed", "value": 0})
        else:
            finish_phase(g)


def test_tie_goes_to_the_player_ahead_in_order():
    # "In case of a tie, the tied player who is ahead of other tied players in player order wins"
    g = new_game(players=["a", "b", "c"])
    arrange(g, "a", gold=0)
    arrange(g, "b", gold=0)
    arrange(g, "c", gold=0)
    arrange(g, "c", special=3)  # c is first in player order now
    _play_out(g)
    inputs = {n: {"progress_vp": 0, "special_vp": 0} for n in "abc"}
    g.command({"type": "final_scoring", "players": inputs})
    sheet = g.score_sheet()
    assert [r["total"] for r in sheet["ranking"]] == [0, 0, 0]
    assert sheet["winner"] == "c" and sheet["tie_break"] == "player order"


def test_chest_any_time_and_e_tokens():
    # "He can remove this treasure chest from the game at any time and take 3 gold."
    g = new_game(players=["a", "b"])
    arrange(g, "a", chests=1, gold=11)
    g.command({"type": "chest_cashed", "player": "a"})
    assert player(g, "a")["gold"] == 12 and player(g, "a")["vp"] == 2
    with pytest.raises(NotEnough, match="no treasure chest"):
        g.command({"type": "chest_cashed", "player": "a"})
    # "scores 1 victory point for each of his established trading posts"
    arrange(g, "b", posts={"A": 2, "B": 1}, tokens=[_tok("vp_posts"), _tok("gold3")])
    sheet = g.score_sheet()
    b = next(s for s in sheet["players"] if s["player"] == "b")
    assert b["progress"]["e_tokens"] == {"vp_posts": 3}
    assert b["gold"]["converted"] == 3 and not sheet["final"]
    assert b["missing_inputs"] == ["progress_vp", "special_vp"]
    # "Once only, the token's owner receives 3 gold."
    g.command({"type": "token_used", "player": "b", "token": "gold3"})
    assert player(g, "b")["gold"] == 1 + 3
    with pytest.raises(NotEnough, match="no unused progress token gold3"):
        g.command({"type": "token_used", "player": "b", "token": "gold3"})


def test_second_post_on_an_already_discovered_island_scores_nothing():
    # "Example: With 5 AP available, the red player moves his ship to another anchor point on this
    # same island. He then places a second trading post on this island, but he scores no victory
    # points as this island has already been discovered."
    g = new_game(tray=counts(blue=7, black=7))
    read(g, blue=3)
    act(g, "red", "blue", posts=[{"island": "A", "big": False}])
    finish_phase(g)
    read(g, black=2, blue=4)  # the 4 blue cubes still inside the tower fall out too
    act(g, "red", "blue", posts=[{"island": "A"}])
    assert player(g, "red")["vp"] == 3 and player(g, "red")["trading_posts"] == {"A": 2}
