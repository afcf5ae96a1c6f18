"""A question before gold is paid for action points the player then leaves unused.

Why: "For each 1 gold a player spends during a phase, he gains 1 additional action point", and
nothing in the rules forbids paying for points one does not spend; but gold is also victory
points at the end, so at a real table it is almost always a slip of the phone's two fields
("AP to spend" counts the bought points too). The table asks instead of refusing
(``NeedsConfirmation``): the rules engine stays exact, and a player who means it says yes.
"""

from __future__ import annotations

from companion.errors import NeedsConfirmation


def check_bought_ap(event: dict, last_action: dict | None, confirmed: bool) -> None:
    """``event``: the action as the rules engine took it; ``last_action``: its summary."""
    if confirmed or event.get("type") != "action" or not event.get("gold_spent"):
        return
    if "ap" not in event or last_action is None:
        return  # no AP named: the engine spends them all
    gold, ap, available = event["gold_spent"], event["ap"], last_action["ap_available"]
    unused_gold = min(gold, available - ap)
    if unused_gold > 0:
        raise NeedsConfirmation(
            "{player} pays {gold} gold for AP but spends only {ap} of {available} AP, so "
            "{unused} gold is paid for nothing. Pay anyway?",
            player=event["player"], gold=gold, ap=ap, available=available, unused=unused_gold,
        )
