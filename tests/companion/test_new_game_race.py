"""Two phones pressing "Start the game" at once start one game, not two: a new game names the
game its phone showed at the table (``replaces``), and is refused as stale (409 with the fresh
game, as a command with an old ``base`` is) when another phone started one first."""

import threading

import pytest

from companion.store import SeqConflict


def key(n):
    return f"start-{n:04d}-0123456789abcdef"


def start(client, players=("Eva", "Finn"), headers=None, **fields):
    return client.post("/api/game", json={"players": list(players), **fields},
                       headers=headers or {})


def games(client):
    return client.get("/api/games").get_json()["games"]


def test_the_second_of_two_new_games_for_the_same_table_is_a_409_with_the_first(table):
    _, client, _ = table
    first = start(client, ["Ada", "Ben"], replaces=None)
    assert first.status_code == 201
    late = start(client, ["Cleo", "Dan"], replaces=None)  # its phone saw no game either
    assert late.status_code == 409
    body = late.get_json()
    assert body["kind"] == "SeqConflict"
    assert body["game"] == first.get_json()  # the fresh game, for the phone to redraw at once
    assert body["error"].startswith(
        f"another phone started a game first (game {first.get_json()['id']} is at the table now)"
    )
    assert [g["id"] for g in games(client)] == [first.get_json()["id"]]  # one game, not two

    # the same with a game already at the table: both phones showed it
    shown = first.get_json()["id"]
    again = start(client, ["Eva", "Finn"], replaces=shown)
    assert again.status_code == 201
    late = start(client, ["Gus", "Hal"], replaces=shown)
    assert late.status_code == 409
    assert late.get_json()["game"] == again.get_json()
    assert client.get("/api/game").get_json() == again.get_json()
    assert len(games(client)) == 2


def test_the_table_refuses_a_stale_new_game_inside_its_lock(table):
    table_, _, _ = table
    first = table_.new_game(["Ada", "Ben"], replaces=None)
    with pytest.raises(SeqConflict, match="another phone started a game first"):
        table_.new_game(["Cleo", "Dan"], replaces=None)
    with pytest.raises(SeqConflict):
        table_.new_game(["Cleo", "Dan"], replaces=first["id"] + 1)
    assert table_.snapshot() == first
    second = table_.new_game(["Cleo", "Dan"], replaces=first["id"])
    assert table_.current_id() == second["id"] != first["id"]


@pytest.mark.parametrize("race", range(10))
def test_two_phones_pressing_start_at_once_start_one_game(table, race):
    table_, client, _ = table
    shown = None if race % 2 == 0 else start(client).get_json()["id"]
    before = len(games(client))
    barrier = threading.Barrier(2)
    answers = []

    def press(players):
        barrier.wait()
        answers.append(start(client, players, replaces=shown))

    threads = [threading.Thread(target=press, args=(p,)) for p in (["Ada", "Ben"], ["Cleo", "Dan"])]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(a.status_code for a in answers) == [201, 409]
    won = next(a for a in answers if a.status_code == 201).get_json()
    lost = next(a for a in answers if a.status_code == 409).get_json()
    assert lost["kind"] == "SeqConflict" and lost["game"]["id"] == won["id"]
    assert len(games(client)) == before + 1
    assert table_.current_id() == won["id"]


def test_a_wrong_replaces_is_a_409_with_the_game_at_the_table(table):
    table_, client, _ = table
    old = start(client, ["Ada", "Ben"]).get_json()
    new = start(client, ["Cleo", "Dan"]).get_json()
    for shown in (None, old["id"], new["id"] + 5):
        refused = start(client, ["Eva", "Finn"], replaces=shown)
        assert refused.status_code == 409, shown
        assert refused.get_json()["kind"] == "SeqConflict"
        assert refused.get_json()["game"] == new
    assert len(games(client)) == 2

    # a resumed game is the one at the table: a phone showing the newest game is stale now
    client.post(f"/api/game/{old['id']}/resume")
    assert start(client, ["Eva", "Finn"], replaces=new["id"]).status_code == 409
    assert start(client, ["Eva", "Finn"], replaces=old["id"]).status_code == 201
    assert len(games(client)) == 3
    assert table_.current_id() not in (old["id"], new["id"])


def test_without_replaces_a_new_game_is_started_as_before(table):
    table_, client, _ = table
    first = start(client, ["Ada", "Ben"])
    assert first.status_code == 201
    second = start(client, ["Cleo", "Dan"])  # a script, an older page: no "replaces"
    assert second.status_code == 201
    assert table_.current_id() == second.get_json()["id"] != first.get_json()["id"]
    assert table_.new_game(["Eva", "Finn"])["id"] == table_.current_id()  # nor from Python


