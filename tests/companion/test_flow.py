"""The game flow at the table: which tray reading may start which phase, what is asked first,
and the list of games kept on the device (look at one, resume one)."""

import sqlite3

import pytest
from table_access import playing, policy

from companion.drops import PHASE, SETUP, Drop, StaleReading, check_drop
from companion.errors import NeedsConfirmation, TableError
from companion.hub import Hub
from companion.store import Store
from companion.table import GameTable
from companion.tray import TrayBoard
from companion.web.app import create_app

SETUP_DROP = {"blue": 4, "black": 1, "red": 3, "brown": 3, "green": 4, "yellow": 2, "white": 3}
ZERO = dict.fromkeys(SETUP_DROP, 0)


class Table:
    """A table with a tray board the tests publish readings to, and a phone (test client)."""

    def __init__(self, path, **store_options):
        self.store = Store(path, **store_options)
        self.hub = Hub()
        self.board = TrayBoard(self.store, self.hub)
        self.table = GameTable(self.store, self.hub)
        access = policy(path.parent)
        app = create_app(self.board, self.hub, table=self.table, access=access)
        self.client = playing(app.test_client(), access)

    def read(self, counts, uncertain=False) -> int:
        """The camera reads the tray: the reading's id."""
        body = {"counts": counts, "uncertain": uncertain}
        return self.board.publish_reading(f"f{counts}", body, None)["id"]

    def start(self, players=("Eva", "Finn")) -> dict:
        response = self.client.post("/api/game", json={"players": list(players)})
        assert response.status_code == 201
        return response.get_json()

    def send(self, game, command, **extra):
        body = {"base": game["seq"], "command": command, **extra}
        return self.client.post(f"/api/game/{game['id']}/command", json=body)

    def ok(self, game, command, **extra) -> dict:
        response = self.send(game, command, **extra)
        assert response.status_code == 200, response.get_json()
        return response.get_json()

    def game(self) -> dict:
        return self.client.get("/api/game").get_json()


@pytest.fixture
def t(tmp_path):
    table = Table(tmp_path / "db.sqlite")
    yield table
    table.store.close()


def to_first_phase(t) -> dict:
    game = t.start()
    reading = t.read(SETUP_DROP)
    game = t.ok(game, {"type": SETUP, "tray": SETUP_DROP}, reading=reading)
    return t.ok(game, {"type": "pirate_revealed", "value": 0})


# --- one reading starts at most one phase ---------------------------------------------------

def test_the_set_up_drops_reading_cannot_start_the_first_phase(t):
    game = t.start()
    reading = t.read(SETUP_DROP)
    game = t.ok(game, {"type": SETUP, "tray": SETUP_DROP}, reading=reading)
    game = t.ok(game, {"type": "pirate_revealed", "value": 0})
    refused = t.send(game, {"type": PHASE, "tray": SETUP_DROP}, reading=reading)
    assert refused.status_code == 400
    body = refused.get_json()
    assert body["kind"] == "StaleReading"
    assert "before the set-up drop" in body["error"] and "blue" in body["error"]
    assert t.game()["seq"] == game["seq"]  # nothing written

    fresh = t.read({"blue": 3, "red": 1})
    game = t.ok(game, {"type": PHASE, "tray": {"blue": 3, "red": 1}}, reading=fresh)
    assert game["state"]["stage"] == "actions"


def test_one_reading_is_not_used_for_two_phases_in_a_row(t):
    """Today's bug: one reading used for yellow and white. Here: for blue and then black."""
    game = to_first_phase(t)
    blue = t.read({"blue": 2, "black": 1})
    game = t.ok(game, {"type": PHASE, "tray": {"blue": 2, "black": 1}}, reading=blue)
    for player in game["state"]["phase_order"]:
        game = t.ok(game, {"type": "action", "player": player, "choice": "gold"})
    assert game["state"]["phase"] == "black" and game["state"]["stage"] == "tray"
    assert game["reading_after"] >= blue

    refused = t.send(game, {"type": PHASE, "tray": {"blue": 2, "black": 1}}, reading=blue)
    assert refused.status_code == 400
    assert "before the blue phase began" in refused.get_json()["error"]
    assert "black phase" in refused.get_json()["error"]

    # counts typed by hand are the players' own word: taken
    game = t.ok(game, {"type": PHASE, "tray": {"black": 2}})
    assert game["state"]["phase"] == "black" and game["state"]["stage"] == "actions"


