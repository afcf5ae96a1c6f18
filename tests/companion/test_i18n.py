"""German beside English: a complete catalogue, each phone's language, refusals in it."""

import json
import re
from pathlib import Path

import pytest
from table_access import playing, policy

from companion.amerigo import Game, NotEnough
from companion.hub import Hub
from companion.i18n import load_catalogues
from companion.i18n.catalogue import read_catalog
from companion.i18n.extract import extract, missing
from companion.i18n.web import Localizer, localize
from companion.store import Store
from companion.table import GameTable
from companion.text import Msg, placeholders
from companion.tray import TrayBoard
from companion.web.app import create_app

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "companion" / "amerigo" / "examples"
SETUP = {"blue": 4, "black": 1, "red": 3, "brown": 3, "green": 4, "yellow": 2, "white": 3}
GERMAN = {"Accept-Language": "de-DE,de;q=0.9,en;q=0.5"}


@pytest.fixture(scope="module")
def german():
    return load_catalogues()["de"]


@pytest.fixture
def client(tmp_path):
    store = Store(tmp_path / "db.sqlite")
    hub = Hub()
    access = policy(tmp_path)
    app = create_app(TrayBoard(store, hub), hub, table=GameTable(store, hub), access=access)
    yield playing(app.test_client(), access)
    store.close()


# --- the catalogue --------------------------------------------------------------------------


def test_every_message_in_the_code_has_a_german_translation():
    template = extract()
    assert len(template) > 400  # refusals, history lines, the page and its scripts
    assert missing(template, read_catalog("de")) == []


def test_no_translation_is_left_over_from_texts_the_code_no_longer_has():
    used = {m.id for m in extract() if m.id}
    stale = [m.id for m in read_catalog("de") if m.id and m.id not in used]
    assert stale == [], "run: python -m companion.i18n.extract"


def test_each_translation_fills_in_the_same_values_as_its_english_text():
    wrong = []
    for m in read_catalog("de"):
        if not m.id:
            continue
        ids = [m.id] if isinstance(m.id, str) else list(m.id)
        strings = [m.string] if isinstance(m.string, str) else list(m.string)
        for english, german in zip(ids, strings, strict=True):
            if placeholders(english) != placeholders(german):
                wrong.append((english, german))
    assert wrong == []


def _templates(message: dict, out: set):
    out.add(message["msg"])
    for value in message["args"].values():
        for v in value if isinstance(value, list) else [value]:
            if isinstance(v, dict) and "msg" in v:
                _templates(v, out)
    return out


@pytest.mark.parametrize("name", ["game-4p.jsonl", "game-2p.jsonl"])
def test_whole_example_games_read_in_german(name, german):
    """What extraction could miss, a played game shows: every line of its history is German."""
    lines = (EXAMPLES / name).read_text().splitlines()
    game = Game.from_events([json.loads(line) for line in lines if line.strip()])
    known = {m.id for m in read_catalog("de") if m.id}
    structure = re.compile(r"^(\{p\d+\}[ ,;]*)+$")  # text.joined: nothing to translate
    seen: set = set()
    for line in game.history():
        _templates(line["text_msg"], seen)
        if "outcome_msg" in line:
            _templates(line["outcome_msg"], seen)
    assert [t for t in seen if t not in known and not structure.match(t)] == []
    said = localize(game.history(), german)
    assert any(h["text"].startswith("Schale abgelesen: ") for h in said)
    assert not any(h["text"].startswith(("Tray read", "Undo #")) for h in said)
    # the goods too: "kauft Baumwolle (2)", not "kauft cotton (2)"
    texts = " ".join(h["text"] + " " + h["outcome"] for h in said)
    assert not re.search(r"\b(cotton|tobacco|sugar|coconut|coffee)\b", texts)
    assert re.search(r"\b(Baumwolle|Tabak|Zucker|Kokosnuss|Kaffee)\b", texts)


