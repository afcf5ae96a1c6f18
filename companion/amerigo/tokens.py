"""Progress tokens: their names in events, what they do, and when they may be used.

The rulebook (pages 11-12) describes each token in words; the pictures that say which action a
token depicts are lost in the text, so the players name the token when they take it, e.g.
``"ap2:black"`` (+2 AP whenever he chooses Load Cannons) or ``"ap1:red+green"``.

Whether a token is permanent, once-only (1x) or end-of-game (E) is printed as an icon. Where the
text says it ("Once only", "During final scoring", "Each time") the kind is fixed here; where it
does not, the kind is a setting (``settings.TOKEN_USAGE_DEFAULTS``) with a marked default.
"""

from __future__ import annotations

from .errors import MalformedEvent
from .offer import COLOURS

# Token names (without the action suffix of the AP tokens) and the sentence describing them.
SIMPLE_TOKENS: dict[str, str] = {
    "ships8": "Move Ships: +8 AP for each ship this phase",
    "pirates_plus2": "pirates' strength +2 for all other players",
    "pirates_half": "lose only half the VP (rounded up) to pirates",
    "pirates_gold": "2 gold when the pirates are fought off",
    "plan_two": "Plan: take two neutral landscape tiles instead of one",
    "swap_green_red": "treat green cubes as red and red cubes as green",
    "order_jump": "white action: put the disc on top of the current first player's disc",
    "gold3": "once only: 3 gold",
    "gold5": "once only: 5 gold",
    "gold_per_post": "1 gold for each trading post established",
    "gold_half": "gold instead of an action: 1 per 2 cubes",
    "vp_instead": "VP instead of an action: 1 per cube in the action space",
    "vp_posts": "final scoring: 1 VP per established trading post",
    "vp7": "final scoring: 7 VP",
    "vp_gold": "final scoring: VP equal to the gold track",
}

PERMANENT, ONCE, END = "permanent", "once", "end"

# Two copies of one token. The rulebook gives every benefit to "the token's owner" token by token
# ("Each token depicts one action. Each time the token's owner chooses this action, he receives 2
# additional action points"), so a benefit that is an amount -- AP, gold, VP, pirate strength --
# is counted once per token held. A benefit that changes a rule -- half the damage, gold per 2
# cubes, two landscapes, the green/red swap, the jump, VP instead of an action -- is the same rule
# with one copy or two: the second adds nothing (and a once-only setting flips one copy).
PER_TOKEN = frozenset({
    "ap2", "ap1", "ships8", "pirates_plus2", "pirates_gold", "gold3", "gold5", "gold_per_post",
    "vp_posts", "vp7", "vp_gold",
})


def parse_token(name: object) -> str:
    """Check a token name from an event and return it; ``MalformedEvent`` names the problem."""
    if not isinstance(name, str):
        raise MalformedEvent(f"progress token must be a name, got {name!r}")
    if name in SIMPLE_TOKENS:
        return name
    if name.startswith("ap2:"):
        colour = name[4:]
        if colour not in COLOURS:
            raise MalformedEvent(f"progress token {name!r}: {colour!r} is not an action colour")
        return name
    if name.startswith("ap1:"):
        pair = name[4:].split("+")
        if len(pair) != 2 or any(c not in COLOURS for c in pair) or pair[0] == pair[1]:
            raise MalformedEvent(
                f"progress token {name!r}: write two different action colours, e.g. 'ap1:red+green'"
            )
        return name
    raise MalformedEvent(
        f"unknown progress token {name!r}; known: ap2:<colour>, ap1:<colour>+<colour>, "
        + ", ".join(SIMPLE_TOKENS)
    )


def family(name: str) -> str:
    """The usage family key of a token name: 'ap2' and 'ap1' for the AP tokens, else the name."""
    return name.split(":", 1)[0]


def ap_bonus(name: str, colour: str) -> int:
    """Extra AP a permanent AP token gives when its owner chooses the action ``colour``."""
    from .constants import TOKEN_AP_ONE_ACTION, TOKEN_AP_TWO_ACTIONS

    if name.startswith("ap2:") and name[4:] == colour:
        return TOKEN_AP_ONE_ACTION
    if name.startswith("ap1:") and colour in name[4:].split("+"):
        return TOKEN_AP_TWO_ACTIONS
    return 0


def describe_token(name: str) -> str:
    if name.startswith("ap2:"):
        return f"+2 AP on {name[4:]}"
    if name.startswith("ap1:"):
        a, b = name[4:].split("+")
        return f"+1 AP on {a} or {b}"
    return SIMPLE_TOKENS[name]
