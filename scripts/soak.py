"""Play a long game night against a real ``cubetower serve`` and print what the server holds.

Why: memory that grows a little with every command or every phone that comes and goes is
invisible in a test and fills a Pi's 1-4 GB over an evening. This starts the real server (the demo
camera replay, ``MALLOC_ARENA_MAX=2`` as the Pi's service and ``./run.sh`` set it unless the
environment says otherwise) on a free port of 127.0.0.1 with a throw-away data folder, and plays
against it: ``--phones`` phones hold the live stream, drop it without a word now and then (half of
them with a reset, as a locked screen does) and come back, and fetch the tray's picture after half
of the new readings; one player plays the example games through with a command about every
second (undo and redo now and then, every third game left unfinished, every fourth an older game
resumed); a page asks for the game, health, tray, status and games list every second.

    python scripts/soak.py --minutes 40
    python scripts/soak.py --minutes 1 --every 10 --phones 3 --keep-readings 200

Prints one line of measured figures every ``--every`` seconds (the server's resident memory,
threads and open files; the database, its WAL and the server's log; the newest reading's number;
latencies of the page's requests and the commands since the last line; what the clients did),
then a summary. It measures, it does not judge: the exit status is 1 only when the server ended
during the run (2 when it did not start), with the end of its log.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import queue
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "companion" / "amerigo" / "examples"
START_SECONDS = 180  # the server loads the cube model before it says it runs


# -- the server --------------------------------------------------------------------------------

class Server:
    """``cubetower serve`` in a child process: its port, table code and /proc figures."""

    def __init__(self, data: Path, keep_readings: int | None):
        self.data = data
        self.log = data / "server.log"
        settings = data / "cubetower.toml"
        lines = [f"keep_readings = {keep_readings}"] if keep_readings is not None else []
        lines += ["[server]", 'mdns_name = ""']  # nothing published on the LAN
        settings.write_text("\n".join(lines) + "\n")
        env = dict(os.environ)
        env.setdefault("MALLOC_ARENA_MAX", "2")
        self.arenas = env["MALLOC_ARENA_MAX"]
        with self.log.open("w") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "firmware.cli", "serve", "--source", "demo",
                 "--host", "127.0.0.1", "--port", "0", "--data-dir", str(data / "data"),
                 "--config", str(settings)],
                cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=log, text=True,
            )
        self._lines: queue.Queue = queue.Queue()
        # read all it prints, always: a full pipe would stop the server's terminal thread
        threading.Thread(target=self._pump, name="server-output", daemon=True).start()
        self.port, self.code = 0, ""

    def _pump(self) -> None:
        for line in self.process.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def wait_until_running(self) -> None:
        """The port and table code it prints once it runs; StartFailed if it does not."""
        deadline = time.monotonic() + START_SECONDS
        url = code = None
        while code is None:
            try:
                line = self._lines.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                raise StartFailed(f"not running after {START_SECONDS} s") from None
            if line is None:
                raise StartFailed(f"it ended (exit status {self.process.wait()})")
            if "cubetower is running" in line:
                url = line.split("Open ", 1)[1].split()[0]
            elif line.startswith("join code: ") and url:
                code = line.split(": ", 1)[1].strip()
        self.port, self.code = int(url.rstrip("/").rsplit(":", 1)[1]), code

    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        return self.process.poll() is None

    def proc(self) -> dict[str, int]:
        """Resident memory (KiB), threads, open files; {} once the process has ended."""
        try:
            status = Path(f"/proc/{self.pid}/status").read_text()
            fds = len(os.listdir(f"/proc/{self.pid}/fd"))
        except OSError:
            return {}
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        if "VmRSS" not in fields:  # ended, not yet waited for (a zombie has no memory)
            return {}
        return {"rss_kib": int(fields["VmRSS"].split()[0]), "threads": int(fields["Threads"]),
                "fds": fds}

    def sizes(self) -> dict[str, int]:
        def size(path: Path) -> int:
            try:
                return path.stat().st_size
            except OSError:
                return 0
        db = self.data / "data" / "cubetower.sqlite"
        return {"db": size(db), "wal": size(db.with_name(db.name + "-wal")),
                "log": size(self.log)}

    def stop(self) -> int:
        """SIGTERM, as systemd stops it; its exit status."""
        if self.alive():
            self.process.send_signal(signal.SIGTERM)
            try:
                return self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
        return self.process.wait()

    def log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"


class StartFailed(RuntimeError):
    pass


# -- the clients -------------------------------------------------------------------------------

@dataclass
class Tally:
    """What the clients did and how long the answers took, shared by their threads."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    counts: dict[str, int] = field(default_factory=dict)
    since: dict[str, list[float]] = field(default_factory=dict)  # ms since the last sample
    total: dict[str, list[float]] = field(default_factory=dict)  # ms over the whole run

    def add(self, name: str, n: int = 1) -> None:
        with self.lock:
            self.counts[name] = self.counts.get(name, 0) + n

    def took(self, name: str, ms: float) -> None:
        with self.lock:
            self.since.setdefault(name, []).append(ms)
            self.total.setdefault(name, []).append(ms)

    def take(self) -> tuple[dict[str, int], dict[str, list[float]]]:
        with self.lock:
            since, self.since = self.since, {}
            return dict(self.counts), since