def test_a_broken_translation_falls_back_to_english_not_to_an_error():
    class Broken:
        lang = "xx"

        @staticmethod
        def gettext(text):
            return "{unknown} kaputt"

    message = Msg("{player} has no treasure chest", player="Ada")
    assert message.render(Broken.gettext) == "Ada has no treasure chest"


def test_the_rules_engine_stays_free_of_flask_and_babel():
    for path in (REPO / "companion" / "amerigo").glob("*.py"):
        imports = re.findall(r"^\s*(?:from|import) ([\w.]+)", path.read_text(), re.M)
        assert not [m for m in imports if m.split(".")[0] in ("flask", "babel")], path


def test_a_refusal_carries_its_message_id_and_values():
    exc = NotEnough("{player} has no treasure chest", player="Ada")
    assert str(exc) == "Ada has no treasure chest"
    assert exc.msg.to_json() == {"msg": "{player} has no treasure chest",
                                 "args": {"player": "Ada"}}
    placed = exc.within("event #{n}: {error}", n=3)
    assert type(placed) is NotEnough and str(placed) == "event #3: Ada has no treasure chest"


# --- each phone's language --------------------------------------------------------------------


def start(client, headers=None):
    response = client.post("/api/game", json={"players": ["Eva", "Finn"]}, headers=headers or {})
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def send(client, game, command, headers=None):
    body = {"base": game["seq"], "command": command}
    return client.post(f"/api/game/{game['id']}/command", json=body, headers=headers or {})


def test_english_is_the_default(client):
    game = start(client)
    refused = send(client, game, {"type": "tray_read", "tray": {"blue": 3}})
    assert refused.status_code == 400
    assert refused.get_json()["error"] == (
        "reading the tray is not possible now: the game expects "
        "setup_drop_read / pirate_revealed")
    assert refused.headers["Content-Language"] == "en"
    assert [h["text"] for h in game["history"]] == ["Game created", "Players in order: Eva, Finn"]
    page = client.get("/").get_data(as_text=True)
    assert '<html lang="en">' in page and "Score sheet" in page
    assert client.get("/", headers={"Accept-Language": "fr-FR,fr"}).headers[
        "Content-Language"] == "en"  # a language we do not speak: English


def test_the_api_answers_in_german_with_accept_language_de(client):
    game = start(client, GERMAN)
    assert [h["text"] for h in game["history"]] == ["Spiel angelegt",
                                                     "Spieler in Reihenfolge: Eva, Finn"]
    refused = send(client, game, {"type": "tray_read", "tray": {"blue": 3}}, GERMAN)
    assert refused.status_code == 400
    body = refused.get_json()
    assert body["kind"] == "WrongStage"
    assert body["error"].startswith("die Schale ablesen ist jetzt nicht möglich")
    assert refused.headers["Content-Language"] == "de"
    assert "Accept-Language" in refused.headers["Vary"]

    stale = client.post(f"/api/game/{game['id']}/command", headers=GERMAN,
                        json={"base": 0, "command": {"type": "undo"}})
    assert stale.status_code == 409 and "du hattest 0" in stale.get_json()["error"]
    table_error = client.post(f"/api/game/{game['id']}/command", headers=GERMAN,
                              json={"base": 2, "command": {"type": "bogus"}})
    assert table_error.get_json()["error"].startswith("unbekannter Befehlstyp")
    device = client.post("/api/tray/read", headers=GERMAN)
    assert device.status_code == 503 and "Kamera" in device.get_json()["error"]
    for absent in (client.get("/api/game/99", headers=GERMAN),
                   client.post("/api/game/99/resume", headers=GERMAN)):
        assert absent.status_code == 404
        assert absent.get_json()["error"] == "es gibt kein Spiel 99"


