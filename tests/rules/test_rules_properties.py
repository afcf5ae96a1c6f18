"""Property tests: random command sequences, legal and illegal, never break the invariants.

Invariants: the 49 cubes are conserved (7 per colour, each in exactly one place), VP >= 0,
0 <= gold <= 12, 0 <= cannons <= 12, at most 6 trading posts of one player on one island (the
completion table's last row), no more production tokens bought than the player count puts in the
game, no negative production; a refused command changes nothing; undo followed by redo (undo of
the undo) gives back the same state; the log replays to the same state.
"""

from __future__ import annotations

import json

from amerigo_helpers import new_game
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from companion.amerigo.errors import RulesError
from companion.amerigo.events import CHOICES
from companion.amerigo.game import Game
from companion.amerigo.offer import COLOURS

ISLANDS = ["A", "B", "C"]
GOODS = ["cotton", "sugar", "coffee"]


def snap(g: Game) -> str:
    return json.dumps(g.state_dict(), sort_keys=True)


def check_invariants(g: Game) -> None:
    s = g.state
    s.check()
    cubes = g.state_dict()["cubes"]
    for c in COLOURS:
        assert sum(cubes[place][c] for place in ("tower", "storage", "tray", "action_space")) == 7
    for p in s.players.values():
        assert p.vp >= 0 and 0 <= p.gold <= 12 and 0 <= p.cannons <= 12
        assert p.posts_total <= 12
        assert min(p.production.values()) >= 0
    for island in s.islands.values():
        assert max(island.posts.values(), default=0) <= 6
    if s.players:  # a game still in set-up may have none yet
        assert sum(s.production_bought.values()) <= {2: 30, 3: 40, 4: 50}[len(s.players)]


def small_counts(draw, hi=3):
    return {c: draw(st.integers(0, hi)) for c in COLOURS}


def action_command(draw, g: Game) -> dict:
    s = g.state
    if s.turn() and draw(st.integers(0, 2)) > 0:
        # mostly a plain legal action, so that games get far (rounds, pirates, final scoring)
        opts = g.state_dict()["options"][s.turn()]
        choice = draw(st.sampled_from([a["colour"] for a in opts["actions"]] + ["gold"]))
        return {"type": "action", "player": s.turn(), "choice": choice}
    names = [*s.players, "ghost"]
    name = s.turn() if s.turn() and draw(st.booleans()) else draw(st.sampled_from(names))
    choice = draw(st.sampled_from(CHOICES))
    cmd: dict = {"type": "action", "player": name, "choice": choice}
    if choice in ("gold", "vp"):
        return cmd
    if draw(st.booleans()):
        cmd["ap"] = draw(st.integers(0, 9))
    if draw(st.integers(0, 4)) == 0:
        cmd["gold_spent"] = draw(st.integers(0, 4))
    if draw(st.integers(0, 5)) == 0:
        cmd["via"] = draw(st.sampled_from(["white", "swap"]))
    if choice == "blue" and draw(st.booleans()):
        cmd["posts"] = [{"island": draw(st.sampled_from(ISLANDS)), "big": draw(st.booleans())}
                        for _ in range(draw(st.integers(0, 3)))]
        if cmd["posts"] and draw(st.integers(0, 3)) == 0:
            cmd["completes"] = cmd["posts"][0]["island"]
    if choice == "red":
        cmd["take"] = [draw(st.sampled_from([{"tile": "village"},
                                             {"tile": "landscape", "size": 2},
                                             {"tile": "landscape", "size": 1}]))
                       for _ in range(draw(st.integers(0, 3)))]
    if choice == "green":
        cmd["build"] = [{"island": draw(st.sampled_from(ISLANDS)),
                         "tile": draw(st.sampled_from(["village", "landscape"])),
                         "vp": draw(st.integers(0, 14)),
                         **({"size": draw(st.integers(1, 3))} if draw(st.booleans()) else {})}
                        for _ in range(draw(st.integers(0, 2)))]
        if draw(st.booleans()):
            cmd["commodities"] = {draw(st.sampled_from(GOODS)): draw(st.integers(0, 3))}
        if cmd["build"] and draw(st.integers(0, 2)) == 0:
            cmd["completes"] = cmd["build"][0]["island"]
    if choice == "yellow":
        cmd["production"] = [{"good": draw(st.sampled_from(GOODS)),
                              "cost": draw(st.integers(2, 4))}
                             for _ in range(draw(st.integers(0, 2)))]
    if choice == "brown" and draw(st.booleans()):
        cmd["tokens_taken"] = [draw(st.sampled_from(
            ["ap2:black", "ap1:red+green", "ships8", "pirates_plus2", "pirates_half",
             "pirates_gold", "gold3", "gold5", "vp_instead", "vp_gold", "swap_green_red",
             "order_jump", "gold_per_post", "gold_half"]))]
    if choice == "white":
        if draw(st.integers(0, 3)) == 0:
            cmd["jump"] = True
        elif draw(st.booleans()):
            cmd["advance"] = draw(st.integers(0, 6))
    if choice in ("brown", "white") and draw(st.integers(0, 4)) == 0:
        cmd["at_end"] = True
    return cmd


