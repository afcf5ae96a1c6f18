"""``python -m companion.bench_streams``: many phones on one device, measured over real sockets.

Starts the phone app under the real waitress server in a child process (so the phones' side,
measured here, does not share a GIL with the server), then, for ``--seconds``:

- ``--phones`` phones open the live stream and hold it; each must get every reading (with
  ``--pictures`` each also fetches the reading's 80 KB picture at once, as the page does: 50
  requests in a burst per reading);
- ``--reloaders`` more pages reload once a second each: the old stream's socket is closed as a
  browser does, the page and its scripts are fetched again, a new stream opened (time to its
  snapshot) and the reading history fetched;
- one phone taps "read now" (``POST /api/tray/read``) ``--readings`` times a second; the device's
  read hook publishes a reading at once, so the time from the tap to each stream's ``tray`` event
  is the delivery latency;
- an API prober asks ``GET /api/game``, ``/api/status`` and ``/api/tray`` ``--api-rate`` times a
  second, each on a fresh connection with a 5 s timeout.

Every request is on a fresh connection (``Connection: close``), which costs the server more than
a browser's keep-alive. Prints API latency (p50 / p95 / max and failures), how many holding
streams got each reading and how fast, the pictures and reloads. Exits 1 when a request failed or
a reading missed a stream.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from companion.bench import percentile

TIMEOUT = 5.0
API_PATHS = ("/api/game", "/api/status", "/api/tray")
PAGE_ASSET = re.compile(r'(?:href|src)="(/static/[^"]+)"')  # the page's scripts and styles
PICTURE = bytes(range(256)) * 320  # the size of an annotated tray picture


# -- the device side (run in the child process) ------------------------------------------------
def serve(folder: Path, api_threads: int, stream_slots: int) -> None:
    """The phone app with a 4-player game, on a free local port: prints ``port N code C``."""
    from companion.hub import Hub
    from companion.store import Store
    from companion.table import GameTable
    from companion.table_code import TableCode
    from companion.tray import TrayBoard
    from companion.web.access import AccessPolicy
    from companion.web.app import DeviceHooks, create_app
    from companion.web.server import create_server
    from companion.web.streams import StreamSlots

    store = Store(folder / "bench.sqlite")
    hub = Hub()
    board = TrayBoard(store, hub)
    table = GameTable(store, hub)
    table.new_game(["Ada", "Ben", "Cleo", "Dan"], "bench")
    taps = iter(range(1, 1 << 30))

    def read_now() -> None:  # what the camera loop does with a frame, without the camera
        counts = {"blue": 2, "red": 1, "green": 3, "yellow": 1, "black": 0, "white": 1}
        board.publish_reading(f"bench-{next(taps)}", {"counts": counts}, PICTURE)

    board.set_status("waiting", "bench", source="bench")
    streams = StreamSlots(hub, stream_slots)
    code = TableCode(folder / "table-code")
    app = create_app(board, hub, DeviceHooks(read_now=read_now), table,
                     access=AccessPolicy(code), streams=streams)
    server = create_server(app, streams, api_threads=api_threads)
    print(f"port {server.effective_port} code {code.value}", flush=True)
    server.run()


# -- the phones' side --------------------------------------------------------------------------
@dataclass
class Figures:
    api_ms: list[float] = field(default_factory=list)
    api_failures: list[str] = field(default_factory=list)
    tap_ms: list[float] = field(default_factory=list)
    taps: list[float] = field(default_factory=list)  # when reading n+1 was tapped
    received: dict[int, dict[int, float]] = field(default_factory=dict)  # reading -> phone -> t
    holder_restarts: int = 0
    picture_ms: list[float] = field(default_factory=list)
    reload_ms: list[float] = field(default_factory=list)
    reload_failures: list[str] = field(default_factory=list)


async def request(port: int, method: str, path: str, code: str = "") -> tuple[int, bytes]:
    """One request on its own connection, as a phone's fetch does after a while asleep;
    ``code``: the table code a write needs."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        head = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", "Content-Length: 0",
                "Connection: close"] + ([f"X-Table-Code: {code}"] if code else [])
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode())
        await writer.drain()
        raw = await reader.read()
    finally:
        writer.close()
    head, _, body = raw.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1]) if head.startswith(b"HTTP/") else 0
    return status, body


