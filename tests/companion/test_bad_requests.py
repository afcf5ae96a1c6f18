"""Nothing a request sends can break the game: every bad one is a 4xx in words, and changes nothing.

Each case here once answered 500, or got into the game's log, or would have.
"""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from table_access import playing, policy

from companion.amerigo import Game, RulesError
from companion.hub import Hub
from companion.store import SeqConflict, Store
from companion.table import GameTable, TableError
from companion.tray import TrayBoard
from companion.web.app import create_app
from companion.web.inputs import BadInput, json_body

SETUP = {"blue": 4, "black": 1, "red": 3, "brown": 3, "green": 4, "yellow": 2, "white": 3}


@pytest.fixture
def parts(tmp_path):
    store = Store(tmp_path / "db.sqlite")
    hub = Hub()
    table = GameTable(store, hub)
    access = policy(tmp_path)
    app = create_app(TrayBoard(store, hub), hub, table=table, access=access)
    client = playing(app.test_client(), access)
    game = client.post("/api/game", json={"players": ["Eva", "Finn"]}).get_json()
    yield client, table, store, game
    store.close()


def post_raw(client, path, data, content_type="application/json"):
    return client.post(path, data=data, headers={"Content-Type": content_type})


def deep(depth, inner='"x"'):
    return "[" * depth + inner + "]" * depth


def nested(depth):
    value = "x"
    for _ in range(depth):
        value = [value]
    return value


def assert_unchanged(client, store, game):
    after = client.get("/api/game")
    assert after.status_code == 200
    assert after.get_json() == game
    assert store.event_count(game["id"]) == game["seq"]


@pytest.mark.parametrize(
    ("body", "status", "words"),
    [
        ("[" * 100_000, 413, "too big"),
        (deep(1000), 400, "nests lists or objects more than 8 deep"),
        (deep(5000), 400, "more than 8 deep"),  # deeper than the decoder goes
        ('{"base": NaN, "command": {"type": "undo"}}', 400, "NaN"),
        ('{"base": 2, "command": {"type": "pirate_revealed", "value": Infinity}}', 400,
         "Infinity"),
        ('{"base": 2, "command": {"type": "pirate_revealed", "value": 1e999}}', 400, "too large"),
        ('{"base": 2, "command": {"type": "pirate_revealed", "value": 1' + "0" * 30 + "}}", 400,
         "too large"),
        ('{"base": 2, "command": {"type": "pirate_revealed", "value": 1' + "0" * 5000 + "}}",
         400, "not valid JSON"),
        ('{"base": 2, "base": 3, "command": {"type": "undo"}}', 400, "'base' is given twice"),
        ('{"base": 2, "command": {"type": "undo"}, "force": true}', 400,
         "unknown field(s) 'force'"),
        ('{"base": 2, "command": {"type": []}}', 400, "unknown command type []"),
        ('{"base": 2, "command": {"type": {"a": 1}}}', 400, "unknown command type"),
        ('{"base": 2, "command": {"type": "undo", "sneaky": 1}}', 400, "unknown field(s) sneaky"),
        ('{"base": 2, "command": {"type": "pirate_revealed", "value": 1, "note": '
         + deep(5) + "}}", 400, "note must be a text"),
        ('{"base": 2, "command": {"type": "pirate_revealed", "value": 1, "note": "'
         + "x" * 501 + '"}}', 400, "longer than 500"),
        ('{"base": 2, "command": {"type": "pirate_revealed", "value": 1, "note": "a\\u0007"}}',
         400, "control character"),
        ('{"base": 2, "command": {"type": "pirate_revealed", "value": 1, "note": "\\ud800"}}',
         400, "control character"),
        ('{"base": 2, "command": {"type": "pirate_revealed", "value": 1, "at": "noon"}}', 400,
         "at must be a time"),
        (b"\xff\xfe{}", 400, "not UTF-8"),
        ("", 400, "not valid JSON"),
        ("[]", 400, "send a JSON object"),
        ('{"base": true, "command": {"type": "undo"}}', 400, "'base'"),
        # right after the start an undo would take back the seating: the game would wait for
        # players_seated, which no phone can send
        ('{"base": 2, "command": {"type": "undo"}}', 400, "nothing to undo yet"),
        ('{"base": 2, "command": {"type": "undo", "target": 2}}', 400,
         "the seating cannot be undone"),
    ],
)
def test_a_bad_command_is_a_4xx_in_words_and_changes_nothing(parts, body, status, words):
    client, _, store, game = parts
    response = post_raw(client, f"/api/game/{game['id']}/command", body)
    assert response.status_code == status, response.get_data()[:300]
    assert words in response.get_json()["error"]
    assert_unchanged(client, store, game)


