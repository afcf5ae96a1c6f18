"""A retried write applies once: the same Idempotency-Key gets the first answer, even after a
restart, even with the fresh base a phone that refreshed would send."""

import threading

import pytest
from table_access import playing, policy

from companion.hub import Hub
from companion.store import Store
from companion.table import GameTable
from companion.tray import TrayBoard
from companion.web.app import create_app

SETUP = {"blue": 4, "black": 1, "red": 3, "brown": 3, "green": 4, "yellow": 2, "white": 3}
PHASE = {"blue": 5, "black": 4, "red": 1, "brown": 4, "green": 1, "yellow": 3, "white": 2}
BUMP = {"red": 1}


class Device:
    """The app over one data file; ``restart`` opens it again as a reboot would."""

    def __init__(self, path):
        self.path = path
        self.restart()

    def restart(self):
        if hasattr(self, "store"):
            self.store.close()
        self.store = Store(self.path)
        hub = Hub()
        self.table = GameTable(self.store, hub)
        access = policy(self.path.parent)
        app = create_app(TrayBoard(self.store, hub), hub, table=self.table, access=access)
        self.client = playing(app.test_client(), access)


@pytest.fixture
def device(tmp_path):
    device = Device(tmp_path / "db.sqlite")
    yield device
    device.store.close()


def key(n):
    return f"tap-{n:04d}-0123456789abcdef"


def post(device, game, command, idem, base=None):
    body = {"base": game["seq"] if base is None else base, "command": command}
    return device.client.post(
        f"/api/game/{game['id']}/command", json=body, headers={"Idempotency-Key": idem}
    )


def start(device, idem=None):
    headers = {"Idempotency-Key": idem} if idem else {}
    response = device.client.post("/api/game", json={"players": ["Eva", "Finn"]},
                                  headers=headers)
    assert response.status_code == 201
    return response.get_json()


def in_play(device):
    game = start(device)
    for n, command in enumerate((
        {"type": "setup_drop_read", "tray": SETUP},
        {"type": "pirate_revealed", "value": 0},
        {"type": "tray_read", "tray": PHASE},
    )):
        game = post(device, game, command, key(900 + n)).get_json()
    return game


@pytest.mark.parametrize(
    "command",
    [
        {"type": "undo"},
        {"type": "tray_corrected", "target": 5, "tray": dict(PHASE, blue=4)},
        {"type": "bump_read", "tray": BUMP},
    ],
)
def test_a_retry_with_a_fresh_base_applies_once(device, command):
    """The three that applied twice: each retry looks valid again on the fresh base."""
    game = in_play(device)
    first = post(device, game, command, key(1))
    assert first.status_code == 200
    retry = post(device, game, command, key(1), base=first.get_json()["seq"])
    assert retry.status_code == 200
    assert retry.get_json() == first.get_json()
    assert device.store.event_count(game["id"]) == game["seq"] + 1
    again = post(device, game, command, key(1), base=game["seq"])  # the stale base too
    assert again.get_json() == first.get_json()


def test_a_new_key_is_a_new_write(device):
    game = in_play(device)
    first = post(device, game, {"type": "bump_read", "tray": BUMP}, key(1)).get_json()
    second = post(device, first, {"type": "bump_read", "tray": BUMP}, key(2)).get_json()
    assert second["seq"] == first["seq"] + 1


def test_a_key_is_remembered_across_a_restart(device):
    game = in_play(device)
    first = post(device, game, {"type": "undo"}, key(1)).get_json()
    device.restart()
    retry = post(device, game, {"type": "undo"}, key(1), base=first["seq"])
    assert retry.status_code == 200 and retry.get_json() == first
    assert device.store.event_count(game["id"]) == first["seq"]


def test_the_first_answer_comes_back_after_the_game_moved_on(device):
    game = in_play(device)
    first = post(device, game, {"type": "bump_read", "tray": BUMP}, key(1)).get_json()
    turn = first["state"]["turn"]
    later = post(device, first, {"type": "action", "player": turn, "choice": "gold"}, key(2))
    assert later.status_code == 200
    retry = post(device, game, {"type": "bump_read", "tray": BUMP}, key(1))
    assert retry.get_json() == first  # the game as that write left it, not as it is now
    assert device.table.snapshot()["seq"] == later.get_json()["seq"]


def test_a_new_game_retried_is_one_game(device):
    first = start(device, key(1))
    again = device.client.post("/api/game", json={"players": ["Eva", "Finn"]},
                               headers={"Idempotency-Key": key(1)})
    assert again.status_code == 201 and again.get_json() == first
    assert len(device.store.games()) == 1


def test_a_key_used_for_another_request_is_refused(device):
    game = in_play(device)
    post(device, game, {"type": "bump_read", "tray": BUMP}, key(1))
    other = post(device, game, {"type": "undo"}, key(1), base=game["seq"] + 1)
    assert other.status_code == 422
    assert "already used for another request" in other.get_json()["error"]
    assert device.store.event_count(game["id"]) == game["seq"] + 1


@pytest.mark.parametrize(
    "bad", ["short", "x" * 129, "with spaces in the key", "ключ-ключ-ключ-ключ"]
)
def test_a_malformed_key_is_refused(device, bad):
    game = in_play(device)
    response = device.client.post(
        f"/api/game/{game['id']}/command",
        json={"base": game["seq"], "command": {"type": "undo"}},
        headers={"Idempotency-Key": bad.encode("utf-8").decode("latin-1")},
    )
    assert response.status_code == 400 and "Idempotency-Key" in response.get_json()["error"]
    assert device.store.event_count(game["id"]) == game["seq"]


def test_a_refused_command_is_not_remembered(device):
    """Only a write that landed is remembered: the same key may try again once it is allowed."""
    game = in_play(device)
    turn = game["state"]["turn"]
    other = next(p for p in game["state"]["player_order"] if p != turn)
    refused = post(device, game, {"type": "action", "player": other, "choice": "gold"}, key(1))
    assert refused.status_code == 400
    assert device.store.idempotent(key(1)) is None


def test_eight_retries_at_once_apply_once(device):
    game = in_play(device)
    barrier = threading.Barrier(8)
    answers = []

    def tap():
        barrier.wait()
        answers.append(post(device, game, {"type": "undo"}, key(1)))

    threads = [threading.Thread(target=tap) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert {a.status_code for a in answers} == {200}
    assert len({a.get_data() for a in answers}) == 1
    assert device.store.event_count(game["id"]) == game["seq"] + 1


def test_a_key_with_a_command_too_deep_to_fingerprint_is_refused_in_words(device):
    game = in_play(device)
    note = "x"
    for _ in range(5000):
        note = [note]
    from companion.table import TableError

    with pytest.raises(TableError, match="nested too deeply"):
        device.table.command(game["id"], game["seq"], {"type": "undo", "note": note}, key=key(1))
    assert device.store.event_count(game["id"]) == game["seq"]
