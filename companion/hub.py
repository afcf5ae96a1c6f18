"""Fan-out of live updates to every open phone.

Each subscriber gets its own bounded queue; a phone that stops reading (screen off, lost Wi-Fi) is
dropped when its queue fills instead of holding up the camera loop. On connect the web layer sends a
full snapshot first, then only these small updates (the pattern OctoPrint uses).
"""

from __future__ import annotations

import contextlib
import json
import queue
import threading
from dataclasses import dataclass


@dataclass(frozen=True)
class Update:
    kind: str
    data: dict
    # the data as compact JSON, encoded once by ``publish``: with 50 phones open, encoding a
    # game snapshot per phone would cost the publishing request 50 times the work
    text: str = ""


class Subscription:
    def __init__(self, hub: Hub, size: int):
        self._hub = hub
        self._queue: queue.Queue[Update | None] = queue.Queue(maxsize=size)
        self.dropped = False  # its queue overflowed: the phone stopped reading
        self.closed = False

    def offer(self, update: Update) -> None:
        try:
            self._queue.put_nowait(update)
        except queue.Full:
            self.dropped = True
            self._hub.unsubscribe(self)

    def get(self, timeout: float) -> Update | None:
        """The next update, or None when ``timeout`` passes or the subscription was closed."""
        try:
            return self._queue.get(timeout=timeout)
        except queue.Empty:
            return None

    def close(self) -> None:
        """Stop receiving; a reader waiting in ``get`` from another thread returns at once."""
        self.closed = True
        self._hub.unsubscribe(self)
        # a full queue needs no wake-up: the reader finds updates and then sees ``closed``
        with contextlib.suppress(queue.Full):
            self._queue.put_nowait(None)

    @property
    def ended(self) -> bool:
        return self.closed or self.dropped


class Hub:
    def __init__(self, queue_size: int = 64):
        self._queue_size = queue_size
        self._subscribers: set[Subscription] = set()
        self._lock = threading.Lock()

    def subscribe(self) -> Subscription:
        subscription = Subscription(self, self._queue_size)
        with self._lock:
            self._subscribers.add(subscription)
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        with self._lock:
            self._subscribers.discard(subscription)

    @property
    def subscriber_count(self) -> int:
        with self._lock:
            return len(self._subscribers)

    def publish(self, kind: str, data: dict) -> None:
        with self._lock:
            subscribers = list(self._subscribers)
        update = Update(kind, data, json.dumps(data, separators=(",", ":")))
        for subscription in subscribers:
            subscription.offer(update)
