"""The event format: JSON objects with ``"v": 1`` and a ``"type"``; shape checks; ``describe``.

Everything that happens at the table is one of these events, appended to the game's log; the state
is derived from the log (``state.fold``). This module only checks the *shape* of an event (fields,
types, version) so that a malformed line is refused with a message naming the field; whether the
event is *legal* at that moment is the fold's job. See ``docs/events.md`` for the reference.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..text import Msg, joined
from . import words
from .errors import MalformedEvent
from .offer import COLOURS
from .tokens import describe_token, parse_token

VERSION = 1
META_FIELDS = ("v", "type", "at", "note")  # "at" (timestamp) and "note" are kept but ignored

CHOICES = (*COLOURS, "gold", "vp")


# --- field checkers: each returns the (normalised) value or raises MalformedEvent ---


def _int(name: str, lo: int = 0, hi: int | None = None) -> Callable[[Any], int]:
    def check(v: Any) -> int:
        if not isinstance(v, int) or isinstance(v, bool) or v < lo or (hi is not None and v > hi):
            rng = f">= {lo}" if hi is None else f"{lo}..{hi}"
            raise MalformedEvent("{field} must be a whole number {range}, got {value}",
                                 field=name, range=rng, value=repr(v))
        return v

    return check


def _str(name: str) -> Callable[[Any], str]:
    def check(v: Any) -> str:
        if not isinstance(v, str) or not v.strip():
            raise MalformedEvent("{field} must be a non-empty text, got {value}",
                                 field=name, value=repr(v))
        return v.strip()

    return check


def _bool(name: str) -> Callable[[Any], bool]:
    def check(v: Any) -> bool:
        if not isinstance(v, bool):
            raise MalformedEvent("{field} must be true or false, got {value}", field=name,
                                 value=repr(v))
        return v

    return check


def _one_of(name: str, options: tuple[str, ...]) -> Callable[[Any], str]:
    def check(v: Any) -> str:
        if v not in options:
            raise MalformedEvent("{field} must be one of {options}; got {value}", field=name,
                                 options=", ".join(options), value=repr(v))
        return v

    return check


def _counts(name: str) -> Callable[[Any], dict[str, int]]:
    def check(v: Any) -> dict[str, int]:
        if not isinstance(v, dict):
            raise MalformedEvent("{field} must be an object colour -> cubes, got {value}",
                                 field=name, value=repr(v))
        unknown = set(v) - set(COLOURS)
        if unknown:
            raise MalformedEvent("{field}: unknown cube colour(s) {colours}", field=name,
                                 colours=", ".join(sorted(unknown)))
        return {c: _int(f"{name}.{c}", 0, 49)(v.get(c, 0)) for c in COLOURS}

    return check


def _list(name: str, item: Callable[[Any], Any]) -> Callable[[Any], list]:
    def check(v: Any) -> list:
        if not isinstance(v, list):
            raise MalformedEvent("{field} must be a list, got {value}", field=name, value=repr(v))
        return [item(x) for x in v]

    return check


def _obj(name: str, fields: dict[str, tuple[bool, Callable[[Any], Any]]]) -> Callable[[Any], dict]:
    def check(v: Any) -> dict:
        if not isinstance(v, dict):
            raise MalformedEvent("{field} must be an object, got {value}", field=name,
                                 value=repr(v))
        return _check_fields(name, v, fields)

    return check


def _check_fields(where: str, data: dict, fields: dict) -> dict:
    unknown = [k for k in data if k not in fields and k not in META_FIELDS]
    if unknown:
        raise MalformedEvent("{where}: unknown field(s) {fields}", where=where,
                             fields=", ".join(sorted(unknown)))
    out = {}
    for key, (required, check) in fields.items():
        if key in data:
            out[key] = check(data[key])
        elif required:
            raise MalformedEvent("{where}: missing field '{field}'", where=where, field=key)
    return out


def _islands_completed(v: Any) -> str | list[str]:
    """One island name, or a list when one action completes several islands."""
    if isinstance(v, list):
        names = [_str("completes")(x) for x in v]
        if not names or len(set(names)) != len(names):
            raise MalformedEvent("completes must name each island once")
        return names
    return _str("completes")(v)


def completed_islands(e: dict) -> list[str]:
    c = e.get("completes", [])
    return [c] if isinstance(c, str) else list(c)


def named_islands(e: dict) -> list[str]:
    """Every island a parsed event names (posts, builds, completions), in order."""
    return ([p["island"] for p in e.get("posts", [])] + [b["island"] for b in e.get("build", [])]
            + completed_islands(e))


def _token(v: Any) -> str:
    return parse_token(v)


def _goods_map(name: str) -> Callable[[Any], dict[str, int]]:
    def check(v: Any) -> dict[str, int]:
        if not isinstance(v, dict):
            raise MalformedEvent("{field} must be an object good -> count, got {value}",
                                 field=name, value=repr(v))
        return {_str(f"{name} good")(k): _int(f"{name}.{k}", 0)(n) for k, n in v.items()}

    return check


def _settings(v: Any) -> dict:
    """Validated, but kept as written: only the overridden values live in the event."""
    from .settings import Settings

    Settings.from_dict(v)
    return json.loads(json.dumps(v))


def _final_inputs(v: Any) -> dict:
    if not isinstance(v, dict):
        raise MalformedEvent("final_scoring.players must be an object player -> inputs")
    spec = {"progress_vp": (False, _int("progress_vp")), "special_vp": (False, _int("special_vp"))}
    out = {}
    for k, x in v.items():
        if not isinstance(x, dict):
            raise MalformedEvent("final_scoring.players.{player} must be an object", player=k)
        out[_str("player")(k)] = _check_fields(f"final_scoring.players.{k}", x, spec)
    return out


_POST = {"island": (True, _str("island")), "big": (False, _bool("big"))}
_TAKE = {
    "tile": (True, _one_of("take.tile", ("village", "landscape"))),
    "size": (False, _int("take.size", 1, 6)),
}
_BUILD = {
    "island": (True, _str("build.island")),
    "big": (False, _bool("build.big")),
    "tile": (True, _one_of("build.tile", ("village", "landscape"))),
    "size": (False, _int("build.size", 1, 6)),
    "vp": (True, _int("build.vp", 0)),
}
_PRODUCTION = {
    "good": (True, _str("production.good")),
    "cost": (True, _int("production.cost", 2, 4)),
}

SCHEMAS: dict[str, dict[str, tuple[bool, Callable[[Any], Any]]]] = {
    "game_created": {"settings": (False, _settings), "name": (False, _str("name"))},
    "players_seated": {"players": (True, _list("players", _str("player")))},
    "setup_drop_read": {"tray": (True, _counts("tray"))},
    "pirate_revealed": {"value": (True, _int("value", 0))},
    "tray_read": {"tray": (True, _counts("tray"))},
    "bump_read": {"tray": (True, _counts("tray"))},
    "tray_corrected": {"target": (True, _int("target", 1)), "tray": (True, _counts("tray"))},
    "action": {
        "player": (True, _str("player")),
        "choice": (True, _one_of("choice", CHOICES)),
        "via": (False, _one_of("via", ("white", "swap"))),
        "ap": (False, _int("ap", 0)),
        "gold_spent": (False, _int("gold_spent", 0)),
        "tokens_used": (False, _list("tokens_used", _token)),
        "posts": (False, _list("posts", _obj("post", _POST))),
        "completes": (False, _islands_completed),
        "take": (False, _list("take", _obj("take", _TAKE))),
        "tokens_taken": (False, _list("tokens_taken", _token)),
        "build": (False, _list("build", _obj("build", _BUILD))),
        "commodities": (False, _goods_map("commodities")),
        "production": (False, _list("production", _obj("production", _PRODUCTION))),
        "advance": (False, _int("advance", 0)),
        "jump": (False, _bool("jump")),
        "at_end": (False, _bool("at_end")),
    },
    "sheet_goods": {
        "player": (True, _str("player")),
        "goods": (True, _list("goods", _str("good"))),
    },
    "chest_cashed": {"player": (True, _str("player"))},
    "token_used": {"player": (True, _str("player")), "token": (True, _token)},
    "round_ended": {},
    "final_scoring": {"players": (False, _final_inputs)},
    "undo": {"target": (False, _int("target", 1)), "redo": (False, _bool("redo"))},
}

EVENT_TYPES: tuple[str, ...] = tuple(SCHEMAS)


def parse_event(raw: Any) -> dict:
    """Validate the shape of one event and return a normalised copy (``MalformedEvent`` if bad)."""
    if isinstance(raw, str | bytes):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise MalformedEvent("not valid JSON: {reason} at column {column}", reason=exc.msg,
                                 column=exc.colno) from None
    if not isinstance(raw, dict):
        raise MalformedEvent("an event must be a JSON object, got {kind}", kind=type(raw).__name__)
    if "v" not in raw:
        raise MalformedEvent('missing version field "v" (use "v": 1)')
    if type(raw["v"]) is not int or raw["v"] != VERSION:
        raise MalformedEvent("unsupported event version {got} (this engine: {version})",
                             got=repr(raw["v"]), version=VERSION)
    etype = raw.get("type")
    if not isinstance(etype, str) or etype not in SCHEMAS:  # a list is no key: not a TypeError
        if "type" not in raw:
            raise MalformedEvent('missing field "type"')
        raise MalformedEvent("unknown event type {got}; known: {known}", got=repr(etype),
                             known=", ".join(EVENT_TYPES))
    body = _check_fields(etype, raw, SCHEMAS[etype])
    out = {"v": VERSION, "type": etype, **body}
    for meta, check in (("at", _timestamp), ("note", _note)):
        if meta in raw:
            out[meta] = check(raw[meta])
    return out


NOTE_MAX = 500  # characters: a remark at the table, not a document (the log is sent to phones)


def _timestamp(v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
        raise MalformedEvent("at must be a time (seconds since 1970), got {value}",
                             value=repr(v))
    return v


def _note(v: Any) -> str:
    """Free text. Checked like any field, since a note is copied with every event: an
    unchecked one (a list nested a thousand deep) once broke every later view of the game."""
    if not isinstance(v, str):
        raise MalformedEvent("note must be a text, got {kind}", kind=type(v).__name__)
    if len(v) > NOTE_MAX:
        raise MalformedEvent("a note is at most {most} characters, this one has {n}",
                             most=NOTE_MAX, n=len(v))
    return v


@dataclass(frozen=True)
class Event:
    """A parsed event with a human-readable one-line ``describe()`` for the history list."""

    data: dict

    @classmethod
    def from_dict(cls, raw: Any) -> Event:
        return cls(parse_event(raw))

    @property
    def type(self) -> str:
        return self.data["type"]

    def to_dict(self) -> dict:
        return dict(self.data)

    def describe(self) -> Msg:
        return describe(self.data)


def describe(e: dict) -> Msg:
    """One line a person understands, for the history list (``e`` is a parsed event)."""
    t = e["type"]
    if t == "game_created":
        if e.get("name"):
            return Msg("Game created ({name})", name=e["name"])
        return Msg("Game created")
    if t == "players_seated":
        return Msg("Players in order: {players}", players=e["players"])
    if t == "setup_drop_read":
        return Msg("Set-up drop: tray had {cubes} (to storage)", cubes=words.counts(e["tray"]))
    if t == "pirate_revealed":
        return Msg("Pirate marker revealed: {value}", value=e["value"])
    if t == "tray_read":
        return Msg("Tray read: {cubes}", cubes=words.counts(e["tray"]))
    if t == "bump_read":
        return Msg("Bump: {cubes} fell into the tray", cubes=words.counts(e["tray"]))
    if t == "tray_corrected":
        return Msg("Reading of event #{target} corrected to {cubes}", target=e["target"],
                   cubes=words.counts(e["tray"]))
    if t == "action":
        return _describe_action(e)
    if t == "sheet_goods":
        return Msg("{player}'s player sheet prints {goods} (one production token of each)",
                   player=e["player"], goods=words.goods(e["goods"]) or Msg("no goods"))
    if t == "chest_cashed":
        return Msg("{player} cashes a treasure chest for 3 gold", player=e["player"])
    if t == "token_used":
        return Msg("{player} uses progress token {token} ({meaning})", player=e["player"],
                   token=e["token"], meaning=describe_token(e["token"]))
    if t == "round_ended":
        return Msg("Round ends: pirates attack")
    if t == "final_scoring":
        return Msg("Final scoring")
    if t == "undo":
        if e.get("redo"):
            return Msg("Redo of event #{target}", target=e["target"]) if "target" in e \
                else Msg("Redo")
        return Msg("Undo of event #{target}", target=e["target"]) if "target" in e \
            else Msg("Undo")
    return Msg(t)  # pragma: no cover - every type is handled above


def _describe_action(e: dict) -> Msg:
    p, choice = e["player"], e["choice"]
    if choice == "gold":
        return Msg("{player} takes gold instead of an action", player=p)
    if choice == "vp":
        return Msg("{player} takes VP instead of an action", player=p)
    bits = [Msg("{player}: {action}", player=p, action=words.ACTION[choice])]
    if e.get("via") == "white":
        bits.append(Msg("(white as joker)"))
    elif e.get("via") == "swap":
        bits.append(Msg("(green/red swap)"))
    if "ap" in e:
        bits.append(Msg("{ap} AP", ap=e["ap"]))
    if e.get("gold_spent"):
        # not "+n AP": "ap" above is what was spent, bought AP included
        bits.append(Msg("(paid {n} gold for AP)", n=e["gold_spent"]))
    if e.get("posts"):
        bits.append(Msg("posts on {islands}", islands=[x["island"] for x in e["posts"]]))
    if e.get("build"):
        bits.append(Msg("builds {tiles}", tiles=[
            Msg("{tile} on {island} ({vp} VP)", tile=words.TILE[b["tile"]], island=b["island"],
                vp=b["vp"]) for b in e["build"]]))
    if e.get("completes"):
        bits.append(Msg("completes island {islands}", islands=completed_islands(e)))
    if e.get("take"):
        bits.append(Msg("takes {tiles}", tiles=[
            Msg("{tile} size {size}", tile=words.TILE[t["tile"]], size=t["size"]) if "size" in t
            else words.TILE[t["tile"]] for t in e["take"]]))
    if e.get("production"):
        bits.append(Msg("buys {tokens}", tokens=[
            Msg("{good} ({cost})", good=words.good(x["good"]), cost=x["cost"])
            for x in e["production"]]))
    if e.get("tokens_taken"):  # what each does, not its log name ("gold5"); "; " as they hold ","
        bits.append(Msg("takes token(s) {tokens}", tokens=joined(
            [describe_token(name) for name in e["tokens_taken"]], "; ")))
    if e.get("advance"):
        bits.append(Msg("advances {n}", n=e["advance"]))
    if e.get("jump"):
        bits.append(Msg("jumps to the top of the first player's stack"))
    if e.get("tokens_used"):
        bits.append(Msg("using {tokens}", tokens=joined(
            [describe_token(name) for name in e["tokens_used"]], "; ")))
    return joined(bits, " ")