class Clients:
    def __init__(self, port: int, code: str, stop_at: float, phones: int, seed: int):
        self.port, self.code, self.stop_at = port, code, stop_at
        self.phones, self.seed = phones, seed
        self.tally = Tally()
        self._stopped = threading.Event()
        self.games = [_example(EXAMPLES / "game-2p.jsonl"), _example(EXAMPLES / "game-4p.jsonl")]

    def running(self) -> bool:
        return not self._stopped.is_set() and time.monotonic() < self.stop_at

    def stop(self) -> None:
        self._stopped.set()

    def start(self) -> list[threading.Thread]:
        threads = [threading.Thread(target=self.phone, args=(n,), name=f"phone-{n}", daemon=True)
                   for n in range(self.phones)]
        threads += [threading.Thread(target=self.player, name="player", daemon=True),
                    threading.Thread(target=self.page, name="page", daemon=True)]
        for thread in threads:
            thread.start()
        return threads

    def request(self, method: str, path: str, body: dict | None = None,
                timed: str = "") -> tuple[int, object]:
        """(status, JSON or None); a failed connection counts as an error, status 0."""
        headers = {"X-Table-Code": self.code}
        data = None
        if body is not None:
            data = json.dumps(body)
            headers["Content-Type"] = "application/json"
        started = time.perf_counter()
        try:
            connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=15)
            connection.request(method, path, body=data, headers=headers)
            response = connection.getresponse()
            raw = response.read()
            connection.close()
        except OSError:
            self.tally.add("errors")
            return 0, None
        if timed:
            self.tally.took(timed, (time.perf_counter() - started) * 1000)
        if response.status >= 500:
            self.tally.add("answers_5xx")
        kind = response.getheader("Content-Type", "")
        try:
            return response.status, json.loads(raw) if kind.startswith("application/json") else raw
        except ValueError:
            return response.status, None

    def phone(self, n: int) -> None:
        """Hold the live stream 15-120 s, drop it (a reset half the time), back 1-10 s later;
        after half of the tray updates, fetch the tray and its picture as the page does."""
        rnd = random.Random(self.seed * 1000 + n)
        while self.running():
            try:
                stream = socket.create_connection(("127.0.0.1", self.port), timeout=2)
                stream.sendall(b"GET /api/stream HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                               b"Accept: text/event-stream\r\n\r\n")
                self.tally.add("stream_connects")
                self._read_stream(stream, time.monotonic() + rnd.uniform(15, 120), rnd)
                if rnd.random() < 0.5:  # linger 0: close sends a reset, as a locked phone
                    stream.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                      (1).to_bytes(4, sys.byteorder) + bytes(4))
                stream.close()
            except OSError:
                self.tally.add("stream_errors")
            self._sleep(rnd.uniform(1, 10))

    def _read_stream(self, stream: socket.socket, until: float, rnd: random.Random) -> None:
        pending = b""
        while self.running() and time.monotonic() < until:
            try:
                chunk = stream.recv(65536)
            except TimeoutError:
                continue
            if not chunk:
                return
            pending += chunk
            *events, pending = pending.split(b"\n\n")
            for event in events:
                if b"event:" not in event:
                    continue
                self.tally.add("stream_events")
                if b"event: tray" in event and rnd.random() < 0.5:
                    status, tray = self.request("GET", "/api/tray")
                    picture = isinstance(tray, dict) and tray.get("picture")
                    if status == 200 and picture:
                        self.request("GET", picture, timed="picture")
                        self.tally.add("pictures")

    def player(self) -> None:
        rnd = random.Random(self.seed)
        game_id, k = None, 0
        while self.running():
            players, commands = self.games[k % 2]
            k += 1
            status, game = self.request(
                "POST", "/api/game", {"players": players, "name": f"soak {k}",
                                      "replaces": game_id})
            if status != 201:
                self.tally.add("refused")
                self._sleep(5)
                status, game = self.request("GET", "/api/game")
                game_id = game.get("id") if isinstance(game, dict) else None
                continue
            self.tally.add("games")
            game_id, seq = game["id"], game["seq"]
            until = len(commands) if k % 3 else rnd.randint(10, len(commands))
            seq = self._play(game_id, seq, commands[:until], rnd)
            if k % 4 == 0 and seq is not None:
                game_id = self._resume_one(game_id, rnd) or game_id
            self._sleep(2)

    def _play(self, game_id: int, seq: int, commands: list[dict], rnd) -> int | None:
        extra = 0  # history lines an undo and redo added: corrections name a line by number
        for command in commands:
            if not self.running():
                return None
            if "target" in command:
                command = dict(command, target=command["target"] + extra)
            answer = self.command(game_id, seq, command)
            if answer is None:
                return None
            seq = answer["seq"]
            if rnd.random() < 0.08:
                for again in ({"type": "undo"}, {"type": "undo", "redo": True}):
                    answer = self.command(game_id, seq, again)
                    if answer:
                        seq, extra = answer["seq"], extra + 1
            self._sleep(rnd.uniform(0.3, 1.5))
        return seq

    def _resume_one(self, game_id: int, rnd) -> int | None:
        status, games = self.request("GET", "/api/games")
        kept = games.get("games") if isinstance(games, dict) else None
        if status != 200 or not kept:
            return None
        older = rnd.choice(kept[1:] or kept)
        status, game = self.request("POST", f"/api/game/{older['id']}/resume",
                                    {"replaces": game_id})
        if status != 200:
            self.tally.add("refused")
            return None
        self.tally.add("resumes")
        seq = game["seq"]
        for again in ({"type": "undo"}, {"type": "undo", "redo": True}):
            answer = self.command(game["id"], seq, again)
            if answer:
                seq = answer["seq"]
            self._sleep(1)
        return game["id"]

    def command(self, game_id: int, seq: int, command: dict) -> dict | None:
        path = f"/api/game/{game_id}/command"
        status, answer = self.request("POST", path, {"base": seq, "command": command},
                                      timed="command")
        self.tally.add("commands")
        if status == 409 and isinstance(answer, dict) and answer.get("confirm"):
            status, answer = self.request(
                "POST", path, {"base": seq, "command": command, "confirmed": True},
                timed="command")
        if status != 200 or not isinstance(answer, dict):
            self.tally.add("refused")
            return None
        return answer

    def page(self) -> None:
        while self.running():
            self.request("GET", "/api/game", timed="game")
            self.request("GET", "/api/health", timed="health")
            for path in ("/api/tray", "/api/status", "/api/games"):
                self.request("GET", path)
            self._sleep(1.0)

    def _sleep(self, seconds: float) -> None:
        self._stopped.wait(max(0.0, min(seconds, self.stop_at - time.monotonic())))