class Stream:
    """``GET /api/stream`` over a raw socket: the chunked body parsed into (event, data) pairs."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.reader, self.writer = reader, writer
        self._text = ""

    @classmethod
    async def open(cls, port: int) -> Stream:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(
            f"GET /api/stream HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            "Accept: text/event-stream\r\n\r\n".encode()
        )
        await writer.drain()
        head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
        if not head.startswith("HTTP/1.1 200") or "chunked" not in head.lower():
            writer.close()
            raise ConnectionError(f"stream refused: {head.splitlines()[0]}")
        return cls(reader, writer)

    async def next_event(self) -> tuple[str, str]:
        """The next event; EOFError when the device ended the stream."""
        while "\n\n" not in self._text:
            size = int((await self.reader.readuntil(b"\r\n")).strip(), 16)
            if size == 0:
                raise EOFError("the device ended the stream")
            self._text += (await self.reader.readexactly(size + 2))[:-2].decode()
        message, self._text = self._text.split("\n\n", 1)
        kind, data = "message", ""
        for line in message.splitlines():
            if line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: "):
                data += line[6:]
        return kind, data

    async def snapshot(self) -> None:
        while (await self.next_event())[0] != "snapshot":
            pass

    def close(self) -> None:
        self.writer.close()


async def get(
    port: int, path: str, figures: Figures, into: list[float] | None = None
) -> bytes | None:
    """GET ``path``: the body, its time into ``into``; None and an API failure when it fails."""
    started = time.perf_counter()
    try:
        status, body = await asyncio.wait_for(request(port, "GET", path), TIMEOUT)
    except OSError as exc:
        figures.api_failures.append(f"{path}: {exc!r}")
        return None
    if status != 200:
        figures.api_failures.append(f"{path}: answered {status}")
        return None
    if into is not None:
        into.append((time.perf_counter() - started) * 1000)
    return body


async def hold(
    phone: int, port: int, figures: Figures, stop: asyncio.Event, pictures: bool
) -> None:
    """A phone on the table: keeps its stream, notes when each reading arrives, fetches its
    picture if ``pictures``."""
    fetches: set[asyncio.Task] = set()
    while not stop.is_set():
        try:
            stream = await asyncio.wait_for(Stream.open(port), TIMEOUT)
            await asyncio.wait_for(stream.snapshot(), TIMEOUT)
        except (TimeoutError, OSError, EOFError, ConnectionError):
            figures.holder_restarts += 1
            await asyncio.sleep(0.5)
            continue
        try:
            while True:
                kind, data = await stream.next_event()
                if kind == "tray":
                    tray = json.loads(data)
                    reading = int(tray["frame_id"].removeprefix("bench-"))
                    figures.received.setdefault(reading, {})[phone] = time.perf_counter()
                    if not pictures:
                        continue
                    fetch = asyncio.create_task(get(port, tray["picture"], figures,
                                                    figures.picture_ms))
                    fetches.add(fetch)
                    fetch.add_done_callback(fetches.discard)
        except (OSError, EOFError, asyncio.IncompleteReadError):
            figures.holder_restarts += 1  # the device closed it: the browser reconnects
        finally:
            stream.close()
            await asyncio.gather(*fetches)


async def reload_page(port: int, figures: Figures, stop: asyncio.Event, offset: float) -> None:
    """A page reloaded once a second: drop the stream, fetch the page and its scripts, open a
    new stream, fetch the reading history."""
    await asyncio.sleep(offset)
    stream: Stream | None = None
    while not stop.is_set():
        started = time.perf_counter()
        if stream is not None:
            stream.close()
        try:
            page = await get(port, "/", figures)
            if page is None:
                raise ConnectionError("the page failed")
            for path in PAGE_ASSET.findall(page.decode()):
                if await get(port, path, figures) is None:
                    raise ConnectionError(f"{path} failed")
            stream = await asyncio.wait_for(Stream.open(port), TIMEOUT)
            await asyncio.wait_for(stream.snapshot(), TIMEOUT)
            if await get(port, "/api/tray/history?limit=30", figures) is None:
                raise ConnectionError("the history failed")
            figures.reload_ms.append((time.perf_counter() - started) * 1000)
        except (TimeoutError, OSError, EOFError, ConnectionError) as exc:
            figures.reload_failures.append(repr(exc))
            stream = None
        await asyncio.sleep(max(0.0, 1.0 - (time.perf_counter() - started)))
    if stream is not None:
        stream.close()


async def probe_api(port: int, rate: float, figures: Figures, stop: asyncio.Event) -> None:
    """The API as the other phones' buttons use it; requests overlap when one is slow."""

    async def one(path: str) -> None:
        started = time.perf_counter()
        try:
            status, _ = await asyncio.wait_for(request(port, "GET", path), TIMEOUT)
        except (TimeoutError, OSError) as exc:
            figures.api_failures.append(f"{path}: {exc!r}")
            return
        if status != 200:
            figures.api_failures.append(f"{path}: answered {status}")
            return
        figures.api_ms.append((time.perf_counter() - started) * 1000)

    pending = set()
    n = 0
    while not stop.is_set():
        task = asyncio.create_task(one(API_PATHS[n % len(API_PATHS)]))
        pending.add(task)
        task.add_done_callback(pending.discard)
        n += 1
        await asyncio.sleep(1 / rate)
    await asyncio.gather(*pending)


