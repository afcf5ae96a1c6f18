"""The gaps an independent model of the rulebook found in the engine (issue 11), one test each.

Each docstring quotes the rule (amerigo-dice-tower-rules-en.txt, the reference) the test holds the
engine to. A refused command must change nothing and say why in words a player understands.
"""

from __future__ import annotations

import json

import pytest
from amerigo_helpers import act, new_game, read

from companion.amerigo.errors import LimitReached, RulesError


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