def test_a_body_that_is_not_declared_json_is_refused(parts):
    client, _, store, game = parts
    body = json.dumps({"base": 2, "command": {"type": "undo"}})
    response = post_raw(client, f"/api/game/{game['id']}/command", body, "text/plain")
    assert response.status_code == 400 and "Content-Type" in response.get_json()["error"]
    assert_unchanged(client, store, game)


@pytest.mark.parametrize(
    ("path", "status", "words"),
    [
        ("/api/tray/history?limit=²", 400, "limit must be a whole number from 1 to 500"),
        ("/api/tray/history?limit=٣", 400, "limit"),
        ("/api/tray/history?limit=" + "9" * 40, 400, "limit"),
        (f"/api/tray/picture/{2**64}.jpg", 404, "no picture kept"),
        (f"/api/tray/picture/{2**63}.jpg", 404, "no picture kept"),
        (f"/api/game/{2**64}/events.jsonl", 404, "there is no game"),
        ("/api/nothing-here", 404, "Not Found"),
    ],
)
def test_bad_paths_and_query_strings_are_4xx_in_words(parts, path, status, words):
    client, _, store, game = parts
    response = client.get(path)
    assert response.status_code == status
    assert words in response.get_json()["error"]
    assert_unchanged(client, store, game)


def test_a_command_for_a_game_id_beyond_sqlites_range(parts):
    client, _, store, game = parts
    response = client.post(f"/api/game/{2**64}/command", json={"base": 2, "command": {"type":
                                                                                        "undo"}})
    assert response.status_code == 400 and "not the game at the table" in response.get_json()[
        "error"]
    assert_unchanged(client, store, game)


def test_a_wrong_method_says_which_ones_are_allowed(parts):
    client, *_ = parts
    response = client.put("/api/game")
    assert response.status_code == 405
    assert "Method Not Allowed" in response.get_json()["error"]
    assert "POST" in response.headers["Allow"]


@pytest.mark.parametrize(
    ("players", "words"),
    [
        (["Ada", "ada"], "names must differ"),
        (["Ada", "ＡＤＡ"], "names must differ"),  # full-width letters are the same name
        (["Ada", "A" * 25], "at most 24 characters"),
        (["Ada", "Ben\u0007"], "control character"),
        (["Ada", "\u200bAda"], "control or invisible character"),  # looks like "Ada"
        (["Ada", "Ben\u202e"], "control or invisible character"),
        # a joiner only between two visible characters: not at an end, doubled, or by a space
        (["Ada", "\u200dBen"], "control or invisible character"),
        (["Ada", "Ben\u200c"], "control or invisible character"),
        (["Ada", "B\u200d\u200den"], "control or invisible character"),
        (["Ada", "Ben \u200dX"], "control or invisible character"),
        (["Ada", "\U0001f3f4\u200d \u2620"], "control or invisible character"),
        # tag characters only as a flag's: after the black flag, ended by the cancel tag
        (["Ada", "Ben\U000e0067\U000e0062\U000e007f"], "control or invisible character"),
        (["Ada", "\U0001f3f4\U000e0067\U000e0062"], "control or invisible character"),
        (["Ada", "\U0001f3f4\U000e007f"], "control or invisible character"),
        (["Ada", "\U0001f3f4\U000e0067\U000e007f\U000e007f"], "control or invisible character"),
        # nothing for the marks to sit on
        (["Ada", "\u0301\u0301"], "only accents or marks"),
        (["Ada", "\ufe0f"], "only accents or marks"),
        (["Ada", "\u0301 \u0301"], "only accents or marks"),
        # a joiner or a variation selector does not make another name
        (["Ada", "A\u200dda"], "names must differ"),
        (["\u2620", "\u2620\ufe0f"], "names must differ"),
        (["\U0001f468\u200d\U0001f373", "\U0001f468\U0001f373"], "names must differ"),
        (["Ada", 3], "list of names"),
        ("Ada", "list of names"),
    ],
)
def test_player_names_are_checked(parts, players, words):
    client, _, store, game = parts
    response = client.post("/api/game", json={"players": players})
    assert response.status_code == 400
    assert words in response.get_json()["error"]
    assert_unchanged(client, store, game)