def _example(path: Path) -> tuple[list[str], list[dict]]:
    """(players, the commands after the seating) of an example game log."""
    players, commands = [], []
    for line in path.read_text().splitlines():
        event = json.loads(line)
        event.pop("v", None)
        if event["type"] == "players_seated":
            players = event["players"]
        elif event["type"] != "game_created":
            commands.append(event)
    return players, commands


# -- the figures -------------------------------------------------------------------------------

def percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def mib(n_bytes: float) -> str:
    return f"{n_bytes / 2**20:.1f}"


def latest_reading(clients: Clients) -> int | None:
    status, tray = clients.request("GET", "/api/tray")
    return tray.get("id") if status == 200 and isinstance(tray, dict) else None


def sample(t: float, server: Server, clients: Clients) -> dict:
    proc = server.proc()
    sizes = server.sizes()
    reading = latest_reading(clients) if proc else None
    counts, since = clients.tally.take()
    row = {"t": t, **proc, **sizes, "reading": reading}
    lat = " ".join(
        f"{name} {percentile(since[name], 0.5):.0f}/{percentile(since[name], 0.95):.0f}"
        if since.get(name) else f"{name} -" for name in ("game", "health", "command"))
    said = " ".join(f"{k}={counts.get(k, 0)}" for k in (
        "commands", "refused", "games", "resumes", "stream_connects", "stream_events",
        "pictures", "errors", "answers_5xx"))
    if proc:
        print(f"t={t / 60:5.1f}min rss={mib(proc['rss_kib'] * 1024)}MiB "
              f"threads={proc['threads']} fds={proc['fds']} db={mib(sizes['db'])}MiB "
              f"wal={mib(sizes['wal'])}MiB log={sizes['log'] // 1024}KiB reading=#{reading or '-'} "
              f"ms p50/p95: {lat} | {said}", flush=True)
    else:
        print(f"t={t / 60:5.1f}min the server is gone | {said}", flush=True)
    return row