def next_command(draw, g: Game) -> dict:
    s = g.state
    noise = draw(st.integers(0, 9)) == 0
    kind = draw(st.sampled_from(
        ["tray_read", "bump_read", "action", "round_ended", "pirate_revealed", "chest_cashed",
         "token_used", "undo", "redo", "tray_corrected", "final_scoring", "sheet_goods",
         "malformed"]))
    if not noise:
        kind = {"tray": "tray_read", "actions": "action", "round_end": "round_ended",
                "pirate": "pirate_revealed", "final": "final_scoring"}.get(s.stage, kind)
        roll = draw(st.integers(0, 19))
        if roll == 0:
            kind = "undo"
        elif roll == 1:
            kind = "redo"
        elif roll in (2, 3):
            kind = draw(st.sampled_from(["bump_read", "chest_cashed", "token_used",
                                         "tray_corrected", "sheet_goods"]))
    names = [*s.players, "ghost"]
    if kind == "tray_read":
        if noise:
            return {"type": "tray_read", "tray": small_counts(draw)}
        bounds = g.state_dict()["vision_bounds"]  # what the vision would be told
        return {"type": "tray_read", "tray": {c: draw(st.integers(0, bounds[c])) for c in COLOURS}}
    if kind == "bump_read":
        return {"type": "bump_read", "tray": small_counts(draw, 1)}
    if kind == "action":
        return action_command(draw, g)
    if kind == "round_ended":
        return {"type": "round_ended"}
    if kind == "pirate_revealed":
        return {"type": "pirate_revealed", "value": draw(st.integers(0, 14))}
    if kind == "chest_cashed":
        return {"type": "chest_cashed", "player": draw(st.sampled_from(names))}
    if kind == "token_used":
        return {"type": "token_used", "player": draw(st.sampled_from(names)),
                "token": draw(st.sampled_from(["gold3", "gold5", "vp7"]))}
    if kind == "sheet_goods":
        return {"type": "sheet_goods", "player": draw(st.sampled_from(names)),
                "goods": draw(st.lists(st.sampled_from([*GOODS, "tea"]), max_size=3))}
    if kind == "undo":
        return {"type": "undo"}
    if kind == "redo":
        return {"type": "undo", "redo": True}
    if kind == "tray_corrected":
        return {"type": "tray_corrected", "target": draw(st.integers(1, len(g.events) + 1)),
                "tray": small_counts(draw)}
    if kind == "final_scoring":
        return {"type": "final_scoring", "players": {
            n: {"progress_vp": draw(st.integers(0, 9)), "special_vp": draw(st.integers(0, 9))}
            for n in s.players}}
    return draw(st.sampled_from([{"type": "action"}, {"v": 7, "type": "undo"}, {"type": "nope"},
                                 {"type": "tray_read", "tray": {"blue": -1}}]))


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_random_commands_keep_the_invariants(data):
    seats = [["a", "b"], ["a", "b", "c"], ["a", "b", "c", "d"]]
    g = new_game(players=data.draw(st.sampled_from(seats)),
                 tray={c: data.draw(st.integers(0, 7)) for c in COLOURS})
    check_invariants(g)
    for _ in range(data.draw(st.integers(10, 400))):
        cmd = next_command(data.draw, g)
        before, events_before = snap(g), g.events
        try:
            g.command(cmd)
        except RulesError:
            assert snap(g) == before, f"refused {cmd} changed the state"
            assert g.events == events_before
            continue
        check_invariants(g)
        if cmd["type"] != "undo" and data.draw(st.integers(0, 5)) == 0:
            after = snap(g)
            g.undo()
            check_invariants(g)
            g.redo()
            assert snap(g) == after, "undo of undo is not the identity"
    assert snap(Game.from_events(g.events)) == snap(g)
