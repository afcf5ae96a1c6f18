"""The game on the phone page: a real headless Chromium against the real waitress server."""

import json
import os
import shutil
from pathlib import Path

import pytest
from table_games import SETUP_DROP

from firmware.sources import DEMO_DIR

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "companion" / "amerigo" / "examples" / "game-4p.jsonl"
SHOTS = Path("/tmp")
PHONE = {"width": 390, "height": 844}
FIRST_TRAY = {"blue": 3, "white": 1}


class Phone:
    """One phone at the table: a page plus the JavaScript errors (and refusals of the page's
    Content-Security-Policy) it has seen. With ``code`` it joins as the QR code's link does."""

    def __init__(self, browser, url, code=None, view=""):
        self.url = url
        self.page = browser.new_page(viewport=PHONE)
        self.errors = []
        self.page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        self.page.on("console", self._console)
        hash_ = f"#{view}" if view else ""  # the page's view: #sheet, #history/3, #device
        self.page.goto(f"{url}/?code={code}{hash_}" if code else f"{url}/{hash_}")
        self.page.wait_for_function("() => document.body.dataset.stage !== undefined")

    def _console(self, message):
        if "Content Security Policy" in message.text:
            self.errors.append(message.text)

    def __getattr__(self, name):
        return getattr(self.page, name)

    def title(self):
        return self.page.text_content("#now-title")

    def wait_title(self, text, timeout=5000):
        self.page.wait_for_function(
            "t => document.getElementById('now-title').textContent === t", arg=text, timeout=timeout
        )

    def wait_seq(self, seq, timeout=5000):
        self.page.wait_for_function(
            "n => document.body.dataset.seq === String(n)", arg=seq, timeout=timeout
        )

    def cell(self, table, row, player):
        return self.page.text_content(f"#{table} tr.{row} td[data-player='{player}']").strip()

    def shot(self, name):
        """A phone-size picture of the whole page; CUBETOWER_TILES=1 also cuts it into screens."""
        self.page.screenshot(path=str(SHOTS / f"cubetower-{name}.png"), full_page=True)
        if os.environ.get("CUBETOWER_TILES"):
            height = self.page.evaluate("document.documentElement.scrollHeight")
            for i, top in enumerate(range(0, height, PHONE["height"] - 60)):
                self.page.evaluate(f"window.scrollTo(0, {top})")
                self.page.screenshot(path=str(SHOTS / f"cubetower-{name}-{i}.png"))
            self.page.evaluate("window.scrollTo(0, 0)")

    def close(self):
        assert self.errors == []
        self.page.close()


def _game(device, players: list[str], commands) -> dict:
    """A new game at the table with ``commands`` applied in turn: its latest snapshot."""
    snap = device.table.new_game(players)
    for command in commands:
        snap = device.table.command(snap["id"], snap["seq"], command)
    return snap


def game(url, page):
    return page.request.get(f"{url}/api/game").json()


def to_first_drop(table, players=("Ada", "Ben"), name="Test"):
    """A game waiting for round 1's blue drop (set-up drop read, first pirate revealed)."""
    snap = table.new_game(list(players), name)
    for command in ({"type": "setup_drop_read", "tray": SETUP_DROP},
                    {"type": "pirate_revealed", "value": 2}):
        snap = table.command(snap["id"], snap["seq"], command)
    return snap


def to_actions(table, players=("Ada", "Ben", "Cleo")):
    """A game at its first player's turn in the blue phase of round 1."""
    snap = to_first_drop(table, players)
    return table.command(snap["id"], snap["seq"], {"type": "tray_read", "tray": FIRST_TRAY})


def set_counts(form, counts):
    for colour in ("blue", "black", "red", "brown", "green", "yellow", "white"):
        form.locator(f"input[data-colour='{colour}']").fill(str(counts.get(colour, 0)))


def test_the_what_now_card_walks_a_game_from_the_form(served, browser):
    url, frames, device = served
    phone = Phone(browser, url, device.table_code.value)
    assert phone.title() == "New game"

    # Refused by the server: its message, verbatim, next to the button.
    phone.fill(".new-game input.player-name >> nth=0", "Ada")
    phone.click("text=Start the game")
    refusal = phone.locator(".refusal")
    refusal.wait_for()
    expected = phone.request.post(
        f"{url}/api/game", data={"players": ["Ada"]},
        headers={"X-Table-Code": device.table_code.value},
    ).json()["error"]
    assert refusal.text_content() == expected

    # A name over the limit is refused with the limit, not cut short without a word.
    long_name = "Benedikt-Maximilian von Hohenstein"
    phone.fill(".new-game input.player-name >> nth=1", long_name)
    phone.fill(".new-game input.player-name >> nth=2", "Cleo")
    phone.click("text=Start the game")
    phone.wait_for_function(
        "() => document.querySelector('.refusal')?.textContent.includes('at most 24 characters')")
    assert phone.input_value(".new-game input.player-name >> nth=1") == long_name
    assert phone.title() == "New game"

    phone.fill(".new-game input.player-name >> nth=1", "Ben")
    phone.fill(".new-game input.player-name >> nth=2", "Cleo")
    phone.fill(".new-game input.game-name", "Friday")
    phone.click("text=Start the game")
    phone.wait_title("Set up the game")
    assert "Friday" in phone.text_content("#game-title")
    assert phone.locator("#players thead th").all_text_contents()[1:] == ["Ada", "Ben", "Cleo"]
    phone.shot("setup")

    # Set-up drop from the camera's reading.
    shutil.copy(DEMO_DIR / "drop01.jpg", frames / "a.jpg")
    phone.wait_for_function(
        "() => document.getElementById('now-reading').textContent.includes('Latest reading')",
        timeout=15000,
    )
    tray = phone.request.get(f"{url}/api/tray").json()
    phone.click("button.use-reading")
    if tray["uncertain"]:  # a reading the counter doubted: the device asks before using it
        phone.wait_for_selector("#ask[open]")
        assert "counter was unsure" in phone.text_content("#ask-text")
        phone.click("#ask-yes")
    phone.wait_for_selector("button.use-reading", state="detached")
    state = game(url, phone)["state"]
    assert state["cubes"]["storage"] == tray["counts"]
    for colour, n in state["cubes"]["tower"].items():
        assert phone.text_content(f"[data-tower='{colour}']") == str(n)
        assert phone.text_content(f"[data-storage='{colour}']") == str(tray["counts"][colour])

    # The first pirate marker.
    phone.fill("#pirate-value", "2")
    phone.click("text=Reveal this pirate marker")
    phone.wait_for_function("() => document.body.dataset.stage === 'tray'")
    state = game(url, phone)["state"]
    phase = state["phase"]
    assert phone.title() == f"Phase {phase} (round 1): drop the cubes"
    assert phone.locator(f"text=Use this reading for the {phase} phase").count() == 1
    # the set-up drop's reading cannot start the first phase too
    assert "from before the set-up drop" in phone.text_content("#now-reading .used")
    assert phone.locator("button.use-reading").is_disabled()
    phone.shot("tray")

    # The phase's drop, counts edited by hand (within what the tower holds).
    bounds = state["vision_bounds"]
    counts = {phase: min(3, bounds[phase]), "white": min(1, bounds["white"])}
    if phase != "blue":
        counts["blue"] = min(1, bounds["blue"])
    phone.click("button.edit-counts")
    form = phone.locator(".counts-form")
    set_counts(form, counts)
    form.locator("button[type=submit]").click()
    phone.wait_title("Ada's turn")
    phone.shot("actions")

    # Ada: Move Ships with a trading post on a new island: 3 VP for the discovery.
    phone.click(".action-btn[data-colour='blue']")
    action = phone.locator(".action-form")
    action.locator("input.island").first.fill("Tortuga")
    phone.shot("blue-form")
    action.locator("button[type=submit]").click()
    phone.wait_title("Ben's turn")
    assert phone.cell("players", "vp", "Ada") == "3"
    assert "Tortuga" in phone.cell("players", "posts", "Ada")
    assert "Tortuga" in phone.text_content("#islands")

    # Ben: gold instead of an action.
    gold_before = int(phone.cell("players", "gold", "Ben"))
    offered = game(url, phone)["state"]["options"]["Ben"]["gold_instead"]
    phone.click("button.gold-instead")
    phone.wait_title("Cleo's turn")
    assert int(phone.cell("players", "gold", "Ben")) == gold_before + offered
    top = phone.locator("#game-log li").first.text_content()
    assert top.startswith("Ben takes gold instead of an action")
    phone.shot("after-gold")
    phone.close()


