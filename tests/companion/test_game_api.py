"""The game over HTTP: start, command, refuse, undo, and two phones at once."""

import threading

import pytest
from table_access import playing, policy

from companion.hub import Hub
from companion.store import Store
from companion.table import GameTable, TableError
from companion.tray import TrayBoard
from companion.web.app import create_app

SETUP = {"blue": 4, "black": 1, "red": 3, "brown": 3, "green": 4, "yellow": 2, "white": 3}
PHASE = {"blue": 5, "black": 4, "red": 1, "brown": 4, "green": 1, "yellow": 3, "white": 2}




def start(client, players=("Eva", "Finn")):
    response = client.post("/api/game", json={"players": list(players), "name": "test"})
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def send(client, game, command):
    body = {"base": game["seq"], "command": command}
    return client.post(f"/api/game/{game['id']}/command", json=body)


def play_to_first_action(client):
    game = start(client)
    for command in (
        {"type": "setup_drop_read", "tray": SETUP},
        {"type": "pirate_revealed", "value": 0},
        {"type": "tray_read", "tray": PHASE},
    ):
        response = send(client, game, command)
        assert response.status_code == 200, response.get_json()
        game = response.get_json()
    return game


def test_no_game_yet(table):
    _, client, _ = table
    assert client.get("/api/game").get_json() == {"id": None}


def test_a_new_game_seats_the_players_with_starting_gold(table):
    _, client, _ = table
    game = start(client, ["Ada", "Ben", "Cleo", "Dan"])
    players = {p["name"]: p for p in game["state"]["players"]}
    assert [players[n]["gold"] for n in ("Ada", "Ben", "Cleo", "Dan")] == [0, 1, 2, 3]
    assert game["seq"] == 2
    assert client.get("/api/game").get_json()["id"] == game["id"]


def test_a_phase_offers_the_tray_and_takes_the_turns_in_order(table):
    _, client, _ = table
    game = play_to_first_action(client)
    state = game["state"]
    assert state["expects"] == "action"
    assert state["offer"]["ap"] == 5 and state["offer"]["gold"] == 7  # 20 cubes / 3, rounded up
    turn = state["turn"]
    response = send(client, game, {"type": "action", "player": turn, "choice": "gold"})
    assert response.status_code == 200
    after = response.get_json()
    assert after["seq"] == game["seq"] + 1
    assert after["history"][-1]["in_force"] is True


def test_a_refused_command_says_why_and_changes_nothing(table):
    _, client, _ = table
    game = play_to_first_action(client)
    not_turn = next(p for p in game["state"]["player_order"] if p != game["state"]["turn"])
    response = send(client, game, {"type": "action", "player": not_turn, "choice": "gold"})
    assert response.status_code == 400
    assert response.get_json()["kind"] == "OutOfTurn"
    assert client.get("/api/game").get_json()["seq"] == game["seq"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"command": {"type": "undo"}}, "'base'"),
        ({"base": "3", "command": {"type": "undo"}}, "'base'"),
        ({"base": 0, "command": {"type": "launch_rockets"}}, "unknown command type"),
        ({"base": 0, "command": "undo"}, "JSON object"),
    ],
)
def test_malformed_requests_are_clear_400s(table, body, message):
    _, client, _ = table
    game = start(client)
    response = client.post(f"/api/game/{game['id']}/command", json=body)
    assert response.status_code == 400
    assert message in response.get_json()["error"]


def test_wrong_values_from_a_phone(table):
    _, client, _ = table
    game = start(client)
    bad = send(client, game, {"type": "setup_drop_read", "tray": {"purple": 3}})
    assert bad.status_code == 400 and "purple" in bad.get_json()["error"]
    not_json = client.post(f"/api/game/{game['id']}/command", data="nope")
    assert not_json.status_code == 400
    assert client.post("/api/game", json={"players": ["Solo"]}).status_code == 400


def test_a_stale_phone_gets_409_with_the_fresh_game(table):
    _, client, _ = table
    game = play_to_first_action(client)
    turn = game["state"]["turn"]
    gold = {"type": "action", "player": turn, "choice": "gold"}
    assert send(client, game, gold).status_code == 200
    stale = send(client, game, {"type": "action", "player": turn, "choice": "gold"})
    assert stale.status_code == 409
    assert stale.get_json()["game"]["seq"] == game["seq"] + 1


