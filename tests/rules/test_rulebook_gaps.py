"""The gaps an independent model of the rulebook found in the engine (issue 11), one test each.

Each docstring quotes the rule (amerigo-dice-tower-rules-en.txt, the reference) the test holds the
engine to. A refused command must change nothing and say why in words a player understands.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from amerigo_helpers import act, arrange, counts, new_game, player, read

from companion.amerigo.errors import (
    LimitReached,
    MalformedEvent,
    NotEnough,
    NotOnOffer,
    RulesError,
    UnknownPlayer,
)
from companion.amerigo.game import Game
from companion.amerigo.islands import Island
from companion.amerigo.players import Token


def refused(g, cmd, error, match):
    before_state, before_events = json.dumps(g.state_dict(), sort_keys=True), g.events
    with pytest.raises(error, match=match) as info:
        g.command(cmd)
    assert isinstance(info.value, RulesError)
    assert json.dumps(g.state_dict(), sort_keys=True) == before_state
    assert g.events == before_events
    return str(info.value)


def buy(name, *goods_costs):
    return {"type": "action", "player": name, "choice": "yellow",
            "production": [{"good": g, "cost": c} for g, c in goods_costs]}


@pytest.mark.parametrize(("players", "pool"), [(["a", "b"], 30), (["a", "b", "c"], 40),
                                               (["a", "b", "c", "d"], 50)])
def test_production_tokens_in_play_depend_on_the_player_count(players, pool):
    """"50 production tokens – 3x 2, 4x 3, 3x 4 of each type" ... "With 2 players, return the
    production tokens for 3 and 4 players to the game box; with 3 players, return only those for
    4 players to the game box." "2 player: 30 production tokens" "3 player: 40 production
    tokens"."""
    g = new_game(players=players)
    assert g.state_dict()["production_tokens"] == {"in_game": pool, "left": pool}
    read(g, blue=1, yellow=7)
    # All but one token of the pool were bought earlier (spread over goods and costs so that no
    # single good/cost runs out first).
    goods = ["cotton", "tobacco", "sugar", "coconut", "coffee"]
    slots = [f"{g_}:{c}" for g_ in goods for c, n in ((2, 3), (3, 4), (4, 3)) for _ in range(n)]
    bought: dict[str, int] = {}
    for slot in slots[:pool - 1]:
        bought[slot] = bought.get(slot, 0) + 1
    g.state.production_bought = bought
    assert g.state_dict()["production_tokens"]["left"] == 1
    good, cost = slots[pool - 1].split(":")  # one token of this good and cost is still there
    msg = refused(g, buy("a", (good, int(cost)), ("cotton", 2)), LimitReached,
                  f"only 1 of the {pool} production tokens of a {len(players)}-player game is left")
    assert "stay in the box" in msg
    act(g, "a", "yellow", production=[{"good": good, "cost": int(cost)}])
    assert g.state_dict()["production_tokens"]["left"] == 0
    refused(g, buy(players[1], ("sugar", 2)), LimitReached, "only 0 of the .* are left")


def test_a_seventh_trading_post_on_one_island_is_refused():
    """"All players who own at least one trading post on this island now gain victory points as
    follows: 1 : 1x 2 : 3x 3 : 6x 4 : 10x 5 : 15x 6 : 21x. Each player locates the row that
    corresponds to the number of his trading posts on this island" -- there is no row for 7, so a
    7th post of one player would leave an island that can never be completed."""
    g = new_game(players=["a", "b"])
    read(g, blue=3)
    g.state.islands["A"] = Island("A", big=False, posts={"a": 6})  # played in earlier rounds
    g.state.players["a"].posts["A"] = 6
    msg = refused(g, {"type": "action", "player": "a", "choice": "blue",
                      "posts": [{"island": "A"}]}, LimitReached,
                  "a already has 6 trading posts on island 'A'")
    assert "7th" in msg
    # a post on another island in the same action is fine; the island itself can still be
    # completed, and pays the 6-post row.
    act(g, "a", "blue", posts=[{"island": "B", "big": False}])
    act(g, "b", "blue", posts=[{"island": "A"}], completes="A")
    islands = g.state_dict()["islands"]
    assert islands["A"]["completed"]
    assert islands["A"]["completion_payout"] == {"a": 21 * 5, "b": 1 * 5}
    assert player(g, "a")["trading_posts"] == {"A": 6, "B": 1}


