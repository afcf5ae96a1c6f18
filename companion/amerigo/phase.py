"""One phase, per player: which actions he may choose, with how many AP, and performing one.

The base offer is the tray (``offer.tray_offer``); on top of it each player may have the white joker
(the colour under his special-action disc), the green/red swap token, extra AP from progress tokens
and AP bought with gold, gold or VP instead of an action, and 2 gold when a track end wastes AP.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..text import Msg, joined
from . import islands as isl_rules
from . import words
from .constants import (
    CANNON_MAX,
    COMMODITIES_PER_GOOD,
    GOLD_DIVISOR,
    GOLD_DIVISOR_WITH_TOKEN,
    LANDSCAPE_TILES,
    LANDSCAPES_PER_PLAN,
    LANDSCAPES_PER_PLAN_WITH_TOKEN,
    PRODUCTION_TOKENS_FOR_PLAYERS,
    PRODUCTION_TOKENS_PER_GOOD,
    PROGRESS_TOKENS,
    SHIPS,
    TOKEN_AP_SHIPS,
    TRACK_END_GOLD,
    VILLAGE_COST,
    VILLAGE_TILES,
)
from .errors import LimitReached, MalformedEvent, NotEnough, NotOnOffer
from .events import completed_islands
from .offer import COLOURS, tray_offer
from .players import Player, Token
from .settings import track_vp
from .tokens import ap_bonus

if TYPE_CHECKING:
    from .state import GameState

ACTION_NAMES = words.ACTION

# Fields an action event may carry, per choice (besides player and choice).
_COMMON = {"via", "ap", "gold_spent", "tokens_used"}
FIELDS_FOR = {
    "blue": _COMMON | {"posts", "completes"},
    "black": _COMMON,
    "red": _COMMON | {"take"},
    "brown": _COMMON | {"tokens_taken", "at_end"},
    "green": _COMMON | {"build", "commodities", "completes"},
    "yellow": _COMMON | {"production"},
    "white": _COMMON | {"advance", "jump", "at_end"},
    "gold": set(),
    "vp": set(),
}


def joker_colour(state: GameState, p: Player) -> str | None:
    """Colour under the player's special-action disc if the board is known, "?" if it is not, and
    None before he has advanced ("A player who has advanced at least once ... will have his disc
    on a non-white space")."""
    if p.special == 0:
        return None
    colours = state.settings.special_track_colours
    if colours is None:
        return "?"
    return colours[min(p.special, len(colours) - 1)]


def routes(state: GameState, p: Player) -> dict[str, list[str]]:
    """Action colour -> the ways ``p`` may choose it now, cheapest first.

    "tray": cubes of that colour lie in the action space; "white": white cubes as the joker for the
    colour under his disc (costs nothing); "swap": the green/red progress token (which a game may
    make once-only, so it comes last). A player may name the way (``via``); the engine never picks
    one that costs him a token when a free one is open.
    """
    counts = state.ledger.action
    out: dict[str, list[str]] = {c: ["tray"] for c in COLOURS if counts[c] > 0}
    if counts["white"] > 0:
        # "treat white cubes as jokers that match the color under a player's special action disc"
        jc = joker_colour(state, p)
        jokers = COLOURS[:-1] if jc == "?" else [jc] if jc not in (None, "white") else []
        for c in jokers:
            out.setdefault(c, []).append("white")
    if p.has(state.settings.token_usage, "swap_green_red"):
        # "treat green cubes as red and red cubes as green when choosing an action"
        for a, b in (("red", "green"), ("green", "red")):
            if counts[a] > 0:
                out.setdefault(b, []).append("swap")
    return out


# The tracks a message names (``_spaces_needed``).
TRACKS = {"progress": Msg("progress"), "special action": Msg("special action")}


def _route_refused(state: GameState, p: Player, choice: str, via: str) -> Msg:
    """Why ``via`` is not a way for ``p`` to choose ``choice`` now, in the players' words."""
    counts = state.ledger.action
    name = ACTION_NAMES[choice]
    if via == "white":
        jc = joker_colour(state, p)
        if counts["white"] == 0:
            return Msg("there is no white cube in the action space to stand in for {action}",
                       action=name)
        if jc is None:
            return Msg("{player}'s disc has not advanced on the special action track yet, so "
                       "white cubes are no joker for him", player=p.name)
        return Msg("{player}'s white cubes stand in for {joker} ({joker_action}), the colour "
                   "under his disc, not for {colour}", player=p.name, joker=words.colour(jc),
                   joker_action=ACTION_NAMES.get(jc, jc), colour=words.colour(choice))
    if choice not in ("red", "green"):
        return Msg("the green/red swap token turns green into red and red into green, not "
                   "{action}", action=name)
    if not p.has(state.settings.token_usage, "swap_green_red"):
        return Msg("{player} has no usable green/red swap token", player=p.name)
    other = "green" if choice == "red" else "red"
    return Msg("there is no {other} cube in the action space to count as {colour}",
               other=words.colour(other), colour=words.colour(choice))


def base_ap(state: GameState) -> int:
    return tray_offer(state.ledger.action).ap


def bonus_ap(state: GameState, p: Player, colour: str) -> int:
    usage = state.settings.token_usage
    return sum(ap_bonus(t.name, colour) for t in p.usable(usage) if t.name[:3] in ("ap1", "ap2"))


def gold_option(state: GameState, p: Player) -> int:
    token = p.has(state.settings.token_usage, "gold_half")
    divisor = GOLD_DIVISOR_WITH_TOKEN if token else GOLD_DIVISOR
    return tray_offer(state.ledger.action, gold_divisor=divisor).gold


def options(state: GameState, p: Player) -> dict:
    """What ``p`` may do this phase (for the phone UI); meaningful while actions are being taken."""
    usage = state.settings.token_usage
    ap = base_ap(state)
    total = sum(state.ledger.action.values())
    return {
        "actions": [
            {
                "colour": c,
                "name": str(ACTION_NAMES[c]),
                "name_msg": ACTION_NAMES[c].to_json(),
                "via": ways[0],
                "routes": ways,
                "ap": ap + bonus_ap(state, p, c),
                **({"ships_token_ap": TOKEN_AP_SHIPS}
                   if c == "blue" and p.has(usage, "ships8") else {}),
                **({"track_end_gold": TRACK_END_GOLD}
                   if _wastes_ap(state, p, c, ap + bonus_ap(state, p, c)) else {}),
            }
            for c, ways in routes(state, p).items()
        ],
        "joker_colour": joker_colour(state, p) if state.ledger.action["white"] else None,
        "ap": ap,
        "gold_instead": gold_option(state, p),
        "vp_instead": total if p.has(usage, "vp_instead") else None,
        "gold_to_buy_ap": p.gold,
        "cannon_room": CANNON_MAX - p.cannons,
        "treasure_chests": p.chests,
    }


def _wastes_ap(state: GameState, p: Player, colour: str, ap: int) -> bool:
    """Would this action hit the end of its track with AP left over (so: 2 gold)?"""
    s = state.settings
    if colour == "black":
        return p.cannons + ap > CANNON_MAX
    if colour == "brown":
        if s.progress_track_length is None:
            return p.progress_at_end
        return p.progress + ap > s.progress_track_length
    if colour == "white":
        if s.special_track_length is None:
            return p.special_at_end
        return p.special + ap > s.special_track_length
    return False


# --- performing an action -------------------------------------------------------------------------


def perform(state: GameState, e: dict) -> dict:
    """Apply one ``action`` event for its player; return a summary (what was gained)."""
    p = state.players[e["player"]]
    choice = e["choice"]
    extra = set(e) - FIELDS_FOR[choice] - {"v", "type", "player", "choice", "at", "note"}
    if extra:
        raise MalformedEvent("fields {fields} do not belong to choice '{choice}'",
                             fields=", ".join(sorted(extra)), choice=choice)
    usage = state.settings.token_usage
    total = sum(state.ledger.action.values())
    if choice == "gold":
        # "the player totals the number of cubes in the action space, divides this number by
        # three, rounds up, then advances his disc on the gold track"
        gold = gold_option(state, p)
        if p.has(usage, "gold_half"):
            p.use_once(usage, "gold_half")
        vp = p.gain_gold(gold)
        return {"gold": gold, "vp_from_excess_gold": vp}
    if choice == "vp":
        # "Instead of performing an action ... scores as many victory points as the number of cubes"
        if not p.has(usage, "vp_instead"):
            raise NotOnOffer("{player} has no usable progress token for VP instead of an action",
                             player=p.name)
        p.use_once(usage, "vp_instead")
        p.gain_vp(total)
        return {"vp": total}

    ways = routes(state, p)
    via = e.get("via")
    if choice not in ways:
        on_offer = words.colours(ways) or Msg("nothing")
        raise NotOnOffer(
            "{colour} ({action}) is not on offer for {player}; available: {on_offer}",
            colour=words.colour(choice), action=ACTION_NAMES[choice], player=p.name,
            on_offer=on_offer,
        )
    if via == "white" and choice == "white":
        raise MalformedEvent("white cannot be a joker for itself")
    if via is not None and via not in ways[choice]:
        raise NotOnOffer(_route_refused(state, p, choice, via))
    how = via or ways[choice][0]
    if how == "swap":
        p.use_once(usage, "swap_green_red")

    # AP: "The largest number of cubes of a single color" + progress tokens + bought with gold.
    available = base_ap(state) + bonus_ap(state, p, choice)
    for t in p.usable(usage):
        if ap_bonus(t.name, choice):
            p.use_once(usage, t.name)  # flips it only if a game made AP tokens once-only
    used = e.get("tokens_used", [])
    for name in used:
        if name != "ships8" or choice != "blue":
            raise NotOnOffer("progress token {token} cannot be used with {action}", token=name,
                             action=ACTION_NAMES[choice])
    if used:
        # "he may use this token to gain 8 additional action points": each token once per action
        held = len(p.usable(usage, name="ships8"))
        if len(used) > held:
            raise NotEnough("{player} has {held} usable ships8 token(s): each gives its 8 AP "
                            "once per action, so it cannot be used {n} times", player=p.name,
                            held=held, n=len(used))
        for name in used:
            p.use_once(usage, name)
        available += TOKEN_AP_SHIPS * len(used)  # "8 additional action points for each ship"
    gold_spent = e.get("gold_spent", 0)
    # "For each 1 gold a player spends during a phase, he gains 1 additional action point."
    p.spend_gold(gold_spent, Msg("on action points"))
    available += gold_spent
    ap = e.get("ap", available)
    if ap > available:
        raise NotEnough("{player} has {available} AP for {action}, not {ap}", player=p.name,
                        available=available, action=ACTION_NAMES[choice], ap=ap)

    handler = _HANDLERS[choice]
    summary = handler(state, p, e, ap, available)
    summary.update({"ap_available": available, "via": how})
    if gold_spent:
        summary["ap_bought"] = gold_spent
    return summary


def _track_end_gold(p: Player, at_end: bool, used: int, available: int) -> int:
    """"If a player's disc reaches or has reached the end of the cannon, progress or special
    action track without the player being able to use all available action points that phase, he
    receives 2 gold, no matter how many action points he forfeits.\""""
    if at_end and used < available:
        p.gain_gold(TRACK_END_GOLD)
        return TRACK_END_GOLD
    return 0


def _spaces_needed(state: GameState, p: Player, e: dict, track: str, was_at_end: bool,
                   fields: tuple[str, ...], available: int) -> None:
    """On a track of unknown length, a disc that reaches the end now must say how far it moved.

    Otherwise "all AP" would be assumed spent and the 2 gold for AP the end of the track wasted
    would be lost without a word ("If a player's disc reaches ... the end of the cannon, progress
    or special action track without the player being able to use all available action points
    that phase, he receives 2 gold"). Logs stored before this check may hold such an action (the
    phone sent it when the AP field was left empty): they load as they were played, all AP spent.
    """
    if not state.strict:
        return
    if e.get("at_end") and not was_at_end and not any(f in e for f in fields):
        raise MalformedEvent(
            "the {track} track's length is not set, so say how many spaces {player}'s disc moved "
            "before it reached the end (AP spent, of {available}): the AP it could not use give "
            "2 gold", track=TRACKS[track], player=p.name, available=available,
        )


def _blue(state: GameState, p: Player, e: dict, ap: int, available: int) -> dict:
    posts = e.get("posts", [])
    # "If a ship ends its movement on an anchor space, the player can establish one of his trading
    # posts": one per ship and action.
    if len(posts) > SHIPS:
        raise LimitReached("{player} has {n} ships: at most {n} trading posts per action",
                           player=p.name, n=SHIPS)
    # "Each time the token's owner establishes a trading post, he receives 1 gold": per token held
    gold_per_post = p.use_each(state.settings.token_usage, "gold_per_post") if posts else 0
    discovery = 0
    touched = []
    for post in posts:
        island = isl_rules.get_island(state.islands, post["island"], post.get("big"))
        discovery += isl_rules.establish_post(island, p, gold_per_post)
        touched.append(island.name)
    out = {"posts": len(posts), "discovery_vp": discovery}
    # "An island can also be completed, if the last free space is a trading post space and a
    # player establishes a trading post on it."
    for name in completed_islands(e):
        if name not in touched:
            raise NotOnOffer(
                "island '{island}' can only be completed by a post established on it now",
                island=name,
            )
    for name in completed_islands(e):
        _complete(state, p, name)
    if completed_islands(e):
        out["completed"] = ", ".join(completed_islands(e))
    return out


def _black(state: GameState, p: Player, e: dict, ap: int, available: int) -> dict:
    added = p.add_cannons(ap)
    gold = _track_end_gold(p, p.cannons == CANNON_MAX, added, available)
    return {"cannons": added, "track_end_gold": gold}


def _red(state: GameState, p: Player, e: dict, ap: int, available: int) -> dict:
    take = e.get("take", [])
    villages = sum(1 for t in take if t["tile"] == "village")
    lands = []
    for t in take:
        if t["tile"] == "landscape":
            if "size" not in t:
                raise MalformedEvent("a landscape tile needs its size (1-6), which is its AP cost")
            lands.append(t["size"])
        elif "size" in t:
            raise MalformedEvent("a village tile costs 1 AP whatever its size: leave out size")
    limit = (
        LANDSCAPES_PER_PLAN_WITH_TOKEN
        if p.has(state.settings.token_usage, "plan_two")
        else LANDSCAPES_PER_PLAN
    )
    if len(lands) > limit:
        raise LimitReached("{player} may take only {n} neutral landscape tile(s) per phase",
                           player=p.name, n=limit)
    if len(lands) == 2:
        p.use_once(state.settings.token_usage, "plan_two")
    cost = villages * VILLAGE_COST + sum(lands)
    _check_cost(p, cost, ap if "ap" in e else available, ACTION_NAMES["red"])
    if p.villages_taken + villages > VILLAGE_TILES:
        left = VILLAGE_TILES - p.villages_taken
        raise LimitReached("{player} has only {n} village tiles left", player=p.name, n=left)
    if state.landscapes_taken + len(lands) > LANDSCAPE_TILES:
        raise LimitReached("only {n} landscape tiles left",
                           n=LANDSCAPE_TILES - state.landscapes_taken)
    p.villages_taken += villages
    p.villages += villages
    p.landscapes.extend(lands)
    state.landscapes_taken += len(lands)
    return {"ap_spent": cost, "villages": villages, "landscapes": lands}


def _check_cost(p: Player, cost: int, ap: int, what: Msg) -> None:
    if cost > ap:
        raise NotEnough("{what} costs {cost} AP but {player} has {ap}", what=what, cost=cost,
                        player=p.name, ap=ap)


def _brown(state: GameState, p: Player, e: dict, ap: int, available: int) -> dict:
    s = state.settings
    old = p.progress
    if s.progress_track_length is not None:
        moved = min(ap, s.progress_track_length - old)
        at_end = old + moved >= s.progress_track_length
        if "at_end" in e and e["at_end"] != at_end:
            raise MalformedEvent("the progress track has {n} spaces: at_end is {at_end}",
                                 n=s.progress_track_length, at_end=str(at_end).lower())
    else:
        # Track length unknown (printed on the sheet): the player says when his disc is at the end.
        _spaces_needed(state, p, e, "progress", p.progress_at_end, ("ap",), available)
        moved = 0 if p.progress_at_end else ap
        at_end = p.progress_at_end or e.get("at_end", False)
    p.progress = old + moved
    p.progress_at_end = at_end
    taken = e.get("tokens_taken", [])
    if s.progress_track_vp is not None:
        # "Each time he reaches or passes a space with imprinted victory points, he must take a
        # progress token"
        owed = sum(1 for space in s.progress_track_vp if old < space <= p.progress)
        if len(taken) > owed:
            raise NotEnough("{player} passed {owed} VP space(s): cannot take {n} tokens",
                            player=p.name, owed=owed, n=len(taken))
    if state.tokens_taken + len(taken) > PROGRESS_TOKENS:
        raise LimitReached("only {n} progress tokens left", n=PROGRESS_TOKENS - state.tokens_taken)
    state.tokens_taken += len(taken)
    p.tokens.extend(Token(name) for name in taken)
    gold = _track_end_gold(p, at_end, moved, available)
    out = {"spaces": moved, "tokens_taken": taken, "track_end_gold": gold}
    if s.progress_track_vp is not None:
        out["progress_vp"] = track_vp(s.progress_track_vp, p.progress)
    return out


def _green(state: GameState, p: Player, e: dict, ap: int, available: int) -> dict:
    build = e.get("build", [])
    cost = 0
    villages = 0
    lands = list(p.landscapes)
    touched: list[str] = []
    for b in build:
        if b["vp"] > state.settings.tile_vp_max:
            raise LimitReached(
                "{vp} VP for one tile is more than a tile prints in this game (at most "
                "{most}, setting tile_vp_max): check the number on the tile", vp=b["vp"],
                most=state.settings.tile_vp_max,
            )
        island = isl_rules.get_island(state.islands, b["island"], b.get("big"))
        # "build ... on any island that contains at least one of his own trading posts"
        if not island.posts.get(p.name):
            raise NotOnOffer("{player} has no trading post on island '{island}'", player=p.name,
                             island=island.name)
        if b["tile"] == "village":
            if "size" in b:
                raise MalformedEvent("a village tile costs 1 AP whatever its size: leave out size")
            villages += 1
            cost += VILLAGE_COST
        else:
            if "size" not in b:
                raise MalformedEvent("a landscape tile needs its size (1-6), which is its AP cost")
            if b["size"] not in lands:
                raise NotEnough(
                    "{player} has no planned landscape tile of size {size} (has: {sizes})",
                    player=p.name, size=b["size"], sizes=sorted(lands) or Msg("none"),
                )
            lands.remove(b["size"])
            cost += b["size"]
        touched.append(island.name)
    if villages > p.villages:
        raise NotEnough("{player} has {n} planned village tile(s), not {villages}", player=p.name,
                        n=p.villages, villages=villages)
    _check_cost(p, cost, ap if "ap" in e else available, ACTION_NAMES["green"])
    commodities = e.get("commodities", {})
    if commodities and not build:
        raise MalformedEvent("commodity tokens are taken by building over them: add the build")
    for good, n in commodities.items():
        if good not in state.settings.goods:
            raise MalformedEvent("unknown good '{good}'; goods: {goods}", good=good,
                                 goods=list(state.settings.goods))
        if state.commodities_taken.get(good, 0) + n > COMMODITIES_PER_GOOD:
            raise LimitReached("there are only {n} {good} commodity tokens", n=COMMODITIES_PER_GOOD,
                               good=words.good(good))
    for name in completed_islands(e):
        if name not in touched:
            raise NotOnOffer("island '{island}' can only be completed by building on it now",
                             island=name)
    # All checks passed: now change the state.
    p.villages -= villages
    p.landscapes = lands
    vp = sum(b["vp"] for b in build)  # the printed small/big value, entered by the players
    p.gain_vp(vp)
    for good, n in commodities.items():
        p.commodities[good] = p.commodities.get(good, 0) + n
        state.commodities_taken[good] = state.commodities_taken.get(good, 0) + n
    out = {"ap_spent": cost, "tile_vp": vp, "commodities": dict(commodities)}
    for name in completed_islands(e):
        _complete(state, p, name)
    if completed_islands(e):
        out["completed"] = ", ".join(completed_islands(e))
    return out


def _yellow(state: GameState, p: Player, e: dict, ap: int, available: int) -> dict:
    bought = e.get("production", [])
    cost = sum(x["cost"] for x in bought)  # "The AP cost of a production token equals the number"
    _check_cost(p, cost, ap if "ap" in e else available, Msg("Buying production tokens"))
    pool = PRODUCTION_TOKENS_FOR_PLAYERS[len(state.players)]
    left = pool - sum(state.production_bought.values())
    if len(bought) > left:
        values = {"left": left, "pool": pool, "players": len(state.players), "player": p.name,
                  "n": len(bought)}
        if left == 1:
            raise LimitReached(
                "only {left} of the {pool} production tokens of a {players}-player game is left, "
                "so {player} cannot buy {n} (the tokens marked for more players stay in the box)",
                **values)
        raise LimitReached(
            "only {left} of the {pool} production tokens of a {players}-player game are left, "
            "so {player} cannot buy {n} (the tokens marked for more players stay in the box)",
            **values)
    tally: dict[tuple[str, int], int] = {}
    for x in bought:
        if x["good"] not in state.settings.goods:
            raise MalformedEvent("unknown good '{good}'; goods: {goods}", good=x["good"],
                                 goods=list(state.settings.goods))
        key = (x["good"], x["cost"])
        tally[key] = tally.get(key, 0) + 1
        if state.production_bought.get(f"{key[0]}:{key[1]}", 0) + tally[key] > (
            PRODUCTION_TOKENS_PER_GOOD[key[1]]
        ):
            raise LimitReached(
                "there are only {n} {good} production tokens costing {cost}",
                n=PRODUCTION_TOKENS_PER_GOOD[key[1]], good=words.good(key[0]), cost=key[1],
            )
    for (good, c), n in tally.items():
        p.production[good] = p.production.get(good, 0) + n
        state.production_bought[f"{good}:{c}"] = state.production_bought.get(f"{good}:{c}", 0) + n
    return {"ap_spent": cost, "production": [x["good"] for x in bought]}


def _white(state: GameState, p: Player, e: dict, ap: int, available: int) -> dict:
    s = state.settings
    if e.get("jump"):
        # "he can disregard the number of action points available and place his player order disc
        # on top of the current first player's disc."
        if "advance" in e:
            raise MalformedEvent("white action: give either advance or jump, not both")
        if not p.has(s.token_usage, "order_jump"):
            raise NotOnOffer("{player} has no usable progress token {token}", player=p.name,
                             token="order_jump")
        p.use_once(s.token_usage, "order_jump")
        first = state.players[state.order()[0]]
        if first is not p:
            p.special, p.special_height = first.special, first.special_height + 1
        return {"jumped_to": p.special}
    spaces = e.get("advance", ap)
    if spaces > available:
        raise NotEnough("{player} has {available} AP, cannot advance {spaces} spaces",
                        player=p.name, available=available, spaces=spaces)
    old = p.special
    if s.special_track_length is not None:
        moved = min(spaces, s.special_track_length - old)
        at_end = old + moved >= s.special_track_length
    else:
        _spaces_needed(state, p, e, "special action", p.special_at_end, ("advance", "ap"),
                       available)
        moved = 0 if p.special_at_end else spaces
        at_end = p.special_at_end or e.get("at_end", False)
    p.special_at_end = at_end
    if moved:
        # "If he lands on a space occupied by one or more discs, he places his disc on top"
        p.special = old + moved
        heights = [q.special_height for q in state.players.values()
                   if q is not p and q.special == p.special]
        p.special_height = max(heights, default=-1) + 1
    gold = _track_end_gold(p, at_end, moved, available)
    return {"spaces": moved, "track_end_gold": gold}


def _complete(state: GameState, p: Player, name: str) -> None:
    island = state.islands[name]
    isl_rules.complete(island, p, state.players, state.time_marker())


_HANDLERS = {
    "blue": _blue,
    "black": _black,
    "red": _red,
    "brown": _brown,
    "green": _green,
    "yellow": _yellow,
    "white": _white,
}


def track_values(state: GameState, p: Player) -> dict:
    """VP reached on the progress and special tracks, if the tracks are known (else None)."""
    s = state.settings
    return {
        "progress_vp": None if s.progress_track_vp is None else track_vp(s.progress_track_vp,
                                                                         p.progress),
        "special_vp": None if s.special_track_vp is None else track_vp(s.special_track_vp,
                                                                       p.special),
    }



def describe_outcome(summary: dict) -> Msg | None:
    """What an action brought about, in a few words, for the history list (None: nothing)."""
    bits = []
    if summary.get("ap_bought"):  # the total, so "+1 AP bought" is not read as the whole
        bought, total = summary["ap_bought"], summary["ap_available"]
        bits.append(Msg("{total} AP in all ({own} + {bought} bought with {bought} gold)",
                        total=total, own=total - bought, bought=bought))
    if summary.get("gold"):
        bits.append(Msg("+{n} gold", n=summary["gold"]))
    if summary.get("vp_from_excess_gold"):
        bits.append(Msg("+{n} VP from gold over 12", n=summary["vp_from_excess_gold"]))
    if summary.get("vp"):
        bits.append(Msg("+{n} VP", n=summary["vp"]))
    if summary.get("cannons") is not None:
        bits.append(Msg("+{n} cannons", n=summary["cannons"]))
    if summary.get("discovery_vp"):
        bits.append(Msg("+{n} VP discovery", n=summary["discovery_vp"]))
    if summary.get("tile_vp"):
        bits.append(Msg("+{n} VP for tiles", n=summary["tile_vp"]))
    if summary.get("completed"):
        bits.append(Msg("island {island} completed", island=summary["completed"]))
    if summary.get("spaces") is not None:
        bits.append(Msg("{n} spaces", n=summary["spaces"]))
    if summary.get("track_end_gold"):
        bits.append(Msg("+{n} gold (track end)", n=summary["track_end_gold"]))
    return joined(bits) if bits else None
