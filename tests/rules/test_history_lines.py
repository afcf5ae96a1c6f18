"""What the history and the ranking say to the players: corrected readings show the value in
force, ties are shared places with the tie-break named, bought AP come with the total."""

from amerigo_helpers import arrange, counts, new_game

from companion.i18n import load_catalogues
from companion.i18n.web import localize


def test_a_corrected_reading_shows_the_corrected_value_in_the_history():
    g = new_game(players=["a", "b"])
    g.command({"type": "tray_read", "tray": counts(blue=3, white=1)})
    read = len(g.events)
    g.command({"type": "tray_corrected", "target": read, "tray": counts(blue=3)})
    lines = {line["n"]: line for line in g.history()}
    line = lines[read]
    assert line["tray"] == counts(blue=3)
    assert line["corrected_by"] == read + 1
    assert line["text"] == f"Tray read: 3 blue, 1 white; corrected by #{read + 1} to 3 blue"
    assert lines[read + 1]["text"] == f"Reading #{read} corrected from 3 blue, 1 white to 3 blue"

    g.command({"type": "tray_corrected", "target": read, "tray": counts(blue=2)})
    lines = {line["n"]: line for line in g.history()}
    assert lines[read]["text"].endswith(f"corrected by #{read + 2} to 2 blue")
    assert lines[read + 2]["text"] == f"Reading #{read} corrected from 3 blue to 2 blue"

    g.undo()  # the second correction taken back: the first is in force again
    lines = {line["n"]: line for line in g.history()}
    assert lines[read]["corrected_by"] == read + 1
    assert lines[read]["text"].endswith("to 3 blue")


def test_ties_are_shared_places_and_only_the_win_is_broken_by_player_order():
    g = new_game(players=["a", "b", "c", "d"])
    for name, gold in (("a", 3), ("b", 5), ("c", 5), ("d", 3)):
        arrange(g, name, gold=gold)
    sheet = g.score_sheet()
    assert [(r["player"], r["place"], r["tied"]) for r in sheet["ranking"]] == [
        ("b", 1, True), ("c", 1, True), ("a", 3, True), ("d", 3, True),
    ]
    assert sheet["winner"] == "b" and sheet["tie_break"] == "player order"
    arrange(g, "c", gold=4)
    sheet = g.score_sheet()
    assert [(r["place"], r["tied"]) for r in sheet["ranking"]] == [
        (1, False), (2, False), (3, True), (3, True),
    ]
    assert sheet["tie_break"] is None


def test_ap_bought_with_gold_say_the_total():
    g = new_game(players=["a", "b"])
    g.command({"type": "tray_read", "tray": counts(blue=3, white=1)})
    arrange(g, "a", gold=4)
    g.command({"type": "action", "player": "a", "choice": "white", "gold_spent": 2, "advance": 5})
    line = g.history()[-1]
    assert line["text"] == "a: Special Action (paid 2 gold for AP) advances 5"
    assert line["outcome"].startswith("5 AP in all (3 + 2 bought with 2 gold)")
    german = localize([line], load_catalogues()["de"])[0]  # a message, not fixed English
    assert german["outcome"].startswith("5 AP insgesamt (3 + 2 mit 2 Gold gekauft)")
    # the AP typed is what was spent, bought AP included: the line must not add them again
    arrange(g, "b", gold=1)
    g.command({"type": "action", "player": "b", "choice": "blue", "ap": 4, "gold_spent": 1})
    line = g.history()[-1]
    assert line["text"].startswith("b: Move Ships 4 AP (paid 1 gold for AP)"), line["text"]
    assert "+1 AP" not in line["text"]


def test_a_reading_carries_the_bounds_a_correction_of_it_must_keep_to():
    g = new_game(players=["a", "b"])
    bounds = g.state_dict()["vision_bounds"]
    g.command({"type": "tray_read", "tray": counts(blue=3, white=1)})
    read = len(g.events)
    assert g.state_dict()["vision_bounds"] != bounds  # the cubes read have left the tower
    lines = {line["n"]: line for line in g.history()}
    assert lines[read]["bounds"] == bounds
    setup = next(line for line in g.history() if line["type"] == "setup_drop_read")
    assert setup["bounds"] == dict.fromkeys(bounds, 7)  # before the set-up drop: all 49 inside
    # A correction within them is taken; the bounds stay those before the reading.
    g.command({"type": "tray_corrected", "target": read, "tray": counts(blue=bounds["blue"])})
    assert {line["n"]: line for line in g.history()}[read]["bounds"] == bounds
    g.undo()
    g.undo()  # the reading itself undone: nothing to correct, no bounds
    assert "bounds" not in {line["n"]: line for line in g.history()}[read]