def test_a_refused_command_shows_the_servers_message(served, browser):
    url, _, device = served
    snap = to_actions(device.table)
    phone = Phone(browser, url, device.table_code.value)
    phone.wait_title("Ada's turn")
    phone.click(".action-btn[data-colour='blue']")
    form = phone.locator(".action-form")
    for i, island in enumerate(("A", "B", "C")):
        if i:
            form.locator("text=+ Add a trading post").click()
        form.locator("input.island").nth(i).fill(island)
    form.locator("button[type=submit]").click()
    refusal = form.locator(".refusal")  # right under the button pressed
    refusal.wait_for()
    assert refusal.text_content() == "Ada has 2 ships: at most 2 trading posts per action"
    assert game(url, phone)["seq"] == snap["seq"]  # nothing was written
    assert phone.title() == "Ada's turn"
    phone.shot("refused")
    phone.close()


def test_undo_then_redo(served, browser):
    url, _, device = served
    snap = to_actions(device.table)
    phone = Phone(browser, url, device.table_code.value)
    phone.wait_title("Ada's turn")
    phone.dblclick("button.gold-instead")  # a double tap sends once
    phone.wait_title("Ben's turn")
    phone.wait_for_timeout(300)
    assert game(url, phone)["seq"] == snap["seq"] + 1

    undo = phone.locator("#undo")
    assert undo.text_content() == "Undo: Ada takes gold instead of an action"
    undo.click()
    phone.wait_title("Ada's turn")
    assert phone.locator("#game-log li.undone s").first.text_content() == (
        "Ada takes gold instead of an action"
    )
    redo = phone.locator("#redo")
    assert redo.text_content() == "Redo: Ada takes gold instead of an action"
    redo.click()
    phone.wait_title("Ben's turn")
    assert phone.locator("#game-log li[data-type='action']").first.get_attribute("class") == ""
    assert phone.locator("#redo").is_disabled()
    phone.close()


def test_a_tap_right_after_the_game_changed_presses_nothing(served, browser):
    """The second tap of a double tap lands on the button now in the same place: Ben's "Gold
    instead" after Ada's, or Undo again. For a moment after each change nothing takes a tap."""
    url, _, device = served
    snap = to_actions(device.table)
    phone = Phone(browser, url, device.table_code.value)
    phone.wait_title("Ada's turn")
    phone.wait_for_timeout(700)
    second_tap = """async () => {
        const before = document.body.dataset.seq;
        document.querySelector('button.gold-instead').click();
        while (document.body.dataset.seq === before) await new Promise((r) => setTimeout(r, 5));
        const now = document.querySelector('button.gold-instead');  // Ben's, where Ada's was
        const held = now.disabled;
        now.click();
        return held;
    }"""
    assert phone.evaluate(second_tap) is True
    phone.wait_title("Ben's turn")
    phone.wait_for_timeout(800)
    assert game(url, phone)["seq"] == snap["seq"] + 1  # Ada's gold only
    assert not phone.locator("button.gold-instead").is_disabled()  # and Ben may tap now
    phone.evaluate("""async () => {
        const before = document.body.dataset.seq;
        document.querySelector('#undo').click();
        while (document.body.dataset.seq === before) await new Promise((r) => setTimeout(r, 5));
        document.querySelector('#undo').click();
    }""")
    phone.wait_title("Ada's turn")
    phone.wait_for_timeout(800)
    assert game(url, phone)["seq"] == snap["seq"] + 2  # one undo
    phone.close()


def test_a_forms_own_submit_is_not_held_when_the_game_changes(served, browser):
    """A form is filled, not tapped twice: Enter right after another phone's change sends it."""
    url, _, device = served
    to_actions(device.table)
    phone = Phone(browser, url, device.table_code.value)
    phone.wait_title("Ada's turn")
    phone.wait_for_timeout(700)
    phone.click(".action-btn[data-colour='blue']")
    phone.wait_for_selector(".action-form")
    held = phone.evaluate("""() => {
        CT.render({...CT.game(), seq: CT.game().seq + 1});  // another phone's change
        const submit = document.querySelector('.action-form button[type=submit]');
        const other = document.querySelector('#undo');
        return [submit.disabled, other.disabled];
    }""")
    assert held == [False, True]
    phone.close()


