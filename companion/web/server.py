"""The phone app under waitress, sized so live streams never take the API's threads.

One place builds the server (``cubetower serve``, the browser tests and the stream benchmark all
use it), because its settings and the app's stream slots only work together; see
``companion.web.streams`` for the design.
"""

from __future__ import annotations

import contextlib
import socket
import struct
from collections.abc import Callable

import waitress
from flask import Flask

from companion.web.inputs import MAX_BODY_BYTES
from companion.web.streams import StreamSlots

# Phones keep a couple of idle keep-alive connections beside their stream; waitress's default of
# 100 connections would stop accepting new ones with 50 phones at the table (and its default
# select() loop cannot watch descriptors above 1023, hence poll()).
CONNECTIONS_PER_THREAD = 4


def _connection(environ: dict):
    """waitress's connection (its channel) serving this request, or None under another server.
    waitress names no such thing in the environ; its ``client_disconnected`` is a method of the
    connection (``tests/companion/test_stream_server.py`` holds this to the real waitress)."""
    channel = getattr(environ.get("waitress.client_disconnected"), "__self__", None)
    return channel if isinstance(getattr(channel, "total_outbufs_len", None), int) else None


def unsent_bytes(environ: dict) -> Callable[[], int]:
    """How many bytes of this request's response waitress holds unsent, as a function (0 under
    another server)."""
    channel = _connection(environ)
    if channel is None:
        return lambda: 0
    return lambda: channel.total_outbufs_len


def hang_up(environ: dict) -> Callable[[], None]:
    """A function that drops this request's connection at once with whatever waits unsent for
    it (a reset), for a phone that stopped reading: waitress itself closes a connection only
    once it can write to it again, which a phone that reads nothing never lets it, so the
    connection, its buffers and the kernel's (megabytes) stayed until the phone woke."""
    channel = _connection(environ)
    if channel is None:
        return lambda: None

    def drop() -> None:
        # under waitress's lock: once it has closed the connection (``connected`` false) its
        # socket's number may be another phone's
        with channel.outbuf_lock:
            if not channel.connected:
                return
            with contextlib.suppress(OSError):
                channel.socket.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                          struct.pack("ii", 1, 0))  # close: reset, discard
                # both ways shut: waitress's poll() sees the hang-up and closes the connection
                channel.socket.shutdown(socket.SHUT_RDWR)
        channel.server.pull_trigger()

    return drop


def create_server(
    app: Flask,
    streams: StreamSlots,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    api_threads: int = 24,
    channel_timeout: int = 30,
):
    """A waitress server (not yet running) with ``api_threads`` for the API and one thread per
    stream slot; ``streams`` must be the slots the app was created with."""
    if api_threads < 1:
        raise ValueError("the API needs at least one thread")
    threads = api_threads + streams.limit
    return waitress.create_server(
        app,
        host=host,
        port=port,
        threads=threads,
        # read each connection while its request runs, so a closed page is seen at once
        # (waitress.client_disconnected) instead of when a write to it fails
        channel_request_lookahead=1,
        channel_timeout=channel_timeout,  # idle keep-alive connections let go after this
        connection_limit=CONNECTIONS_PER_THREAD * threads,
        asyncore_use_poll=True,
        # a far larger body is refused (413, waitress's plain text) before it is buffered;
        # one just over the app's own limit reaches the app, which says so as JSON
        max_request_body_size=4 * MAX_BODY_BYTES,
    )