def test_one_empty_tray_does_not_skip_two_phases(t):
    """Today's bug: brown and green both skipped on one empty tray."""
    game = to_first_phase(t)
    empty = t.read(ZERO)
    asked = t.send(game, {"type": PHASE, "tray": ZERO}, reading=empty)
    assert asked.status_code == 409
    body = asked.get_json()
    assert body["kind"] == "NeedsConfirmation" and "Nothing fell" in body["confirm"]
    assert "game" not in body  # not a stale screen: nothing to redraw
    assert t.game()["seq"] == game["seq"]

    game = t.ok(game, {"type": PHASE, "tray": ZERO}, reading=empty, confirmed=True)
    assert game["state"]["phase"] == "black" and game["state"]["stage"] == "tray"
    again = t.send(game, {"type": PHASE, "tray": ZERO}, reading=empty, confirmed=True)
    assert again.status_code == 400 and again.get_json()["kind"] == "StaleReading"

    # "nothing fell" said by a player, without a reading: the black phase is skipped too
    asked = t.send(game, {"type": PHASE, "tray": ZERO})
    assert asked.status_code == 409
    game = t.ok(game, {"type": PHASE, "tray": ZERO}, confirmed=True)
    assert game["state"]["phase"] == "red"


def test_an_undone_phase_start_may_use_its_reading_again(t):
    game = to_first_phase(t)
    reading = t.read({"blue": 2})
    game = t.ok(game, {"type": PHASE, "tray": {"blue": 2}}, reading=reading)
    game = t.ok(game, {"type": "undo"})
    assert game["state"]["stage"] == "tray"
    game = t.ok(game, {"type": PHASE, "tray": {"blue": 2}}, reading=reading)
    assert game["state"]["stage"] == "actions"


def test_a_reading_must_be_one_the_device_made_with_the_same_counts(t):
    game = to_first_phase(t)
    reading = t.read({"blue": 2})
    other = t.send(game, {"type": PHASE, "tray": {"blue": 3}}, reading=reading)
    assert other.status_code == 400 and "not those of tray reading" in other.get_json()["error"]
    missing = t.send(game, {"type": PHASE, "tray": {"blue": 2}}, reading=reading + 50)
    assert missing.status_code == 400 and "no tray reading" in missing.get_json()["error"]
    for bad in ("3", 0, True, 1.5):
        response = t.send(game, {"type": PHASE, "tray": {"blue": 2}}, reading=bad)
        assert response.status_code == 400 and "'reading'" in response.get_json()["error"]
    response = t.send(game, {"type": PHASE, "tray": {"blue": 2}}, confirmed="yes")
    assert response.status_code == 400 and "'confirmed'" in response.get_json()["error"]
    error = t.board.publish_error("broken", "camera gone")["id"]
    response = t.send(game, {"type": PHASE, "tray": ZERO}, reading=error, confirmed=True)
    assert response.status_code == 400 and "could not be read" in response.get_json()["error"]
    assert t.game()["seq"] == game["seq"]


def test_a_reading_no_longer_kept_is_refused_as_an_unknown_one(tmp_path):
    """The store keeps the newest readings only: a phone that sends an older one's number (a
    page left open for hours) hears what it would for a number the device never gave."""
    t = Table(tmp_path / "db.sqlite", keep_readings=3)
    try:
        game = to_first_phase(t)
        old = t.read({"blue": 2})
        for n in range(3):
            t.read({"blue": 1, "red": n})
        assert t.store.reading(old) is None
        pruned = t.send(game, {"type": PHASE, "tray": {"blue": 2}}, reading=old)
        unknown = t.send(game, {"type": PHASE, "tray": {"blue": 2}}, reading=old + 50)
        assert pruned.status_code == unknown.status_code == 400
        assert pruned.get_json()["error"] == f"there is no tray reading #{old}"
        assert t.client.get(f"/api/tray/picture/{old}.jpg").status_code == 404
        assert t.game()["seq"] == game["seq"]
        fresh = t.read({"blue": 2})  # a new reading still starts the phase: ids kept growing
        assert fresh > old + 3
        game = t.ok(game, {"type": PHASE, "tray": {"blue": 2}}, reading=fresh)
        assert game["state"]["stage"] == "actions"
    finally:
        t.store.close()


def test_the_panels_next_button_cannot_reuse_a_reading(t):
    game = t.start()
    reading = t.read(SETUP_DROP)
    t.table.confirm_tray(SETUP_DROP, reading_id=reading)
    game = t.ok(t.game(), {"type": "pirate_revealed", "value": 0})
    with pytest.raises(StaleReading):
        t.table.confirm_tray(SETUP_DROP, reading_id=reading)
    empty = t.read(ZERO)
    with pytest.raises(NeedsConfirmation):  # a panel cannot say yes: a phone must
        t.table.confirm_tray(ZERO, reading_id=empty)
    assert t.game()["seq"] == game["seq"]


