"""The camera's doubts about a reading in each phone's language: the counter hands them over as
data beside its English words (``vision.reading.Doubt``), the app says them as ``Msg``."""

import json

import pytest
from table_access import playing, policy

from companion.doubts import doubt_message, warning_messages
from companion.hub import Hub
from companion.i18n import load_catalogues
from companion.store import Store
from companion.tray import TrayBoard
from companion.web.app import create_app
from vision.reading import DOUBT_TEXTS, PLACES, Doubt

GERMAN = {"Accept-Language": "de-DE,de;q=0.9"}


def reading(*doubts: Doubt) -> dict:
    """A reading as the device hands it in (``TrayReading.to_dict``)."""
    return {"counts": {"red": 2}, "cubes": [], "uncertain": True,
            "warnings": [d.text for d in doubts], "doubts": [d.to_dict() for d in doubts]}


@pytest.fixture
def app(tmp_path):
    store = Store(tmp_path / "db.sqlite")
    hub = Hub()
    board = TrayBoard(store, hub)
    access = policy(tmp_path)
    app = create_app(board, hub, access=access)
    yield playing(app.test_client(), access), board
    store.close()


@pytest.mark.parametrize("kind", sorted(DOUBT_TEXTS))
def test_each_doubt_said_in_english_is_the_counters_own_warning(kind):
    """The app's English is word for word the counter's, so an English phone reads no change."""
    for place in PLACES:
        for times in (1, 2, 5):
            doubt = Doubt(kind, "red", "brown", place, times)
            assert str(doubt_message(doubt.to_dict())) == doubt.text


def test_each_doubt_is_said_in_german_with_the_tables_colour_words():
    german = load_catalogues()["de"]
    said = german.say(doubt_message(Doubt("colour", "red", "brown", "top-left").to_dict()))
    assert said == "ein Würfel oben links im Bild ist vielleicht rot oder braun"
    twice = german.say(doubt_message(Doubt("one_more", "green", place="middle", times=2)
                                     .to_dict()))
    assert twice == "in der Bildmitte liegt vielleicht noch ein Würfel (grün?) (zweimal)"
    for kind in DOUBT_TEXTS:
        for place in PLACES:
            doubt = Doubt(kind, "white", "black", place)
            text = german.say(doubt_message(doubt.to_dict()))
            assert text != doubt.text and "{" not in text
            assert "white" not in text and "picture" not in text


@pytest.mark.parametrize("odd", [
    {"kind": "glare"}, {"kind": "colour", "colour": "red", "place": "top-left"},
    {"kind": "one_more", "colour": "red", "place": "front"}, {"kind": "too_many"},
    {"kind": "no_outline", "times": 0}, {"kind": "no_outline", "times": "2"}, {},
])
def test_a_doubt_this_version_does_not_know_keeps_the_counters_english(odd):
    assert doubt_message(odd) is None
    said = warning_messages({"warnings": ["the counter's words", "a cube may be red"],
                             "doubts": [odd, Doubt("too_many", "red").to_dict()]})
    assert said[0] == "the counter's words"
    assert said[1]["msg"] == "more {colour} cubes read than the tower can hold"


def test_a_reading_without_doubts_as_data_keeps_its_english_warnings():
    assert warning_messages({"warnings": ["glare on the left"]}) is None
    assert warning_messages({"warnings": ["a", "b"], "doubts": [{"kind": "no_outline"}]}) is None
    assert warning_messages({"warnings": [], "doubts": "nonsense"}) is None


def test_the_api_and_the_history_say_a_readings_warnings_in_the_phones_language(app):
    client, board = app
    doubts = (Doubt("colour", "red", "brown", "bottom-left"), Doubt("no_outline"))
    board.publish_reading("f1", reading(*doubts), None)
    english = client.get("/api/tray").get_json()
    assert english["warnings"] == [d.text for d in doubts]
    assert english["doubts"] == [d.to_dict() for d in doubts]
    german = client.get("/api/tray", headers=GERMAN).get_json()
    assert german["warnings"] == [
        "ein Würfel unten links im Bild ist vielleicht rot oder braun",
        "der Umriss der Schale wurde nicht gefunden: sind ihre Ecken im Bild?",
    ]
    history = client.get("/api/tray/history", headers=GERMAN).get_json()["readings"]
    assert history[0]["warnings"] == german["warnings"]


def test_the_live_stream_says_a_new_readings_warnings_in_german(app):
    client, board = app
    response = client.get("/api/stream", headers=GERMAN, buffered=False)
    chunks = iter(response.response)
    next(chunks)  # retry
    next(chunks)  # snapshot
    board.publish_reading("f2", reading(Doubt("too_many_read_as", "red", "brown")), None)
    update = next(chunks)
    update = update.decode() if isinstance(update, bytes) else update
    assert update.startswith("event: tray")
    data = json.loads(update.split("data: ", 1)[1])
    assert data["warnings"] == ["mehr Würfel rot gelesen, als im Turm sein können: der "
                                "unsicherste wird als braun gelesen"]
    response.close()


def test_vision_and_the_app_stay_apart():
    """The doubts cross as plain data: vision imports nothing of the app, the app nothing of
    vision (nor OpenCV, nor the firmware)."""
    import re
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]

    def imports(package):
        for path in (repo / package).rglob("*.py"):
            for name in re.findall(r"^\s*(?:from|import) ([\w.]+)", path.read_text(), re.M):
                yield path.relative_to(repo), name.split(".")[0]

    assert [(p, m) for p, m in imports("vision") if m in ("companion", "firmware")] == []
    assert [(p, m) for p, m in imports("companion") if m in ("vision", "firmware", "cv2")] == []