def test_a_lost_answer_is_sent_again_with_the_same_key_and_applied_once(served, browser):
    """The Wi-Fi drops the device's answer: the page sends the tap again with its key, the
    device answers as the first time, and the tap counts once (no "another phone" notice)."""
    url, _, device = served
    snap = to_actions(device.table)
    phone = Phone(browser, url, device.table_code.value)
    phone.wait_title("Ada's turn")
    keys = []

    def lose_the_first_answer(route):
        keys.append(route.request.headers.get("idempotency-key"))
        if len(keys) == 1:
            route.fetch()  # the device gets the tap and applies it...
            route.abort("connectionreset")  # ...but its answer never reaches the phone
        else:
            route.continue_()

    phone.route("**/api/game/*/command", lose_the_first_answer)
    phone.click("button.gold-instead")
    phone.wait_title("Ben's turn")
    phone.wait_for_function("() => !document.body.classList.contains('busy')")
    assert len(keys) == 2 and keys[0] == keys[1] and len(keys[0]) == 32
    assert game(url, phone)["seq"] == snap["seq"] + 1
    assert phone.is_hidden("#game-notice") and phone.locator(".refusal").count() == 0
    phone.click("button.gold-instead")  # the next tap has a key of its own
    phone.wait_title("Cleo's turn")
    assert len(keys) == 3 and keys[2] != keys[0]
    assert game(url, phone)["seq"] == snap["seq"] + 2
    phone.close()


def test_two_phones_one_acts_the_other_follows_and_a_stale_one_is_told(served, browser):
    url, _, device = served
    to_actions(device.table)
    a = Phone(browser, url, device.table_code.value)
    b = Phone(browser, url, device.table_code.value)
    a.wait_title("Ada's turn")
    b.wait_title("Ada's turn")

    a.click("button.gold-instead")
    b.wait_title("Ben's turn")  # live, no reload
    assert b.text_content("#game-log li") == a.text_content("#game-log li")

    b.evaluate("CT.source.close()")  # b loses its connection and keeps an old view
    a.click("button.gold-instead")
    a.wait_title("Cleo's turn")
    seq = game(url, a)["seq"]
    assert b.title() == "Ben's turn"
    b.click("button.gold-instead")
    b.wait_for_selector("#game-notice:not([hidden])")
    assert "Another phone changed the game first" in b.text_content("#game-notice")
    # it says where the game is now (not just "press again": it is no longer Ben's turn)
    assert "Now: Cleo's turn." in b.text_content("#game-notice")
    assert b.title() == "Cleo's turn"  # redrawn with the fresh game
    assert game(url, a)["seq"] == seq  # the stale press was not applied
    b.shot("stale")

    a.click("button.gold-instead")  # while b is still offline
    a.wait_seq(seq + 1)
    b.evaluate("connect()")  # b reconnects: the snapshot brings it up to date
    b.wait_seq(seq + 1)
    assert b.title() == a.title()
    assert b.is_hidden("#game-notice")
    a.close()
    b.close()


def test_the_score_sheet_and_the_end_of_a_game(served, browser):
    url, _, device = served
    events = [json.loads(line) for line in EXAMPLE.read_text().splitlines() if line.strip()]
    created, seated, *rest, final = events
    assert final["type"] == "final_scoring"
    snap = device.table.new_game(seated["players"], created["name"])
    for event in rest:
        command = {k: v for k, v in event.items() if k != "v"}
        snap = device.table.command(snap["id"], snap["seq"], command)

    phone = Phone(browser, url, device.table_code.value)
    phone.wait_title("Final scoring")
    assert phone.text_content("#score-note") == "(if the game ended now)"
    sheet = snap["score_sheet"]
    for row in sheet["players"]:
        assert phone.cell("score", "total", row["player"]) == str(row["total"])
    assert phone.locator("#players thead th.turn").count() == 0
    phone.shot("final")

    for name, values in final["players"].items():
        phone.fill(f"input[aria-label='{name} progress track VP']", str(values["progress_vp"]))
        phone.fill(f"input[aria-label='{name} special track VP']", str(values["special_vp"]))
    phone.click("text=Score the game")
    phone.wait_title("Game over")
    over = game(url, phone)["score_sheet"]
    assert phone.text_content(".winner") == f"{over['winner']} wins!"
    assert phone.text_content("#score-note") == "(final)"
    ranking = [f"{r['player']}: {r['total']} VP{' (tie)' if r['tied'] else ''}"
               for r in over["ranking"]]
    assert phone.locator(".panel .ranking li").all_text_contents() == ranking
    assert phone.locator("#ranking li:not(.note)").all_text_contents() == ranking
    phone.shot("over")

    # undone to fix one player's typo: every value comes back into its field
    phone.click("#undo")
    phone.wait_title("Final scoring")
    for name, values in final["players"].items():
        for key, label in (("progress_vp", "progress"), ("special_vp", "special")):
            field = f"input[aria-label='{name} {label} track VP']"
            assert phone.input_value(field) == str(values[key])
    phone.click("text=Score the game")
    phone.wait_title("Game over")

    # the next game starts from the "Game over" card itself; the old one stays in History
    phone.click(".panel button.over-new-game")
    form = phone.locator("#now-body .new-game")
    form.locator("input.player-name").nth(0).fill("Ada")
    form.locator("input.player-name").nth(1).fill("Ben")
    form.locator("button[type=submit]").click()
    phone.wait_title("Set up the game")
    assert game(url, phone)["id"] != snap["id"]
    assert len(phone.request.get(f"{url}/api/games").json()["games"]) == 2
    phone.close()