# --- the set-up drop asks before an unusual count is used --------------------------------------

@pytest.mark.parametrize(("counts", "words"), [
    (ZERO, "no cube in the tray"),
    (dict.fromkeys(SETUP_DROP, 7), "all 49 cubes"),
])
def test_an_unusual_set_up_drop_is_asked_about(t, counts, words):
    game = t.start()
    reading = t.read(counts)
    asked = t.send(game, {"type": SETUP, "tray": counts}, reading=reading)
    assert asked.status_code == 409 and words in asked.get_json()["confirm"]
    assert t.game()["seq"] == game["seq"]
    by_hand = t.send(game, {"type": SETUP, "tray": counts})
    assert by_hand.status_code == 409  # typed or read: an empty set-up drop is asked about
    game = t.ok(game, {"type": SETUP, "tray": counts}, reading=reading, confirmed=True)
    assert game["state"]["cubes"]["storage"] == counts


def test_a_set_up_drop_read_before_the_game_or_doubted_is_asked_about(t):
    old = t.read(SETUP_DROP)
    game = t.start()
    asked = t.send(game, {"type": SETUP, "tray": SETUP_DROP}, reading=old)
    assert asked.status_code == 409 and "before the game was started" in asked.get_json()["confirm"]
    doubted = t.read(SETUP_DROP, uncertain=True)
    asked = t.send(game, {"type": SETUP, "tray": SETUP_DROP}, reading=doubted)
    assert asked.status_code == 409 and "unsure" in asked.get_json()["confirm"]
    plain = t.read(SETUP_DROP)
    assert t.send(game, {"type": SETUP, "tray": SETUP_DROP}, reading=plain).status_code == 200


# --- a correction that makes a drop unusual is asked about, as the drop itself was -------------

@pytest.mark.parametrize(("counts", "words"), [
    (ZERO, "no cube in the tray"),
    (dict.fromkeys(SETUP_DROP, 7), "all 49 cubes"),
])
def test_a_set_up_drop_corrected_to_no_cube_or_all_is_asked_about(t, counts, words):
    game = t.start()
    game = t.ok(game, {"type": SETUP, "tray": SETUP_DROP}, reading=t.read(SETUP_DROP))
    fix = {"type": "tray_corrected", "target": game["seq"], "tray": counts}
    asked = t.send(game, fix)
    assert asked.status_code == 409
    assert asked.get_json()["confirm"].startswith("Correct the set-up drop? It shows")
    assert words in asked.get_json()["confirm"]
    assert t.game()["seq"] == game["seq"]
    game = t.ok(game, fix, confirmed=True)
    assert game["state"]["cubes"]["storage"] == counts


def test_a_phase_drop_corrected_to_no_cube_is_asked_about(t):
    """One slip in the Correct form (every count cleared) would quietly skip the phase."""
    game = to_first_phase(t)
    game = t.ok(game, {"type": PHASE, "tray": {"blue": 2}}, reading=t.read({"blue": 2}))
    target = game["seq"]
    fix = {"type": "tray_corrected", "target": target, "tray": ZERO}
    asked = t.send(game, fix)
    assert asked.status_code == 409 and asked.get_json()["confirm"] == (
        f"Correct #{target} to no cube? Then its phase has no actions and is skipped.")
    assert t.game()["seq"] == game["seq"]
    other = t.ok(game, {"type": "tray_corrected", "target": target, "tray": {"blue": 3}})
    assert other["state"]["offer"]["ap"] == 3  # an ordinary correction is not asked about
    game = t.ok(other, fix, confirmed=True)
    assert game["state"]["phase"] == "black" and game["state"]["offer"] is None


def test_check_drop_without_marks_trusts_the_reading():
    """A game from before the reading marks: no freshness known, so none demanded."""
    check_drop(Drop(PHASE, {"blue": 1}, reading_id=3, reading={"counts": {"blue": 1}}))
    with pytest.raises(StaleReading):
        check_drop(Drop(PHASE, {"blue": 1}, reading_id=3, reading={"counts": {"blue": 1}},
                        after=3, phase="red", previous="black"))
    with pytest.raises(TableError):
        check_drop(Drop(SETUP, {"blue": 1}, reading_id=3, reading=None))
    check_drop(Drop("bump_read", ZERO))  # not a drop that starts anything


