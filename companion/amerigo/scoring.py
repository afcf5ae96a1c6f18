"""The final score sheet, in the rulebook's order, with a breakdown per player and category.

"END OF THE GAME ... Score the following: 1. Gold ... 2. Goods ... 3. Progress ... 4. Special
actions. The player with the most victory points wins. In case of a tie, the tied player who is
ahead of other tied players in player order wins the game."

Scoring works on copies: the sheet can be shown at any time (``final: false`` before the end, as
if the game ended now) without changing the game.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING

from .constants import CHEST_GOLD, TOKEN_GOLD_ONCE, TOKEN_VP_FLAT
from .settings import track_vp
from .tokens import END, family

if TYPE_CHECKING:
    from .players import Player
    from .state import GameState


def player_sheet(state: GameState, original: Player) -> dict:
    """One player's final scoring (breakdown + total), without changing ``original``."""
    p = copy.deepcopy(original)
    s = state.settings
    usage = s.token_usage
    before = p.vp
    missing: list[str] = []

    # 1. Gold: "First, convert treasure chests and one-time (1x) progress tokens that grant gold
    # into gold on their owners' gold tracks." (excess over 12 -> VP at once) "A player now scores
    # 1 VP for each gold on his gold track."
    converted = p.chests * CHEST_GOLD
    for t in p.tokens:
        if t.name in TOKEN_GOLD_ONCE and not t.used:
            converted += TOKEN_GOLD_ONCE[t.name]
    overflow = p.gain_gold(converted)
    gold_vp = p.gold

    # 2. Goods: "multiplies the number of commodity tokens ... by the number of production tokens"
    goods = {g: p.commodities.get(g, 0) * p.production.get(g, 0) for g in s.goods}

    # 3. Progress: "Evaluate all progress tokens marked E" + "the highest victory point value he has
    # reached or passed on the progress track"
    e_tokens: dict[str, int] = {}
    for t in p.tokens:
        if usage[family(t.name)] != END:
            continue
        if t.name == "vp_posts":  # "1 victory point for each of his established trading posts"
            vp = p.posts_total
        elif t.name == "vp7":  # "scores 7 victory points"
            vp = TOKEN_VP_FLAT
        elif t.name == "vp_gold":  # "victory points equal to the current level of his gold track"
            vp = p.gold
        else:
            vp = 0
        e_tokens[t.name] = e_tokens.get(t.name, 0) + vp
    inputs = state.final_inputs.get(p.name, {})
    if s.progress_track_vp is not None:
        progress_vp = track_vp(s.progress_track_vp, p.progress)
    elif "progress_vp" in inputs:
        progress_vp = inputs["progress_vp"]
    else:
        progress_vp = 0
        missing.append("progress_vp")

    # 4. Special actions: "the highest victory point value he has reached or passed on the special
    # action track"
    if s.special_track_vp is not None:
        special_vp = track_vp(s.special_track_vp, p.special)
    elif "special_vp" in inputs:
        special_vp = inputs["special_vp"]
    else:
        special_vp = 0
        missing.append("special_vp")

    total = (
        before + overflow + gold_vp + sum(goods.values()) + sum(e_tokens.values()) + progress_vp
        + special_vp
    )
    return {
        "player": p.name,
        "vp_before_final_scoring": before,
        "gold": {
            "track_before": original.gold,
            "converted": converted,
            "overflow_vp": overflow,
            "track_vp": gold_vp,
            "vp": overflow + gold_vp,
        },
        "goods": {"per_good": goods, "vp": sum(goods.values())},
        "progress": {
            "e_tokens": e_tokens,
            "track_vp": progress_vp,
            "vp": sum(e_tokens.values()) + progress_vp,
        },
        "special_actions": {"track_vp": special_vp, "vp": special_vp},
        "total": total,
        "missing_inputs": missing,
    }


def score_sheet(state: GameState) -> dict:
    """Sheets for all players, the ranking and the winner (tie-break: player order)."""
    from .state import OVER

    order = state.order()
    sheets = [player_sheet(state, state.players[n]) for n in state.players]
    ranking = sorted(sheets, key=lambda sh: (-sh["total"], order.index(sh["player"])))
    totals = [sh["total"] for sh in ranking]
    return {
        "final": state.stage == OVER,
        "players": sheets,
        # a tie is a shared place ("place" as in 1, 1, 3); only the win is broken, by player order
        "ranking": [{"player": sh["player"], "total": sh["total"],
                     "place": totals.index(sh["total"]) + 1,
                     "tied": totals.count(sh["total"]) > 1} for sh in ranking],
        "winner": ranking[0]["player"] if ranking else None,
        "tie_break": "player order" if len(ranking) > 1
        and ranking[0]["total"] == ranking[1]["total"] else None,
    }