def test_names_are_kept_as_typed_without_the_blanks(parts):
    client, *_ = parts
    response = client.post("/api/game", json={"players": [" Zoë ", "李", "  "], "name": " Fri "})
    assert response.status_code == 201
    assert response.get_json()["state"]["player_order"] == ["Zoë", "李"]


@pytest.mark.parametrize(
    "players",
    [
        ["\U0001f3f4\u200d\u2620\ufe0f", "\U0001f469\u200d\U0001f469\u200d\U0001f467\u200d"
         "\U0001f466"],  # pirate flag, family: emoji joined by ZWJ
        ["\U0001f468\u200d\U0001f373 night", "\U0001f469\U0001f3fd\u200d\U0001f680"],
        ["\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645", "\u0915\u094d\u200d\u0937"],
        ["\u2764\ufe0f", "1\ufe0f\u20e3"],  # a variation selector (Mn), a keycap (Me)
        ["Zoe\u0301", "\U0001f441\ufe0f\u200d\U0001f5e8\ufe0f"],  # a mark before a ZWJ
        # subdivision flags: Scotland and Wales are different names
        ["\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f",
         "\U0001f3f4\U000e0067\U000e0062\U000e0077\U000e006c\U000e0073\U000e007f Ben"],
    ],
)
def test_names_with_joiners_and_marks_in_their_place_are_kept(parts, players):
    client, *_ = parts
    response = client.post("/api/game", json={"players": players, "name": players[0]})
    assert response.status_code == 201, response.get_json()
    game = response.get_json()
    assert game["state"]["player_order"] == players
    assert game["state"]["name"] == players[0]


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"players": ["Ada", "Ben"], "name": "x" * 61}, "at most 60 characters"),
        ({"players": ["Ada", "Ben"], "name": 7}, "must be a text"),
        ({"players": ["Ada", "Ben"], "name": "\u0301"}, "only accents or marks"),
        ({"players": ["Ada", "Ben"], "name": "Friday\u200d"}, "control or invisible"),
        ({"players": ["Ada", "Ben"], "colour": "red"}, "unknown field(s) 'colour'"),
        ({"players": ["Ada", "Ben"], "settings": {"goods": "all"}}, "goods"),
        ({"players": ["Ada", "Ben"], "settings": {"flavour": 1}}, "unknown setting"),
    ],
)
def test_a_bad_new_game_is_refused_and_the_old_game_stays(parts, body, words):
    client, _, store, game = parts
    response = client.post("/api/game", json=body)
    assert response.status_code == 400
    assert words in response.get_json()["error"]
    assert_unchanged(client, store, game)
    assert len(store.games()) == 1


def test_corners_take_strict_json_too(tmp_path):
    from companion.web.app import DeviceHooks

    store = Store(tmp_path / "db.sqlite")
    hub = Hub()
    taken = []
    access = policy(tmp_path)
    app = create_app(TrayBoard(store, hub), hub, DeviceHooks(set_corners=taken.append),
                     access=access)
    client = playing(app.test_client(), access)
    for body in ("[" * 100_000, '{"corners": [[NaN, 1]]}', deep(50), '{"corners": null, "x": 1}'):
        response = post_raw(client, "/api/calibrate/corners", body)
        assert 400 <= response.status_code < 500
        assert "corners" in response.get_json()["error"] or "too big" in response.get_json()[
            "error"]
    assert taken == []
    store.close()


# -- the game in memory changes only after the write is durable ---------------------------