def _swap_once_game():
    # special action track: the first space is white, the second red, the third blue
    g = new_game(players=["a", "b", "c"], settings={
        "special_track_colours": ["white", "red", "blue"],
        "token_usage": {"swap_green_red": "once"}})
    read(g, blue=1, green=2, white=3)
    for name in ("a", "b", "c"):
        g.state.players[name].tokens = [Token("swap_green_red")]
    g.state.players["a"].special = 1  # on red
    g.state.players["b"].special = 2  # on blue
    return g


def _swap_used(g, name):
    return player(g, name)["progress_tokens"][0]["used"]


def test_the_way_an_action_is_chosen_is_the_one_the_player_names():
    """"for this action treat white cubes as jokers that match the color under a player's special
    action disc" and "The token's owner can treat green cubes as red and red cubes as green when
    choosing an action" -- two ways to Plan without a red cube. A once-only token is "flip[ped]
    face down after using it", so only the way the player took may flip it."""
    g = _swap_once_game()
    red = next(a for a in g.state_dict()["options"]["a"]["actions"] if a["colour"] == "red")
    assert red["routes"] == ["white", "swap"] and red["via"] == "white"  # the free way first
    act(g, "a", "red", via="white", take=[{"tile": "village"}])
    assert _swap_used(g, "a") is False and g.state.last_action["via"] == "white"
    # b's disc is on blue: his white cubes are no red joker, and he says so is refused in words
    msg = refused(g, {"type": "action", "player": "b", "choice": "red", "via": "white",
                      "take": [{"tile": "village"}]}, NotOnOffer,
                  "b's white cubes stand in for blue")
    assert "not for red" in msg
    act(g, "b", "red", via="swap", take=[{"tile": "village"}])
    assert _swap_used(g, "b") is True and g.state.last_action["via"] == "swap"
    # no way named: the free one (white joker) is taken before the token
    g2 = _swap_once_game()
    act(g2, "a", "red", take=[{"tile": "village"}])
    assert _swap_used(g2, "a") is False and g2.state.last_action["via"] == "white"


@pytest.mark.parametrize(("who", "choice", "via", "match"), [
    ("c", "blue", "swap", "turns green into red and red into green, not Move Ships"),
    ("c", "green", "swap", "no red cube in the action space to count as green"),
    ("c", "red", "white", "c's white cubes stand in for blue"),
])
def test_a_way_that_is_not_open_is_refused_in_words(who, choice, via, match):
    """"If no cube of this color is in the action space, the player can still take this color's
    corresponding action" -- through the joker or the token only when they apply."""
    g = _swap_once_game()
    act(g, "a", "blue", ap=0)
    act(g, "b", "blue", ap=0)
    g.state.players["c"].special = 2
    refused(g, {"type": "action", "player": who, "choice": choice, "via": via}, NotOnOffer, match)


def test_white_is_no_joker_before_the_disc_moves():
    """"A player who has advanced at least once on the special action track will have his disc on
    a non-white space.\""""
    g = _swap_once_game()
    act(g, "a", "blue", ap=0)
    act(g, "b", "blue", ap=0)
    refused(g, {"type": "action", "player": "c", "choice": "red", "via": "white"}, NotOnOffer,
            "c's disc has not advanced on the special action track yet")


def _to_round_end(g):
    while g.state.stage != "round_end":
        if g.state.stage == "tray":
            read(g, **{g.state.colour: 1})
        while g.state.stage == "actions":
            act(g, g.state.turn(), "gold")


