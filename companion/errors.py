"""What the table refuses, or asks about, in words for the players.

Kept apart from ``companion.table`` so that the small rule modules (``companion.drops``) and the
device (firmware) raise the same errors the web layer turns into answers.
"""

from __future__ import annotations

from typing import Any

from companion.text import Msg


class TableError(ValueError):
    """A request the table cannot take (no game, bad shape); the message is for the players.

    ``TableError("there is no game {game}", game=7)``: a ``Msg``, said in each phone's language.
    """

    def __init__(self, message: str | Msg, /, **args: Any) -> None:
        self.msg = message if isinstance(message, Msg) else Msg(message, **args)
        super().__init__(str(self.msg))


class NeedsConfirmation(TableError):
    """Allowed, but unusual enough that a player must say yes first.

    Why: a wrong set-up drop or an empty-tray picture with cubes in it quietly spoils everything
    after it, yet each can be true at a real table; so the table asks instead of refusing. The
    same request sent again with ``"confirmed": true`` goes through.
    """

    def __init__(self, question: str | Msg, /, **args: Any):
        super().__init__(question, **args)
        self.question = self.msg