def test_history_correct_button_corrects_a_reading(served, browser):
    url, _, device = served
    snap = to_actions(device.table)
    target = snap["seq"]  # the tray_read is the latest event
    phone = Phone(browser, url, device.table_code.value)
    phone.wait_title("Ada's turn")
    phone.click("#views a[data-view='history']")
    line = phone.locator(f"#game-log li[data-n='{target}']")
    assert line.get_attribute("data-type") == "tray_read"
    line.locator("button.correct").click()
    form = line.locator(".counts-form")
    assert form.locator("input[data-colour='blue']").input_value() == "3"
    assert form.locator("input[data-colour='white']").input_value() == "1"
    # The form keeps to what the tower and tray held just before that reading, as the other
    # count forms do (the set-up drop left some of each colour outside the tower).
    bounds = next(h for h in game(url, phone)["history"] if h["n"] == target)["bounds"]
    assert any(n < 7 for n in bounds.values())
    for colour, most in bounds.items():
        assert form.locator(f"input[data-colour='{colour}']").get_attribute("max") == str(most)
    form.locator("input[data-colour='white']").fill("0")
    form.locator("button[type=submit]").click()
    phone.wait_seq(target + 1)
    top = phone.locator("#game-log li").first
    assert top.get_attribute("data-type") == "tray_corrected"
    assert top.text_content().startswith(
        f"Reading #{target} corrected from 3 blue, 1 white to 3 blue"
    )
    corrected = phone.locator(f"#game-log li[data-n='{target}'] .text")
    assert corrected.text_content().endswith(f"corrected by #{target + 1} to 3 blue")
    assert game(url, phone)["state"]["offer"]["actions"] == ["blue"]
    phone.close()


def correcting_the_first_drop(served, browser):
    """A phone on the History view with the Correct form of the blue phase's drop open (the
    latest event of ``to_actions``): (phone, snapshot, the drop's number, its history line)."""
    url, _, device = served
    snap = to_actions(device.table)
    target = snap["seq"]
    phone = Phone(browser, url, device.table_code.value, view="history")
    phone.wait_seq(target)
    line = phone.locator(f"#game-log li[data-n='{target}']")
    line.locator("button.correct").click()
    return phone, snap, target, line


def test_a_half_typed_correction_survives_another_phones_move(served, browser):
    """The history is drawn anew on every change: a correction being typed on one phone must
    not vanish, with what was typed, when another player takes their turn meanwhile; once
    another phone has corrected that same reading, the form (begun from the old counts) goes."""
    device = served[2]
    phone, snap, target, line = correcting_the_first_drop(served, browser)
    line.locator(".counts-form input[data-colour='white']").fill("2")

    snap = device.table.command(snap["id"], snap["seq"],
                                {"type": "action", "player": "Ada", "choice": "gold"})
    phone.wait_seq(snap["seq"])
    form = phone.locator(f"#game-log li[data-n='{target}'] .counts-form")
    assert form.count() == 1
    assert form.locator("input[data-colour='white']").input_value() == "2"
    assert form.locator("input[data-colour='blue']").input_value() == "3"

    snap = device.table.command(snap["id"], snap["seq"], {
        "type": "tray_corrected", "target": target, "tray": {"blue": 4, "white": 1}})
    phone.wait_seq(snap["seq"])
    assert phone.locator(f"#game-log li[data-n='{target}'] .counts-form").count() == 0
    phone.close()


def test_a_count_that_is_no_count_is_named_and_not_sent(served, browser):
    """A phone whose browser lets "-2" through (no number checks) is told, and nothing is
    written: the page must not turn it into 0 and correct the reading to that. Nor a typo the
    browser refused itself ("1e", "-": the field's value then reads as blank, i.e. 0), nor
    "1e1", which is no plain count (JavaScript reads it as 10)."""
    url, _, device = served
    snap = to_actions(device.table)
    target = snap["seq"]
    phone = Phone(browser, url, device.table_code.value)
    phone.wait_title("Ada's turn")
    sent = []
    phone.on("request", lambda r: sent.append(r.url) if r.url.endswith("/command") else None)
    phone.click("#views a[data-view='history']")
    line = phone.locator(f"#game-log li[data-n='{target}']")
    line.locator("button.correct").click()
    form = line.locator(".counts-form")
    form.evaluate("f => { f.noValidate = true; }")
    white = form.locator("input[data-colour='white']")
    for typed in ("-2", "1.5", "1e1", "1e", "-"):
        white.fill("")
        white.press_sequentially(typed)  # typed key by key, as a player does
        # the total names it, neither summed as itself nor as 0
        assert form.locator(".total").text_content() == "not a number of cubes: white", typed
        form.locator("button[type=submit]").click()
        assert form.locator(".refusal").text_content() == "not a number of cubes: white"
        phone.wait_for_timeout(100)
        assert sent == [], typed  # nothing sent
        assert game(url, phone)["seq"] == target  # nothing written
    white.fill("2")
    assert form.locator(".total").text_content().endswith(" cubes")
    phone.close()


def example_game(table, upto):
    """The 4-player example game, its first ``upto`` events, through the table."""
    events = [json.loads(line) for line in EXAMPLE.read_text().splitlines() if line.strip()]
    created, seated, *rest = events[:upto]
    snap = table.new_game(seated["players"], created["name"])
    for event in rest:
        command = {k: v for k, v in event.items() if k != "v"}
        snap = table.command(snap["id"], snap["seq"], command)
    return snap


def test_round_end_pirates_and_the_next_marker(served, browser):
    url, _, device = served
    snap = example_game(device.table, 41)
    assert snap["state"]["stage"] == "round_end"
    phone = Phone(browser, url, device.table_code.value)
    strength = snap["state"]["pirates"]["strength"]
    phone.wait_title(f"End round 1: pirates attack (strength {strength})")
    phone.click("button.end-round")
    phone.wait_for_function("() => document.body.dataset.stage === 'pirate'")
    attack = game(url, phone)["state"]["pirates"]["last_attack"]
    assert phone.text_content(".attack h3") == f"Pirates in round 1: strength {attack['strength']}"
    assert phone.locator(".attack tbody tr").count() == 4
    heads = phone.locator(".attack thead th").all_text_contents()
    # a Gold column only when someone got gold for fighting them off
    got_gold = any(r.get("gold") for r in attack["players"].values())
    assert heads == ["Player", "Cannons", "Result", *(["Gold"] if got_gold else [])]
    phone.shot("pirates")
    phone.fill("#pirate-value", "3")
    phone.click("text=Reveal this pirate marker")
    phone.wait_for_function("() => document.body.dataset.stage === 'tray'")
    assert phone.title().endswith("(round 2): drop the cubes")
    phone.close()


