"""The game at the table: the rules engine's log kept in SQLite, shared by every phone.

Each command names the number of events the phone had seen (``base``). If another phone got in
first, the command is refused as stale instead of being applied to a game its sender never saw:
two players pressing at once cannot both take the same turn. The rules engine checks the command
itself; only an accepted command is written, so a refused one leaves no trace.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from companion.amerigo import Game
from companion.hub import Hub
from companion.store import SeqConflict, Store

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


class TableError(ValueError):
    """A request the table cannot take (no game, bad shape); the message is for the players."""


class GameTable:
    def __init__(self, store: Store, hub: Hub):
        self._store = store
        self._hub = hub
        self._lock = threading.Lock()
        self._cached: tuple[int, int, Game] | None = None  # (game id, events, game)
        self._listeners: list[Callable[[dict], None]] = []

    def on_change(self, listener: Callable[[dict], None]) -> None:
        """Call ``listener(snapshot)`` after every accepted command (e.g. the panel's LEDs)."""
        self._listeners.append(listener)

    # -- reading ---------------------------------------------------------------------------
    def _load(self, game_id: int) -> Game:
        if self._cached and self._cached[:2] == (game_id, self._store.event_count(game_id)):
            return self._cached[2]
        events = self._store.events(game_id)
        game = Game.from_events(events)
        self._cached = (game_id, len(events), game)
        return game

    def current_id(self) -> int | None:
        return self._store.latest_game()

    def snapshot(self) -> dict:
        """Everything a phone shows about the game: state, score sheet, history, log position."""
        with self._lock:
            game_id = self.current_id()
            if game_id is None:
                return {"id": None}
            return self._snapshot(game_id, self._load(game_id))

    @staticmethod
    def _snapshot(game_id: int, game: Game) -> dict:
        return {
            "id": game_id,
            "seq": len(game.events),
            "state": game.state_dict(),
            "score_sheet": game.score_sheet(),
            "history": game.history(),
        }

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

    def events(self, game_id: int) -> list[dict]:
        """The stored log of any game, as ``cubetower replay`` reads it."""
        events = self._store.events(game_id)
        if not events:
            raise TableError(f"there is no game {game_id}")
        return events

    def games(self) -> list[dict]:
        return self._store.games()

    # -- writing ---------------------------------------------------------------------------
    def new_game(self, players: list[str], name: str = "", settings: dict | None = None) -> dict:
        """Start a game: created and seated in one go, so a half-made game is never stored."""
        if not isinstance(players, list) or not all(isinstance(p, str) for p in players):
            raise TableError("players must be a list of names")
        players = [p.strip() for p in players if p.strip()]
        created: dict = {"v": 1, "type": "game_created"}
        if name:
            created["name"] = str(name)
        if settings:
            created["settings"] = settings
        game = Game()
        game.apply(created)
        game.command({"type": "players_seated", "players": players})
        with self._lock:
            game_id = self._store.create_game(created.get("name", ""))
            self._store.append_events(game_id, 0, game.events)
            self._cached = (game_id, len(game.events), game)
            snapshot = self._snapshot(game_id, game)
        self._announce(snapshot)
        return snapshot

    def command(self, game_id: int, base: int, command: dict) -> dict:
        """Apply one phone's command if it saw the latest state; RulesError/SeqConflict if not."""
        if not isinstance(command, dict):
            raise TableError("a command must be a JSON object")
        kind = command.get("type")
        if kind not in COMMAND_TYPES:
            raise TableError(
                f"unknown command type {kind!r}; one of {', '.join(sorted(COMMAND_TYPES))}"
            )
        with self._lock:
            if game_id != self.current_id():
                raise TableError(f"game {game_id} is not the game at the table")
            game = self._load(game_id)
            if base != len(game.events):
                raise SeqConflict(
                    f"the game moved on ({len(game.events)} events, you saw {base}); "
                    "the screen has been refreshed, please try again"
                )
            event = game.command(command)  # RulesError: refused, game untouched
            try:
                self._store.append_events(game_id, base, [event])
            except Exception:
                self._cached = None  # the disk did not take it: rebuild from what it holds
                raise
            self._cached = (game_id, len(game.events), game)
            snapshot = self._snapshot(game_id, game)
        self._announce(snapshot)
        return snapshot

    def reading_expected(self, snapshot: dict) -> str | None:
        """The event a tray reading would be now: the set-up drop, a phase's drop, or None."""
        expected = (snapshot.get("state") or {}).get("expects_events", [])
        return next((e for e in ("tray_read", "setup_drop_read") if e in expected), None)

    def confirm_tray(self, counts: dict[str, int]) -> dict:
        """Take a tray reading as the game's next reading (the panel's Next button)."""
        snapshot = self.snapshot()
        if snapshot["id"] is None:
            raise TableError("no game is open; start one on a phone first")
        kind = self.reading_expected(snapshot)
        if kind is None:
            expects = snapshot["state"]["expects"]
            raise TableError(
                f"the game does not wait for a tray reading now (it expects {expects})"
            )
        return self.command(snapshot["id"], snapshot["seq"], {"type": kind, "tray": counts})

    def undo_latest(self) -> dict:
        """Take back the latest event in force (the panel's Undo button)."""
        snapshot = self.snapshot()
        if snapshot["id"] is None:
            raise TableError("no game is open")
        in_force = [h for h in snapshot["history"] if h["in_force"] and h["type"] != "undo"]
        if in_force and in_force[-1]["type"] in ("game_created", "players_seated"):
            raise TableError("nothing to undo yet (start a new game to change the players)")
        return self.command(snapshot["id"], snapshot["seq"], {"type": "undo"})

    def _announce(self, snapshot: dict) -> None:
        self._hub.publish("game", snapshot)
        for listener in self._listeners:
            listener(snapshot)
