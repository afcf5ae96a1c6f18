"""The basic offer of a phase, straight from the tray (rulebook: "The Action Phase").

The colours present are the actions on offer; the largest single-colour count is the action points
every player gets; a player may instead take gold, one per three cubes in the tray, rounded up.
Player-specific modifiers (jokers, progress tokens) live in the rules engine, not here.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import ceil

COLOURS: tuple[str, ...] = ("blue", "black", "red", "brown", "green", "yellow", "white")


@dataclass(frozen=True)
class TrayOffer:
    actions: tuple[str, ...]
    ap: int
    gold: int
    total: int

    def to_dict(self) -> dict:
        return {
            "actions": list(self.actions),
            "ap": self.ap,
            "gold": self.gold,
            "total": self.total,
        }


def tray_offer(counts: dict[str, int], gold_divisor: int = 3) -> TrayOffer:
    """Actions, AP and gold for a tray of ``counts`` (colour -> cubes).

    ``gold_divisor`` is 3 by the rules, 2 for a player holding the matching progress token.
    """
    unknown = set(counts) - set(COLOURS)
    if unknown:
        raise ValueError(f"unknown cube colour(s): {', '.join(sorted(unknown))}")
    if any(not isinstance(n, int) or n < 0 for n in counts.values()):
        raise ValueError("cube counts must be whole numbers >= 0")
    total = sum(counts.values())
    actions = tuple(c for c in COLOURS if counts.get(c, 0) > 0)
    ap = max(counts.values(), default=0)
    return TrayOffer(actions=actions, ap=ap, gold=ceil(total / gold_divisor), total=total)