def test_more_cash_a_chest(served, browser):
    url, _, device = served
    snap = example_game(device.table, 78)
    dan = next(p for p in snap["state"]["players"] if p["name"] == "Dan")
    assert dan["treasure_chests"] == 1
    phone = Phone(browser, url, device.table_code.value)
    phone.wait_seq(snap["seq"])
    phone.click("#more summary")
    phone.click("button.chest[data-player='Dan']")
    phone.wait_seq(snap["seq"] + 1)
    assert phone.cell("players", "gold", "Dan") == str(min(12, dan["gold"] + 3))
    assert phone.locator("button.chest[data-player='Dan']").count() == 0
    phone.close()


def test_brown_token_then_use_the_gold_token(served, browser):
    url, _, device = served
    snap = _game(device, ["Ada", "Ben"], (
        {"type": "setup_drop_read", "tray": SETUP_DROP},
        {"type": "pirate_revealed", "value": 2},
        {"type": "tray_read", "tray": {"blue": 3, "brown": 1, "white": 1}},
    ))
    phone = Phone(browser, url, device.table_code.value)
    phone.wait_title("Ada's turn")
    phone.click(".action-btn[data-colour='brown']")
    form = phone.locator(".action-form")
    form.locator("text=+ Add a token").click()
    form.locator("select.token-kind").select_option("gold5")
    form.locator("button[type=submit]").click()
    phone.wait_title("Ben's turn")
    assert phone.text_content("#game-log li").startswith(
        "Ada: Progress takes token(s) once only: 5 gold")
    assert phone.cell("players", "tokens", "Ada") == "once: 5 gold"  # what it does, not "gold5"
    gold = int(phone.cell("players", "gold", "Ada"))
    phone.click("#more summary")
    phone.click("button.token-used[data-token='gold5']")
    phone.wait_seq(snap["seq"] + 2)
    assert int(phone.cell("players", "gold", "Ada")) == gold + 5
    assert phone.locator("#players tr.tokens s").get_attribute("data-token") == "gold5"  # used
    phone.shot("more")
    phone.close()


def test_a_phase_drop_read_by_the_camera(served, browser):
    url, frames, device = served
    snap = _game(device, ["Ada", "Ben"], ({"type": "setup_drop_read", "tray": SETUP_DROP},
                    {"type": "pirate_revealed", "value": 1}))
    phone = Phone(browser, url, device.table_code.value)
    phone.wait_title("Phase blue (round 1): drop the cubes")
    assert phone.locator("button.use-reading").is_disabled()  # nothing read yet
    shutil.copy(DEMO_DIR / "drop02.jpg", frames / "b.jpg")
    phone.wait_for_selector("button.use-reading:enabled", timeout=15000)
    tray = phone.request.get(f"{url}/api/tray").json()
    phone.click("button.use-reading")
    phone.wait_seq(snap["seq"] + 1)
    state = game(url, phone)["state"]
    assert state["cubes"]["action_space"] == tray["counts"]
    for colour, n in tray["counts"].items():
        assert phone.text_content(f"[data-space='{colour}']") == str(n)
    assert phone.locator("#game-log li").first.get_attribute("data-type") == "tray_read"
    phone.close()


def test_vp_instead_of_an_action(served, browser):
    url, _, device = served
    snap = example_game(device.table, 14)
    offered = snap["state"]["options"]["Cleo"]["vp_instead"]
    phone = Phone(browser, url, device.table_code.value)
    phone.wait_title("Cleo's turn")
    assert phone.locator("#players thead th.turn").text_content() == "Cleo"
    button = phone.locator("button.vp-instead")
    assert button.text_content() == f"Take {offered} VP"
    button.click()
    phone.wait_seq(snap["seq"] + 1)
    assert phone.cell("players", "vp", "Cleo") == str(offered)
    phone.close()


def test_plan_and_production_forms_send_their_rows(served, browser):
    url, _, device = served
    snap = _game(device, ["Ada", "Ben"], (
        {"type": "setup_drop_read", "tray": SETUP_DROP},
        {"type": "pirate_revealed", "value": 2},
        {"type": "tray_read", "tray": {"blue": 3, "red": 1, "yellow": 1, "white": 1}},
    ))
    phone = Phone(browser, url, device.table_code.value)
    phone.wait_title("Ada's turn")
    phone.click(".action-btn[data-colour='red']")
    form = phone.locator(".action-form")
    form.locator("select[aria-label='tile']").first.select_option("landscape")
    form.locator("select[aria-label='landscape size']").first.select_option("2")
    form.locator("text=+ Add a tile").click()
    form.locator("select[aria-label='tile']").nth(1).select_option("village")
    form.locator("text=+ Add a tile").click()  # left untouched: not sent
    form.locator("button[type=submit]").click()
    phone.wait_title("Ben's turn")
    events = device.store.events(snap["id"])
    assert events[-1]["take"] == [{"tile": "landscape", "size": 2}, {"tile": "village"}]

    phone.click(".action-btn[data-colour='yellow']")
    form = phone.locator(".action-form")
    form.locator("select[aria-label='good']").select_option("coffee")
    form.locator("input[name='ap']").fill("2")
    form.locator("button[type=submit]").click()
    phone.wait_seq(snap["seq"] + 2)
    event = device.store.events(snap["id"])[-1]
    assert {k: event[k] for k in ("player", "choice", "ap", "production")} == {
        "player": "Ben", "choice": "yellow", "ap": 2,
        "production": [{"good": "coffee", "cost": 2}],
    }
    assert "coffee" in phone.text_content("#game-log li")
    phone.close()


def test_the_games_log_downloads_and_replays(served, browser, tmp_path):
    from companion.amerigo.replay import main as replay

    url, _, device = served
    snap = to_actions(device.table)
    phone = Phone(browser, url, device.table_code.value)
    phone.wait_seq(snap["seq"])
    phone.click("#more summary")
    with phone.expect_download() as download:
        phone.click("a.export")
    path = tmp_path / "game.jsonl"
    download.value.save_as(path)
    assert len(path.read_text().splitlines()) == snap["seq"]
    assert replay([str(path)]) == 0
    phone.close()


