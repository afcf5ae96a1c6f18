"""The Amerigo rules engine: pure Python, no Flask, no OpenCV, no SQLite.

The game is an event log (``events``); the state is folded from it (``state``); the ``Game``
facade (``game``) is what the web app and ``cubetower replay`` use. See docs/events.md.
"""

from .errors import (
    LimitReached,
    MalformedEvent,
    NotEnough,
    NothingToUndo,
    NotOnOffer,
    OutOfTurn,
    RulesError,
    UnknownPlayer,
    WrongStage,
)
from .game import Game
from .offer import TrayOffer, tray_offer
from .settings import Settings

__all__ = [
    "Game",
    "LimitReached",
    "MalformedEvent",
    "NotEnough",
    "NotOnOffer",
    "NothingToUndo",
    "OutOfTurn",
    "RulesError",
    "Settings",
    "TrayOffer",
    "UnknownPlayer",
    "WrongStage",
    "tray_offer",
]