def test_two_copies_of_a_token_count_per_token_where_the_benefit_is_an_amount():
    """"Progress tokens provide their owner a positive benefit" -- each token its own: "Each time
    the token's owner chooses this action, he receives 2 additional action points", "Each time the
    token's owner establishes a trading post, he receives 1 gold", "The pirates' strength
    increases by 2 for all other players", "If the token's owner fights off the pirates
    completely ..., he receives 2 gold", "During final scoring, the token's owner scores 7 victory
    points". A rule-changing benefit ("he loses only half of the victory points") is the same with
    two copies."""
    g = new_game(players=["a", "b", "c"], pirate=4)
    read(g, blue=2, black=1)
    arrange(g, "a", tokens=[Token("gold_per_post"), Token("gold_per_post"), Token("ap2:blue"),
                            Token("ap2:blue")])
    options = {x["colour"]: x["ap"] for x in g.state_dict()["options"]["a"]["actions"]}
    assert options["blue"] == 2 + 2 + 2
    act(g, "a", "blue", posts=[{"island": "A", "big": False}, {"island": "B", "big": False}])
    assert player(g, "a")["gold"] == 2 * 2  # 2 posts x 2 tokens
    _to_round_end(g)
    arrange(g, "a", tokens=[Token("pirates_plus2"), Token("pirates_plus2")], cannons=4)
    arrange(g, "b", tokens=[Token("pirates_gold"), Token("pirates_gold")], cannons=8, gold=0)
    arrange(g, "c", tokens=[Token("pirates_half"), Token("pirates_half"), Token("vp7"),
                            Token("vp7")], cannons=0, vp=40)
    g.command({"type": "round_ended"})
    attack = g.state_dict()["pirates"]["last_attack"]["players"]
    assert attack["b"]["strength"] == 4 + 2 * 2 and attack["b"]["fought_off"]
    assert player(g, "b")["gold"] == 2 * 2
    assert attack["c"]["strength"] == 8 and attack["c"]["vp_lost"] == 4  # half, not a quarter
    sheet = next(s for s in g.score_sheet()["players"] if s["player"] == "c")
    assert sheet["progress"]["e_tokens"] == {"vp7": 14}


def test_a_ships_token_gives_its_8_ap_once_per_action():
    """"If the token's owner chooses the "Move Ships" action, he may use this token to gain 8
    additional action points for each ship for this phase." -- one token, one use, even where a
    game makes the token permanent; two tokens, two uses."""
    g = new_game(players=["a", "b"], settings={"token_usage": {"ships8": "permanent"}})
    read(g, blue=2)
    arrange(g, "a", tokens=[Token("ships8")])
    refused(g, {"type": "action", "player": "a", "choice": "blue",
                "tokens_used": ["ships8", "ships8"]}, NotEnough,
            "a has 1 usable ships8 token.* cannot be used 2 times")
    act(g, "a", "blue", tokens_used=["ships8"])
    assert g.state.last_action["ap_available"] == 2 + 8
    arrange(g, "b", tokens=[Token("ships8"), Token("ships8")])
    act(g, "b", "blue", tokens_used=["ships8", "ships8"])
    assert g.state.last_action["ap_available"] == 2 + 16


def _build(g, name, vp):
    return {"type": "action", "player": name, "choice": "green",
            "build": [{"island": "A", "tile": "village", "vp": vp}]}


@pytest.mark.parametrize(("settings", "cap"), [(None, 12), ({"tile_vp_max": 20}, 20)])
def test_a_tiles_vp_has_an_upper_bound(settings, cap):
    """"Each village and landscape tile has two victory point values on it. When expanding on a
    small island, the player scores the smaller number of victory points; on a big island ... the
    larger number" -- printed on the tiles only, so the bound is a setting (a marked default)."""
    g = new_game(players=["a", "b"], settings=settings)
    read(g, blue=2, green=1)
    act(g, "a", "blue", posts=[{"island": "A", "big": True}])
    act(g, "b", "blue", posts=[{"island": "A"}])
    read(g, green=1)
    arrange(g, "a", villages=1)
    arrange(g, "b", villages=1)
    assert ("tile_vp_max" in " ".join(g.state_dict()["unconfirmed_settings"])) is (cap == 12)
    refused(g, _build(g, "a", cap + 1), LimitReached,
            f"{cap + 1} VP for one tile is more than a tile prints in this game \\(at most {cap}")
    act(g, "a", "green", build=[{"island": "A", "tile": "village", "vp": cap}])
    assert player(g, "a")["vp"] == 3 + cap


def test_a_pirate_marker_has_an_upper_bound():
    """"Mix the pirate markers well and place 5 of them face down on the pirate spaces" -- their
    values are printed on them only: a cap (setting pirate_marker_max, a marked default) holds a
    typo back."""
    g = new_game(players=["a", "b"], pirate=3)
    _to_round_end(g)
    g.command({"type": "round_ended"})
    refused(g, {"type": "pirate_revealed", "value": 60}, LimitReached,
            "a pirate marker of 60 is more than any marker shows in this game \\(at most 12")
    g.command({"type": "pirate_revealed", "value": 12})
    assert g.state_dict()["pirates"]["strength"] == 15


