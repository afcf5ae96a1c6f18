"""Loading a stored game whose log no longer folds, instead of refusing it for ever.

A log should always fold: only events the rules accepted are written. But a file written by an
older version may hold one that this version refuses (a `note` nested a thousand lists deep once
got through and made the game unreadable, and with it every phone's screen, for good; a rule
fixed later can refuse an old move). Then the game is repaired once, when it is loaded: its
events are applied one by one, each one that cannot be read or applied is moved to the
``quarantined_events`` table with the reason (and a warning in the log), and the game goes on with
the rest. Nothing is deleted: the quarantined rows keep their JSON text.

Undo and correction events name other events by number (``target``); after a removed event those
numbers shift down by one, and an event that refers to a removed one is removed with it.

The rest goes on only when all of it still applies without the removed event (an unreadable note,
a pirate marker given again). When any later event is refused too, the removed one changed the
game's course (a drop left out puts every later drop in another phase), and applying the rest
where it fits would make another game than the one played: then the game stops just before the
first event that failed, and everything from there is quarantined. A game cut short is one the
players recognise and can go on from; a game of the right events in the wrong places is not.
"""

from __future__ import annotations

import json
import logging

from companion.amerigo import Game
from companion.store import Store, to_json

log = logging.getLogger(__name__)


def load_game(store: Store, game_id: int) -> Game:
    """The game as stored, repaired first when its log does not fold (see module docstring)."""
    rows = store.event_rows(game_id)
    try:
        return Game.from_events([json.loads(body) for _, body in rows])
    except Exception as exc:  # any reason at all: the repair below finds the event(s) to blame
        log.warning("game %d does not load (%s); repairing its log", game_id, _reason(exc))
    game, keep, reasons = repair(rows)
    first = min(reasons, default=None)
    # every event from the first one left out on is gone: the game was cut short there
    cut = first is not None and all(seq in reasons for seq, _ in rows if seq >= first)
    for seq, reason in reasons.items():
        log.warning("game %d: event #%d quarantined (%s); %s", game_id, seq + 1, reason,
                    f"the game stops before event #{first + 1}" if cut
                    else "the game goes on without it")
    store.quarantine(game_id, keep, reasons)
    return game


def repair(rows: list[tuple[int, str]]) -> tuple[Game, list[tuple[int, str]], dict[int, str]]:
    """Apply the stored rows (seq, JSON text) one by one, skipping every one that fails.

    Returns the game, the rows kept as (seq, JSON text with its targets renumbered) and the
    reason for each row left out, by seq.
    """
    game = Game()
    keep: list[tuple[int, str]] = []
    reasons: dict[int, str] = {}
    refused_later = False  # an event after the first removed one refused in its own right
    prefix: tuple[Game, int, int] | None = None  # before the first failure: game, rows, its seq
    number: dict[int, int] = {}  # an event's number in the stored log -> in the repaired one
    for seq, body in rows:
        try:
            event = json.loads(body)
            if isinstance(event, dict) and "target" in event:
                event = _renumbered(event, number)
            trial = game.copy()
            trial.apply(event)
            text = to_json(event)
        except RemovedTarget as exc:  # goes with the event it takes back or corrects
            reasons[seq] = _reason(exc)
            continue
        except Exception as exc:
            if prefix is None:
                prefix = (game, len(keep), seq)
            else:
                refused_later = True
            reasons[seq] = _reason(exc)
            continue
        game = trial
        keep.append((seq, text))
        number[seq + 1] = len(keep)
    if refused_later and prefix is not None:
        game, kept, first = prefix
        keep = keep[:kept]
        reasons = {seq: reasons.get(seq, f"after event #{first + 1}, which could not be applied")
                   for seq, _ in rows if seq >= first}
    return game, keep, reasons


class RemovedTarget(ValueError):
    """An undo or correction of an event the repair removed."""


def _renumbered(event: dict, number: dict[int, int]) -> dict:
    target = event["target"]
    if not isinstance(target, int) or isinstance(target, bool):
        return event  # the rules engine says what is wrong with it
    if target not in number:
        raise RemovedTarget(f"it refers to event #{target}, which is not in the game")
    return {**event, "target": number[target]}


def _reason(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "nested too deeply to read"
    text = str(exc) or type(exc).__name__
    return text if len(text) <= 200 else text[:200] + "..."
