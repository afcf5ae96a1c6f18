"""The pirate attack at the end of each round (rulebook: "END OF A GAME ROUND").

Strength is the sum of the face-up pirate markers (values the players enter when a marker is
revealed: they are printed on the markers only). The three pirate progress tokens modify it.
"""

from __future__ import annotations

from math import ceil

from .constants import PIRATE_TOKEN_EXTRA, PIRATE_TOKEN_GOLD
from .errors import LimitReached
from .players import Player
from .settings import Settings


def check_marker(settings: Settings, revealed: list[int], value: int) -> None:
    """Refuse a revealed marker value no face-down marker can show (``LimitReached``).

    With the six printed values known (setting ``pirate_markers``) the value must be one of those
    not yet face up; otherwise it is held to the ``pirate_marker_max`` cap.
    """
    if settings.pirate_markers is None:
        if value > settings.pirate_marker_max:
            raise LimitReached(
                "a pirate marker of {value} is more than any marker shows in this game (at most "
                "{most}, setting pirate_marker_max): check the number", value=value,
                most=settings.pirate_marker_max,
            )
        return
    left = list(settings.pirate_markers)
    for v in revealed:
        if v in left:
            left.remove(v)
    if value not in left:
        raise LimitReached(
            "no face-down pirate marker shows {value}: the markers not yet face up show {shown}",
            value=value, shown=sorted(left),
        )


def strength_for(player: Player, players: list[Player], base: int, usage: dict[str, str]) -> int:
    """"The pirates' strength increases by 2 for all other players" (per token held by others:
    ``tokens.PER_TOKEN``)."""
    extra = sum(
        PIRATE_TOKEN_EXTRA * len(other.usable(usage, fam="pirates_plus2"))
        for other in players
        if other is not player
    )
    return base + extra


def fight(players: list[Player], base: int, usage: dict[str, str]) -> dict[str, dict]:
    """Fire cannons for every player; return what happened to each (for the state and history).

    "Each player must fire cannons equal to the strength of the pirates ... If a player goes down to
    zero cannons and still has not matched the pirates' strength, he suffers damage equal to the
    full strength of the pirates". With the token: "he loses only half of the victory points,
    rounded up" ("The player must still use as many cannons as possible"); with the other: "If the
    token's owner fights off the pirates completely ... he receives 2 gold" ("Even if the pirates'
    strength is 0").
    """
    results: dict[str, dict] = {}
    strengths = {p.name: strength_for(p, players, base, usage) for p in players}
    for p in players:  # a once-only "+2" token (if a game sets it so) is spent by this attack
        for t in p.usable(usage, fam="pirates_plus2"):
            p.use_once(usage, t.name)
    for p in players:
        strength = strengths[p.name]
        before = p.cannons
        if p.cannons >= strength:
            p.cannons -= strength
            gold = PIRATE_TOKEN_GOLD * p.use_each(usage, "pirates_gold")  # per token held
            p.gain_gold(gold)
            results[p.name] = {"strength": strength, "cannons_fired": strength,
                               "fought_off": True, "vp_lost": 0, "gold": gold}
        else:
            p.cannons = 0
            half = p.has(usage, "pirates_half")
            if half:
                p.use_once(usage, "pirates_half")
            damage = ceil(strength / 2) if half else strength
            lost = p.lose_vp(damage)
            results[p.name] = {"strength": strength, "cannons_fired": before,
                               "fought_off": False, "vp_lost": lost, "gold": 0}
    return results
