"""``python -m companion.bench``: how fast the game answers a phone, measured, not hoped.

Plays the shipped 4-player example game through the same path a phone's command takes (the
GameTable over a real SQLite file with ``synchronous=FULL``), then pads the log to 500 events with
undo/redo pairs and times a cold load of that log. Prints medians and p95s in milliseconds and the
size of the snapshot a phone receives after each change.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from companion.amerigo import Game
from companion.hub import Hub
from companion.store import Store
from companion.table import GameTable

EXAMPLE = Path(__file__).with_name("amerigo") / "examples" / "game-4p.jsonl"


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def summary(name: str, values: list[float]) -> str:
    return (
        f"{name:<34} median {statistics.median(values):7.2f} ms   "
        f"p95 {percentile(values, 0.95):7.2f} ms   (n={len(values)})"
    )


def play(table: GameTable, events: list[dict]) -> tuple[list[float], list[float], int]:
    """Send every event after the seating as a phone command; time each and each undo/redo."""
    created, seated, *rest = events
    game = table.new_game(seated["players"], created.get("name", ""), created.get("settings"))
    command_ms, undo_ms, snapshot_bytes = [], [], 0
    for event in rest:
        command = {k: v for k, v in event.items() if k != "v"}
        started = time.perf_counter()
        game = table.command(game["id"], game["seq"], command)
        elapsed = (time.perf_counter() - started) * 1000
        (undo_ms if command["type"] == "undo" else command_ms).append(elapsed)
        snapshot_bytes = max(snapshot_bytes, len(json.dumps(game)))
    for redo in [False, True] * 10:  # a late-game undo and redo refold the whole log
        command = {"type": "undo", "redo": True} if redo else {"type": "undo"}
        started = time.perf_counter()
        game = table.command(game["id"], game["seq"], command)
        undo_ms.append((time.perf_counter() - started) * 1000)
    return command_ms, undo_ms, snapshot_bytes


def padded_log(events: list[dict], size: int) -> list[dict]:
    """The example with undo+redo pairs after its last actions, up to ``size`` events."""
    game = Game.from_events(events[:-1])
    while len(game.events) + 2 < size:
        game.undo()
        game.redo()
    game.apply(events[-1])
    return game.events


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m companion.bench", description=__doc__)
    parser.add_argument("--events", type=int, default=500, help="log size for the cold load")
    args = parser.parse_args(argv)
    events = [json.loads(line) for line in EXAMPLE.read_text().splitlines() if line.strip()]
    with tempfile.TemporaryDirectory() as folder:
        store = Store(Path(folder) / "bench.sqlite")
        command_ms, undo_ms, snapshot_bytes = play(GameTable(store, Hub()), events)
        store.close()
    log = padded_log(events, args.events)
    loads = []
    for _ in range(20):
        started = time.perf_counter()
        Game.from_events(log).state_dict()
        loads.append((time.perf_counter() - started) * 1000)
    print(f"game: {EXAMPLE.name}, {len(events)} events, played through GameTable + SQLite")
    print(summary("command (rules + fsync'd write)", command_ms))
    print(summary("undo / redo (refolds the log)", undo_ms))
    print(summary(f"cold load of a {len(log)}-event log", loads))
    print(f"largest snapshot sent to the phones  {snapshot_bytes / 1024:.1f} KiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