@pytest.mark.parametrize("value", [True, False, 0, -1, "1", 1.5, [1], {"id": 1}])
def test_replaces_must_be_a_game_number_or_null(table, value):
    _, client, _ = table
    game = start(client).get_json()
    refused = start(client, ["Cleo", "Dan"], replaces=value)
    assert refused.status_code == 400, refused.get_json()
    assert "'replaces' must be the number of the game" in refused.get_json()["error"]
    assert client.get("/api/game").get_json() == game


def test_a_retried_new_game_gets_its_first_answer_not_a_409(table):
    table_, client, _ = table
    shown = start(client).get_json()["id"]
    headers = {"Idempotency-Key": key(1)}
    first = start(client, ["Ada", "Ben"], headers, replaces=shown)
    assert first.status_code == 201
    # the answer was lost; the phone sends the very same request again: the game it started
    # is at the table now, not the one it names, and still it gets the first answer
    retry = start(client, ["Ada", "Ben"], headers, replaces=shown)
    assert retry.status_code == 201
    assert retry.get_json() == first.get_json()
    # even after another phone started a game meanwhile
    other = start(client, ["Cleo", "Dan"], replaces=first.get_json()["id"])
    assert other.status_code == 201
    late = start(client, ["Ada", "Ben"], headers, replaces=shown)
    assert late.status_code == 201 and late.get_json()["id"] == first.get_json()["id"]
    assert table_.current_id() == other.get_json()["id"]  # the retry moved nothing
    assert len(games(client)) == 3
    # the same key with other players is still another request (422), whatever it replaces
    reused = start(client, ["Gus", "Hal"], headers, replaces=other.get_json()["id"])
    assert reused.status_code == 422


def test_a_refused_new_game_is_not_announced(table):
    table_, client, _ = table
    seen = []
    table_.on_change(seen.append)
    game = start(client, replaces=None).get_json()
    assert start(client, ["Cleo", "Dan"], replaces=None).status_code == 409
    assert [s["id"] for s in seen] == [game["id"]]


# --- a resume names the game its phone showed too ----------------------------------------------

def resume(client, game_id, **fields):
    return client.post(f"/api/game/{game_id}/resume", json=fields)