def test_an_older_state_arriving_late_does_not_put_the_page_back(served, browser):
    url, _, device = served
    before = _game(device, ["Ada", "Ben"], [{"type": "setup_drop_read", "tray": SETUP_DROP}])
    after = device.table.command(before["id"], before["seq"],
                                 {"type": "pirate_revealed", "value": 2})
    phone = Phone(browser, url, device.table_code.value)
    phone.wait_seq(after["seq"])
    title = phone.title()
    assert title.startswith("Phase ")
    # the stream's event of the set-up drop, delivered after the pirate marker's state
    phone.evaluate("g => window.CT.render(g)", before)
    phone.wait_for_timeout(200)
    assert phone.title() == title and phone.evaluate("document.body.dataset.seq") == str(
        after["seq"])
    # a conflict's answer is the server's word: shown whatever it is
    phone.evaluate("g => window.CT.render(g, true)", before)
    phone.wait_title("Set up the game")
    phone.close()


@pytest.mark.parametrize("lang", ["en", "de"])
def test_a_four_player_score_sheet_scrolls_in_its_box_not_the_page(served, browser, lang):
    """Four players with long production-token cells once made the page 495 px wide on a
    390 px phone: the grid item grew to the table instead of its scroll box scrolling."""
    url, _, device = served
    example_game(device.table, 190)
    phone = Phone(browser, url, device.table_code.value)
    if lang == "de":
        phone.click(".lang-switch[data-lang='de']")
        phone.wait_for_function("() => document.documentElement.lang === 'de'")
    phone.wait_for_function("() => document.body.dataset.seq !== ''")
    phone.click("#views a[data-view='sheet']")
    phone.wait_for_selector("#players-card", state="visible")
    assert len(phone.locator("#players thead th").all()) == 5  # four players beside the labels
    width = phone.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"the page is {width} px wide on a {PHONE['width']} px phone"
    for card in ("#players-card", "#score"):
        box = phone.locator(card).evaluate("e => e.closest('.card').getBoundingClientRect().right")
        assert box <= PHONE["width"], card
    # the goods in the phone's language, in the players' table and the sheet-goods boxes
    production = phone.text_content("#players tr:has-text('Produ')")
    boxes = phone.text_content("#sheets-body")
    if lang == "de":
        assert "Baumwolle" in production and "cotton" not in production
        assert "Kokosnuss" in boxes and "coconut" not in boxes
    else:
        assert "cotton" in production and "coconut" in boxes
        # what Build may place and what the goods score: one line each, from the game's state
        for p in game(url, phone)["state"]["players"]:
            cell = f"#players tr.commodities td[data-player='{p['name']}']"
            lines = phone.locator(f"{cell} .goods-list > span")
            wanted = [f"{good}\u00a0{n}" for good, n in p["commodities"].items() if n]
            assert lines.all_text_contents() == wanted
            planned = phone.text_content(f"#players tr.planned td[data-player='{p['name']}']")
            villages = p["supply"]["villages"]
            assert (f"{villages} village" in planned) == bool(villages)
        assert any(p["commodities"] for p in game(url, phone)["state"]["players"])
    phone.shot(f"sheet-4p-{lang}")
    assert phone.errors == []
    phone.close()


def test_a_half_filled_form_survives_a_reconnect_and_the_players_own_gold_token(served, browser):
    """What a player typed stays: a Wi-Fi blip (the snapshot on reconnecting) and cashing gold
    to pay for AP (which changes the form's limits, so it is drawn anew) both kept it."""
    url, _, device = served
    snap = _game(device, ["Ada", "Ben"], (
        {"type": "setup_drop_read", "tray": SETUP_DROP},
        {"type": "pirate_revealed", "value": 2},
        {"type": "tray_read", "tray": {"blue": 3, "brown": 1, "white": 1}},
        {"type": "action", "player": "Ada", "choice": "brown", "tokens_taken": ["gold3"]},
        {"type": "action", "player": "Ben", "choice": "gold"},
        {"type": "tray_read", "tray": {"blue": 1, "black": 3}},
    ))
    phone = Phone(browser, url, device.table_code.value)
    phone.wait_title("Ada's turn")
    phone.click(".action-btn[data-colour='blue']")
    form = phone.locator(".action-form")
    form.locator("input[name='ap']").fill("2")
    form.locator("input.island").first.fill("C")

    phone.evaluate("CT.source.close(); connect()")
    phone.wait_for_function("() => CT.source.readyState === 1")
    phone.wait_for_timeout(300)  # the snapshot's render
    assert form.locator("input[name='ap']").input_value() == "2"
    assert form.locator("input.island").first.input_value() == "C"

    assert form.locator("input[name='gold_spent']").count() == 0  # no gold yet
    phone.click("#more summary")
    phone.click("button.token-used[data-token='gold3']")
    phone.wait_seq(snap["seq"] + 1)
    form = phone.locator(".action-form")  # drawn anew, with a gold field now
    assert form.locator("input[name='gold_spent']").get_attribute("max") == "3"
    assert form.locator("input[name='ap']").input_value() == "2"
    assert form.locator("input.island").first.input_value() == "C"
    assert phone.errors == []
    phone.close()


def test_what_is_typed_on_the_set_up_card_survives_another_phones_entry(served, browser):
    """Another phone entering a player sheet redraws the set-up card: the pirate marker's value
    being typed (still focused), counts typed by hand and another sheet's ticks stay; the sheet
    that phone entered shows its entry."""
    url, _, device = served
    snap = _game(device, ["Ada", "Ben"], ())
    phone = Phone(browser, url, device.table_code.value)
    phone.wait_title("Set up the game")
    phone.click("#now-body button.edit-counts")
    phone.locator("#now-body .counts-form input[data-colour='blue']").fill("5")
    ben = phone.locator("#now-body .sheet-goods-player[data-player='Ben']")
    ben.locator("input[value='sugar']").check()
    sheet_view = "#sheets-body .sheet-goods-player[data-player='Ben'] input[value='coffee']"
    phone.evaluate(f"document.querySelector(\"{sheet_view}\").checked = true")  # the Sheet view's
    phone.fill("#pirate-value", "3")

    device.table.command(snap["id"], snap["seq"],
                         {"type": "sheet_goods", "player": "Ada", "goods": ["cotton"]})
    phone.wait_seq(snap["seq"] + 1)
    assert phone.input_value("#pirate-value") == "3"
    assert phone.evaluate("document.activeElement.id") == "pirate-value"
    counts = phone.locator("#now-body .counts-form")
    assert counts.locator("input[data-colour='blue']").input_value() == "5"
    assert counts.locator(".total").text_content() == "5 cubes"
    assert ben.locator("input[value='sugar']").is_checked()
    assert phone.locator(sheet_view).is_checked()
    ada = phone.locator("#now-body .sheet-goods-player[data-player='Ada']")
    assert ada.locator(".sheet-said").text_content() == "Ada: cotton"
    assert [box.is_checked() for box in ada.locator("input.sheet-good").all()] == [
        True, False, False, False, False]
    phone.close()