def test_a_data_file_from_before_the_marks_opens_and_keeps_its_games(tmp_path):
    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path)
    db.executescript("""
        CREATE TABLE readings (id INTEGER PRIMARY KEY AUTOINCREMENT, frame_id TEXT NOT NULL,
            read_at REAL NOT NULL, body TEXT NOT NULL, picture BLOB);
        CREATE TABLE games (id INTEGER PRIMARY KEY AUTOINCREMENT, created_at REAL NOT NULL,
            title TEXT NOT NULL DEFAULT '');
        CREATE TABLE events (game_id INTEGER NOT NULL REFERENCES games(id), seq INTEGER NOT NULL,
            created_at REAL NOT NULL, body TEXT NOT NULL, PRIMARY KEY (game_id, seq));
        INSERT INTO games VALUES (1, 0, 'old');
        INSERT INTO events VALUES (1, 0, 0, '{"v": 1, "type": "game_created"}');
        INSERT INTO events VALUES (1, 1, 0, '{"v": 1, "type": "players_seated",
            "players": ["Eva", "Finn"]}');
    """)
    db.commit()
    db.close()
    t = Table(path)
    try:
        game = t.game()
        assert game["id"] == 1 and game["reading_after"] is None
        game = t.ok(game, {"type": SETUP, "tray": SETUP_DROP}, reading=t.read(SETUP_DROP))
        assert t.store.reading_mark(1, 2) == 1  # new events are marked
    finally:
        t.store.close()


# --- the games on the device: look at one, resume one ---------------------------------------

def test_the_game_list_says_who_played_and_how_far(t):
    first = to_first_phase(t)
    second = t.start(("Ada", "Ben", "Cleo"))
    games = t.client.get("/api/games").get_json()["games"]
    assert [g["id"] for g in games] == [second["id"], first["id"]]
    newest, older = games
    assert newest["players"] == ["Ada", "Ben", "Cleo"] and newest["at_table"] is True
    assert newest["stage"] == "setup"
    assert older["players"] == ["Eva", "Finn"] and older["at_table"] is False
    assert older["stage"] == "tray" and older["round"] == 1


def test_an_earlier_game_can_be_looked_at_without_changing_the_table(t):
    first = to_first_phase(t)
    second = t.start(("Ada", "Ben"))
    view = t.client.get(f"/api/game/{first['id']}").get_json()
    assert view["at_table"] is False and view["seq"] == first["seq"]
    assert view["state"]["players"][0]["name"] == "Eva"
    assert t.game()["id"] == second["id"]
    assert t.client.get("/api/game/99").status_code == 404
    # commands still go only to the game at the table
    stale = t.send(first, {"type": "undo"})
    assert stale.status_code == 400 and "not the game at the table" in stale.get_json()["error"]


def test_resuming_an_earlier_game_puts_it_back_on_the_table(t):
    first = to_first_phase(t)
    t.start(("Ada", "Ben"))
    updates = t.hub.subscribe()
    response = t.client.post(f"/api/game/{first['id']}/resume")
    assert response.status_code == 200
    assert response.get_json()["id"] == first["id"]
    assert updates.get(timeout=1).data["id"] == first["id"]  # every phone follows
    assert t.game()["id"] == first["id"]
    game = t.ok(t.game(), {"type": PHASE, "tray": {"blue": 1}})  # play goes on
    assert game["state"]["stage"] == "actions"
    assert t.client.post("/api/game/99/resume").status_code == 404

    third = t.start(("Cleo", "Dan"))  # a new game is at the table again
    assert t.game()["id"] == third["id"]


def test_resuming_survives_a_restart(tmp_path):
    t = Table(tmp_path / "db.sqlite")
    first = t.start()
    t.start(("Ada", "Ben"))
    t.client.post(f"/api/game/{first['id']}/resume")
    t.store.close()
    again = Table(tmp_path / "db.sqlite")
    try:
        assert again.game()["id"] == first["id"]
    finally:
        again.store.close()


def test_the_drop_before_passes_over_phases_skipped_for_an_empty_storage():
    from companion.drops import previous_drop

    assert previous_drop("blue", 1, []) == ""
    assert previous_drop("black", 1, []) == "blue"
    assert previous_drop("blue", 2, []) == "white"
    empty = [{"round": 1, "phase": "black", "why": "storage empty"}]
    assert previous_drop("red", 1, empty) == "blue"
    nothing_fell = [{"round": 1, "phase": "black", "why": "no cubes out"}]
    assert previous_drop("red", 1, nothing_fell) == "black"  # it had a drop: nothing fell
