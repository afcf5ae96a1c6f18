"""The game's own words (cube colours, action names, tile kinds), each a translatable ``Msg``.

A message that names a colour or an action passes the word as a value (``colour=COLOUR["red"]``)
instead of writing it into its English text, so every language says it with the table's term.
"""

from __future__ import annotations

from ..text import Msg, joined

COLOUR = {
    "blue": Msg("blue"),
    "black": Msg("black"),
    "red": Msg("red"),
    "brown": Msg("brown"),
    "green": Msg("green"),
    "yellow": Msg("yellow"),
    "white": Msg("white"),
}

# The rulebook's action names ("The Actions", pages 6-10), by cube colour.
ACTION = {
    "blue": Msg("Move Ships"),
    "black": Msg("Load Cannons"),
    "red": Msg("Plan"),
    "brown": Msg("Progress"),
    "green": Msg("Build"),
    "yellow": Msg("Buy Production Tokens"),
    "white": Msg("Special Action"),
}

TILE = {"village": Msg("village"), "landscape": Msg("landscape")}

# The goods of the final scoring example ("Cotton ... Tobacco ... Sugar ... Coconut ... Coffee"),
# the default ``goods`` setting; a table that names its goods otherwise sees its own words.
GOOD = {
    "cotton": Msg("cotton"),
    "tobacco": Msg("tobacco"),
    "sugar": Msg("sugar"),
    "coconut": Msg("coconut"),
    "coffee": Msg("coffee"),
}


def colour(name: str) -> Msg | str:
    """The colour's word; an unknown name (e.g. "?" for a joker) is said as it is."""
    return COLOUR.get(name, name)


def colours(names) -> list[Msg | str]:
    return [colour(n) for n in names]


def good(name: str) -> Msg | str:
    """The good's word; a good this table named itself is said as it is."""
    return GOOD.get(name, name)


def goods(names) -> list[Msg | str]:
    return [good(n) for n in names]


def counts(tray: dict[str, int]) -> Msg:
    """"4 blue, 1 black" (or "no cubes") for a tray of cube counts."""
    parts = [Msg("{n} {colour}", n=n, colour=colour(c)) for c, n in tray.items() if n]
    return joined(parts) if parts else Msg("no cubes")
