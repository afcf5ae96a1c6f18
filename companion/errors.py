"""What the table refuses, or asks about, in words for the players.

Kept apart from ``companion.table`` so that the small rule modules (``companion.drops``) and the
device (firmware) raise the same errors the web layer turns into answers.
"""

from __future__ import annotations


class TableError(ValueError):
    """A request the table cannot take (no game, bad shape); the message is for the players."""


class NeedsConfirmation(TableError):
    """Allowed, but unusual enough that a player must say yes first.

    Why: a wrong set-up drop or an empty-tray picture with cubes in it quietly spoils everything
    after it, yet each can be true at a real table; so the table asks instead of refusing. The
    same request sent again with ``"confirmed": true`` goes through.
    """

    def __init__(self, question: str):
        super().__init__(question)
        self.question = question
