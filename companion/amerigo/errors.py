"""Domain errors of the rules engine.

Every refusal is a ``RulesError`` so that the web app can catch one type and show its message to the
table; the subclasses let tests (and the UI) tell *why* a command was refused. A refused command
never changes the game: the facade only keeps a new event once the whole fold has accepted it.

The message is a ``companion.text.Msg`` (an English template and its values), so the web layer can
say it in the phone's language while this package stays free of Flask and catalogues.
"""

from __future__ import annotations

from typing import Any

from ..text import Msg


class RulesError(Exception):
    """A command or event that the rules (or the event format) do not allow.

    ``RulesError("{player} has no treasure chest", player="Ada")``, or a ready ``Msg``.
    """

    def __init__(self, message: str | Msg, /, **args: Any) -> None:
        self.msg = message if isinstance(message, Msg) else Msg(message, **args)
        super().__init__(str(self.msg))

    def within(self, template: str, /, **args: Any) -> RulesError:
        """The same refusal, of the same type, placed (e.g. ``"event #{n}: {error}"``)."""
        return type(self)(Msg(template, error=self.msg, **args))


class MalformedEvent(RulesError):
    """Not valid JSON of the documented shape (missing field, wrong type, bad version)."""


class UnknownPlayer(RulesError):
    """The event names a player who is not in the game."""


class WrongStage(RulesError):
    """The event does not fit the moment (e.g. an action while a tray read is awaited)."""


class OutOfTurn(RulesError):
    """A player acts while it is another player's turn."""


class NotOnOffer(RulesError):
    """The chosen action (or gold/VP option) is not available to this player this phase."""


class NotEnough(RulesError):
    """The player spends action points, gold, tiles or tokens that he does not have."""


class LimitReached(RulesError):
    """A component limit of the rulebook would be exceeded (12 trading posts, 49 cubes...)."""


class NothingToUndo(RulesError):
    """Undo or redo was asked for but there is nothing to take back or to restore."""