async def tap_read(
    port: int, code: str, rate: float, figures: Figures, stop: asyncio.Event
) -> None:
    """Readings, one after another: the n-th tap publishes reading ``bench-n``."""
    while not stop.is_set():
        started = time.perf_counter()
        figures.taps.append(started)
        try:
            tap = request(port, "POST", "/api/tray/read", code)
            status, _ = await asyncio.wait_for(tap, TIMEOUT)
        except (TimeoutError, OSError) as exc:
            figures.api_failures.append(f"/api/tray/read: {exc!r}")
            figures.taps.pop()  # no reading was (knowingly) published
            return
        figures.tap_ms.append((time.perf_counter() - started) * 1000)
        if status != 202:
            figures.api_failures.append(f"/api/tray/read: answered {status}")
            return
        await asyncio.sleep(max(0.0, 1 / rate - (time.perf_counter() - started)))


async def run_phones(port: int, code: str, args: argparse.Namespace) -> Figures:
    figures = Figures()
    stop = asyncio.Event()
    holders = [
        asyncio.create_task(hold(n, port, figures, stop, args.pictures))
        for n in range(args.phones)
    ]
    reloaders = [
        asyncio.create_task(reload_page(port, figures, stop, n / max(1, args.reloaders)))
        for n in range(args.reloaders)
    ]
    await asyncio.sleep(2.0)  # every phone has its stream before the first reading
    load = [
        asyncio.create_task(probe_api(port, args.api_rate, figures, stop)),
        asyncio.create_task(tap_read(port, code, args.readings, figures, stop)),
    ]
    await asyncio.sleep(args.seconds)
    stop.set()
    await asyncio.gather(*load, *reloaders)
    await asyncio.sleep(1.0)  # the last reading's way to every phone
    for task in holders:
        task.cancel()
    await asyncio.gather(*holders, return_exceptions=True)
    return figures


