"""A pulled power cord mid-game: kill the writer hard, and the game must still load whole."""

import os
import signal
import subprocess
import sys
import textwrap
import time

from child_output import ChildOutput

from companion.hub import Hub
from companion.store import Store
from companion.table import GameTable

WRITER = textwrap.dedent(
    """
    import sys
    from companion.hub import Hub
    from companion.store import Store
    from companion.table import GameTable

    table = GameTable(Store(sys.argv[1]), Hub())
    game = table.new_game(["Eva", "Finn"])
    setup = {"blue": 4, "black": 1, "red": 3, "brown": 3, "green": 4, "yellow": 2, "white": 3}
    game = table.command(game["id"], game["seq"], {"type": "setup_drop_read", "tray": setup})
    print("ready", flush=True)
    redo = False
    while True:  # undo / redo for ever: every command is a committed event
        command = {"type": "undo", "redo": True} if redo else {"type": "undo"}
        game = table.command(game["id"], game["seq"], command)
        redo = not redo
    """
)


def test_a_killed_writer_leaves_a_game_that_loads(tmp_path):
    path = tmp_path / "db.sqlite"
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=os.getcwd(),
    )
    try:
        ChildOutput(writer).wait_for(lambda s: s.strip() == "ready", what="ready")
        time.sleep(0.5)  # let it write a good number of events
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait(timeout=10)
        writer.stdout.close()
    store = Store(path)
    snapshot = GameTable(store, Hub()).snapshot()
    assert snapshot["seq"] > 5
    assert snapshot["state"]["stage"] in ("setup", "seating")
    store.close()


CREATOR = textwrap.dedent(
    """
    import sys
    from companion.hub import Hub
    from companion.store import Store
    from companion.table import GameTable

    table = GameTable(Store(sys.argv[1]), Hub())
    table.new_game(["Eva", "Finn"])
    print("ready", flush=True)
    while True:  # new games for ever: each is a row and its first events
        table.new_game(["Eva", "Finn", "Gus"])
    """
)


def test_a_writer_killed_while_making_games_leaves_no_half_made_game(tmp_path):
    """A game row and its first events are one transaction: killed at any moment, every game on
    disk has its players, and the game at the table takes commands."""
    path = tmp_path / "db.sqlite"
    for kill_after in (0.0, 0.013, 0.05, 0.2):
        writer = subprocess.Popen(
            [sys.executable, "-c", CREATOR, str(path)],
            stdout=subprocess.PIPE,
            text=True,
            cwd=os.getcwd(),
        )
        try:
            ChildOutput(writer).wait_for(lambda s: s.strip() == "ready", what="ready")
            time.sleep(kill_after)
        finally:
            writer.send_signal(signal.SIGKILL)
            writer.wait(timeout=10)
            writer.stdout.close()
    store = Store(path)
    games = store.games()
    assert len(games) > 4
    assert {g["events"] for g in games} == {2}  # created and seated, never one without the other
    table = GameTable(store, Hub())
    game = table.snapshot()
    setup = {"blue": 4, "black": 1, "red": 3, "brown": 3, "green": 4, "yellow": 2, "white": 3}
    after = table.command(game["id"], game["seq"], {"type": "setup_drop_read", "tray": setup})
    assert after["seq"] == 3
    store.close()
