"""Progress tokens: their names in events, what they do, and when they may be used.

The rulebook (pages 11-12) describes each token in words; the pictures that say which action a
token depicts are lost in the text, so the players name the token when they take it, e.g.
``"ap2:black"`` (+2 AP whenever he chooses Load Cannons) or ``"ap1:red+green"``.

Whether a token is permanent, once-only (1x) or end-of-game (E) is printed as an icon. Where the
text says it ("Once only", "During final scoring", "Each time") the kind is fixed here; where it
does not, the kind is a setting (``settings.TOKEN_USAGE_DEFAULTS``) with a marked default.
"""

from __future__ import annotations

from ..text import Msg
from . import words
from .errors import MalformedEvent
from .offer import COLOURS

# Token names (without the action suffix of the AP tokens) and the sentence describing them.
SIMPLE_TOKENS: dict[str, Msg] = {
    "ships8": Msg("Move Ships: +8 AP for each ship this phase"),
    "pirates_plus2": Msg("pirates' strength +2 for all other players"),
    "pirates_half": Msg("lose only half the VP (rounded up) to pirates"),
    "pirates_gold": Msg("2 gold when the pirates are fought off"),
    "plan_two": Msg("Plan: take two neutral landscape tiles instead of one"),
    "swap_green_red": Msg("treat green cubes as red and red cubes as green"),
    "order_jump": Msg("white action: put the disc on top of the current first player's disc"),
    "gold3": Msg("once only: 3 gold"),
    "gold5": Msg("once only: 5 gold"),
    "gold_per_post": Msg("1 gold for each trading post established"),
    "gold_half": Msg("gold instead of an action: 1 per 2 cubes"),
    "vp_instead": Msg("VP instead of an action: 1 per cube in the action space"),
    "vp_posts": Msg("final scoring: 1 VP per established trading post"),
    "vp7": Msg("final scoring: 7 VP"),
    "vp_gold": Msg("final scoring: VP equal to the gold track"),
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
        raise MalformedEvent("progress token must be a name, got {value}", value=repr(name))
    if name in SIMPLE_TOKENS:
        return name
    if name.startswith("ap2:"):
        colour = name[4:]
        if colour not in COLOURS:
            raise MalformedEvent("progress token '{token}': '{colour}' is not an action colour",
                                 token=name, colour=colour)
        return name
    if name.startswith("ap1:"):
        pair = name[4:].split("+")
        if len(pair) != 2 or any(c not in COLOURS for c in pair) or pair[0] == pair[1]:
            raise MalformedEvent(
                "progress token '{token}': write two different action colours, e.g. "
                "'ap1:red+green'", token=name
            )
        return name
    raise MalformedEvent(
        "unknown progress token {token}; known: ap2:<colour>, ap1:<colour>+<colour>, {known}",
        token=repr(name), known=", ".join(SIMPLE_TOKENS)
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


def describe_token(name: str) -> Msg:
    if name.startswith("ap2:"):
        return Msg("+2 AP on {colour}", colour=words.colour(name[4:]))
    if name.startswith("ap1:"):
        a, b = name[4:].split("+")
        return Msg("+1 AP on {colour} or {other}", colour=words.colour(a),
                   other=words.colour(b))
    return SIMPLE_TOKENS[name]
