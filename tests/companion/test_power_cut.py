"""A pulled power cord mid-game: kill the writer hard, and the game must still load whole."""

import os
import signal
import subprocess
import sys
import textwrap
import time

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
        assert writer.stdout.readline().strip() == "ready"
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
