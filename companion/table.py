"""The game at the table: the rules engine's log kept in SQLite, shared by every phone.

Each command names the number of events the phone had seen (``base``). If another phone got in
first, the command is refused as stale instead of being applied to a game its sender never saw:
two players pressing at once cannot both take the same turn. The rules engine checks the command
itself on a copy of the game; the copy replaces the game in memory only once its event is stored,
so a refused or failed command leaves no trace, in memory or on disk.

A new game may name the game the phone showed at the table (``replaces``, None when it showed
none): when another phone started (or resumed) a game meanwhile, the new game is refused as stale
too, instead of silently taking the table from a game its sender never saw.

A write may carry an idempotency key (a phone makes one per tap and sends it again when it
retries after a lost answer): the key is stored with the write's event, and a repeat is answered
with the first answer instead of being applied twice.

A drop's counts also say where they came from (a camera reading, or typed by hand):
``companion.drops`` decides whether that reading may start this phase.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import unicodedata
from collections.abc import Callable, Iterable

from companion.amerigo import Game
from companion.amerigo.events import named_islands, parse_event
from companion.amerigo.state import SEATING
from companion.bought_ap import check_bought_ap
from companion.drops import PHASE, SETUP, Drop, check_correction, check_drop, previous_drop
from companion.errors import NeedsConfirmation, TableError
from companion.hub import Hub
from companion.recovery import load_game
from companion.store import SeqConflict, Store
from companion.text import Msg

__all__ = [
    "ANY_GAME", "COMMAND_TYPES", "GameTable", "KeyReused", "NeedsConfirmation", "TableError",
]

COMMAND_TYPES = frozenset(
    {
        "setup_drop_read",
        "pirate_revealed",
        "tray_read",
        "bump_read",
        "tray_corrected",
        "action",
        "sheet_goods",
        "chest_cashed",
        "token_used",
        "round_ended",
        "final_scoring",
        "undo",
    }
)


# What a phone's screen has room for; not rules, so no rulebook number is at stake.
NAME_MAX = 24  # a player's name, an island's name
TITLE_MAX = 60  # a game's name


class KeyReused(TableError):
    """An idempotency key sent again with another request than the one it was first used for."""


class NoGame(TableError):
    """``resume`` of a game the device does not keep (the web answers 404, not 400)."""


class _AnyGame:
    """``new_game``'s ``replaces`` left out: whatever game is at the table (scripts, older
    pages), as before the phones named the game they showed."""

    def __repr__(self) -> str:
        return "ANY_GAME"


ANY_GAME = _AnyGame()


# Zero-width (non-)joiners are format characters (category Cf) with a job between two visible
# characters: ZWJ (U+200D) glues emoji into one (pirate flag, family, cook) and shapes Indic
# conjuncts; ZWNJ (U+200C) keeps Persian letters apart. Anywhere else (at an end, doubled, beside
# a space) they only hide something, so they are refused there like every other C* character.
JOINERS = frozenset("\u200c\u200d")
# Left out when names are compared: the joiners, and the variation selectors (emoji or text
# presentation, U+FE00-FE0F), so "A\u200dda" or "☠\ufe0f" cannot pass for a second "Ada" or "☠".
UNSEEN_IN_COMPARISON = JOINERS | frozenset(map(chr, range(0xFE00, 0xFE10)))


# A subdivision flag (Scotland, Wales, Texas) is the black flag U+1F3F4 followed by tag
# characters spelling the region's code (U+E0020-E007E; category Cf, invisible on their own) and
# the cancel tag U+E007F (Unicode TS #51, emoji tag sequences). Only in that shape are tags
# kept; anywhere else they hide text, like every other C* character. Unlike the joiners they
# stay in comparisons: "gbsct" and "gbwls" are different flags.
FLAG_TAG_SEQUENCE = re.compile("\U0001f3f4[\U000e0020-\U000e007e]+\U000e007f")


def _in_flag_tags(value: str) -> set[int]:
    """The positions of the tag characters that make a subdivision flag in ``value``."""
    return {i for m in FLAG_TAG_SEQUENCE.finditer(value) for i in range(m.start() + 1, m.end())}


def _shows(ch: str) -> bool:
    """Whether ``ch`` leaves a mark of its own: not a control, format or space character
    (a combining mark does: it sits on the character before it)."""
    return unicodedata.category(ch)[0] not in "CZ"


def _text(value: object, what: Msg, most: int) -> str:
    """Stripped text of at most ``most`` characters, without control or invisible format
    characters (which would make two names look alike or break a screen's layout), except a
    joiner between two visible characters (``JOINERS``) and the tags of a subdivision flag
    (``FLAG_TAG_SEQUENCE``)."""
    if not isinstance(value, str):
        raise TableError("{what} must be a text", what=what)
    value = value.strip()
    if len(value) > most:
        raise TableError("{what} is at most {most} characters: {value}...", what=what, most=most,
                         value=repr(value[:most]))
    flag_tags = _in_flag_tags(value)
    for i, ch in enumerate(value):
        if unicodedata.category(ch)[0] != "C" or i in flag_tags:
            continue
        if ch in JOINERS and 0 < i < len(value) - 1 and _shows(value[i - 1]) \
                and _shows(value[i + 1]):
            continue
        raise TableError("{what} {value} holds a control or invisible character", what=what,
                         value=repr(value))
    # Some letter, digit, punctuation or symbol (an emoji is a symbol) must carry it: what is
    # left (combining marks, variation selectors, joiners, inner spaces) has nothing to stand
    # on, and would show as nothing or as marks stacked on whatever is printed before it.
    if value and not any(unicodedata.category(ch)[0] in "LNPS" for ch in value):
        raise TableError("{what} {value} is only accents or marks: it needs a letter, digit or "
                         "symbol", what=what, value=repr(value))
    return value


def _check_replaces_value(replaces: object) -> None:
    """``replaces`` (new game, resume) is a game's number, None, or left out (``ANY_GAME``)."""
    if replaces is not ANY_GAME and replaces is not None and (
        not isinstance(replaces, int) or isinstance(replaces, bool) or replaces < 1
    ):
        raise TableError("'replaces' must be the number of the game your screen shows at the "
                         "table (null when it shows none)")


def _folded(name: str) -> str:
    """A name as compared with the others: compatibility forms (full-width letters), capitals
    and the characters that do not change how it reads (``UNSEEN_IN_COMPARISON``) ignored."""
    folded = unicodedata.normalize("NFKC", name).casefold()
    return "".join(ch for ch in folded if ch not in UNSEEN_IN_COMPARISON)


def seat_names(players: object) -> list[str]:
    """The players' names as given, checked: texts, not blank, unique ignoring case."""
    if not isinstance(players, list) or not all(isinstance(p, str) for p in players):
        raise TableError("players must be a list of names")
    names = [_text(p, Msg("a player's name"), NAME_MAX) for p in players]
    names = [n for n in names if n]
    seen: dict[str, str] = {}
    for name in names:
        folded = _folded(name)
        if folded in seen:
            raise TableError("two players are called '{one}' and '{other}': names must differ "
                             "(ignoring capitals)", one=seen[folded], other=name)
        seen[folded] = name
    return names


def check_island_names(command: dict, known: Iterable[str]) -> None:
    """The islands an action names, checked as the players' names are (``_text``, ``_folded``):
    no invisible characters, and no second spelling of an island ("a" for "A", "A\u200dB" for
    "AB"), which the rules engine, comparing names exactly, would take for another island.
    ``known``: the islands the game names already, each taken as it is written there (a log from
    before this check may hold a name it refuses)."""
    if command.get("type") != "action":
        return
    known = set(known)
    spelled: dict[str, str] = {}
    for name in sorted(known):
        spelled.setdefault(_folded(name), name)
    for name in named_islands(parse_event({"v": 1, **command})):  # a malformed one: its words
        if name in known:
            continue
        _text(name, Msg("an island's name"), NAME_MAX)
        other = spelled.setdefault(_folded(name), name)
        if other != name:
            raise TableError("'{name}' and island '{other}' differ only in capitals or unseen "
                             "characters: write '{other}' for that island, or give a new island "
                             "another name", name=name, other=other)


def fingerprint(*request: object) -> str:
    """What a request asked for, to tell a retry from another request under the same key."""
    try:
        text = json.dumps(request, sort_keys=True, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        raise TableError("this request is not plain JSON (or nested too deeply)") from None
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class GameTable:
    def __init__(self, store: Store, hub: Hub):
        self._store = store
        self._hub = hub
        self._lock = threading.Lock()
        self._cached: tuple[int, int, Game] | None = None  # (game id, events, game)
        self._listeners: list[Callable[[dict], None]] = []
        self._summaries: dict[int, tuple[int, dict]] = {}  # game id -> (events, list summary)

    def on_change(self, listener: Callable[[dict], None]) -> None:
        """Call ``listener(snapshot)`` after every accepted command (e.g. the panel's LEDs)."""
        self._listeners.append(listener)

    # -- reading ---------------------------------------------------------------------------
    def _load(self, game_id: int) -> Game:
        if self._cached and self._cached[:2] == (game_id, self._store.event_count(game_id)):
            return self._cached[2]
        game = load_game(self._store, game_id)
        self._cached = (game_id, len(game), game)
        return game

    def _fold(self, game_id: int) -> Game:
        """A game other than the one at the table, loaded afresh (kept games are few)."""
        return load_game(self._store, game_id)

    def current_id(self) -> int | None:
        return self._store.latest_game()

    def snapshot(self) -> dict:
        """Everything a phone shows about the game: state, score sheet, history, log position."""
        with self._lock:
            game_id = self.current_id()
            if game_id is None:
                return {"id": None}
            return self._snapshot(game_id, self._load(game_id))

    def view(self, game_id: int) -> dict:
        """Any game kept on the device, to look at (``at_table``: whether it is the one in play)."""
        with self._lock:
            if not self._store.event_count(game_id):
                raise TableError("there is no game {game}", game=game_id)
            at_table = game_id == self.current_id()
            game = self._load(game_id) if at_table else self._fold(game_id)
            return {**self._snapshot(game_id, game), "at_table": at_table}

    def _snapshot(self, game_id: int, game: Game) -> dict:
        history = game.history()
        return {
            "id": game_id,
            "seq": len(game),
            "state": game.state_dict(),
            "score_sheet": game.score_sheet(),
            "history": history,
            # a tray reading for the next drop must have a higher id than this (None: any)
            "reading_after": self._reading_after(game_id, history),
            **self._set_aside(game_id),
        }

    def _set_aside(self, game_id: int) -> dict:
        """``set_aside``: the stored events this game's repair left out (``companion.recovery``),
        how many and from which number, so the phones say that the game was cut short."""
        rows = self._store.quarantined(game_id)
        if not rows:
            return {}
        return {"set_aside": {"events": len(rows), "from": min(r["seq"] for r in rows) + 1}}

    def _reading_after(self, game_id: int, history: list[dict]) -> int | None:
        """The newest reading id when the current phase began (or the game was started)."""
        for line in reversed(history):
            if line["in_force"] and line["type"] in (PHASE, SETUP, "players_seated"):
                return self._store.reading_mark(game_id, line["n"] - 1)
        return None

    def vision_bounds(self) -> dict[str, int] | None:
        """How many cubes of each colour can be in the tray now, while the game waits for a drop.

        Between drops the tray may still hold the last drop's cubes on their way to the action
        space, so no bound is given then (None), nor without a game.
        """
        with self._lock:  # only the state: the score sheet and history are not needed here
            game_id = self.current_id()
            if game_id is None:
                return None
            state = self._load(game_id).state_dict()
        if self.reading_expected({"state": state}) is None:
            return None
        return dict(state.get("vision_bounds") or {}) or None

    def log_text(self, game_id: int) -> str:
        """The stored log of any game, one JSON event a line, as ``cubetower replay`` reads it
        (the text as stored, so even a log that no longer loads can be taken away)."""
        rows = self._store.event_rows(game_id)
        if not rows:
            raise TableError("there is no game {game}", game=game_id)
        return "".join(body + "\n" for _, body in rows)

    def games(self) -> list[dict]:
        """Every game on the device, newest first, with who played, how far it got, who won."""
        current = self.current_id()
        return [
            {**row, "at_table": row["id"] == current, **self._summary(row["id"], row["events"])}
            for row in self._store.games()
        ]

    def _summary(self, game_id: int, events: int) -> dict:
        """Players, stage, round (and winner) of a kept game; folded once per length of its log."""
        known = self._summaries.get(game_id)
        if known and known[0] == events:
            return known[1]
        try:
            game = self._fold(game_id)
            state = game.state
            # round None before the game begins, as the game's own state says (not 0)
            summary = {"players": list(state.players), "stage": state.stage,
                       "round": state.round or None}
            if state.stage == "over":
                summary["winner"] = game.score_sheet()["winner"]
        except ValueError as exc:  # an unreadable log is listed, not hidden
            summary = {"problem": str(exc)}
        self._summaries[game_id] = (events, summary)
        return summary

    def resume(self, game_id: int, *, replaces: int | _AnyGame | None = ANY_GAME) -> dict:
        """Put an earlier game back on the table; every phone follows. ``replaces``: as for
        ``new_game``, the id of the game the sender's screen shows at the table (None: none; left
        out: whatever is there); when another game is there now (another phone started or
        resumed one first), SeqConflict and nothing changes. When the game asked for is at the
        table already (the retry of a resume whose answer was lost, or another phone resumed
        the same game first) it is the answer whatever ``replaces`` says: nothing is taken from
        anyone."""
        _check_replaces_value(replaces)
        with self._lock:
            if not self._store.event_count(game_id):
                raise NoGame(Msg("there is no game {game}", game=game_id))
            if replaces is not ANY_GAME and game_id != self.current_id():
                self._check_replaces(replaces, resuming=game_id)
            game = self._fold(game_id)
            self._store.set_table_game(game_id)
            self._cached = (game_id, len(game), game)
            snapshot = self._snapshot(game_id, game)
        self._announce(snapshot)
        return snapshot

    # -- writing ---------------------------------------------------------------------------
    def new_game(
        self,
        players: list[str],
        name: str | None = "",
        settings: dict | None = None,
        key: str | None = None,
        *,
        replaces: int | _AnyGame | None = ANY_GAME,
    ) -> dict:
        """Start a game: created and seated in one transaction, so a half-made game is never
        stored. ``key``: the request's idempotency key (a repeat gets the first answer, even
        after another game was started). ``replaces``: the id of the game the sender's screen
        shows at the table (None: it shows none); when another game is there now (another phone
        started or resumed one first), SeqConflict and nothing is started. Like a command's
        ``base`` it is not part of what the key's request asked for."""
        players = seat_names(players)
        name = _text("" if name is None else name, Msg("the game's name"), TITLE_MAX)
        _check_replaces_value(replaces)
        created: dict = {"v": 1, "type": "game_created"}
        if name:
            created["name"] = name
        if settings:
            created["settings"] = settings
        game = Game()
        game.apply(created)
        game.command({"type": "players_seated", "players": players})
        idem = (key, fingerprint("new_game", players, name, settings)) if key else None
        with self._lock:
            first = self._first_answer(idem)
            if first is not None:
                return first
            if replaces is not ANY_GAME:
                self._check_replaces(replaces)
            try:
                game_id = self._store.create_game(name, game.events, idem)
            except ValueError as exc:
                raise TableError("this game cannot be stored: {reason}", reason=str(exc)) from None
            self._cached = (game_id, len(game), game)
            snapshot = self._snapshot(game_id, game)
        self._announce(snapshot)
        return snapshot

    def _check_replaces(self, replaces: object, resuming: int | None = None) -> None:
        """SeqConflict unless the game at the table is the one a new game's (or, ``resuming``
        game N, a resume's) sender saw (lock held, so two phones that saw the same game cannot
        both start one)."""
        current = self.current_id()
        if replaces == current:
            return
        if resuming is not None and current is not None:
            raise SeqConflict(Msg(
                "another phone changed the game at the table first (game {game} is there now), "
                "so game {resumed} was not resumed; the screen has been refreshed, resume it "
                "again only if that is still what you meant", game=current, resumed=resuming,
            ))
        if current is None:  # (games are not deleted; a data file swapped under the device)
            raise SeqConflict(Msg(
                "there is no game at the table any more (your screen showed game {shown}), so "
                "yours was not started; the screen has been refreshed", shown=replaces,
            ))
        raise SeqConflict(Msg(
            "another phone started a game first (game {game} is at the table now), so yours was "
            "not started; the screen has been refreshed, start yours again only if that is still "
            "what you meant", game=current,
        ))

    def command(
        self,
        game_id: int,
        base: int,
        command: dict,
        key: str | None = None,
        *,
        reading_id: int | None = None,
        confirmed: bool = False,
    ) -> dict:
        """Apply one phone's command if it saw the latest state; RulesError/SeqConflict if not.

        The game in memory is replaced only after the event is stored. ``key``: the request's
        idempotency key; a repeat (even with a fresher ``base``) gets the first answer. For a
        drop, ``reading_id`` is the camera reading its counts come from (None: typed by hand);
        ``confirmed`` is a player's yes to the question NeedsConfirmation asked (about a drop,
        or gold paid for AP left unused).
        """
        if not isinstance(command, dict):
            raise TableError("a command must be a JSON object")
        kind = command.get("type")
        if not isinstance(kind, str) or kind not in COMMAND_TYPES:
            raise TableError("unknown command type {kind}; one of {types}", kind=repr(kind),
                             types=", ".join(sorted(COMMAND_TYPES)))
        idem = (
            (key, fingerprint("command", game_id, command, reading_id, confirmed)) if key else None
        )
        with self._lock:
            first = self._first_answer(idem)
            if first is not None:
                return first
            if game_id != self.current_id():
                raise TableError("game {game} is not the game at the table", game=game_id)
            game = self._load(game_id)
            if base != len(game):
                raise SeqConflict(Msg(
                    "the game moved on ({count} events, you saw {base}); "
                    "the screen has been refreshed, please try again", count=len(game), base=base,
                ))
            if kind in (SETUP, PHASE):
                self._check_drop(game_id, game, command, reading_id, confirmed)
            elif kind == "tray_corrected":
                corrected = parse_event({"v": 1, **command})  # a malformed one: its words
                check_correction(game.history(), corrected["target"], corrected["tray"],
                                 confirmed)
            check_island_names(command, game.state.islands)
            after = game.copy()
            event = after.command(command)  # RulesError: refused, the game is untouched
            if kind == "undo" and after.state.stage == SEATING:
                self._refuse_unseating(command)
            check_bought_ap(event, after.state.last_action, confirmed)
            try:
                self._store.append_events(game_id, base, [event], idem)
            except ValueError as exc:
                raise TableError("this command cannot be stored: {reason}",
                                 reason=str(exc)) from None
            self._cached = (game_id, len(after), after)
            snapshot = self._snapshot(game_id, after)
        self._announce(snapshot)
        return snapshot

    @staticmethod
    def _refuse_unseating(command: dict) -> None:
        """An undo (or an undo of a redo...) that would take back the seating: the game would
        then wait for ``players_seated``, which no phone can send, so it is refused. The seating
        is in force whenever the game is past the stage ``seating`` (its creation cannot be
        undone), so the stage after the command tells, however the undo's target was resolved.
        """
        if "target" not in command and not command.get("redo"):
            # the plain Undo button, in the panel's words (``undo_latest``)
            raise TableError("nothing to undo yet (start a new game to change the players)")
        raise TableError("the seating cannot be undone: start a new game to change the players")

    def _first_answer(self, idem: tuple[str, str] | None) -> dict | None:
        """The answer a write with this idempotency key got, if it was made (lock held)."""
        if idem is None:
            return None
        found = self._store.idempotent(idem[0])
        if found is None:
            return None
        game_id, seq, request = found
        if request != idem[1]:
            raise KeyReused("this Idempotency-Key was already used for another request; "
                            "send a new key with each new request")
        if game_id == self.current_id():
            game = self._load(game_id)
            if len(game) == seq:
                return self._snapshot(game_id, game)
        return self._snapshot(game_id, Game.from_events(self._store.events(game_id)[:seq]))

    def _check_drop(
        self, game_id: int, game: Game, command: dict, reading_id: int | None, confirmed: bool
    ) -> None:
        counts = parse_event({"v": 1, **command})["tray"]  # a malformed drop: the rules' words
        if reading_id is not None and (
            not isinstance(reading_id, int) or isinstance(reading_id, bool) or reading_id < 1
        ):
            raise TableError("'reading' must be the number of a tray reading")
        state = game.state_dict()
        phase = state.get("phase") or ""
        previous = previous_drop(phase, state.get("round") or 0, state.get("skipped_phases", []))
        check_drop(Drop(
            kind=command["type"],
            counts=counts,
            reading_id=reading_id,
            reading=self._store.reading(reading_id) if reading_id is not None else None,
            after=self._reading_after(game_id, game.history()),
            confirmed=bool(confirmed),
            phase=phase,
            previous=previous,
        ))

    def reading_expected(self, snapshot: dict) -> str | None:
        """The event a tray reading would be now: the set-up drop, a phase's drop, or None."""
        expected = (snapshot.get("state") or {}).get("expects_events", [])
        return next((e for e in ("tray_read", "setup_drop_read") if e in expected), None)

    def confirm_tray(self, counts: dict[str, int], reading_id: int | None = None) -> dict:
        """Take a tray reading as the game's next reading (the panel's Next button): refused
        when it cannot start this phase, and when it needs a player's yes (ask on a phone)."""
        snapshot = self.snapshot()
        if snapshot["id"] is None:
            raise TableError("no game is open; start one on a phone first")
        kind = self.reading_expected(snapshot)
        if kind is None:
            expects = snapshot["state"]["expects"]
            raise TableError(
                "the game does not wait for a tray reading now (it expects {expects})",
                expects=expects,
            )
        return self.command(
            snapshot["id"], snapshot["seq"], {"type": kind, "tray": counts}, reading_id=reading_id
        )

    def undo_latest(self) -> dict:
        """Take back the latest event in force (the panel's Undo button)."""
        snapshot = self.snapshot()
        if snapshot["id"] is None:
            raise TableError("no game is open")
        in_force = [h for h in snapshot["history"] if h["in_force"] and h["type"] != "undo"]
        if in_force and in_force[-1]["type"] in ("game_created", "players_seated"):
            raise TableError("nothing to undo yet (start a new game to change the players)")
        return self.command(snapshot["id"], snapshot["seq"], {"type": "undo"})

    def redo_latest(self) -> dict:
        """Bring back what the latest undo took back (the panel's Undo button, held), as the
        phones' Redo does: only while that undo is the latest event in force (an earlier redo,
        an undo of an undo, is passed over to reach the undo before it)."""
        snapshot = self.snapshot()
        if snapshot["id"] is None:
            raise TableError("no game is open")
        history = snapshot["history"]
        by_n = {h["n"]: h for h in history}
        for h in reversed(history):
            if not h["in_force"]:
                continue
            if h["type"] != "undo":
                break
            target = by_n.get(h.get("target"))
            if target is not None and target["type"] == "undo":
                continue  # an earlier redo: the undo it took back stays taken back
            return self.command(
                snapshot["id"], snapshot["seq"], {"type": "undo", "redo": True}
            )
        raise TableError(
            "nothing to redo: Redo brings back what Undo took back, until the game moves on"
        )

    def _announce(self, snapshot: dict) -> None:
        self._hub.publish("game", snapshot)
        for listener in self._listeners:
            listener(snapshot)
