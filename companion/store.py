"""The device's memory: tray readings and game event logs in one SQLite file.

SQLite in WAL mode with ``synchronous=FULL`` so a pulled power cord loses at most the write in
flight, never the game. Game events are append-only rows keyed by (game, seq): two phones
appending on the same base collide on the key instead of both landing.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterable
from pathlib import Path

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
    PRIMARY KEY (game_id, seq)
);
"""


class StoreError(RuntimeError):
    """The data file cannot be used; the message says which file and why."""


class SeqConflict(StoreError):
    """Someone else appended first: the caller's view of the log is stale."""


class Store:
    """One SQLite file shared by the web threads and the camera loop (serialised by a lock)."""

    def __init__(self, path: str | Path, keep_pictures: int = 200):
        self.path = Path(path)
        self.keep_pictures = keep_pictures
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._db.executescript(SCHEMA)
            self._db.execute("PRAGMA quick_check").fetchone()
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"cannot use data file {self.path}: {exc}") from exc
        except OSError as exc:
            raise StoreError(f"cannot create data folder {self.path.parent}: {exc}") from exc

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # -- tray readings ---------------------------------------------------------------------
    def add_reading(self, frame_id: str, read_at: float, body: dict, picture: bytes | None) -> int:
        with self._lock:
            cursor = self._db.execute(
                "INSERT INTO readings (frame_id, read_at, body, picture) VALUES (?, ?, ?, ?)",
                (frame_id, read_at, json.dumps(body), picture),
            )
            # Pictures are large; keep only the recent ones, the numbers forever.
            self._db.execute(
                "UPDATE readings SET picture = NULL WHERE picture IS NOT NULL AND id <= ?",
                (cursor.lastrowid - self.keep_pictures,),
            )
            return cursor.lastrowid

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

    def picture(self, reading_id: int) -> bytes | None:
        with self._lock:
            row = self._db.execute(
                "SELECT picture FROM readings WHERE id = ?", (reading_id,)
            ).fetchone()
        return row[0] if row else None

    # -- games -----------------------------------------------------------------------------
    def create_game(self, title: str = "") -> int:
        with self._lock:
            cursor = self._db.execute(
                "INSERT INTO games (created_at, title) VALUES (?, ?)", (time.time(), title)
            )
            return cursor.lastrowid

    def latest_game(self) -> int | None:
        with self._lock:
            row = self._db.execute("SELECT id FROM games ORDER BY id DESC LIMIT 1").fetchone()
        return row[0] if row else None

    def games(self) -> list[dict]:
        with self._lock:
            rows = self._db.execute(
                "SELECT g.id, g.created_at, g.title, COUNT(e.seq) FROM games g "
                "LEFT JOIN events e ON e.game_id = g.id GROUP BY g.id ORDER BY g.id DESC"
            ).fetchall()
        return [{"id": r[0], "created_at": r[1], "title": r[2], "events": r[3]} for r in rows]

    def events(self, game_id: int) -> list[dict]:
        with self._lock:
            rows = self._db.execute(
                "SELECT body FROM events WHERE game_id = ? ORDER BY seq", (game_id,)
            ).fetchall()
        return [json.loads(row[0]) for row in rows]

    def event_count(self, game_id: int) -> int:
        with self._lock:
            return self._db.execute(
                "SELECT COUNT(*) FROM events WHERE game_id = ?", (game_id,)
            ).fetchone()[0]

    def append_events(self, game_id: int, base_seq: int, events: Iterable[dict]) -> int:
        """Append after ``base_seq`` events; raise SeqConflict if the log has moved on."""
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                count = self._db.execute(
                    "SELECT COUNT(*) FROM events WHERE game_id = ?", (game_id,)
                ).fetchone()[0]
                if count != base_seq:
                    raise SeqConflict(
                        f"the game moved on ({count} events, you saw {base_seq}); reload and retry"
                    )
                seq = base_seq
                for event in events:
                    self._db.execute(
                        "INSERT INTO events (game_id, seq, created_at, body) VALUES (?, ?, ?, ?)",
                        (game_id, seq, time.time(), json.dumps(event)),
                    )
                    seq += 1
                self._db.execute("COMMIT")
                return seq
            except BaseException:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise
