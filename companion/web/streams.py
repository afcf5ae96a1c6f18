"""Live streams (Server-Sent Events) that cannot starve the API and let a closed page go at once.

Why this design: waitress runs each request on one thread of a fixed pool, and an event stream
keeps its request, so its thread, for as long as the page is open. Before, 24 threads served the
API and the streams together: 24 open pages stopped the API, and a closed page kept its thread
until a write to it failed (two keep-alives, ~45 s). Now:

- Streams have their own share of threads. At most ``limit`` streams are open at once, and the
  server runs ``api_threads + limit`` threads (``companion.web.server``), so ``api_threads``
  always remain for the buttons, however many phones watch.
- A closed or reloaded page frees its thread and slot within ``check_seconds``: the server keeps
  reading each connection while its request runs (waitress's ``channel_request_lookahead``), so
  it sees the close at once, and each stream asks it (``waitress.client_disconnected``) whenever
  ``check_seconds`` pass without an update.
- When every slot is taken, a new phone takes the slot of a stream whose phone has gone, else
  the oldest stream's: a phone that vanished without closing (Wi-Fi lost, battery) sends nothing
  that would tell, and the oldest is the likeliest to be one. A live phone closed this way
  reconnects by itself (EventSource) and gets a fresh snapshot, so nothing is lost.
- A keep-alive comment every ``keepalive_seconds`` lets a proxy or the phone see a live line, and
  makes the write to a phone that reset its connection fail, which ends that stream too.
- A phone that keeps its connection but stops reading (a locked screen freezes the page, the
  phone's TCP stack still holds the connection open) is ended once ``max_backlog`` bytes wait
  unsent in the server for it. Before, waitress kept everything for it, spilling to a temp file
  after 1 MiB, up to 16 MiB per phone (a soak test with a command a second: 14 MiB after 3.5
  minutes), which the phone then had to download, stale, before anything new; now the stream
  ends and the connection is dropped with what waited for it (waitress would only close it
  once the phone read again), and the page reconnects with a fresh snapshot when it wakes.
  (The hub's own queue cannot see this: the stream drains it into the server's buffer as fast
  as it fills.)

Rejected: an asynchronous stream server beside waitress (a second port, or a second server in
front for one URL, and the access checks and headers of the Flask app done twice); long polling
(a waiting poll holds a thread just the same, plus a new request per update per phone).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator

from companion.hub import Hub, Subscription, Update

log = logging.getLogger(__name__)

RETRY_MS = 2000  # how long a browser waits before reconnecting a stream that ended
# unsent bytes at which a phone counts as no longer reading: several of the largest snapshots
# (37 KiB), below the 1 MiB at which waitress spills a connection's output to a temp file
MAX_BACKLOG = 512 * 1024


def sse_message(kind: str, text: str) -> str:
    """One event; ``text`` is JSON already (one line, so one ``data:`` field)."""
    return f"event: {kind}\ndata: {text}\n\n"


class Slot:
    """One phone's open stream: its subscription, how to ask whether the phone is gone, and how
    many bytes wait unsent for it (``backlog``)."""

    def __init__(self, subscription: Subscription, gone: Callable[[], bool], opened: float,
                 backlog: Callable[[], int] = lambda: 0, max_backlog: int = MAX_BACKLOG,
                 hang_up: Callable[[], None] = lambda: None):
        self.subscription = subscription
        self.gone = gone
        self.opened = opened
        self.backlog = backlog
        self.hang_up = hang_up
        self.max_backlog = max_backlog
        self.evicted = False

    @property
    def stalled(self) -> bool:
        """The phone stopped reading: more than ``max_backlog`` bytes wait unsent for it."""
        return self.backlog() > self.max_backlog

    @property
    def ended(self) -> bool:
        return self.subscription.ended or self.gone() or self.stalled


class StreamSlots:
    """A bounded set of open streams over one hub (see the module's docstring for why)."""

    def __init__(
        self,
        hub: Hub,
        limit: int = 64,
        *,
        keepalive_seconds: float = 5.0,
        check_seconds: float = 0.5,
        max_backlog: int = MAX_BACKLOG,
        clock: Callable[[], float] = time.monotonic,
    ):
        if limit < 1:
            raise ValueError("there must be at least one stream slot")
        self.hub = hub
        self.limit = limit
        self.keepalive_seconds = keepalive_seconds
        self.check_seconds = check_seconds
        self.max_backlog = max_backlog
        self.clock = clock
        self._open: list[Slot] = []  # oldest first
        self._lock = threading.Lock()
        self.evictions = 0  # live-looking streams closed to make room, since start
        self.stalls = 0  # streams ended because their phone stopped reading, since start

    @property
    def count(self) -> int:
        with self._lock:
            return len(self._open)

    def open(self, gone: Callable[[], bool] = lambda: False,
             backlog: Callable[[], int] = lambda: 0,
             hang_up: Callable[[], None] = lambda: None) -> Slot:
        """A slot for a new stream, subscribed to the hub; makes room when all are taken.
        ``gone()`` says whether the phone has closed the connection, ``backlog()`` how many
        bytes of the stream wait unsent, ``hang_up()`` drops the connection with them (see
        the module's docstring)."""
        with self._lock:
            for slot in [s for s in self._open if s.gone() or s.stalled]:
                self._close(slot)
            while len(self._open) >= self.limit:
                oldest = self._open[0]
                oldest.evicted = True
                self.evictions += 1
                self._close(oldest)
            slot = Slot(self.hub.subscribe(), gone, self.clock(), backlog, self.max_backlog,
                        hang_up)
            self._open.append(slot)
            return slot

    def release(self, slot: Slot) -> None:
        """Give the slot back (idempotent); its thread, if waiting, wakes and ends the stream."""
        with self._lock:
            if slot in self._open:
                self._close(slot)

    def _close(self, slot: Slot) -> None:
        self._open.remove(slot)
        slot.subscription.close()

    def let_go(self, slot: Slot) -> None:
        """The phone stopped reading its stream: counted, logged, and its connection dropped
        with what waited for it (the module's docstring says why)."""
        with self._lock:
            self.stalls += 1
        log.info("a phone stopped reading its stream (%d bytes unsent): let go; its page "
                 "reconnects when it wakes", slot.backlog())
        slot.hang_up()

    def stream(self, slot: Slot, first: str,
               text_of: Callable[[Update], str] | None = None) -> EventStream:
        """The response body: ``first`` (the snapshot event), then every update, until the
        phone goes, the slot is needed for another phone, or the phone stops reading.

        ``text_of`` gives an update's JSON as this phone reads it (its language); by default
        the hub's one encoding."""
        return EventStream(self, slot, first, text_of)


class EventStream:
    """The iterable a WSGI server sends; ``close`` frees the slot even if it never started.

    (A plain generator's ``finally`` does not run when it is closed before its first item,
    which is what a server does when the phone left before the headers went out.)"""

    def __init__(self, slots: StreamSlots, slot: Slot, first: str,
                 text_of: Callable[[Update], str] | None = None):
        self._slots = slots
        self._slot = slot
        self._text_of = text_of or (lambda update: update.text)
        self._events = self._generate(first)

    def __iter__(self) -> Iterator[str]:
        return self

    def __next__(self) -> str:
        return next(self._events)

    def close(self) -> None:
        self._events.close()
        self._slots.release(self._slot)

    def _generate(self, first: str) -> Iterator[str]:
        slots, slot = self._slots, self._slot
        try:
            yield f"retry: {RETRY_MS}\n\n"
            yield first
            quiet_since = slots.clock()
            while not slot.ended:
                update = slot.subscription.get(timeout=slots.check_seconds)
                if update is not None:
                    yield sse_message(update.kind, self._text_of(update))
                    quiet_since = slots.clock()
                elif slots.clock() - quiet_since >= slots.keepalive_seconds:
                    yield ": keep-alive\n\n"
                    quiet_since = slots.clock()
            if slot.evicted:
                yield ": closed to make room for another phone; reconnect\n\n"
            elif slot.stalled:
                slots.let_go(slot)
        finally:
            slots.release(slot)