def growth_per_hour(rows: list[dict]) -> float | None:
    """Least-squares slope of RSS (MiB an hour) over the samples of the run's second half."""
    half = rows[-1]["t"] / 2
    points = [(r["t"] / 3600, r["rss_kib"] / 1024) for r in rows if r["t"] >= half]
    if len(points) < 2:
        return None
    return statistics.linear_regression(*zip(*points, strict=True)).slope


def summary(rows: list[dict], clients: Clients, minutes: float, server: Server) -> None:
    rows = [r for r in rows if "rss_kib" in r]
    print(f"== summary: {minutes:.1f} minutes, {clients.phones} phones, "
          f"MALLOC_ARENA_MAX={server.arenas}, {len(rows)} samples")
    if rows:
        rss = [r["rss_kib"] * 1024 for r in rows]
        peak = max(range(len(rss)), key=rss.__getitem__)
        growth = growth_per_hour(rows)
        print(f"rss MiB: first {mib(rss[0])}, peak {mib(rss[peak])} at "
              f"{rows[peak]['t'] / 60:.1f} min, last {mib(rss[-1])}; growth over the second half "
              + (f"{growth:+.1f} MiB/hour" if growth is not None else "(too few samples)"))
        print(f"threads first {rows[0]['threads']}, last {rows[-1]['threads']}; open files "
              f"first {rows[0]['fds']}, max {max(r['fds'] for r in rows)}, "
              f"last {rows[-1]['fds']}")
        print(f"database {mib(rows[-1]['db'])} MiB (max {mib(max(r['db'] for r in rows))}), "
              f"WAL max {mib(max(r['wal'] for r in rows))} MiB, server log "
              f"{rows[-1]['log'] // 1024} KiB, newest reading #{rows[-1]['reading']}")
    total = clients.tally.total
    print("latency ms p50/p95 (n): " + ", ".join(
        f"{name} {percentile(total.get(name, []), 0.5):.1f}/"
        f"{percentile(total.get(name, []), 0.95):.1f} ({len(total.get(name, []))})"
        for name in ("game", "health", "command", "picture")))
    print("clients: " + " ".join(f"{k}={v}" for k, v in sorted(clients.tally.counts.items())))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=30.0, help="how long to play (30)")
    parser.add_argument("--every", type=float, default=30.0,
                        help="seconds between two lines of figures (30)")
    parser.add_argument("--phones", type=int, default=6, help="phones with the stream (6)")
    parser.add_argument("--keep-readings", type=int,
                        help="the server's keep_readings (default: the device's)")
    parser.add_argument("--seed", type=int, default=1, help="random seed (1)")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="cubetower-soak-") as folder:
        server = Server(Path(folder), args.keep_readings)
        try:
            server.wait_until_running()
        except StartFailed as exc:
            server.stop()
            print(f"the server did not start: {exc}; its log ends:\n{server.log_tail()}",
                  file=sys.stderr)
            return 2
        print(f"== cubetower serve (pid {server.pid}) on port {server.port}, "
              f"MALLOC_ARENA_MAX={server.arenas}, data in {folder}; {args.minutes:g} minutes, "
              f"{args.phones} phones, a line every {args.every:g} s", flush=True)
        started = time.monotonic()
        clients = Clients(server.port, server.code, started + args.minutes * 60, args.phones,
                          args.seed)
        rows = [sample(0.0, server, clients)]
        threads = clients.start()
        died = False
        try:
            while clients.running() and not died:
                time.sleep(max(0.0, min(args.every, clients.stop_at - time.monotonic())))
                rows.append(sample(time.monotonic() - started, server, clients))
                died = not server.alive()
        except KeyboardInterrupt:
            print("== stopped early (Ctrl-C)")
        clients.stop()  # early, when the server died or Ctrl-C
        for thread in threads:
            thread.join(timeout=20)
        died = died or not server.alive()
        if not died:
            rows.append(sample(time.monotonic() - started, server, clients))
        summary(rows, clients, (time.monotonic() - started) / 60, server)
        if died:
            print(f"== the server ended during the run (exit status {server.process.wait()}); "
                  f"its log ends:\n{server.log_tail()}")
            return 1
        status = server.stop()
        print(f"== the server stopped on SIGTERM with exit status {status}")
        return 0


if __name__ == "__main__":
    sys.exit(main())