def test_a_camera_problem_is_no_latest_reading_on_the_table_card(served, browser):
    """No camera (gone, or never opened): the card says the problem, not "0 cubes"."""
    url, frames, device = served
    _game(device, ["Ada", "Ben"], ())
    phone = Phone(browser, url, device.table_code.value)
    phone.wait_title("Set up the game")
    shutil.rmtree(frames)
    phone.wait_for_function(
        "() => document.getElementById('now-reading').textContent.includes('could not be read')",
        timeout=15000)
    said = phone.text_content("#now-reading")
    assert said.startswith("The last picture could not be read: the frame folder")
    assert "Latest reading" not in said
    assert phone.locator("button.use-reading").is_disabled()
    phone.close()


@pytest.mark.parametrize("lang", ["en", "de"])
def test_the_action_buttons_and_the_progress_form_fit_the_phone(served, browser, lang):
    url, _, device = served
    _game(device, ["Ada", "Ben"], (
        {"type": "setup_drop_read", "tray": SETUP_DROP},
        {"type": "pirate_revealed", "value": 2},
        {"type": "tray_read", "tray": {"blue": 3, "brown": 1, "yellow": 1, "white": 1}},
    ))
    phone = Phone(browser, url, device.table_code.value)
    if lang == "de":
        phone.click(".lang-switch[data-lang='de']")
        phone.wait_for_function("() => document.documentElement.lang === 'de'")
    phone.wait_for_selector(".action-btn[data-colour='brown']")
    for button in phone.locator(".action-btn").all():  # "Produktionsplättchen kaufen" too
        outer, name = button.bounding_box(), button.locator(".action-name").bounding_box()
        assert name["x"] + name["width"] <= outer["x"] + outer["width"], button.text_content()
    phone.click(".action-btn[data-colour='brown']")
    form = phone.locator(".action-form")
    form.locator("button.add").first.click()
    form.locator("select.token-kind").select_option("order_jump")  # the longest text
    width = phone.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"the page is {width} px wide on a {PHONE['width']} px phone"
    for select in form.locator("select").all():
        box = select.bounding_box()
        if box:
            assert box["x"] + box["width"] <= PHONE["width"]
    phone.shot(f"progress-form-{lang}")
    assert phone.errors == []
    phone.close()


def test_a_game_cut_short_by_its_repair_says_so_on_the_table_view(served, browser):
    """``set_aside`` (companion.recovery left stored events out) is said above the card."""
    url, _, device = served
    to_actions(device.table)
    phone = Phone(browser, url, device.table_code.value)
    phone.wait_title("Ada's turn")
    assert phone.locator("#set-aside").is_hidden()
    seq = game(url, phone)["seq"]  # cut short just before the next event
    phone.evaluate("s => CT.render({...CT.game(), seq: s, set_aside: {events: 3, from: s + 1}},"
                   " true)", seq)
    assert phone.text_content("#set-aside").startswith(
        f"3 stored events of this game, from #{seq + 1} on, could not be read back and were set"
        " aside")
    # the players entered event #(seq + 1) again: the note no longer says the game lacks it
    phone.evaluate("s => CT.render({...CT.game(), seq: s + 1})", seq)
    assert phone.text_content("#set-aside") == (
        "3 stored events of this game could not be read back when the game was loaded and were"
        " set aside (they are kept on the device); the game went on without them.")
    phone.close()


def new_game_posts(phone) -> list:
    """The bodies of the new games this phone posts (``replaces``: the game it showed)."""
    bodies = []
    phone.on("request", lambda r: bodies.append(r.post_data_json)
             if r.method == "POST" and r.url.split("?")[0].endswith("/api/game") else None)
    return bodies


def fill_new_game(phone, form, players):
    for i, name in enumerate(players):
        phone.fill(f"{form} .new-game input.player-name >> nth={i}", name)


def test_two_phones_starting_at_once_start_one_game_and_the_late_one_shows_it(served, browser):
    """Both phones drew the new-game form; the other phone's game has not reached the first when
    it presses Start: the device starts no second game, and the first phone shows the other's."""
    url, _, device = served
    a = Phone(browser, url, device.table_code.value)
    b = Phone(browser, url, device.table_code.value)
    a.wait_title("New game")
    b.wait_title("New game")
    sent = new_game_posts(a)
    fill_new_game(a, "#now-body", ["Ada", "Ben"])
    a.evaluate("CT.source.close()")  # the same moment: b's game is still on its way to a
    fill_new_game(b, "#now-body", ["Cleo", "Dan"])
    b.click("#now-body .new-game button[type=submit]")
    b.wait_title("Set up the game")
    theirs = game(url, b)

    a.click("#now-body .new-game button[type=submit]")
    a.wait_for_selector("#game-notice:not([hidden])")
    # the server's words, which say what happened: the page's generic note would not
    assert a.text_content("#game-notice") == (
        f"another phone started a game first (game {theirs['id']} is at the table now), so "
        "yours was not started; the screen has been refreshed, start yours again only if that "
        "is still what you meant")
    a.wait_title("Set up the game")
    assert sent == [{"players": ["Ada", "Ben"], "replaces": None}]
    assert game(url, a) == theirs  # not replaced
    assert len(a.request.get(f"{url}/api/games").json()["games"]) == 1
    assert a.locator("#players thead th[data-player]").all_text_contents() == ["Cleo", "Dan"]
    a.close()
    b.close()


