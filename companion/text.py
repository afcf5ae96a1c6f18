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


def _same(text: str) -> str:
    return text


class Msg:
    """A message id (its English template, ``str.format`` style) with its named values.

    ``Msg("{player} has no treasure chest", player="Ada")``. The template must be a string
    literal where it is written, so that ``python -m companion.i18n.extract`` finds it.
    """

    __slots__ = ("args", "template")

    def __init__(self, template: str, /, **args: Any) -> None:
        self.template = template
        self.args = args

    def render(self, gettext: Gettext = _same) -> str:
        """The message in the language of ``gettext`` (English by default)."""
        values = {k: _render_value(v, gettext) for k, v in self.args.items()}
        try:
            return gettext(self.template).format_map(values)
        except (KeyError, IndexError, ValueError):
            # A broken translation must never hide the refusal: fall back to the English text,
            # and to the bare template should that be no template at all (a text with braces).
            try:
                return self.template.format_map(values)
            except (KeyError, IndexError, ValueError):
                return self.template

    def __str__(self) -> str:
        return self.render()

    def __repr__(self) -> str:
        return f"Msg({self.template!r}, {self.args!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Msg) and (self.template, self.args) == (other.template,
                                                                         other.args)

    def __hash__(self) -> int:
        return hash(self.template)

    def to_json(self) -> dict:
        """Plain JSON (``{"msg", "args"}``) so a snapshot can carry it to the web."""
        return {"msg": self.template, "args": {k: _value_json(v) for k, v in self.args.items()}}

    @classmethod
    def from_json(cls, data: Mapping) -> Msg:
        args = {k: _value_from_json(v) for k, v in data.get("args", {}).items()}
        return cls(data["msg"], **args)


def joined(parts: list[Msg | str], separator: str = ", ") -> Msg:
    """Several messages said one after the other (each translated on its own): a structure, not
    a text, so there is nothing to translate in the separator."""
    template = separator.join(f"{{p{i}}}" for i in range(len(parts)))
    values = {f"p{i}": part for i, part in enumerate(parts)}
    return Msg(template, **values)


def placeholders(template: str) -> set[str]:
    """The names a template fills in (``{player}`` ...): a translation must use the same ones."""
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def _render_value(value: Any, gettext: Gettext) -> Any:
    if isinstance(value, Msg):
        return value.render(gettext)
    if isinstance(value, list | tuple):
        return ", ".join(str(_render_value(v, gettext)) for v in value)
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


def said_by(exc: BaseException) -> Msg | str:
    """What an exception says: its ``Msg`` when it was raised with one (said in each phone's
    language), else its text as it is (a library's own words)."""
    return exc.args[0] if exc.args and isinstance(exc.args[0], Msg) else str(exc)
