"""Words for the players that can be said in any language: an English template and its values.

The rules engine and the table refuse moves in words, but they must not know which language a
phone reads (nor import Flask or a catalogue). So they raise and return a ``Msg``: the English
template is the gettext message id, the values are kept apart, and the web layer translates the
template and fills it in (``companion.i18n``). ``str(msg)`` is the English text, so logs, the
``cubetower replay`` command and the tests read as before.

A value that is itself a ``Msg`` (a colour, an action's name, an inner refusal) is translated too;
a list or tuple of values is said as a comma-separated list. Anything else (player and island
names, numbers) is written as it is.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Mapping
from typing import Any

Gettext = Callable[[str], str]
Ngettext = Callable[[str, str, int], str]


def _same(text: str) -> str:
    return text


def _same_plural(singular: str, plural: str, n: int) -> str:
    return singular if n == 1 else plural


class Msg:
    """A message id (its English template, ``str.format`` style) with its named values.

    ``Msg("{player} has no treasure chest", player="Ada")``; for a count,
    ``Msg("{n} cube", plural="{n} cubes", n=3)`` chooses the form by ``n``.
    """

    __slots__ = ("args", "plural", "template")

    def __init__(self, template: str, /, *, plural: str | None = None, **args: Any) -> None:
        self.template = template
        self.plural = plural
        self.args = args
        if plural is not None and not isinstance(args.get("n"), int):
            raise TypeError("a message with a plural needs its count as n=<int>")

    def render(self, gettext: Gettext = _same, ngettext: Ngettext = _same_plural) -> str:
        """The message in the language of ``gettext``/``ngettext`` (English by default)."""
        if self.plural is None:
            template = gettext(self.template)
        else:
            template = ngettext(self.template, self.plural, self.args["n"])
        values = {k: _render_value(v, gettext, ngettext) for k, v in self.args.items()}
        try:
            return template.format_map(values)
        except (KeyError, IndexError, ValueError):
            # A broken translation must never hide the refusal: fall back to the English text.
            return (self.template if self.plural is None or self.args["n"] == 1
                    else self.plural).format_map(values)

    def __str__(self) -> str:
        return self.render()

    def __repr__(self) -> str:
        return f"Msg({self.template!r}, {self.args!r})"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Msg) and (self.template, self.plural, self.args)
                == (other.template, other.plural, other.args))

    def __hash__(self) -> int:
        return hash((self.template, self.plural))

    def to_json(self) -> dict:
        """Plain JSON (``{"msg", "args"[, "plural"]}``) so a snapshot can carry it to the web."""
        args = {k: _value_json(v) for k, v in self.args.items()}
        out: dict = {"msg": self.template, "args": args}
        if self.plural is not None:
            out["plural"] = self.plural
        return out

    @classmethod
    def from_json(cls, data: Mapping) -> Msg:
        args = {k: _value_from_json(v) for k, v in data.get("args", {}).items()}
        return cls(data["msg"], plural=data.get("plural"), **args)


def placeholders(template: str) -> set[str]:
    """The names a template fills in (``{player}`` ...): a translation must use the same ones."""
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def _render_value(value: Any, gettext: Gettext, ngettext: Ngettext) -> Any:
    if isinstance(value, Msg):
        return value.render(gettext, ngettext)
    if isinstance(value, list | tuple):
        return ", ".join(str(_render_value(v, gettext, ngettext)) for v in value)
    return value


def _value_json(value: Any) -> Any:
    if isinstance(value, Msg):
        return value.to_json()
    if isinstance(value, list | tuple):
        return [_value_json(v) for v in value]
    return value


def _value_from_json(value: Any) -> Any:
    if isinstance(value, dict) and "msg" in value:
        return Msg.from_json(value)
    if isinstance(value, list):
        return [_value_from_json(v) for v in value]
    return value
