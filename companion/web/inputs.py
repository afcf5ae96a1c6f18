"""What a request may carry, checked before anything else sees it.

Strict JSON (no NaN or Infinity, no field given twice), a bounded size and nesting depth, texts
without control characters, whole numbers a phone's JavaScript keeps exactly, only the fields the
endpoint knows, and a well-formed ``Idempotency-Key``. Each refusal is a ``BadInput`` whose
message a player can read, and no body, however deep, raises anything else (a body of 100,000
``[`` once answered 500).
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Mapping
from typing import Any

from companion.text import Msg

MAX_BODY_BYTES = 64 * 1024  # a command is well under 1 KiB; a game's settings a few
MAX_DEPTH = 8  # the deepest request (final scoring's per-player inputs) nests 4
MAX_TEXT = 500  # characters in any one text or field name (a note is the longest)
MAX_NUMBER = 2**53 - 1  # larger whole numbers lose digits in a phone's JavaScript
KEY_PATTERN = re.compile(r"[\x21-\x7e]{16,128}")

_TOO_DEEP = Msg("the request nests lists or objects more than {n} deep", n=MAX_DEPTH)


class BadInput(ValueError):
    """A request that is not what the endpoint takes; the message (a ``Msg``, said in the
    phone's language) says what is wrong."""

    def __init__(self, message: str | Msg, /, **args: Any) -> None:
        self.msg = message if isinstance(message, Msg) else Msg(message, **args)
        super().__init__(str(self.msg))


def json_body(data: bytes, mimetype: str, fields: frozenset[str]) -> dict:
    """The request's JSON object, checked as the module docstring says."""
    if mimetype != "application/json":
        raise BadInput("send a JSON object (Content-Type: application/json)")
    if len(data) > MAX_BODY_BYTES:
        raise BadInput("the request is too big (at most {n} KiB)", n=MAX_BODY_BYTES // 1024)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise BadInput("the request is not UTF-8 text") from None
    try:
        body = json.loads(
            text,
            parse_constant=_no_constant,
            parse_float=_finite,
            object_pairs_hook=_no_twice,
        )
    except BadInput:
        raise
    except RecursionError:  # the decoder's own guard, far deeper than MAX_DEPTH
        raise BadInput(_TOO_DEEP) from None
    except ValueError as exc:  # JSONDecodeError, or a number with thousands of digits
        if isinstance(exc, json.JSONDecodeError):
            raise BadInput("the request is not valid JSON at column {column}",
                           column=exc.colno) from None
        raise BadInput("the request is not valid JSON") from None
    if not isinstance(body, dict):
        raise BadInput("send a JSON object ({{...}}), not a list or a single value")
    unknown = sorted(set(body) - fields)
    if unknown:
        raise BadInput("unknown field(s) {unknown}; this request takes {fields}",
                       unknown=", ".join(map(repr, unknown)), fields=", ".join(sorted(fields)))
    _check_values(body)
    return body


def _no_constant(name: str) -> float:
    raise BadInput("{name} is not a number this device takes (JSON has no {name})", name=name)


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise BadInput("the number {number} is too large", number=text[:20])
    return value


def _no_twice(pairs: list[tuple[str, object]]) -> dict:
    body = dict(pairs)
    if len(body) != len(pairs):
        twice = next(k for i, (k, _) in enumerate(pairs) if k in dict(pairs[:i]))
        raise BadInput("the field '{field}' is given twice", field=twice)
    return body


def _check_values(body: object) -> None:
    """The depth, every text and every number, walked with a stack (no recursion)."""
    stack = [(body, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, Mapping | list) and depth > MAX_DEPTH:
            raise BadInput(_TOO_DEEP)
        if isinstance(value, Mapping):
            for key in value:
                check_text(key, Msg("a field name"))
            stack.extend((v, depth + 1) for v in value.values())
        elif isinstance(value, list):
            stack.extend((v, depth + 1) for v in value)
        elif isinstance(value, str):
            check_text(value, Msg("a text"))
        elif isinstance(value, int | float) and abs(value) > MAX_NUMBER:
            raise BadInput("the number {number} is too large", number=str(value)[:20])


def check_text(value: str, what: Msg) -> None:
    """At most MAX_TEXT characters; no control characters except line breaks and tabs, and no
    unpaired surrogates (which cannot even be stored as UTF-8)."""
    if len(value) > MAX_TEXT:
        raise BadInput("{what} is longer than {n} characters", what=what, n=MAX_TEXT)
    for ch in value:
        if ch not in "\n\t" and unicodedata.category(ch) in ("Cc", "Cs"):
            raise BadInput("{what} holds a control character ({char})", what=what,
                           char=ascii(ch))


def query_int(args: Mapping[str, str], name: str, default: int, lo: int, hi: int) -> int:
    """A whole number from the query string, in ``lo..hi`` (ASCII digits only: ``²`` is not 2)."""
    raw = args.get(name)
    if raw is None:
        return default
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 9 and lo <= int(raw) <= hi):
        raise BadInput("{name} must be a whole number from {lo} to {hi}", name=name, lo=lo,
                       hi=hi)
    return int(raw)


def idempotency_key(headers: Mapping[str, str]) -> str | None:
    """The request's ``Idempotency-Key`` header, if any: 16-128 visible ASCII characters."""
    key = headers.get("Idempotency-Key")
    if key is None:
        return None
    if not KEY_PATTERN.fullmatch(key):
        raise BadInput(
            "Idempotency-Key must be 16 to 128 visible ASCII characters (e.g. a random UUID)"
        )
    return key
