"""The ``Game`` facade: what the web app and the replay tool call.

A command (a dict from a phone) is checked for shape, completed (an undo gets its target), and
tried against the current state; only if the whole game still folds is it appended to the log.
So a refused command raises a ``RulesError`` and leaves the game exactly as it was.
"""

from __future__ import annotations

import copy
from typing import Any

from ..text import Msg
from . import words
from .errors import NothingToUndo, RulesError
from .events import describe, parse_event
from .scoring import score_sheet
from .settings import Settings
from .state import READINGS, GameState, Resolution, _undo_target, apply_event, fold, resolve


class Game:
    """A game as an append-only list of events; state and score sheet are derived from it."""

    def __init__(self, settings: Settings | dict | None = None) -> None:
        self._base = settings if isinstance(settings, Settings) else Settings.from_dict(settings)
        self._events: list[dict] = []
        self._state = GameState(settings=self._base)
        self._res = Resolution([], {}, {})

    # --- construction ---------------------------------------------------------------------------

    @classmethod
    def from_events(cls, events: list[dict[str, Any]], settings: Settings | dict | None = None
                    ) -> Game:
        """Rebuild a game from its log (e.g. from SQLite). Raises RulesError naming the event."""
        game = cls(settings)
        parsed = []
        for n, raw in enumerate(events, start=1):
            try:
                parsed.append(parse_event(raw))
            except RulesError as exc:
                raise exc.within("event #{n}: {error}", n=n) from None
        game._state, game._res = fold(parsed, game._base)
        for i, t in game._res.targets.items():  # a hand-written undo may leave out its target
            parsed[i]["target"] = t + 1
        game._events = parsed
        return game

    # --- commands -------------------------------------------------------------------------------

    def command(self, raw: dict[str, Any] | str) -> dict:
        """Validate one command, append it as an event and return the event dict.

        ``{"v": 1, "type": "undo"}`` takes back the latest event in force; ``{"v": 1, "type":
        "undo", "redo": true}`` (or ``redo()``) takes back the latest undo. "v" may be left out
        of a command (it is the current version).
        """
        if isinstance(raw, dict) and "v" not in raw:
            raw = {"v": 1, **raw}
        return self.apply(raw, strict=True)

    def apply(self, raw: dict[str, Any] | str, *, strict: bool = False) -> dict:
        """Like ``command`` but for a stored event: the version field "v" is required.

        ``strict`` (what ``command`` uses) adds the checks a stored log may predate
        (``GameState.strict``).
        """
        e = parse_event(raw)
        if strict and e["type"] == "tray_corrected":
            self._refuse_unchanged(e)
        if e["type"] == "undo" and "target" not in e:
            active = [*list(self._res.active), True]
            t = _undo_target([*self._events, e], active, self._res.targets, len(self._events), e)
            e["target"] = t + 1
        if e["type"] in ("undo", "tray_corrected"):
            # Changes the past: fold the whole log again.
            state, res = fold([*self._events, e], self._base)
        else:
            state = self._state.copy()
            state.strict = strict
            apply_event(state, e, len(self._events) + 1)
            state.strict = False
            res = Resolution([*self._res.active, True], dict(self._res.targets),
                             dict(self._res.corrected))
        out = copy.deepcopy(e)  # before the game changes: if anything above raised, it has not
        self._events.append(e)
        self._state, self._res = state, res
        return out

    def _refuse_unchanged(self, e: dict) -> None:
        """A correction to the counts the reading already holds would only add a line that says
        "corrected" and an undo step (a Correct form sent without a change)."""
        t = e["target"] - 1
        if not (0 <= t < len(self._events) and self._res.active[t]
                and self._events[t]["type"] in READINGS):
            return  # the fold says what is wrong with it
        if self._res.corrected.get(t, self._events[t]["tray"]) == e["tray"]:
            raise NothingToUndo("reading #{target} already says {cubes}: nothing to correct",
                                target=e["target"], cubes=words.counts(e["tray"]))

    def copy(self) -> Game:
        """A game that can take a command without changing this one (``apply`` never changes a
        state in place, it replaces it), so a caller can keep this one until the new event is
        stored."""
        twin = copy.copy(self)
        twin._events = list(self._events)
        return twin

    def undo(self) -> dict:
        return self.command({"v": 1, "type": "undo"})

    def redo(self) -> dict:
        return self.command({"v": 1, "type": "undo", "redo": True})

    # --- views ----------------------------------------------------------------------------------

    def __len__(self) -> int:
        """How many events the log holds (without copying them, unlike ``events``)."""
        return len(self._events)

    @property
    def events(self) -> list[dict]:
        return copy.deepcopy(self._events)

    @property
    def state(self) -> GameState:
        """The live state object (read it; never change it: use ``command``)."""
        return self._state

    def state_dict(self) -> dict:
        return self._state.to_dict()

    def score_sheet(self) -> dict:
        return score_sheet(self._state)

    def history(self) -> list[dict]:
        """One line per event for the history list: number, text, outcome, whether in force.

        Readings also carry their ``tray`` as corrected (so a phone can offer a correction
        prefilled) and, while in force, the ``bounds`` a correction must keep to (the cubes
        each colour had in the tower and tray just before); undo/correction events carry the
        ``target`` they refer to, and final scoring the track VP entered (``inputs``, so an
        undone one can be entered again without typing it all). A corrected reading says so in
        its text, with the value in force and the correction's number (``corrected_by``): the
        history must not show a count the game no longer uses.
        """
        lines = []
        shown: dict[int, dict] = {}  # reading index -> its counts as in force so far
        corrected_by: dict[int, int] = {}  # reading index -> the correction in force
        for i, e in enumerate(self._events):
            if e["type"] == "tray_corrected" and self._res.active[i]:
                corrected_by[e["target"] - 1] = i + 1
        for i, e in enumerate(self._events):
            text = self._text(i, e)
            outcome = self._state.outcomes.get(i + 1)
            line = {
                "n": i + 1,
                "type": e["type"],
                "outcome": str(outcome or ""),
                "in_force": self._res.active[i],
            }
            if outcome:
                line["outcome_msg"] = outcome.to_json()
            if e["type"] in READINGS:
                line["tray"] = dict(self._res.corrected.get(i, e["tray"]))
                if i + 1 in self._state.reading_bounds:
                    line["bounds"] = dict(self._state.reading_bounds[i + 1])
                shown[i] = e["tray"]
                if i in corrected_by and line["in_force"]:
                    line["corrected_by"] = corrected_by[i]
                    text = Msg("{text}; corrected by #{n} to {cubes}", text=text,
                               n=corrected_by[i], cubes=words.counts(line["tray"]))
            if e["type"] == "tray_corrected":
                t = e["target"] - 1
                text = Msg("Reading #{n} corrected from {old} to {new}", n=e["target"],
                           old=words.counts(shown.get(t, {})), new=words.counts(e["tray"]))
                if self._res.active[i] and self._res.active[t]:
                    shown[t] = e["tray"]
            line["text"] = str(text)
            line["text_msg"] = text.to_json()
            if "target" in e:
                line["target"] = e["target"]
            if e["type"] == "final_scoring":
                line["inputs"] = copy.deepcopy(e.get("players", {}))
            lines.append(line)
        return lines


    def _text(self, i: int, e: dict) -> Msg:
        """``describe(e)``; an undo also says what it took back (or, for a redo, restored)."""
        if e["type"] != "undo":
            return describe(e)
        t = self._res.targets.get(i, e.get("target", 0) - 1)
        target = self._events[t]
        if target["type"] == "undo":
            inner = self._events[self._res.targets.get(t, target.get("target", 0) - 1)]
            return Msg("Redo (takes back undo #{n}): {what}", n=t + 1, what=describe(inner))
        return Msg("Undo #{n}: {what}", n=t + 1, what=describe(target))


__all__ = ["Game", "resolve"]
