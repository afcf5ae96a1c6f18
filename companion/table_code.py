"""The table code: the short secret that lets a phone change the game.

The device makes it once and keeps it in a small file beside the game data, so a restart (or a
pulled plug) does not lock the players out mid-game. Anyone on the network may watch; only a
phone that was given the code (typed in, or scanned in the QR code's link) may write. A new code
replaces the old one at once: every phone that had the old one is back to watching.
"""

from __future__ import annotations

import hmac
import logging
import secrets
import threading
from collections.abc import Callable
from pathlib import Path

from companion.durable import write_durably
from companion.store import StoreError

log = logging.getLogger(__name__)

# No 0/O, 1/I/L: read off a phone across the table, typed on another. 31 ** 6 is about 9e8.
ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
LENGTH = 6


class TableCodeError(StoreError):
    """The code's file cannot be written; the message names the file."""


def normalise(offered: str) -> str:
    """What a player typed, as the code is kept: upper case, no spaces or dashes."""
    return "".join(ch for ch in offered.upper() if ch not in " -\t")


def make_code(choose: Callable[[str], str] = secrets.choice) -> str:
    return "".join(choose(ALPHABET) for _ in range(LENGTH))


def well_formed(code: str) -> bool:
    return len(code) == LENGTH and all(ch in ALPHABET for ch in code)


class TableCode:
    """The current code, its file, and who to tell when it changes (the terminal, the log)."""

    def __init__(self, path: str | Path, make: Callable[[], str] = make_code):
        self.path = Path(path)
        self._make = make
        self._lock = threading.Lock()
        self._listeners: list[Callable[[str], None]] = []
        self._code = self._read() or self._write(make())

    def _read(self) -> str | None:
        try:
            # as a typed code is read: a code written in by hand in lower case (or as "abc-def")
            # is the same code, and keeping it spares every phone a rejoin
            kept = normalise(self.path.read_text(encoding="ascii").strip())
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as exc:
            log.warning("cannot read the table code from %s (%s); making a new one", self.path, exc)
            return None
        if not well_formed(kept):
            log.warning("the table code in %s is malformed; making a new one", self.path)
            return None
        return kept

    def _write(self, code: str) -> str:
        """Old file or new one after a power cut, never half of one; readable by its owner only."""
        try:
            write_durably(self.path, (code + "\n").encode("ascii"), mode=0o600)
        except OSError as exc:
            raise TableCodeError(f"cannot keep the table code in {self.path}: {exc}") from exc
        return code

    @property
    def value(self) -> str:
        with self._lock:
            return self._code

    def matches(self, offered: str | None) -> bool:
        """Whether a phone's code is the current one (in constant time; case and spaces ignored)."""
        if not offered:
            return False
        wanted = self.value.encode("ascii")
        return hmac.compare_digest(normalise(offered).encode("utf-8"), wanted)

    def renew(self) -> str:
        """A fresh code, on disk before it is used; every phone with the old one must rejoin."""
        with self._lock:
            code = self._make()
            while code == self._code:
                code = self._make()
            self._code = self._write(code)
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(code)
            except Exception:  # telling the terminal is a courtesy; the new code stands
                log.exception("could not announce the new table code")
        return code

    def on_change(self, listener: Callable[[str], None]) -> None:
        """Call ``listener(new_code)`` after every renewal."""
        self._listeners.append(listener)