def test_a_failed_write_changes_nothing_in_memory_or_on_disk(parts, monkeypatch):
    _client, table, store, game = parts

    def full_disk(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(store, "append_events", full_disk)
    command = {"type": "setup_drop_read", "tray": SETUP}
    with pytest.raises(OSError):
        table.command(game["id"], game["seq"], command)
    monkeypatch.undo()
    assert table.snapshot() == game  # the cached game was not advanced either
    assert store.event_count(game["id"]) == game["seq"]
    after = table.command(game["id"], game["seq"], command)  # and the table goes on
    assert after["seq"] == game["seq"] + 1


def test_a_refused_command_leaves_the_cached_game_alone(parts):
    client, table, _store, game = parts
    with pytest.raises(RulesError):
        table.command(game["id"], game["seq"], {"type": "pirate_revealed", "value": 1,
                                               "note": nested(2000)})
    with pytest.raises(RulesError):
        table.command(game["id"], game["seq"], {"type": "action", "player": "Zed",
                                               "choice": "gold"})
    assert table.snapshot() == game
    assert client.get("/api/game").get_json() == game


def test_game_apply_keeps_nothing_when_copying_the_event_fails(monkeypatch):
    """The bug behind a game that answered 500 for good: apply changed the game, then raised."""
    import companion.amerigo.game as game_module

    game = Game()
    game.apply({"v": 1, "type": "game_created"})
    original = game_module.copy.deepcopy

    def failing(value, *args):
        if isinstance(value, dict) and value.get("type") == "players_seated":
            raise RecursionError("maximum recursion depth exceeded")
        return original(value, *args)

    monkeypatch.setattr(game_module.copy, "deepcopy", failing)
    with pytest.raises(RecursionError):
        game.command({"type": "players_seated", "players": ["Ada", "Ben"]})
    monkeypatch.undo()
    assert len(game) == 1 and game.state.stage == "seating"


def test_a_table_command_on_a_stale_base_is_a_conflict_not_a_change(parts):
    _, table, store, game = parts
    with pytest.raises(SeqConflict):
        table.command(game["id"], game["seq"] - 1, {"type": "setup_drop_read", "tray": SETUP})
    with pytest.raises(TableError, match="not the game at the table"):
        table.command(2**70, game["seq"], {"type": "setup_drop_read", "tray": SETUP})
    assert store.event_count(game["id"]) == game["seq"]


# -- properties: any body, any command value --------------------------------------------

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300) | JSON.map(lambda v: json.dumps(v).encode()))
def test_any_body_is_a_dict_or_a_bad_input(data):
    try:
        body = json_body(data, "application/json", frozenset({"base", "command"}))
    except BadInput as exc:
        assert str(exc)
    else:
        assert isinstance(body, dict) and set(body) <= {"base", "command"}


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(["type", "tray", "value", "player", "choice", "target",
                                        "redo", "note", "at", "x"]), JSON, max_size=4)
       | JSON)
def test_any_command_value_is_refused_in_words_or_applied(command):
    store = Store(":memory:")  # the same SQL, without a file's fsyncs
    table = GameTable(store, Hub())
    game = table.new_game(["Ada", "Ben"])
    try:
        after = table.command(game["id"], game["seq"], command)
    except (TableError, RulesError) as exc:
        assert str(exc)
        assert table.snapshot() == game
    else:
        assert after["seq"] == game["seq"] + 1 == store.event_count(game["id"])
    store.close()


def test_a_card_that_refuses_writes_is_said_and_changes_nothing(parts):
    """A full or read-only card: a clear 503 in words, the game as it was, and writes work
    again once the card takes them."""
    client, _table, store, game = parts
    store._db.execute("PRAGMA query_only = ON")  # every write now fails, as on a full card
    response = client.post(f"/api/game/{game['id']}/command", json={
        "base": game["seq"], "command": {"type": "setup_drop_read", "tray": SETUP}})
    assert response.status_code == 503
    body = response.get_json()
    assert body["kind"] == "NotSaved" and "could not save this, so nothing changed" in body[
        "error"] and "full or read-only" in body["error"]
    assert client.post("/api/game", json={"players": ["Ada", "Ben"]}).status_code == 503
    assert client.get("/api/game").get_json() == game
    store._db.execute("PRAGMA query_only = OFF")
    again = client.post(f"/api/game/{game['id']}/command", json={
        "base": game["seq"], "command": {"type": "setup_drop_read", "tray": SETUP}})
    assert again.status_code == 200