def test_german_rules_words_in_refusals_and_history(client):
    game = start(client, GERMAN)
    for command in ({"type": "setup_drop_read", "tray": SETUP},
                    {"type": "pirate_revealed", "value": 4},
                    {"type": "tray_read", "tray": {"blue": 3, "yellow": 1}}):
        response = send(client, game, command, GERMAN)
        assert response.status_code == 200, response.get_json()
        game = response.get_json()
    wrong = send(client, game, {"type": "action", "player": "Eva", "choice": "red"}, GERMAN)
    assert wrong.get_json()["error"] == (
        "rot (Planen) steht Eva nicht zur Wahl; möglich: blau, gelb")
    names = [a["name"] for a in game["state"]["options"]["Eva"]["actions"]]
    assert names == ["Schiffe bewegen", "Produktionsplättchen kaufen"]
    texts = [h["text"] for h in game["history"]]
    assert "Schale abgelesen: 3× blau, 1× gelb" in texts
    assert game["history"][-1]["text_msg"]["msg"] == "Tray read: {cubes}"  # the id stays


def test_the_switch_cookie_wins_over_the_browser_language(client):
    client.set_cookie("lang", "de")
    assert start(client)["history"][0]["text"] == "Spiel angelegt"
    page = client.get("/", headers={"Accept-Language": "en"}).get_data(as_text=True)
    assert '<html lang="de">' in page and "Wertungsblatt" in page
    assert '<script defer src="/i18n/de.js"></script>' in page
    client.set_cookie("lang", "en")
    assert client.get("/api/game", headers=GERMAN).get_json()["history"][0]["text"] == (
        "Game created")
    client.set_cookie("lang", "klingon")  # not a language we speak: the browser's one
    assert client.get("/api/game", headers=GERMAN).get_json()["history"][0]["text"] == (
        "Spiel angelegt")


def test_the_page_gets_its_own_strings_as_a_per_language_catalogue(client):
    script = client.get("/i18n/de.js")
    assert script.status_code == 200 and script.mimetype == "text/javascript"
    body = script.get_data(as_text=True)
    assert body.startswith("window.CT_I18N = ") and body.rstrip().endswith(";")
    catalogue = json.loads(body[len("window.CT_I18N = "):].rstrip().rstrip(";"))
    assert catalogue["lang"] == "de"
    messages = catalogue["messages"]
    assert messages["Nothing to undo"] == "Nichts rückgängig zu machen"
    assert messages["{n} cube"] == ["{n} Würfel", "{n} Würfel"]
    assert messages["blue"] == "blau"
    assert "unknown event type {got}; known: {known}" not in messages  # only the page's own
    assert json.loads(client.get("/i18n/en.js").get_data(as_text=True)[17:-2])["messages"] == {}
    assert client.get("/i18n/xx.js").status_code == 404


def test_the_stream_says_each_update_in_each_phones_language(german):
    localizer = Localizer(load_catalogues())
    snapshot = {"history": [{"text": "Undo", "text_msg": {"msg": "Undo", "args": {}}}]}
    english = localizer.json_for(snapshot, localizer.catalogues["en"])
    assert json.loads(english)["history"][0]["text"] == "Undo"
    said = localizer.json_for(snapshot, german)
    assert json.loads(said)["history"][0]["text"] == "Rückgängig"
    assert localizer.json_for(snapshot, german) is said  # once per language, not per phone


def test_the_live_stream_starts_in_the_phones_language(client):
    start(client)
    response = client.get("/api/stream", headers=GERMAN, buffered=False)
    chunks = response.response
    next(chunks)  # retry
    first = next(chunks)
    first = first.decode() if isinstance(first, bytes) else first
    assert first.startswith("event: snapshot")
    data = json.loads(first.split("data: ", 1)[1])
    assert data["game"]["history"][0]["text"] == "Spiel angelegt"
    response.close()


def test_the_catalogue_ships_with_the_package():
    pyproject = (REPO / "pyproject.toml").read_text()
    assert '"*.po"' in pyproject and "babel" in pyproject
    assert (REPO / "companion" / "i18n" / "de.po").is_file()