@pytest.mark.parametrize("race", range(6))
def test_two_phones_resuming_other_games_at_once_resume_one(table, race):
    table_, client, _ = table
    a = start(client, ["Ada", "Ben"]).get_json()["id"]
    b = start(client, ["Cleo", "Dan"]).get_json()["id"]
    shown = start(client, ["Eva", "Finn"]).get_json()["id"]  # both phones show it
    barrier = threading.Barrier(2)
    answers = {}

    def press(game_id):
        barrier.wait()
        answers[game_id] = resume(client, game_id, replaces=shown)

    threads = [threading.Thread(target=press, args=(g,)) for g in ((a, b) if race % 2 else (b, a))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(r.status_code for r in answers.values()) == [200, 409]
    won = next(g for g, r in answers.items() if r.status_code == 200)
    lost = answers[a if won == b else b].get_json()
    assert lost["kind"] == "SeqConflict"
    assert lost["game"] == answers[won].get_json() == client.get("/api/game").get_json()
    assert lost["error"].startswith(
        f"another phone changed the game at the table first (game {won} is there now), so game "
        f"{a if won == b else b} was not resumed"
    )
    assert table_.current_id() == won


def test_a_resume_with_a_stale_or_wrong_replaces_is_a_409_and_changes_nothing(table):
    table_, client, _ = table
    old = start(client, ["Ada", "Ben"]).get_json()
    new = start(client, ["Cleo", "Dan"]).get_json()
    seen = []
    table_.on_change(seen.append)
    for shown in (None, old["id"], new["id"] + 5):  # none, another phone's news, no such game
        refused = resume(client, old["id"], replaces=shown)
        assert refused.status_code == 409, shown
        assert refused.get_json()["kind"] == "SeqConflict"
        assert refused.get_json()["game"] == new
    assert table_.current_id() == new["id"] and seen == []  # not moved, not announced
    with pytest.raises(SeqConflict, match="was not resumed"):
        table_.resume(old["id"], replaces=old["id"])  # from Python the same, inside the lock
    assert table_.snapshot() == new

    back = resume(client, old["id"], replaces=new["id"])
    assert back.status_code == 200 and back.get_json()["id"] == old["id"]
    assert [s["id"] for s in seen] == [old["id"]]
    # a new game started meanwhile: a phone still showing the old one resumes nothing
    third = start(client, ["Eva", "Finn"], replaces=old["id"]).get_json()
    assert resume(client, new["id"], replaces=old["id"]).status_code == 409
    assert table_.current_id() == third["id"]


def test_resuming_the_game_already_at_the_table_answers_with_it(table):
    """The retry of a resume whose answer was lost (or a second phone resuming the same game)
    names the game shown before: the game it asked for is there, so it gets it, not a 409."""
    table_, client, _ = table
    old = start(client, ["Ada", "Ben"]).get_json()
    new = start(client, ["Cleo", "Dan"]).get_json()
    first = resume(client, old["id"], replaces=new["id"])
    retry = resume(client, old["id"], replaces=new["id"])
    assert first.status_code == retry.status_code == 200
    assert retry.get_json() == first.get_json()
    assert table_.current_id() == old["id"]


def test_a_resume_without_replaces_or_a_body_is_taken_as_before(table):
    table_, client, _ = table
    old = start(client, ["Ada", "Ben"]).get_json()
    new = start(client, ["Cleo", "Dan"]).get_json()
    assert client.post(f"/api/game/{old['id']}/resume").status_code == 200  # scripts, curl
    assert table_.current_id() == old["id"]
    assert resume(client, new["id"]).status_code == 200  # {}: older pages
    assert table_.current_id() == new["id"]
    assert table_.resume(old["id"])["id"] == old["id"] == table_.current_id()  # Python
    assert client.post("/api/game/99/resume", json={"replaces": old["id"]}).status_code == 404


@pytest.mark.parametrize("value", [True, False, 0, -1, "1", 1.5, [1], {"id": 1}])
def test_a_resumes_replaces_must_be_a_game_number_or_null(table, value):
    table_, client, _ = table
    old = start(client, ["Ada", "Ben"]).get_json()
    new = start(client, ["Cleo", "Dan"]).get_json()
    refused = resume(client, old["id"], replaces=value)
    assert refused.status_code == 400, refused.get_json()
    assert "'replaces' must be the number of the game" in refused.get_json()["error"]
    assert table_.current_id() == new["id"]


@pytest.mark.parametrize("body", [
    {"x": 1}, {"replaces": None, "confirmed": True}, {"game": 1},
])
def test_a_resume_refuses_fields_it_does_not_take(table, body):
    table_, client, _ = table
    old = start(client, ["Ada", "Ben"]).get_json()
    new = start(client, ["Cleo", "Dan"]).get_json()
    refused = resume(client, old["id"], **body)
    assert refused.status_code == 400
    assert refused.get_json()["kind"] == "BadInput"
    assert refused.get_json()["error"].startswith("unknown field(s)")
    assert "this request takes replaces" in refused.get_json()["error"]
    for data, mimetype in ((b"[]", "application/json"), (b'{"replaces": 2', "application/json"),
                           (b'{"replaces": 2}', "text/plain")):
        bad = client.post(f"/api/game/{old['id']}/resume", data=data, content_type=mimetype)
        assert bad.status_code == 400 and bad.get_json()["kind"] == "BadInput", data
    assert table_.current_id() == new["id"]


def test_the_game_list_says_round_null_before_the_game_begins_as_its_state(table):
    from table_games import at_adas_black_turn_with_gold

    table_, client, _ = table
    playing_ = at_adas_black_turn_with_gold(table_)
    seated = start(client, ["Cleo", "Dan"]).get_json()
    assert seated["state"]["round"] is None
    listed = {g["id"]: g for g in games(client)}
    assert listed[seated["id"]]["round"] is None and listed[seated["id"]]["stage"] == "setup"
    assert listed[playing_["id"]]["round"] == playing_["state"]["round"] == 1


def test_a_stale_resume_is_refused_in_the_phones_language(table):
    _, client, _ = table
    old = start(client, ["Ada", "Ben"]).get_json()
    new = start(client, ["Cleo", "Dan"]).get_json()
    refused = client.post(f"/api/game/{old['id']}/resume", json={"replaces": old["id"]},
                          headers={"Accept-Language": "de-DE,de;q=0.9,en;q=0.5"})
    assert refused.status_code == 409
    assert refused.get_json()["error"].startswith(
        f"ein anderes Handy hat das Spiel am Tisch zuerst gewechselt (jetzt ist Spiel {new['id']} "
        f"dort), deshalb wurde Spiel {old['id']} nicht fortgesetzt"
    )
