"""A game already poisoned on disk still loads: the unreadable event is quarantined, said in the
log, and the table plays on."""

import json
import logging
import sqlite3

import pytest
from table_access import playing, policy

from companion.hub import Hub
from companion.store import Store
from companion.table import GameTable
from companion.tray import TrayBoard
from companion.web.app import create_app

SETUP = {"blue": 4, "black": 1, "red": 3, "brown": 3, "green": 4, "yellow": 2, "white": 3}
PHASE = {"blue": 5, "black": 4, "red": 1, "brown": 4, "green": 1, "yellow": 3, "white": 2}
DEEP_NOTE = '{"v": 1, "type": "pirate_revealed", "value": 1, "note": ' + "[" * 700 + "]" * 700 + "}"


def stored(path, *bodies):
    """A data file holding one game whose log is ``bodies`` exactly (as an older version or a
    hand edit left it)."""
    Store(path).close()
    raw = sqlite3.connect(path)
    raw.execute("INSERT INTO games (id, created_at, title) VALUES (1, 0, 'old')")
    for seq, body in enumerate(bodies):
        text = body if isinstance(body, str) else json.dumps(body)
        raw.execute("INSERT INTO events (game_id, seq, created_at, body) VALUES (1, ?, 0, ?)",
                    (seq, text))
    raw.commit()
    raw.close()


def ev(type_, **fields):
    return {"v": 1, "type": type_, **fields}


START = (ev("game_created"), ev("players_seated", players=["Eva", "Finn"]),
         ev("setup_drop_read", tray=SETUP))


def open_app(path):
    store = Store(path)
    hub = Hub()
    table = GameTable(store, hub)
    access = policy(path.parent)
    app = create_app(TrayBoard(store, hub), hub, table=table, access=access)
    return store, table, playing(app.test_client(), access)


@pytest.mark.parametrize(
    ("poison", "reason"),
    [
        (DEEP_NOTE, "note must be a text"),  # what the fuzzer once stored
        ('{"v": 1, "type": "pirate_revealed", "value": 1, "note": ' + "[" * 3000 + "]" * 3000
         + "}", "nested too deeply"),
        ('{"v": 1, "type": "pirate_revealed", "value": NaN}', "value must be a whole number"),
        ("{not json", "Expecting property name"),
        (json.dumps(ev("pirate_revealed", value=1, colour="red")), "unknown field"),
    ],
)
def test_an_unreadable_last_event_is_quarantined_and_the_game_goes_on(
    tmp_path, caplog, poison, reason
):
    path = tmp_path / "db.sqlite"
    stored(path, *START, poison)
    store, _table, client = open_app(path)
    with caplog.at_level(logging.WARNING, logger="companion.recovery"):
        response = client.get("/api/game")
    assert response.status_code == 200
    game = response.get_json()
    assert game["seq"] == 3 and game["state"]["expects_events"] == ["pirate_revealed"]
    assert "event #4 quarantined" in caplog.text and reason in caplog.text
    assert [q["seq"] for q in store.quarantined(1)] == [3]
    assert store.quarantined(1)[0]["body"] == poison  # kept, not deleted
    stream = client.get("/api/stream", buffered=False)
    chunks = iter(stream.response)
    next(chunks)
    assert next(chunks).startswith(b"event: snapshot")
    stream.close()
    playing = client.post("/api/game/1/command", json={
        "base": 3, "command": {"type": "pirate_revealed", "value": 0}})
    assert playing.status_code == 200
    store.close()
    store, _table, client = open_app(path)  # and after a restart, without repairing again
    with caplog.at_level(logging.WARNING, logger="companion.recovery"):
        caplog.clear()
        assert client.get("/api/game").get_json()["seq"] == 4
    assert caplog.text == ""
    store.close()


def test_a_bad_event_in_the_middle_keeps_the_rest_and_renumbers_the_targets(tmp_path):
    path = tmp_path / "db.sqlite"
    stored(
        path,
        *START,  # 1-3
        DEEP_NOTE,  # 4: unreadable
        ev("pirate_revealed", value=0),  # 5 -> 4
        ev("tray_read", tray=PHASE),  # 6 -> 5
        ev("tray_corrected", target=6, tray=dict(PHASE, blue=4)),  # 7 -> 6, target 6 -> 5
        ev("undo", target=4),  # 8: took back the unreadable one: goes with it
        ev("undo", target=7),  # 9 -> 7: takes back the correction, target 7 -> 6
    )
    store, _table, client = open_app(path)
    game = client.get("/api/game").get_json()
    assert game["seq"] == 7
    assert [h["type"] for h in game["history"]] == [
        "game_created", "players_seated", "setup_drop_read", "pirate_revealed", "tray_read",
        "tray_corrected", "undo"]
    assert game["history"][5]["target"] == 5 and game["history"][6]["target"] == 6
    assert game["history"][5]["in_force"] is False  # the undo still takes back the correction
    assert game["history"][4]["tray"]["blue"] == PHASE["blue"]
    assert [q["seq"] for q in store.quarantined(1)] == [3, 7]
    assert "not in the game" in store.quarantined(1)[1]["reason"]
    store.close()


def test_a_log_that_no_longer_loads_can_still_be_taken_away(tmp_path):
    path = tmp_path / "db.sqlite"
    stored(path, *START, "{not json")
    Store(path).close()
    store = Store(path)
    table = GameTable(store, Hub())
    text = table.log_text(1)  # exactly as stored: nothing read, nothing repaired
    assert text.splitlines()[-1] == "{not json"
    store.close()


def test_a_game_with_nothing_readable_is_no_game(tmp_path):
    path = tmp_path / "db.sqlite"
    stored(path, "{not json", DEEP_NOTE)
    store, _table, client = open_app(path)
    first = client.get("/api/game")
    assert first.status_code == 200
    assert client.get("/api/game").get_json() == {"id": None}
    assert client.post("/api/game", json={"players": ["Ada", "Ben"]}).status_code == 201
    store.close()


def test_a_lost_drop_stops_the_game_before_it_rather_than_moving_the_rest(tmp_path, caplog):
    """Left out, a phase's drop would put the next player's action in the drop's stage and
    every later drop in another phase: the game stops before it, the rest kept aside."""
    path = tmp_path / "db.sqlite"
    stored(
        path,
        *START,  # 1-3
        ev("pirate_revealed", value=0),  # 4
        json.dumps(ev("tray_read", tray=PHASE)).replace("tray_read", "tray_reaD"),  # 5: damaged
        ev("action", player="Eva", choice="gold"),  # 6: refused without 5
        ev("action", player="Finn", choice="gold"),  # 7
        ev("tray_read", tray=PHASE),  # 8: next phase's drop, which would fit in 5's place
    )
    store, _table, client = open_app(path)
    with caplog.at_level(logging.WARNING, logger="companion.recovery"):
        game = client.get("/api/game").get_json()
    assert game["seq"] == 4 and game["state"]["stage"] == "tray"
    assert "the game stops before event #5" in caplog.text and "goes on" not in caplog.text
    assert [q["seq"] for q in store.quarantined(1)] == [4, 5, 6, 7]
    assert "not possible now" in store.quarantined(1)[1]["reason"]
    assert "after event #5" in store.quarantined(1)[3]["reason"]
    assert game["set_aside"] == {"events": 4, "from": 5}
    store.close()


def test_a_game_that_loads_as_stored_says_nothing_was_set_aside(tmp_path):
    path = tmp_path / "db.sqlite"
    stored(path, *START)
    store, _table, client = open_app(path)
    assert "set_aside" not in client.get("/api/game").get_json()
    store.close()