def spread(values: list[float]) -> str:
    if not values:
        return "none"
    return (
        f"p50 {percentile(values, 0.5):7.1f} ms   p95 {percentile(values, 0.95):7.1f} ms   "
        f"max {max(values):7.1f} ms"
    )


def report(figures: Figures, args: argparse.Namespace) -> bool:
    """Print the figures; True when the API always answered and every reading reached all."""
    sent = len(figures.taps)
    reached = [len(figures.received.get(n + 1, {})) for n in range(sent)]
    delivery = [
        (t - figures.taps[n]) * 1000
        for n in range(sent)
        for t in figures.received.get(n + 1, {}).values()
    ]
    print(
        f"{args.phones} phones holding streams, {args.reloaders} pages reloading once a second, "
        f"{args.seconds:g} s, {args.readings:g} readings/s"
        f"{' (each phone fetches the picture)' if args.pictures else ''}; "
        f"server: {args.threads} API threads, {args.streams} stream slots"
    )
    print(f"API ({len(figures.api_ms)} answered, {len(figures.api_failures)} failed)  "
          f"{spread(figures.api_ms)}")
    print(f"read-now tap ({len(figures.tap_ms)})            {spread(figures.tap_ms)}")
    print(
        f"readings: {sent} sent; streams reached per reading: "
        f"min {min(reached, default=0)}, median {percentile(reached, 0.5) if reached else 0} "
        f"of {args.phones}; readings that reached all: {reached.count(args.phones)}/{sent}"
    )
    print(f"delivery, tap to each stream           {spread(delivery)}")
    if args.pictures:
        print(f"pictures fetched: {len(figures.picture_ms)}      {spread(figures.picture_ms)}")
    print(f"reloads: {len(figures.reload_ms)} done, {len(figures.reload_failures)} failed; "
          f"page, scripts, snapshot, history {spread(figures.reload_ms)}")
    print(f"holding streams ended by the device or refused: {figures.holder_restarts}")
    for failure in (figures.api_failures + figures.reload_failures)[:5]:
        print(f"  failed: {failure}")
    return (
        not figures.api_failures
        and not figures.reload_failures
        and sent > 0
        and min(reached) == args.phones
        and (not args.pictures or len(figures.picture_ms) == sum(reached))
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m companion.bench_streams", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--phones", type=int, default=50, help="phones holding a stream")
    parser.add_argument("--reloaders", type=int, default=10, help="pages reloading each second")
    parser.add_argument("--seconds", type=float, default=20.0, help="how long to measure")
    parser.add_argument("--readings", type=float, default=2.0, help="readings per second")
    parser.add_argument("--api-rate", type=float, default=20.0, help="API requests per second")
    parser.add_argument("--pictures", action="store_true",
                        help="each holding phone fetches each reading's picture")
    parser.add_argument("--threads", type=int, default=16, help="server threads for the API")
    parser.add_argument("--streams", type=int, default=64, help="server stream slots")
    parser.add_argument("--serve", metavar="DIR", help=argparse.SUPPRESS)  # the child process
    args = parser.parse_args(argv)
    if args.serve:
        serve(Path(args.serve), args.threads, args.streams)
        return 0
    with tempfile.TemporaryDirectory() as folder:
        child = subprocess.Popen(
            [sys.executable, "-m", "companion.bench_streams", "--serve", folder,
             "--threads", str(args.threads), "--streams", str(args.streams)],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )
        try:
            line = child.stdout.readline()
            if not line.startswith("port "):
                print("the server did not start", file=sys.stderr)
                return 2
            # the phones' event loop on a thread of its own: the caller's thread may run one
            # already (a test process with Playwright's sync API)
            _, port, _, code = line.split()
            with ThreadPoolExecutor(1) as phones:
                figures = phones.submit(asyncio.run, run_phones(int(port), code, args)).result()
        finally:
            child.terminate()
            child.wait(timeout=10)
    return 0 if report(figures, args) else 1


if __name__ == "__main__":
    raise SystemExit(main())