def test_two_phones_pressing_at_once_only_one_lands(table):
    table_, client, _ = table
    game = play_to_first_action(client)
    turn = game["state"]["turn"]
    barrier = threading.Barrier(2)
    codes = []

    def press(choice):
        barrier.wait()
        response = send(client, game, {"type": "action", "player": turn, "choice": choice})
        codes.append(response.status_code)

    threads = [threading.Thread(target=press, args=(c,)) for c in ("gold", "blue")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(codes) == [200, 409]
    assert table_.snapshot()["seq"] == game["seq"] + 1


def test_undo_and_redo_are_events_and_exact(table):
    _, client, _ = table
    game = play_to_first_action(client)
    turn = game["state"]["turn"]
    acted = send(client, game, {"type": "action", "player": turn, "choice": "gold"}).get_json()
    undone = send(client, acted, {"type": "undo"}).get_json()
    assert undone["state"]["players"] == game["state"]["players"]
    assert undone["history"][-2]["in_force"] is False
    redone = send(client, undone, {"type": "undo", "redo": True}).get_json()
    assert redone["state"]["players"] == acted["state"]["players"]


def test_every_change_is_pushed_to_the_phones(table):
    _, client, hub = table
    subscription = hub.subscribe()
    game = start(client)
    update = subscription.get(timeout=1)
    assert update.kind == "game" and update.data["id"] == game["id"]


def test_the_game_survives_a_restart(tmp_path):
    path = tmp_path / "db.sqlite"
    store = Store(path)
    access = policy(tmp_path)
    app = create_app(TrayBoard(store, Hub()), Hub(), table=GameTable(store, Hub()), access=access)
    client = playing(app.test_client(), access)
    game = play_to_first_action(client)
    store.close()
    store = Store(path)
    again = GameTable(store, Hub()).snapshot()
    assert again["seq"] == game["seq"] and again["state"] == game["state"]
    store.close()


def test_vision_bounds_follow_the_tower_while_a_drop_is_awaited(table):
    table_, client, _ = table
    assert table_.vision_bounds() is None
    game = start(client)
    assert table_.vision_bounds() == dict.fromkeys(SETUP, 7)  # all 49 are in the tower
    for command in (
        {"type": "setup_drop_read", "tray": SETUP},
        {"type": "pirate_revealed", "value": 0},
    ):
        game = send(client, game, command).get_json()
    assert game["state"]["stage"] == "tray"
    bounds = table_.vision_bounds()
    assert bounds == game["state"]["vision_bounds"]
    assert bounds["blue"] >= SETUP["blue"]  # the blue storage cubes were just dropped in
    send(client, game, {"type": "tray_read", "tray": PHASE})
    assert table_.vision_bounds() is None  # the players' turns: the tray may hold anything


def test_confirm_tray_feeds_the_set_up_drop_then_the_phase(table):
    table_, client, _ = table
    start(client)
    game = table_.confirm_tray(SETUP)
    assert game["history"][-1]["type"] == "setup_drop_read"
    send(client, game, {"type": "pirate_revealed", "value": 0})
    game = table_.confirm_tray(PHASE)
    assert game["history"][-1]["type"] == "tray_read"
    assert game["state"]["stage"] == "actions"
    with pytest.raises(TableError, match="does not wait for a tray reading"):
        table_.confirm_tray(PHASE)
    undone = table_.undo_latest()
    assert undone["state"]["stage"] == "tray"


def test_panel_helpers_without_a_game(table):
    table_, _, _ = table
    with pytest.raises(TableError, match="no game"):
        table_.confirm_tray(SETUP)
    with pytest.raises(TableError, match="no game"):
        table_.undo_latest()
    with pytest.raises(TableError, match="no game"):
        table_.redo_latest()


def test_redo_latest_brings_back_what_undo_took_back_as_the_phones_redo_does(table):
    table_, client, _ = table
    game = play_to_first_action(client)
    with pytest.raises(TableError, match="nothing to redo"):
        table_.redo_latest()  # nothing was undone
    turn = game["state"]["turn"]
    acted = send(client, game, {"type": "action", "player": turn, "choice": "gold"}).get_json()
    table_.undo_latest()
    undone = table_.undo_latest()  # the tray reading too
    assert undone["state"]["stage"] == "tray"
    redone = table_.redo_latest()
    assert redone["history"][-1] == {**redone["history"][-1], "type": "undo", "in_force": True}
    assert redone["state"]["stage"] == "actions"
    again = table_.redo_latest()  # past that redo to the undo before it: the action is back
    assert again["state"] == acted["state"]
    with pytest.raises(TableError, match="nothing to redo: Redo brings back what Undo took"):
        table_.redo_latest()  # both undos are redone
    assert table_.snapshot() == again
    table_.undo_latest()
    game = table_.snapshot()
    moved = send(client, game, {"type": "action", "player": turn, "choice": "gold"})
    assert moved.status_code == 200, moved.get_json()
    with pytest.raises(TableError, match="nothing to redo"):
        table_.redo_latest()  # the game moved on since that undo


def test_history_carries_the_readings_as_corrected(table):
    _, client, _ = table
    game = play_to_first_action(client)
    read = next(h for h in game["history"] if h["type"] == "tray_read")
    assert read["tray"]["blue"] == PHASE["blue"]
    fixed = dict(PHASE, blue=4)
    corrected = send(client, game, {"type": "tray_corrected", "target": read["n"], "tray": fixed})
    assert corrected.status_code == 200, corrected.get_json()
    history = corrected.get_json()["history"]
    assert history[read["n"] - 1]["tray"]["blue"] == 4
    assert history[-1]["target"] == read["n"]


def test_the_panel_undo_does_not_unseat_the_players(table):
    table_, client, _ = table
    start(client)
    with pytest.raises(TableError, match="nothing to undo"):
        table_.undo_latest()


def test_no_undo_from_a_phone_unseats_the_players(table):
    table_, client, _ = table
    game = start(client)
    gid = game["id"]
    for command, words in (
        ({"type": "undo"}, "nothing to undo yet"),  # the panel's words (undo_latest)
        ({"type": "undo", "target": 2}, "the seating cannot be undone"),
    ):
        with pytest.raises(TableError, match=words):
            table_.command(gid, 2, command)
        assert table_.snapshot() == game
    # with all that followed the seating undone, a plain undo would reach it again
    game = table_.command(gid, 2, {"type": "setup_drop_read", "tray": SETUP})
    game = table_.command(gid, 3, {"type": "undo"})
    assert game["state"]["stage"] == "setup"
    with pytest.raises(TableError, match="nothing to undo yet"):
        table_.command(gid, 4, {"type": "undo"})
    with pytest.raises(TableError, match="the seating cannot be undone"):
        table_.command(gid, 4, {"type": "undo", "target": 2})
    assert table_.snapshot() == game and table_._store.event_count(gid) == 4


def test_a_log_stuck_at_the_seating_may_be_redone_but_not_undone_again(table):
    """A log stored before the seating was guarded (undo #2 right after the start) waits for
    players_seated: the redo gets the game back, and undoing that redo is refused."""
    table_, client, _ = table
    game = start(client)
    gid = game["id"]
    table_._store.append_events(gid, 2, [{"v": 1, "type": "undo", "target": 2}])
    assert table_.snapshot()["state"]["stage"] == "seating"
    redone = table_.command(gid, 3, {"type": "undo", "redo": True})
    assert redone["state"]["stage"] == "setup"
    assert redone["state"]["players"] == game["state"]["players"]
    with pytest.raises(TableError, match="the seating cannot be undone"):
        table_.command(gid, 4, {"type": "undo", "target": 4})  # undo the redo
    with pytest.raises(TableError, match="nothing to undo yet"):
        table_.command(gid, 4, {"type": "undo"})
    assert table_.snapshot() == redone


def test_table_errors_have_a_kind(table):
    _, client, _ = table
    response = client.post("/api/game", json={"players": "Ada"})
    assert response.status_code == 400 and response.get_json()["kind"] == "TableError"


def test_a_game_exports_as_a_replayable_jsonl_file(table, tmp_path):
    from companion.amerigo.replay import main as replay

    _, client, _ = table
    game = play_to_first_action(client)
    response = client.get(f"/api/game/{game['id']}/events.jsonl")
    assert response.status_code == 200
    assert "attachment" in response.headers["Content-Disposition"]
    path = tmp_path / "game.jsonl"
    path.write_bytes(response.data)
    assert len(response.data.decode().splitlines()) == game["seq"]
    assert replay([str(path)]) == 0
    assert client.get("/api/game/999/events.jsonl").status_code == 404


def test_a_phone_enters_the_goods_printed_on_a_player_sheet(table):
    _, client, _ = table
    game = start(client)
    response = send(client, game, {"type": "sheet_goods", "player": "Eva",
                                   "goods": ["cotton", "sugar"]})
    assert response.status_code == 200, response.get_json()
    eva = response.get_json()["state"]["players"][0]
    assert eva["sheet_goods"] == ["cotton", "sugar"] and eva["production"]["coffee"] == 0
