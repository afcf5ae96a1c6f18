"""The device's memory: tray readings and game event logs in one SQLite file.

SQLite in WAL mode with ``synchronous=FULL`` so a pulled power cord loses at most the write in
flight, never the game. Game events are append-only rows keyed by (game, seq): two phones
appending on the same base collide on the key instead of both landing. A new game's row and its
first events are one transaction, so a crash never leaves a game without players. A write's
idempotency key is stored on its last event in the same transaction, so a retried request is
recognised even after a restart. An event the rules can no longer read is moved, not deleted, to
``quarantined_events`` (see ``companion.recovery``). Tray readings are bounded: the newest
``keep_readings`` are kept, the newest ``keep_pictures`` of them with their pictures.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from companion.text import Msg

SCHEMA = """
CREATE TABLE IF NOT EXISTS readings (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    frame_id TEXT NOT NULL,
    read_at REAL NOT NULL,
    body TEXT NOT NULL,
    picture BLOB
);
CREATE TABLE IF NOT EXISTS games (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at REAL NOT NULL,
    title TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS events (
    game_id INTEGER NOT NULL REFERENCES games(id),
    seq INTEGER NOT NULL,
    created_at REAL NOT NULL,
    body TEXT NOT NULL,
    reading_mark INTEGER,
    PRIMARY KEY (game_id, seq)
);
CREATE TABLE IF NOT EXISTS quarantined_events (
    game_id INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    body TEXT NOT NULL,
    reason TEXT NOT NULL,
    quarantined_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS settings (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
"""

# Added after the first release: an existing file gets the columns when it is opened.
MIGRATIONS = (
    ("events", "idem_key", "ALTER TABLE events ADD COLUMN idem_key TEXT"),
    ("events", "idem_request", "ALTER TABLE events ADD COLUMN idem_request TEXT"),
    # events written before the marks have none (NULL): no freshness is asked of their readings
    ("events", "reading_mark", "ALTER TABLE events ADD COLUMN reading_mark INTEGER"),
)

# The newest tray reading when an event is written: a reading with a higher id was taken after
# that event, whatever the clock says (a Pi without a clock battery may boot into the past).
READING_MARK = "COALESCE((SELECT MAX(id) FROM readings), 0)"
INDEXES = """
CREATE UNIQUE INDEX IF NOT EXISTS events_idem_key ON events (idem_key)
    WHERE idem_key IS NOT NULL;
"""

# Readings kept: the newest N with their numbers, and the newest few of them with their
# pictures. A reading is ~750 bytes (0.5 MB an hour of play), a picture ~50 KB. Older ones are
# deleted as new ones come; ids are never reused (AUTOINCREMENT), so a deleted reading reads as
# an unknown one ("there is no tray reading #N") and reading marks keep their order.
KEEP_READINGS = 5000
KEEP_PICTURES = 200

# SQLite's INTEGER is 64-bit signed; a larger id in a URL can name no row (and would raise).
SQLITE_MAX_INT = 2**63 - 1


def _row_id(value: int) -> bool:
    """Whether ``value`` can be a row id at all (ids beyond SQLite's range name nothing)."""
    return 0 <= value <= SQLITE_MAX_INT


def to_json(body: object) -> str:
    """Strict JSON for the log (no NaN/Infinity, which other readers refuse); ValueError if not."""
    return json.dumps(body, allow_nan=False)


class StoreError(RuntimeError):
    """The data file cannot be used; the message says which file and why."""

    def __init__(self, message: str | Msg) -> None:
        self.msg = message  # a Msg when a phone reads it (SeqConflict), else the terminal's text
        super().__init__(str(message))


class NotSaved(StoreError):
    """A write the data file refused (the card full or gone read-only, the file locked): none
    of it was kept, and the game in memory is left as it was."""


class DamagedStore(StoreError):
    """The data file opens but is not a sound SQLite database (a torn write, a bad card)."""

    def __init__(self, message: str, path: Path) -> None:
        super().__init__(message)
        self.path = path


class SeqConflict(StoreError):
    """Someone else appended first: the caller's view of the log is stale."""


class Store:
    """One SQLite file shared by the web threads and the camera loop (serialised by a lock)."""

    def __init__(
        self, path: str | Path, keep_pictures: int = KEEP_PICTURES,
        keep_readings: int = KEEP_READINGS,
    ):
        if keep_readings < 1:  # the newest reading is every event's mark (READING_MARK)
            raise ValueError(f"keep_readings must be at least 1, got {keep_readings}")
        self.path = Path(path)
        self.keep_pictures = keep_pictures
        self.keep_readings = keep_readings
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._db.executescript(SCHEMA)
            self._migrate()
            self._db.execute("PRAGMA quick_check").fetchone()
            # a write that changes nothing: a card gone read-only after a power cut opens and
            # reads as before, and would refuse every move of the evening instead
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
            self._db.execute(f"PRAGMA user_version = {int(version)}")
        except sqlite3.OperationalError as exc:  # cannot open or write: the card, the rights
            raise StoreError(f"cannot use data file {self.path}: {exc}") from exc
        except sqlite3.DatabaseError as exc:  # opened and read, and not a sound database
            raise DamagedStore(f"the data file {self.path} is damaged: {exc}", self.path) from exc
        except OSError as exc:
            raise StoreError(f"cannot create data folder {self.path.parent}: {exc}") from exc

    def _migrate(self) -> None:
        for table, column, statement in MIGRATIONS:
            columns = {row[1] for row in self._db.execute(f"PRAGMA table_info({table})")}
            if column not in columns:
                self._db.execute(statement)
        self._db.executescript(INDEXES)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # -- tray readings ---------------------------------------------------------------------
    def add_reading(self, frame_id: str, read_at: float, body: dict, picture: bytes | None) -> int:
        """Keep a reading; the oldest beyond ``keep_readings`` go, and pictures beyond
        ``keep_pictures``, in the same transaction (NotSaved if the file refuses it)."""
        with self._lock, self._transaction():
            cursor = self._db.execute(
                "INSERT INTO readings (frame_id, read_at, body, picture) VALUES (?, ?, ?, ?)",
                (frame_id, read_at, json.dumps(body), picture),
            )
            newest = cursor.lastrowid
            # Ids follow each other (AUTOINCREMENT, and the newest row is never deleted), so
            # the newest N are the ids above newest - N: two range steps on the primary key.
            self._db.execute("DELETE FROM readings WHERE id <= ?", (newest - self.keep_readings,))
            # Pictures are large; keep only the recent ones.
            self._db.execute(
                "UPDATE readings SET picture = NULL WHERE picture IS NOT NULL AND id <= ?",
                (newest - self.keep_pictures,),
            )
            return newest

    def latest_reading(self) -> tuple[int, dict] | None:
        with self._lock:
            row = self._db.execute(
                "SELECT id, body FROM readings ORDER BY id DESC LIMIT 1"
            ).fetchone()
        return (row[0], json.loads(row[1])) if row else None

    def recent_readings(self, limit: int = 50) -> list[tuple[int, dict]]:
        with self._lock:
            rows = self._db.execute(
                "SELECT id, body FROM readings ORDER BY id DESC LIMIT ?", (limit,)
            ).fetchall()
        return [(row[0], json.loads(row[1])) for row in rows]

    def reading(self, reading_id: int) -> dict | None:
        """One reading's body (counts, warnings...) by its id, or None when there is none."""
        if not _row_id(reading_id):
            return None
        with self._lock:
            row = self._db.execute(
                "SELECT body FROM readings WHERE id = ?", (reading_id,)
            ).fetchone()
        return json.loads(row[0]) if row else None

    def picture(self, reading_id: int) -> bytes | None:
        if not _row_id(reading_id):
            return None
        with self._lock:
            row = self._db.execute(
                "SELECT picture FROM readings WHERE id = ?", (reading_id,)
            ).fetchone()
        return row[0] if row else None

    # -- games -----------------------------------------------------------------------------
    def create_game(
        self, title: str, events: Iterable[dict], idem: tuple[str, str] | None = None
    ) -> int:
        """Store a new game and its first events in one transaction: all of it, or nothing.
        The new game is the one at the table (an earlier one resumed is no longer)."""
        bodies = [to_json(event) for event in events]  # ValueError before anything is written
        if not bodies:
            raise ValueError("a game starts with at least one event")
        with self._lock, self._transaction():
            self._db.execute("DELETE FROM settings WHERE key = 'table_game'")
            cursor = self._db.execute(
                "INSERT INTO games (created_at, title) VALUES (?, ?)", (time.time(), title)
            )
            self._insert_events(cursor.lastrowid, 0, bodies, idem)
            return cursor.lastrowid

    def latest_game(self) -> int | None:
        """The game at the table: the one resumed last, else the newest game that has events
        (a game row without any, left by an older version killed mid-creation, is not a game
        anyone can play)."""
        playable = "EXISTS (SELECT 1 FROM events e WHERE e.game_id = g.id)"
        with self._lock:
            row = self._db.execute(
                "SELECT g.id FROM settings s JOIN games g ON g.id = CAST(s.value AS INTEGER)"
                f" WHERE s.key = 'table_game' AND {playable}"
            ).fetchone()
            if row is None:
                row = self._db.execute(
                    f"SELECT id FROM games g WHERE {playable} ORDER BY id DESC LIMIT 1"
                ).fetchone()
        return row[0] if row else None

    def set_table_game(self, game_id: int | None) -> None:
        """Put an earlier game back on the table (None: the newest game, as before)."""
        with self._lock:
            if game_id is None:
                self._db.execute("DELETE FROM settings WHERE key = 'table_game'")
            else:
                self._db.execute(
                    "INSERT INTO settings (key, value) VALUES ('table_game', ?) "
                    "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                    (str(game_id),),
                )

    def reading_mark(self, game_id: int, seq: int) -> int | None:
        """The newest reading's id when event ``seq`` (0-based) was written: 0 when there was
        none yet, None for an event written before the marks were kept."""
        with self._lock:
            row = self._db.execute(
                "SELECT reading_mark FROM events WHERE game_id = ? AND seq = ?", (game_id, seq)
            ).fetchone()
        return None if row is None else row[0]

    def games(self) -> list[dict]:
        with self._lock:
            rows = self._db.execute(
                "SELECT g.id, g.created_at, g.title, COUNT(e.seq) FROM games g "
                "LEFT JOIN events e ON e.game_id = g.id GROUP BY g.id ORDER BY g.id DESC"
            ).fetchall()
        return [{"id": r[0], "created_at": r[1], "title": r[2], "events": r[3]} for r in rows]

    def events(self, game_id: int) -> list[dict]:
        """The game's log; StoreError naming the row when one is not JSON at all."""
        events = []
        for seq, body in self.event_rows(game_id):
            try:
                events.append(json.loads(body))
            except (ValueError, RecursionError) as exc:
                raise StoreError(f"game {game_id}, event #{seq + 1} is not readable JSON") from exc
        return events

    def event_rows(self, game_id: int) -> list[tuple[int, str]]:
        """The log as stored: (seq, JSON text), for repairing a log that no longer loads."""
        if not _row_id(game_id):
            return []
        with self._lock:
            return self._db.execute(
                "SELECT seq, body FROM events WHERE game_id = ? ORDER BY seq", (game_id,)
            ).fetchall()

    def event_count(self, game_id: int) -> int:
        if not _row_id(game_id):
            return 0
        with self._lock:
            return self._db.execute(
                "SELECT COUNT(*) FROM events WHERE game_id = ?", (game_id,)
            ).fetchone()[0]

    def append_events(
        self,
        game_id: int,
        base_seq: int,
        events: Iterable[dict],
        idem: tuple[str, str] | None = None,
    ) -> int:
        """Append after ``base_seq`` events; raise SeqConflict if the log has moved on.

        ``idem`` is (key, request fingerprint) of the request that made the events; it is kept
        on the last one, in the same transaction.
        """
        bodies = [to_json(event) for event in events]  # ValueError before anything is written
        with self._lock, self._transaction():
            count = self._db.execute(
                "SELECT COUNT(*) FROM events WHERE game_id = ?", (game_id,)
            ).fetchone()[0]
            if count != base_seq:
                raise SeqConflict(Msg(
                    "the game moved on ({count} events, you saw {base}); reload and retry",
                    count=count, base=base_seq,
                ))
            return self._insert_events(game_id, base_seq, bodies, idem)

    def _insert_events(
        self, game_id: int, seq: int, bodies: list[str], idem: tuple[str, str] | None
    ) -> int:
        for n, body in enumerate(bodies):
            key, request = idem if idem and n == len(bodies) - 1 else (None, None)
            self._db.execute(
                "INSERT INTO events (game_id, seq, created_at, body, idem_key, idem_request,"
                f" reading_mark) VALUES (?, ?, ?, ?, ?, ?, {READING_MARK})",
                (game_id, seq, time.time(), body, key, request),
            )
            seq += 1
        return seq

    def idempotent(self, key: str) -> tuple[int, int, str] | None:
        """(game id, events up to and with the write, request fingerprint) of an earlier
        write made with this idempotency key, or None."""
        with self._lock:
            row = self._db.execute(
                "SELECT game_id, seq, idem_request FROM events WHERE idem_key = ?", (key,)
            ).fetchone()
        return (row[0], row[1] + 1, row[2]) if row else None

    def quarantine(self, game_id: int, keep: list[tuple[int, str]], reasons: dict[int, str]
                   ) -> None:
        """Rewrite a game's log as ``keep`` (old seq, new JSON text), in order; every other
        row moves to ``quarantined_events`` with its reason. One transaction."""
        with self._lock, self._transaction():
            rows = self._db.execute(
                "SELECT seq, created_at, body, idem_key, idem_request, reading_mark FROM events"
                " WHERE game_id = ? ORDER BY seq",
                (game_id,),
            ).fetchall()
            kept = dict(keep)
            now = time.time()
            for seq, _, body, _, _, _ in rows:
                if seq not in kept:
                    self._db.execute(
                        "INSERT INTO quarantined_events (game_id, seq, body, reason,"
                        " quarantined_at) VALUES (?, ?, ?, ?, ?)",
                        (game_id, seq, body, reasons.get(seq, "unreadable"), now),
                    )
            self._db.execute("DELETE FROM events WHERE game_id = ?", (game_id,))
            by_seq = {row[0]: row for row in rows}
            for new_seq, (old_seq, body) in enumerate(keep):
                _, created_at, _, key, request, mark = by_seq[old_seq]
                self._db.execute(
                    "INSERT INTO events (game_id, seq, created_at, body, idem_key, idem_request,"
                    " reading_mark) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (game_id, new_seq, created_at, body, key, request, mark),
                )

    def quarantined(self, game_id: int) -> list[dict]:
        with self._lock:
            rows = self._db.execute(
                "SELECT seq, body, reason FROM quarantined_events WHERE game_id = ?"
                " ORDER BY rowid",
                (game_id,),
            ).fetchall()
        return [{"seq": r[0], "body": r[1], "reason": r[2]} for r in rows]

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        """BEGIN IMMEDIATE ... COMMIT; any exception rolls all of it back (the caller holds
        the lock)."""
        try:
            self._db.execute("BEGIN IMMEDIATE")
            yield
            self._db.execute("COMMIT")
        except BaseException as exc:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            if isinstance(exc, sqlite3.OperationalError):
                raise NotSaved(Msg(
                    "the device could not save this, so nothing changed ({reason}): is its "
                    "memory card full or read-only?", reason=str(exc))) from exc
            raise
