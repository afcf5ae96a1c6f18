"""The goods printed on each player sheet, on the page: entered at set-up (Table view), corrected
later (Sheet view), read-only for a watching phone; and a bump recorded after a phase's drop,
before its reading."""

import pytest
from test_game_page import SETUP_DROP, Phone, set_counts, to_first_drop

pytestmark = pytest.mark.browser


def player(snap, name):
    return next(p for p in snap["state"]["players"] if p["name"] == name)


def sheet(page, where, name):
    return page.locator(f"{where} .sheet-goods-player[data-player='{name}']")


def tick(block, goods):
    for box in block.locator("input.sheet-good").all():
        box.set_checked(box.get_attribute("value") in goods)


def test_the_goods_on_each_player_sheet_at_set_up_and_corrected_later(served, browser):
    url, _, device = served
    snap = device.table.new_game(["Ada", "Ben"], "Sheets")
    phone = Phone(browser, url, device.table_code.value)
    phone.wait_title("Set up the game")

    ada = sheet(phone, "#now-body", "Ada")
    assert ada.locator(".sheet-said").text_content() == (
        "Ada: not entered yet (until then all 5 goods count as printed)")
    assert ada.locator("input.sheet-good:checked").count() == 0  # the page guesses nothing
    assert ada.locator("input.sheet-good").evaluate_all("bs => bs.map(b => b.value)") == [
        "cotton", "tobacco", "sugar", "coconut", "coffee"]
    tick(ada, {"cotton", "sugar"})
    ada.locator("button.save-sheet").click()
    phone.wait_seq(snap["seq"] + 1)
    snap = device.table.snapshot()
    assert player(snap, "Ada")["sheet_goods"] == ["cotton", "sugar"]
    assert player(snap, "Ada")["production"] == {
        "cotton": 1, "tobacco": 0, "sugar": 1, "coconut": 0, "coffee": 0}
    assert ada.locator(".sheet-said").text_content() == "Ada: cotton, sugar"
    assert ada.locator("button.save-sheet").text_content() == "Correct Ada's sheet"

    # Nothing ticked: asked first; "No" sends nothing, "Yes" enters a sheet without goods.
    ben = sheet(phone, "#now-body", "Ben")
    ben.locator("button.save-sheet").click()
    phone.wait_for_selector("#ask[open]")
    assert "No good printed on Ben's sheet?" in phone.text_content("#ask-text")
    phone.click("#ask-no")
    assert device.table.snapshot()["seq"] == snap["seq"]
    ben.locator("button.save-sheet").click()
    phone.click("#ask-yes")
    phone.wait_seq(snap["seq"] + 1)
    assert player(device.table.snapshot(), "Ben")["sheet_goods"] == []
    assert ben.locator(".sheet-said").text_content() == "Ben: no goods"

    # Later in the game: the Sheet view corrects a sheet; a half-ticked form survives another
    # phone's move.
    snap = device.table.snapshot()
    for command in ({"type": "setup_drop_read", "tray": SETUP_DROP},
                    {"type": "pirate_revealed", "value": 2}):
        snap = device.table.command(snap["id"], snap["seq"], command)
    phone.wait_seq(snap["seq"])
    assert phone.locator("#now-body .sheet-goods").count() == 0  # set-up is over
    phone.click("#views a[data-view='sheet']")
    phone.wait_for_selector("#sheets-card", state="visible")  # the view switches
    ada = sheet(phone, "#sheets-body", "Ada")
    assert ada.locator(".sheet-said").text_content() == "Ada: cotton, sugar"
    tick(ada, {"cotton", "coffee"})
    snap = device.table.command(snap["id"], snap["seq"], {"type": "bump_read", "tray": {"red": 1}})
    phone.wait_seq(snap["seq"])
    assert ada.locator("input[value='coffee']").is_checked()
    ada.locator("button.save-sheet").click()
    phone.wait_seq(snap["seq"] + 1)
    snap = device.table.snapshot()
    assert player(snap, "Ada")["sheet_goods"] == ["cotton", "coffee"]
    production = phone.locator("#players tr.production td[data-player='Ada'] .goods-list > span")
    assert production.all_text_contents() == ["cotton\u00a01", "coffee\u00a01"]  # a good a line
    assert snap["history"][-1]["text"] == (
        "Ada's player sheet prints cotton, coffee (one production token of each)")
    phone.shot("sheets")

    # A watching phone reads the sheets but has no form.
    watcher = Phone(browser, url, view="sheet")
    watcher.wait_seq(snap["seq"])
    assert sheet(watcher, "#sheets-body", "Ada").locator(".sheet-said").text_content() == (
        "Ada: cotton, coffee")
    assert not watcher.locator("#sheets-body form").first.is_visible()
    watcher.close()
    phone.close()


def test_the_sheets_card_is_gone_once_the_game_is_over(served, browser):
    """The rules take a sheet until the final scoring; the page offers it no longer."""
    import json

    from test_game_page import EXAMPLE

    url, _, device = served
    events = [json.loads(line) for line in EXAMPLE.read_text().splitlines() if line.strip()]
    snap = device.table.new_game(events[1]["players"], events[0]["name"])
    for event in events[2:]:
        snap = device.table.command(snap["id"], snap["seq"], {
            k: v for k, v in event.items() if k != "v"})
    assert snap["state"]["stage"] == "over"
    phone = Phone(browser, url, device.table_code.value, "sheet")
    phone.wait_seq(snap["seq"])
    phone.wait_for_selector("#players-card", state="visible")
    phone.wait_for_selector("#sheets-card", state="hidden")
    phone.close()


def test_a_bump_after_the_drop_before_the_reading(served, browser):
    """The rules take a bump between a phase's drop and its reading; the bumped cubes lie in the
    tray with the drop, so the reading must show them, and they wait for the next phase."""
    url, _, device = served
    snap = to_first_drop(device.table, name="Bump")
    phone = Phone(browser, url, device.table_code.value)
    phone.wait_title("Phase blue (round 1): drop the cubes")
    phone.click("#now-body button.bump")
    form = phone.locator("#now-body .bump-box .counts-form")
    # after the drop the tray holds the drop too: the form starts empty, not at the reading
    assert form.locator("input[data-colour='blue']").input_value() == "0"
    assert "only the cubes that fell out early" in phone.text_content("#now-body .bump-box")
    set_counts(form, {"white": 1})
    form.locator("button[type=submit]").click()
    phone.wait_seq(snap["seq"] + 1)
    assert phone.title() == "Phase blue (round 1): drop the cubes"  # still waiting for the reading
    assert "Waiting in the tray for the next drop: 1 white." in phone.text_content("#tower-total")

    # The reading of the whole tray (the drop and the bumped white cube) starts the phase.
    phone.click("#now-body button.edit-counts")
    form = phone.locator("#now-body .counts-form").first
    set_counts(form, {"blue": 3, "black": 1, "white": 1})
    form.locator("button[type=submit]").click()
    phone.wait_title("Ada's turn")
    state = device.table.snapshot()["state"]
    assert state["cubes"]["action_space"]["white"] == 0  # the bumped cube is not on offer
    assert state["cubes"]["tray"] == {"blue": 0, "black": 0, "red": 0, "brown": 0, "green": 0,
                                      "yellow": 0, "white": 1}
    phone.close()