def test_known_pirate_markers_are_checked_exactly():
    """"6 pirate markers" -- with the six printed values entered, a revealed marker must be one
    that is still face down."""
    g = new_game(players=["a", "b"], pirate=4, settings={"pirate_markers": [2, 3, 4, 4, 5, 6]})
    assert not any("pirate_marker_max" in x for x in g.state_dict()["unconfirmed_settings"])
    _to_round_end(g)
    g.command({"type": "round_ended"})
    refused(g, {"type": "pirate_revealed", "value": 1}, LimitReached,
            "no face-down pirate marker shows 1: the markers not yet face up show 2, 3, 4, 5, 6")
    g.command({"type": "pirate_revealed", "value": 4})
    _to_round_end(g)
    g.command({"type": "round_ended"})
    refused(g, {"type": "pirate_revealed", "value": 4}, LimitReached, "show 2, 3, 5, 6$")


def _sheet(name, *goods):
    return {"type": "sheet_goods", "player": name, "goods": list(goods)}


def test_the_goods_printed_on_each_player_sheet_are_entered_per_player():
    """"Note: Each player starts with a production token of each type of good printed on his
    player sheet." and "Remember that each player starts with one production token of each type
    of good printed on his player sheet" -- which goods a sheet prints is read off that sheet, per
    player; until it is entered every good is assumed (and reported as unconfirmed)."""
    g = new_game(players=["a", "b"])
    unconfirmed = g.state_dict()["unconfirmed_settings"]
    assert "sheet goods of a (not entered: all 5 assumed)" in unconfirmed
    assert player(g, "a")["production"] == dict.fromkeys(
        ["cotton", "tobacco", "sugar", "coconut", "coffee"], 1)
    read(g, blue=1, yellow=5)
    act(g, "a", "yellow", production=[{"good": "cotton", "cost": 2}])
    g.command(_sheet("a", "cotton", "sugar"))
    assert player(g, "a")["production"] == {"cotton": 2, "tobacco": 0, "sugar": 1, "coconut": 0,
                                            "coffee": 0}
    assert player(g, "a")["sheet_goods"] == ["cotton", "sugar"]
    assert player(g, "b")["production"]["coffee"] == 1  # b's sheet is not a's
    unconfirmed = g.state_dict()["unconfirmed_settings"]
    assert not any("sheet goods of a" in x for x in unconfirmed)
    assert any("sheet goods of b" in x for x in unconfirmed)
    # a wrong entry is corrected by entering the sheet again; the bought token stays
    g.command(_sheet("a", "coffee"))
    assert player(g, "a")["production"] == {"cotton": 1, "tobacco": 0, "sugar": 0, "coconut": 0,
                                            "coffee": 1}
    g.state.players["a"].commodities.update(cotton=3, coffee=2)
    sheet = next(s for s in g.score_sheet()["players"] if s["player"] == "a")
    assert sheet["goods"]["per_good"]["cotton"] == 3 and sheet["goods"]["per_good"]["coffee"] == 2
    assert g.history()[-1]["text"] == (
        "a's player sheet prints coffee (one production token of each)")


@pytest.mark.parametrize(("cmd", "error", "match"), [
    (_sheet("a", "tea"), MalformedEvent,
     "tea is not a good of this game; the goods are cotton, tobacco, sugar, coconut, coffee"),
    (_sheet("a", "sugar", "sugar"), MalformedEvent, "each good once"),
    (_sheet("zed", "sugar"), UnknownPlayer, "'zed' is not a player"),
])
def test_a_sheet_that_cannot_be_is_refused_in_words(cmd, error, match):
    g = new_game(players=["a", "b"])
    refused(g, cmd, error, match)


def test_old_logs_without_sheet_goods_still_load_and_score_the_same():
    """Logs written before the sheets were entered per player keep every good printed."""
    path = Path(__file__).resolve().parents[2] / "companion/amerigo/examples/game-2p.jsonl"
    game = Game.from_events([json.loads(x) for x in path.read_text().splitlines()])
    for p in game.state_dict()["players"]:
        assert p["sheet_goods"] is None and min(p["production"].values()) >= 1
    assert game.score_sheet()["winner"] == "Eva"


