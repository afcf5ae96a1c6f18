"""Seeded random requests over every endpoint: no 5xx, every refusal in words, retries applied
once, and the game readable throughout and after a restart (``companion/fuzz.py``; the shipped
``scripts/fuzz-api.py`` runs 10,000 of them against the real device)."""

import pytest
from table_access import playing, policy

from companion.fuzz import fuzz
from companion.hub import Hub
from companion.store import Store
from companion.table import GameTable
from companion.tray import TrayBoard
from companion.web.app import DeviceHooks, create_app

READING = {"counts": {"blue": 2}, "cubes": [], "uncertain": False, "warnings": []}


def corners(value):
    """As strict as the device: four [x, y] pairs of numbers, or None."""
    if value is None:
        return {"corners": None}
    if not (isinstance(value, list) and len(value) == 4 and all(
            isinstance(p, list) and len(p) == 2 and all(
                isinstance(v, int | float) and not isinstance(v, bool) for v in p)
            for p in value)):
        raise ValueError("the corners must be four [x, y] points")
    return {"corners": value}


@pytest.fixture
def make_app(tmp_path):
    def make():
        store = Store(tmp_path / "db.sqlite")
        hub = Hub()
        board = TrayBoard(store, hub)
        board.publish_reading("frame-1", READING, b"\xff\xd8jpeg")
        frames = iter(range(2, 10**6))

        def read_now():  # a fresh reading, as the camera gives one: a drop may come from it
            board.publish_reading(f"frame-{next(frames)}", READING, b"\xff\xd8jpeg")

        hooks = DeviceHooks(
            read_now=read_now,
            calibrate_empty=lambda: {"saved": "empty.jpg"},
            set_corners=corners,
            camera_picture=lambda: b"\xff\xd8jpeg",
            calibration_status=lambda: {"corners": None, "drops": 0},
        )
        access = policy(tmp_path)
        app = create_app(board, hub, hooks, GameTable(store, hub), access=access)
        return playing(app.test_client(), access), store.close

    return make


@pytest.mark.parametrize("seed", [0, 1])
def test_fuzzed_requests_never_break_the_game(make_app, seed):
    report = fuzz(make_app, 1500, seed=seed)
    assert report.five_xx == 0, report.summary()
    assert report.ok, report.summary()
    assert report.requests > 1400 and report.retries > 50
    assert report.longest > 60  # the games were really played, not only refused
    assert len(report.rounds) >= 3
    assert report.readable_after_restart and report.same_after_restart
    # the newer endpoints and fields were sent, and did what they should
    assert report.drops_from_readings > 0 and report.questions_answered > 0
    assert report.strangers > 10 and report.strangers_let_in == []
    assert report.new_codes > 0 and report.resumed > 0
    sent = report.sent_paths
    for path in ("/api/game/<id>", "/api/game/<id>/resume", "/api/access/new-code"):
        assert sent[path] > 0, path
    assert report.commands_taken["sheet_goods"] > 0
