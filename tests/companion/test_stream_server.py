"""Streams under the real waitress server, on real sockets: closed pages let go, the API answers."""

import contextlib
import json
import socket
import threading
import time
import urllib.error
import urllib.request

import pytest
from table_access import policy

from companion.hub import Hub
from companion.store import Store
from companion.tray import TrayBoard
from companion.web.app import DeviceHooks, create_app
from companion.web.server import create_server
from companion.web.streams import StreamSlots

SLOTS = 4
API_THREADS = 2


@pytest.fixture
def served(tmp_path):
    """(port, board, slots): the phone app on a free port, 4 stream slots, 2 API threads."""
    store = Store(tmp_path / "db.sqlite")
    hub = Hub()
    board = TrayBoard(store, hub)
    slots = StreamSlots(hub, SLOTS, keepalive_seconds=30, check_seconds=0.2)
    app = create_app(board, hub, access=policy(tmp_path), streams=slots)
    server = create_server(app, slots, api_threads=API_THREADS)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    yield server.effective_port, board, slots
    server.close()
    thread.join(timeout=5)
    store.close()


class Phone:
    """A page's EventSource, by hand: the raw response text, read as it arrives."""

    def __init__(self, port: int):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.sock.sendall(b"GET /api/stream HTTP/1.1\r\nHost: localhost\r\n\r\n")
        self.text = ""

    def wait_for(self, needle: str, timeout: float = 5.0) -> bool:
        deadline = time.monotonic() + timeout
        while needle not in self.text:
            self.sock.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                data = self.sock.recv(65536)
            except TimeoutError:
                return False
            if not data:
                return needle in self.text
            self.text += data.decode()
        return True

    def close(self) -> None:
        self.sock.close()


def until(condition, timeout: float) -> float | None:
    """Seconds until ``condition()`` held, or None when it did not within ``timeout``."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if condition():
            return time.monotonic() - started
        time.sleep(0.02)
    return None


def api_status_ms(port: int) -> float:
    started = time.monotonic()
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status", timeout=3) as answer:
        assert answer.status == 200
    return (time.monotonic() - started) * 1000


def test_a_closed_page_frees_its_stream_within_a_second(served):
    port, _, slots = served
    phone = Phone(port)
    assert phone.wait_for("event: snapshot")
    assert slots.count == 1
    phone.close()
    # before, the thread was held until two writes to the dead socket failed (~45 s)
    assert until(lambda: slots.count == 0, timeout=5) < 1.0


def test_more_phones_than_slots_leave_the_api_answering_and_the_newest_phones_live(served):
    port, board, slots = served
    phones = []
    for _ in range(SLOTS + 3):
        phones.append(Phone(port))
        assert phones[-1].wait_for("event: snapshot")
    assert slots.count == SLOTS and slots.evictions == 3
    # the three oldest were told, and their responses ended (the browser reconnects)
    for phone in phones[:3]:
        assert phone.wait_for("make room for another phone")
        assert phone.wait_for("\r\n0\r\n\r\n")
    assert max(api_status_ms(port) for _ in range(10)) < 1000
    board.publish_reading("frame-7", {"counts": {"red": 2}}, None)
    for phone in phones[3:]:
        assert phone.wait_for('"frame_id":"frame-7"', timeout=2)
    health = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health").read())
    assert health["phones"] == SLOTS and health["stream_slots"] == SLOTS
    for phone in phones:
        phone.close()


def test_pages_reloading_do_not_use_up_the_slots(served):
    """A reload closes the old stream, fetches the page and opens a new stream: the old one's
    slot is free by then, so no other phone loses its stream."""
    port, board, slots = served
    holders = [Phone(port) for _ in range(SLOTS - 1)]
    for phone in holders:
        assert phone.wait_for("event: snapshot")
    page = None
    for _ in range(10):
        if page is not None:
            page.close()
        assert api_status_ms(port) < 1000  # the page itself
        page = Phone(port)
        assert page.wait_for("event: snapshot")
        time.sleep(0.05)
    assert slots.evictions == 0
    board.publish_reading("frame-8", {"counts": {"red": 1}}, None)
    for phone in [*holders, page]:
        assert phone.wait_for('"frame_id":"frame-8"', timeout=2)
    assert api_status_ms(port) < 1000


def test_a_body_over_the_limit_is_refused_in_words_as_json(tmp_path):
    """waitress lets a body a little over the app's 64 KiB through, so the app says it."""
    store = Store(tmp_path / "db.sqlite")
    hub = Hub()
    access = policy(tmp_path)
    app = create_app(TrayBoard(store, hub), hub, DeviceHooks(set_corners=lambda _: {}),
                     access=access)
    server = create_server(app, StreamSlots(hub, 1), api_threads=1)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    request = urllib.request.Request(
        f"http://127.0.0.1:{server.effective_port}/api/calibrate/corners", method="POST",
        data=b"[" * 70_000, headers={"Content-Type": "application/json",
                                      "X-Table-Code": access.code.value})
    try:
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=5)
        assert refused.value.code == 413
        body = json.loads(refused.value.read())
        assert body["kind"] == "RequestEntityTooLarge" and "too big" in body["error"]
    finally:
        server.close()
        thread.join(timeout=5)
        store.close()


def test_a_phone_that_stops_reading_is_let_go_not_buffered_for(tmp_path):
    """A locked screen freezes the page but the phone keeps the connection open: its stream is
    ended once 64 KiB (here) wait unsent, so the server does not pile up every update for it
    (before: all of it, spilling to a temp file, up to 16 MiB per phone), and its slot is free."""
    store = Store(tmp_path / "db.sqlite")
    hub = Hub()
    slots = StreamSlots(hub, SLOTS, keepalive_seconds=30, check_seconds=0.1,
                        max_backlog=64 * 1024)
    app = create_app(TrayBoard(store, hub), hub, access=policy(tmp_path), streams=slots)
    server = create_server(app, slots, api_threads=API_THREADS)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    port = server.effective_port
    asleep = socket.socket()
    asleep.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    asleep.connect(("127.0.0.1", int(port)))
    asleep.sendall(b"GET /api/stream HTTP/1.1\r\nHost: localhost\r\n\r\n")
    awake = Phone(port)
    reading = threading.Thread(target=awake.wait_for, args=('"n":159', 20), daemon=True)
    try:
        assert awake.wait_for("event: snapshot")
        assert until(lambda: slots.count == 2, timeout=5) is not None
        reading.start()
        # ~8 MB of updates, more than the kernel's socket buffers hold, at a pace the stream
        # keeps up with (so the hub's own queue never overflows)
        for n in range(160):
            hub.publish("status", {"n": n, "filler": "x" * 50_000})
            time.sleep(0.01)
        assert until(lambda: slots.count == 1, timeout=5) is not None
        assert slots.stalls == 1 and slots.evictions == 0
        # and its connection is dropped with what waited for it: waking, the phone reads a
        # reset or the end, not megabytes of stale updates (before, waitress kept it open
        # until the phone read again, its output and the kernel's buffers with it)
        assert until(lambda: len(server.active_channels) == 1, timeout=5) is not None
        woken = 0
        asleep.settimeout(2)
        with contextlib.suppress(ConnectionResetError):
            while chunk := asleep.recv(65536):
                woken += len(chunk)
        assert woken < 64 * 1024
        reading.join(timeout=20)
        assert '"n":159' in awake.text  # the phone that reads has had every update
        assert api_status_ms(port) < 1000
    finally:
        asleep.close()
        awake.close()
        server.close()
        thread.join(timeout=5)
        store.close()