def test_a_bump_after_the_drop_but_before_the_reading():
    """"If cubes fall out of the tower at an inappropriate time (e.g., someone bumps the table),
    leave the cubes in the tray until the start of the next phase. Drop these cubes into the tower
    along with the cubes on the appropriate storage space for this phase." -- also when the table
    is bumped after this phase's drop, before the tray is read: those cubes are not this phase's."""
    g = new_game(players=["a", "b"])  # blue phase: the 7 blue cubes were dropped
    g.command({"type": "bump_read", "tray": counts(red=1, white=1)})
    st = g.state_dict()
    assert st["stage"] == "tray" and st["cubes"]["tray"] == counts(red=1, white=1)
    assert st["vision_bounds"]["red"] == 7  # a picture shows the bumped red cube too
    # the reading is of the whole tray; leaving the bumped cubes out is refused in words
    refused(g, {"type": "tray_read", "tray": counts(blue=3)}, LimitReached,
            "the reading leaves out 1 red, 1 white that fell out early \\(a bump\\) and stay in "
            "the tray until the next phase")
    read(g, blue=3, red=2, white=1)
    st = g.state_dict()
    assert st["cubes"]["action_space"] == counts(blue=3, red=1)  # no white joker from the bump
    assert st["offer"]["actions"] == ["blue", "red"] and st["offer"]["ap"] == 3
    assert st["cubes"]["tray"] == counts(red=1, white=1)
    act(g, "a", "gold")
    act(g, "b", "gold")
    # next phase (red: the blue and red cubes went to storage, black is empty): the bumped cubes
    # are dropped with the red storage cube
    st = g.state_dict()
    assert st["phase"] == "red" and st["cubes"]["tray"] == counts()
    assert st["cubes"]["tower"]["white"] == 7 and st["cubes"]["tower"]["red"] == 7


def test_a_reading_of_only_the_bumped_cubes_skips_the_phase():
    """"If a storage space is empty or no cubes fall out of the tower, skip this phase" -- the
    bumped cubes lying in the tray did not fall out in this phase's drop."""
    g = new_game(players=["a", "b"], tray=counts(blue=7, black=2))
    g.command({"type": "bump_read", "tray": counts(yellow=2)})
    read(g, yellow=2)
    st = g.state_dict()
    assert st["phase"] == "black" and st["skipped_phases"][-1]["why"] == "no cubes out"
    assert st["cubes"]["tower"]["yellow"] == 7  # dropped again with the black cubes


def test_a_track_end_of_unknown_length_does_not_lose_the_2_gold():
    """"If a player's disc reaches or has reached the end of the cannon, progress or special action
    track without the player being able to use all available action points that phase, he receives
    2 gold, no matter how many action points he forfeits." -- with the track's length unknown, a
    disc that reaches the end must say how far it moved, or the leftover AP (and the gold) would
    silently count as used."""
    g = new_game(players=["a", "b"])
    read(g, blue=2, brown=4, white=1)
    arrange(g, "a", gold=0)
    msg = refused(g, {"type": "action", "player": "a", "choice": "brown", "at_end": True},
                  MalformedEvent, "the progress track's length is not set, so say how many "
                  "spaces a's disc moved before it reached the end \\(AP spent, of 4\\)")
    assert "2 gold" in msg
    act(g, "a", "brown", ap=1, at_end=True)
    assert (player(g, "a")["progress"], player(g, "a")["gold"]) == (1, 2)
    arrange(g, "b", gold=0)
    refused(g, {"type": "action", "player": "b", "choice": "white", "at_end": True},
            MalformedEvent, "the special action track's length is not set")
    act(g, "b", "white", advance=3, at_end=True)
    assert (player(g, "b")["special_track"], player(g, "b")["gold"]) == (3, 2)
    read(g, brown=4, white=1)  # b is first now
    # a disc already at the end: nothing to say, the 2 gold come again
    act(g, "b", "white")
    assert player(g, "b")["gold"] == 2 + 2
    # using every AP exactly up to the end wastes none: no gold (said explicitly)
    arrange(g, "a", progress_at_end=False)
    act(g, "a", "brown", ap=4, at_end=True)
    assert (player(g, "a")["progress"], player(g, "a")["gold"]) == (5, 2)


def test_a_stored_track_end_without_the_spaces_still_loads_as_it_was_played():
    """Logs stored before the check: the phone sent "at_end" with the AP field left empty. They load
    (all AP spent, as the engine counted it then); only a new command must say the spaces."""
    g = new_game(players=["a", "b"])
    read(g, blue=2, brown=4)
    events = [*g.events, {"v": 1, "type": "action", "player": "a", "choice": "brown",
                          "at_end": True}]
    old = Game.from_events(events)
    assert (player(old, "a")["progress"], player(old, "a")["progress_at_end"]) == (4, True)
    refused(old, {"type": "action", "player": "b", "choice": "brown", "at_end": True},
            MalformedEvent, "the progress track's length is not set")
