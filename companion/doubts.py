"""The camera's doubts about a reading, in words each phone can say in its own language.

Why here: the counter (``vision``) knows nothing of the app or its translations, so beside its
English warnings it hands over each doubt as data (``{"kind": "colour", "colour": "red", "other":
"brown", "place": "top-left", "times": 1}``, see ``vision.reading.Doubt``). This says each kind as
a ``Msg``; the web layer says those in the phone's language. A doubt this version does not know
(a newer counter) keeps the counter's English words, so nothing is ever lost.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from companion.amerigo.words import colour
from companion.text import Msg

PLACE = {
    "top-left": Msg("the top left of the picture"),
    "top": Msg("the top of the picture"),
    "top-right": Msg("the top right of the picture"),
    "left": Msg("the left of the picture"),
    "middle": Msg("the middle of the picture"),
    "right": Msg("the right of the picture"),
    "bottom-left": Msg("the bottom left of the picture"),
    "bottom": Msg("the bottom of the picture"),
    "bottom-right": Msg("the bottom right of the picture"),
}


def doubt_message(doubt: Mapping[str, Any]) -> Msg | None:
    """One doubt as a ``Msg`` (None for a kind or value this version does not know)."""
    kind = doubt.get("kind")
    place = PLACE.get(doubt.get("place")) if "place" in doubt else None
    if "place" in doubt and place is None:
        return None
    first, second = doubt.get("colour"), doubt.get("other")
    if kind == "colour" and place and first and second:
        msg = Msg("a cube at {place} may be {colour} or {other}", place=place,
                  colour=colour(first), other=colour(second))
    elif kind == "not_a_cube" and place and first:
        msg = Msg("a {colour} cube at {place} may not be a cube", colour=colour(first),
                  place=place)
    elif kind == "one_more" and place and first:
        msg = Msg("there may be one more cube ({colour}?) at {place}", colour=colour(first),
                  place=place)
    elif kind == "too_many" and first:
        msg = Msg("more {colour} cubes read than the tower can hold", colour=colour(first))
    elif kind == "too_many_read_as" and first and second:
        msg = Msg("more {colour} cubes read than the tower can hold: the least sure one is "
                  "read as {other}", colour=colour(first), other=colour(second))
    elif kind == "no_outline":
        msg = Msg("the tray's outline was not found: are the tray's corners in view?")
    elif kind == "no_colour":
        msg = Msg("the picture has no colour (a black-and-white camera?): the cubes' colours "
                  "cannot be told")
    else:
        return None
    times = doubt.get("times", 1)
    if not isinstance(times, int) or isinstance(times, bool) or times < 1:
        return None
    if times == 2:
        return Msg("{warning} (twice)", warning=msg)
    if times > 2:
        return Msg("{warning} ({n} times)", warning=msg, n=times)
    return msg


def warning_messages(reading: Mapping[str, Any]) -> list[dict | str] | None:
    """The reading's warnings as ``Msg`` JSON, one per English warning and in its order (the
    warning itself where its doubt is unknown); None when the reading carries no doubts."""
    warnings = list(reading.get("warnings") or [])
    doubts = reading.get("doubts")
    if not isinstance(doubts, list) or len(doubts) != len(warnings):
        return None
    out: list[dict | str] = []
    for text, doubt in zip(warnings, doubts, strict=True):
        msg = doubt_message(doubt) if isinstance(doubt, Mapping) else None
        out.append(msg.to_json() if msg is not None else str(text))
    return out
