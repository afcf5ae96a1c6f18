"""The game flow on the phone page (real Chromium, real waitress): the views, the questions the
device asks before an unusual step, the game list, and what the history and ranking say."""

import shutil
import time

import pytest
from table_games import at_adas_black_turn_with_gold
from test_game_page import SETUP_DROP, Phone, _game, game, to_actions, to_first_drop

from firmware.sources import DEMO_DIR

pytestmark = pytest.mark.browser


def answer(phone, yes: bool) -> str:
    """Wait for the device's question, answer it, and return its words."""
    phone.wait_for_selector("#ask[open]")
    question = phone.text_content("#ask-text")
    phone.click("#ask-yes" if yes else "#ask-no")
    phone.wait_for_selector("#ask:not([open])", state="attached")
    return question


def latest_reading(device, timeout=15.0) -> dict:
    """The device's reading of the picture just copied into the folder."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        latest = device.board.latest()
        if latest is not None:
            return latest
        time.sleep(0.05)
    raise AssertionError("the device read nothing")


def shown(phone, selector: str) -> bool:
    """Visible within a few seconds (a busy machine may take a moment to switch the view)."""
    phone.wait_for_selector(selector, state="visible", timeout=10000)
    return True


def hidden(phone, selector: str) -> bool:
    phone.wait_for_selector(selector, state="hidden", timeout=10000)
    return True


def test_the_views_switch_with_the_bottom_bar_and_survive_a_reload(served, browser):
    url, _, device = served
    to_actions(device.table)
    phone = Phone(browser, url, device.table_code.value)
    phone.wait_title("Ada's turn")
    assert shown(phone, "#now-card") and hidden(phone, "#score")
    bar = phone.locator("#views a[data-view='sheet']")
    assert bar.bounding_box()["height"] >= 44  # a thumb's target
    bar.click()
    assert shown(phone, "#score") and hidden(phone, "#now-card")
    assert phone.evaluate("location.hash") == "#sheet"
    assert bar.get_attribute("aria-current") == "page"

    phone.reload()
    phone.wait_for_function("() => document.body.dataset.seq !== ''")
    assert shown(phone, "#score") and hidden(phone, "#now-card")

    phone.click("#views a[data-view='history']")
    assert shown(phone, "#game-log") and shown(phone, "#games-card")
    phone.click("#views a[data-view='device']")
    assert shown(phone, "#tray-card") and hidden(phone, "#game-log")
    phone.go_back()  # the phone's Back button goes back to the view before
    assert shown(phone, "#game-log")
    phone.click("#code-chip")  # the header's code chip: the Device view, at the code
    assert shown(phone, "#code-card")
    phone.goto(f"{url}/#nonsense")  # the phone keeps its code
    assert shown(phone, "#now-card")
    phone.close()


def test_a_new_game_asks_first(served, browser):
    url, _, device = served
    snap = to_actions(device.table)
    phone = Phone(browser, url, device.table_code.value)
    phone.wait_title("Ada's turn")
    phone.click("#more summary")
    phone.click("button.new-game-open")
    phone.fill("#more .new-game input.player-name >> nth=0", "Dan")
    phone.fill("#more .new-game input.player-name >> nth=1", "Eve")
    phone.click("#more >> text=Start the game")
    question = answer(phone, yes=False)
    assert question.startswith('Start a new game? "Test" (Ada\'s turn) stays on the device')
    phone.wait_for_timeout(300)
    assert game(url, phone)["id"] == snap["id"]  # nothing happened
    assert phone.title() == "Ada's turn"

    phone.click("#more >> text=Start the game")
    answer(phone, yes=True)
    phone.wait_title("Set up the game")
    assert game(url, phone)["id"] != snap["id"]
    phone.close()



def test_a_new_game_asked_about_while_another_phone_starts_one_starts_none(served, browser):
    """The question names the game this phone shows; another phone starts a game while it is
    open: the yes replaces nothing (it was about the other game), and the phone shows the new
    one."""
    url, _, device = served
    snap = to_actions(device.table)
    phone = Phone(browser, url, device.table_code.value)
    phone.wait_title("Ada's turn")
    bodies = []
    phone.on("request", lambda r: bodies.append(r.post_data_json)
             if r.method == "POST" and r.url.split("?")[0].endswith("/api/game") else None)
    phone.click("#more summary")
    phone.click("button.new-game-open")
    phone.fill("#more .new-game input.player-name >> nth=0", "Dan")
    phone.fill("#more .new-game input.player-name >> nth=1", "Eve")
    phone.click("#more >> text=Start the game")
    phone.wait_for_selector("#ask[open]")
    theirs = device.table.new_game(["Cleo", "Finn"])  # another phone, meanwhile
    phone.wait_for_function("n => CT.game().id === n", arg=theirs["id"])  # (the stream)
    answer(phone, yes=True)
    phone.wait_for_selector("#game-notice:not([hidden])")
    assert phone.text_content("#game-notice").startswith(  # the server's words
        f"another phone started a game first (game {theirs['id']} is at the table now)")
    assert bodies == [{"players": ["Dan", "Eve"], "replaces": snap["id"]}]
    assert game(url, phone)["id"] == theirs["id"]
    assert len(phone.request.get(f"{url}/api/games").json()["games"]) == 2
    assert phone.title() == "Set up the game"
    phone.close()

def test_the_game_list_looks_at_and_resumes_an_earlier_game(served, browser):
    url, _, device = served
    first = to_actions(device.table)
    device.table.new_game(["Dan", "Eve"], "Later")
    a = Phone(browser, url, device.table_code.value, "history")
    b = Phone(browser, url, device.table_code.value)
    b.wait_title("Set up the game")
    items = a.locator("#games li")
    items.nth(1).wait_for()
    assert items.count() == 2
    assert "Later · Dan, Eve" in items.nth(0).text_content()
    assert "at the table" in items.nth(0).text_content()
    assert items.nth(0).locator("button.resume").count() == 0
    assert "Test · Ada, Ben, Cleo · round 1, playing" in items.nth(1).text_content()

    items.nth(1).locator("button.look").click()
    a.wait_for_selector("#game-viewer h3")
    assert a.text_content("#game-viewer h3") == "Test (read-only)"
    assert a.evaluate("location.hash") == f"#history/{first['id']}"
    assert a.locator("#game-viewer .ranking li").count() == 3
    assert "null" not in a.text_content("#game-viewer")
    a.reload()  # still looking at it
    a.wait_for_selector("#game-viewer h3")
    assert a.text_content("#game-viewer h3") == "Test (read-only)"

    a.click("#game-viewer button.resume")
    assert 'Resume "Test" at the table?' in answer(a, yes=True)
    a.wait_for_function("() => location.hash === '#table'")
    a.wait_title("Ada's turn")
    b.wait_title("Ada's turn")  # every phone follows
    assert game(url, a)["id"] == first["id"]
    a.close()
    b.close()


def test_a_resume_names_the_game_the_phone_showed_and_one_started_meanwhile_stays(
    served, browser
):
    url, _, device = served
    first = device.table.new_game(["Ada", "Ben"], "Test")
    later = device.table.new_game(["Dan", "Eve"], "Later")
    a = Phone(browser, url, device.table_code.value, f"history/{first['id']}")
    a.wait_for_selector("#game-viewer button.resume")

    def resumes(sent):  # a request, or a response
        return sent.url.endswith(f"/api/game/{first['id']}/resume")

    a.click("#game-viewer button.resume")
    a.wait_for_selector("#ask[open]")
    meanwhile = device.table.new_game(["Finn", "Gus"], "Meanwhile")  # another phone, first
    with a.expect_response(resumes) as sent:
        answer(a, yes=True)
    assert sent.value.request.post_data_json == {"replaces": later["id"]}  # asked with "Later"
    assert sent.value.status == 409
    a.wait_for_selector("#game-viewer .refusal")
    note = a.text_content("#game-viewer .refusal")
    assert note == ('Another phone changed the game at the table first (now: "Meanwhile"), so '
                    '"Test" was not resumed. Resume it again only if that is still what you meant.')
    assert a.evaluate("location.hash") == f"#history/{first['id']}"  # still where it was
    assert game(url, a)["id"] == meanwhile["id"]
    a.wait_for_function("() => document.querySelector('#games li.at-table b')?.textContent"
                        ".startsWith('Meanwhile')")

    with a.expect_request(resumes) as again:  # pressed again: it means it
        a.click("#game-viewer button.resume")
        assert '"Meanwhile" stays on the device' in answer(a, yes=True)
    assert again.value.post_data_json == {"replaces": meanwhile["id"]}
    a.wait_for_function("() => location.hash === '#table'")
    a.wait_title("Set up the game")
    assert game(url, a)["id"] == first["id"]
    assert a.errors == []
    a.close()


def test_one_reading_cannot_start_two_phases_and_nothing_fell_is_asked(served, browser):
    url, frames, device = served
    snap = device.table.new_game(["Ada", "Ben"])
    shutil.copy(DEMO_DIR / "drop01.jpg", frames / "a.jpg")
    reading = latest_reading(device)
    snap = device.table.command(snap["id"], snap["seq"], {
        "type": "setup_drop_read", "tray": reading["counts"]}, reading_id=reading["id"],
        confirmed=True)
    snap = device.table.command(snap["id"], snap["seq"], {"type": "pirate_revealed", "value": 1})
    phone = Phone(browser, url, device.table_code.value)
    phone.wait_title("Phase blue (round 1): drop the cubes")
    assert "from before the set-up drop" in phone.text_content("#now-reading .used")
    assert phone.locator("button.use-reading").is_disabled()

    phone.click("button.nothing-fell")
    assert answer(phone, yes=False).startswith("Nothing fell from the tower? Then the blue phase")
    phone.wait_for_timeout(300)
    assert game(url, phone)["seq"] == snap["seq"]
    phone.click("button.nothing-fell")
    answer(phone, yes=True)
    phone.wait_seq(snap["seq"] + 1)
    state = game(url, phone)["state"]
    assert state["skipped_phases"][0] == {"round": 1, "phase": "blue", "why": "no cubes out"}
    assert state["stage"] == "tray" and state["phase"] != "blue"  # (an empty storage skips too)
    assert phone.locator("button.use-reading").is_disabled()  # still the set-up drop's picture
    assert "before the blue phase began" in phone.text_content("#now-reading .used")

    shutil.copy(DEMO_DIR / "drop02.jpg", frames / "b.jpg")  # a new drop: a new reading
    phone.wait_for_selector("button.use-reading:enabled", timeout=15000)
    assert phone.locator("#now-reading .used").count() == 0
    phone.close()


def test_an_empty_set_up_drop_asks_before_it_is_used(served, browser):
    url, frames, device = served
    snap = device.table.new_game(["Ada", "Ben"])
    phone = Phone(browser, url, device.table_code.value)
    phone.wait_title("Set up the game")
    shutil.copy(DEMO_DIR / "empty.jpg", frames / "a.jpg")
    phone.wait_for_selector("button.use-reading:enabled", timeout=15000)
    assert latest_reading(device)["total"] == 0
    phone.click("button.use-reading")
    assert "no cube in the tray" in answer(phone, yes=False)
    phone.wait_for_timeout(300)
    assert game(url, phone)["seq"] == snap["seq"]
    assert phone.title() == "Set up the game"
    phone.click("button.use-reading")
    answer(phone, yes=True)
    phone.wait_seq(snap["seq"] + 1)
    phone.close()


def test_calibrating_with_cubes_in_the_tray_asks_first(served, browser):
    url, frames, device = served
    shutil.copy(DEMO_DIR / "drop01.jpg", frames / "a.jpg")
    latest_reading(device)
    page = Phone(browser, url, device.table_code.value, "device")
    page.click("summary:has-text('Calibrate')")
    page.click("#calibrate")
    assert "The camera sees" in answer(page, yes=False)
    page.wait_for_function(
        "() => document.getElementById('calibrate-result').textContent.startsWith('Not calibrated')"
    )
    assert "empty the tray" in page.text_content("#calibrate-result")
    assert not (device.config.data_path / "empty.jpg").exists()
    page.close()


def test_reading_warnings_are_few_and_said_once(served, browser):
    url, _, device = served
    phone = Phone(browser, url, device.table_code.value, "device")
    front = "there may be one more cube (red?) at the front left of the tray"
    others = [f"a cube at the {where} may be red or brown" for where in ("back", "middle", "left")]
    device.board.publish_reading(
        "w", {"counts": {"red": 2}, "uncertain": True, "warnings": [front, front, *others]}, None
    )
    phone.wait_for_selector("#tray-alert:not([hidden])")
    assert phone.text_content("#tray-alert") == (
        f"Please check the tray: {front}; {others[0]} (and 2 more on the picture)"
    )
    phone.close()


def test_a_tie_is_shown_as_a_tie_with_the_tie_break_named(served, browser):
    url, _, device = served
    snap = _game(device, ["Eva", "Finn"], (
        {"type": "setup_drop_read", "tray": SETUP_DROP},
        {"type": "pirate_revealed", "value": 2},
        {"type": "tray_read", "tray": {"blue": 1}},
        {"type": "action", "player": "Eva", "choice": "gold"},
        {"type": "action", "player": "Finn", "choice": "blue", "ap": 0},
    ))
    totals = {r["player"]: r["total"] for r in snap["score_sheet"]["ranking"]}
    assert totals["Eva"] == totals["Finn"]
    phone = Phone(browser, url, device.table_code.value, "sheet")
    phone.wait_seq(snap["seq"])
    n = totals["Eva"]
    assert phone.locator("#ranking li:not(.note)").all_text_contents() == [
        f"Eva: {n} VP (tie)", f"Finn: {n} VP (tie)",
    ]
    assert phone.locator("#ranking li.tie-note").text_content() == (
        "Tie between Eva and Finn: Eva would win, being ahead in player order "
        "(the rulebook's tie-break)."
    )
    assert phone.evaluate("[...document.querySelectorAll('#ranking li')].map(li => li.value)")[
        :2] == [1, 1]  # a shared first place
    phone.close()


def test_gold_paid_for_ap_left_unused_is_asked_about(served, browser):
    """"AP to spend" counts the bought AP too: 3 AP with 1 gold when 3 are on offer would pay
    for a point never spent. The phone asks; No sends nothing, Yes takes it as typed."""
    url, _, device = served
    table = device.table
    snap = at_adas_black_turn_with_gold(table)
    phone = Phone(browser, url, device.table_code.value)
    phone.wait_title("Ada's turn")
    phone.click(".action-btn[data-colour='black']")
    form = phone.locator(".action-form")
    form.locator("input[name='ap']").fill("3")
    form.locator("input[name='gold_spent']").fill("1")
    form.locator("button[type=submit]").click()
    question = answer(phone, yes=False)
    assert question == ("Ada pays 1 gold for AP but spends only 3 of 4 AP, so 1 gold is paid "
                        "for nothing. Pay anyway?")
    assert table.snapshot()["seq"] == snap["seq"]
    form.locator("button[type=submit]").click()
    answer(phone, yes=True)
    phone.wait_title("Ben's turn")
    ada = next(p for p in table.snapshot()["state"]["players"] if p["name"] == "Ada")
    assert ada["gold"] == 1
    assert phone.errors == []
    phone.close()


def test_the_bump_form_starts_empty_while_the_tray_shows_the_phases_own_drop(served, browser):
    """During the actions the latest reading is the phase's own drop: a bump form filled with
    it would count those cubes twice. A newer reading (cubes that fell out since) fills it."""
    url, frames, device = served
    snap = to_first_drop(device.table)
    shutil.copy(DEMO_DIR / "drop02.jpg", frames / "a.jpg")
    drop = latest_reading(device)
    phase = {"type": "tray_read", "tray": drop["counts"]}
    snap = device.table.command(snap["id"], snap["seq"], phase, reading_id=drop["id"])
    assert snap["state"]["stage"] == "actions"
    phone = Phone(browser, url, device.table_code.value)
    phone.wait_seq(snap["seq"])
    phone.click("#more summary")
    phone.click("#more-body button.bump")
    values = phone.locator("#more-body .counts-form input.count-input")
    assert set(values.evaluate_all("inputs => inputs.map((i) => i.value)")) == {"0"}

    shutil.copy(DEMO_DIR / "drop11.jpg", frames / "b.jpg")  # cubes fell out since
    end = time.monotonic() + 15
    while device.board.latest()["id"] == drop["id"] and time.monotonic() < end:
        time.sleep(0.05)
    bumped = device.board.latest()
    assert bumped["id"] != drop["id"]
    phone.click("#more-body .counts-form button.secondary")  # cancel
    phone.wait_for_function("id => CT.tray && CT.tray.id === id", arg=bumped["id"])
    phone.click("#more-body button.bump")
    blue = phone.locator("#more-body .counts-form input[data-colour='blue']")
    assert blue.input_value() == str(bumped["counts"]["blue"])
    assert phone.errors == []
    phone.close()