def test_the_game_over_cards_new_game_names_the_game_it_replaces(served, browser):
    url, _, device = served
    events = [json.loads(line) for line in EXAMPLE.read_text().splitlines() if line.strip()]
    created, seated, *rest = events
    over = device.table.new_game(seated["players"], created["name"])
    for event in rest:
        over = device.table.command(over["id"], over["seq"], {k: v for k, v in event.items()
                                                             if k != "v"})
    a = Phone(browser, url, device.table_code.value)
    a.wait_title("Game over")
    sent = new_game_posts(a)
    a.click(".panel button.over-new-game")
    fill_new_game(a, "#now-body", ["Ada", "Ben"])
    a.evaluate("CT.source.close()")
    theirs = device.table.new_game(["Cleo", "Dan"])  # another phone, the same moment
    a.click("#now-body .new-game button[type=submit]")
    a.wait_for_selector("#game-notice:not([hidden])")
    assert a.text_content("#game-notice").startswith(
        f"another phone started a game first (game {theirs['id']} is at the table now)")
    a.wait_title("Set up the game")
    assert sent == [{"players": ["Ada", "Ben"], "replaces": over["id"]}]
    assert game(url, a)["id"] == theirs["id"]
    assert len(a.request.get(f"{url}/api/games").json()["games"]) == 2

    # pressed again, now that it shows the other phone's game: the player means it
    a.click("#more summary")
    a.click("button.new-game-open")
    fill_new_game(a, "#more", ["Ada", "Ben"])
    a.click("#more >> text=Start the game")
    a.wait_for_selector("#ask[open]")
    a.click("#ask-yes")
    a.wait_for_function("n => document.body.dataset.seq !== '' && CT.game().id !== n",
                        arg=theirs["id"])
    assert sent[1] == {"players": ["Ada", "Ben"], "replaces": theirs["id"]}
    assert len(a.request.get(f"{url}/api/games").json()["games"]) == 3
    a.close()


def test_a_device_out_of_reach_is_said_in_words_not_the_browsers(served, browser):
    url, _, device = served
    snap = to_actions(device.table)
    phone = Phone(browser, url, device.table_code.value)
    phone.wait_title("Ada's turn")
    phone.wait_for_timeout(700)
    phone.route("**/command", lambda route: route.abort())  # the Wi-Fi is gone
    phone.click("button.gold-instead")
    phone.wait_for_selector(".refusal", timeout=15000)
    said = phone.text_content(".refusal")
    assert said.startswith("Could not reach the device: is this phone still on the table's Wi-Fi?")
    assert "Failed to fetch" not in said
    assert game(url, phone)["seq"] == snap["seq"]
    phone.close()


def test_the_device_view_says_when_the_phase_in_play_uses_other_counts(served, browser):
    """The Device view's tray card shows the camera's latest reading; after the players
    corrected the drop (or typed it in) the game uses other counts, and the card says which,
    so that it does not seem to contradict the Table view."""
    url, frames, device = served
    shutil.copy(DEMO_DIR / "drop02.jpg", frames / "a.jpg")
    phone = Phone(browser, url, device.table_code.value, view="device")
    phone.wait_for_selector("#tray-picture:not([hidden])", timeout=15000)
    camera = phone.request.get(f"{url}/api/tray").json()["counts"]
    assert {c: n for c, n in camera.items() if n} != FIRST_TRAY  # the demo's drop is another
    assert phone.locator("#game-uses").is_hidden()  # no game: nothing in play

    snap = to_actions(device.table)  # the phase in play: 3 blue, 1 white typed in
    phone.wait_seq(snap["seq"])
    note = phone.locator("#game-uses")
    assert note.is_visible()
    assert note.text_content() == ("The phase in play uses other counts: 3 blue, 1 white "
                                   "(3 AP, or 2 gold).")
    snap = device.table.command(snap["id"], snap["seq"], {
        "type": "tray_corrected", "target": snap["seq"], "tray": {"blue": 4, "white": 1}})
    phone.wait_seq(snap["seq"])
    assert note.text_content() == ("The phase in play uses other counts: 4 blue, 1 white "
                                   "(4 AP, or 2 gold).")
    for colour, n in camera.items():  # the camera's own reading is still shown above it
        assert phone.text_content(f'[data-count="{colour}"]') == str(n)
    assert not phone.errors
    phone.close()


def test_a_drop_corrected_to_no_cube_is_asked_about_on_the_phone(served, browser):
    """Every count cleared in the Correct form would skip the phase: the phone asks first."""
    device = served[2]
    phone, _, target, line = correcting_the_first_drop(served, browser)
    set_counts(line.locator(".counts-form"), {})
    line.locator(".counts-form button[type=submit]").click()
    phone.wait_for_selector("#ask[open]")
    assert "to no cube? Then its phase has no actions" in phone.text_content("#ask-text")
    phone.click("#ask-no")
    assert device.table.snapshot()["seq"] == target  # nothing was sent
    line.locator(".counts-form button[type=submit]").click()
    phone.wait_for_selector("#ask[open]")
    phone.click("#ask-yes")
    phone.wait_seq(target + 1)
    assert device.table.snapshot()["state"]["phase"] == "black"  # blue was skipped
    assert not phone.errors
    phone.close()


def test_an_open_action_form_that_a_correction_takes_away_is_said(served, browser):
    """Ada is filling in her blue action when another phone corrects the drop to one without
    blue: her form goes, with a word why, not silently. Her own action sent from elsewhere
    (her turn over) closes it without one."""
    url, _, device = served
    snap = to_actions(device.table)
    phone = Phone(browser, url, device.table_code.value)
    phone.wait_title("Ada's turn")
    phone.click(".action-btn[data-colour='blue']")
    title = phone.locator(".action-form h3").text_content().strip()
    snap = device.table.command(snap["id"], snap["seq"], {
        "type": "tray_corrected", "target": snap["seq"], "tray": {"red": 2, "white": 1}})
    phone.wait_seq(snap["seq"])
    assert phone.locator(".action-form").count() == 0
    notice = phone.locator("#game-notice")
    assert notice.is_visible()
    assert notice.text_content() == (f"{title} is no longer on offer (another phone changed the "
                                     "game): what was typed in it is gone.")

    phone.click(".action-btn[data-colour='red']")
    snap = device.table.command(snap["id"], snap["seq"],
                                {"type": "action", "player": "Ada", "choice": "gold"})
    phone.wait_seq(snap["seq"])
    assert phone.locator(".action-form").count() == 0 and notice.is_hidden()
    assert not phone.errors
    phone.close()
