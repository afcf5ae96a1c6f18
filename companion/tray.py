"""The tray as last read, with the phase's basic offer, kept in the store and pushed to phones.

The device (firmware) hands in plain data: the reading as a dict (counts, cubes, warnings and the
same doubts as data) and the annotated picture as JPEG bytes. Nothing here knows how the picture
was taken or counted. A reading's warnings are kept in English with their messages beside them
(``warnings_msg``), which the web layer says in each phone's language.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from companion.amerigo.offer import COLOURS, tray_offer
from companion.doubts import warning_messages
from companion.hub import Hub
from companion.store import Store
from companion.text import Msg


def empty_tray_body() -> dict:
    """A tray with nothing read in it: what a phone shows before the first reading."""
    return {
        "frame_id": None,
        "read_at": None,
        "counts": dict.fromkeys(COLOURS, 0),
        "total": 0,
        "actions": [],
        "ap": 0,
        "gold": 0,
        "cubes": [],
        "uncertain": False,
        "warnings": [],
        "picture": None,
    }


class TrayBoard:
    def __init__(self, store: Store, hub: Hub, wall_clock: Callable[[], float] = time.time):
        self._store = store
        self._hub = hub
        self._wall_clock = wall_clock
        self._lock = threading.Lock()
        self._status: dict = {"state": "starting", "message": "", "source": ""}
        latest = store.latest_reading()
        self._latest: dict | None = self._with_id(*latest) if latest else None

    @staticmethod
    def _with_id(reading_id: int, body: dict) -> dict:
        return {**body, "id": reading_id, "picture": f"/api/tray/picture/{reading_id}.jpg"}

    def publish_reading(self, frame_id: str, reading: dict, picture: bytes | None) -> dict:
        counts = {colour: int(reading.get("counts", {}).get(colour, 0)) for colour in COLOURS}
        offer = tray_offer(counts)
        body = {
            "frame_id": frame_id,
            "read_at": self._wall_clock(),
            "counts": counts,
            "total": offer.total,
            "actions": list(offer.actions),
            "ap": offer.ap,
            "gold": offer.gold,
            "cubes": reading.get("cubes", []),
            "uncertain": bool(reading.get("uncertain", False)),
            "warnings": list(reading.get("warnings", [])),
            "ms": reading.get("ms"),
        }
        if reading.get("tray_unchanged"):
            body["same_tray_as"] = self._first_of_this_tray()
        said = warning_messages(reading)
        if said is not None:  # the web says "warnings" from these, in each phone's language
            body["doubts"] = list(reading["doubts"])
            body["warnings_msg"] = said
        return self._record(frame_id, body, picture)

    def _first_of_this_tray(self) -> int | None:
        """The first reading of the tray the camera says is unchanged: the newest reading that
        was not a failed picture, or the one it in turn said it was the same as. A restart or
        "read now" reading the tray again must not pass for a new drop (companion.drops)."""
        for reading_id, body in self._store.recent_readings(limit=20):
            if not body.get("error"):
                return body.get("same_tray_as") or reading_id
        return None

    def publish_error(self, frame_id: str, message: str) -> dict:
        """A frame that could not be read still replaces the old reading: stale counts mislead."""
        body = {
            **empty_tray_body(),
            "frame_id": frame_id,
            "read_at": self._wall_clock(),
            "uncertain": True,
            "error": message,
        }
        return self._record(frame_id, body, None)

    def _record(self, frame_id: str, body: dict, picture: bytes | None) -> dict:
        reading_id = self._store.add_reading(frame_id, body["read_at"], body, picture)
        latest = self._with_id(reading_id, body)
        if picture is None:
            latest["picture"] = None
        with self._lock:
            self._latest = latest
        self._hub.publish("tray", latest)
        return latest

    def set_status(self, state: str, message: str | Msg = "", source: str | None = None) -> None:
        """What the device is doing (waiting, settling, error...), shown on every phone.

        A ``Msg`` is said in each phone's language (``message_msg``, beside its English words in
        ``message``); the camera's own words (a library's error text) stay as they are."""
        with self._lock:
            status = {k: v for k, v in self._status.items() if k != "message_msg"}
            status.update(state=state, message=str(message))
            if isinstance(message, Msg):
                status["message_msg"] = message.to_json()
            if source is not None:
                status["source"] = source
            changed = status != self._status
            self._status = status
        if changed:
            self._hub.publish("status", status)

    def status(self) -> dict:
        with self._lock:
            return dict(self._status)

    def latest(self) -> dict | None:
        with self._lock:
            return dict(self._latest) if self._latest else None

    def picture(self, reading_id: int) -> bytes | None:
        return self._store.picture(reading_id)

    def history(self, limit: int = 30) -> list[dict]:
        return [self._with_id(i, body) for i, body in self._store.recent_readings(limit)]
