"""What the phone page is to a player using a screen reader, a large system font, or no colour
vision: accessible names, live regions that speak once, contrast, tap targets, reflow."""

import pytest
from test_game_page import Phone, to_actions
from test_language import open_phone, wait_title

pytestmark = pytest.mark.browser


def test_the_live_title_speaks_only_when_it_changes(served, browser):
    # "#now-title" is aria-live: a screen reader says it each time its text is replaced, so an
    # update that leaves the title as it was (another phone entering a sheet) must not touch it
    url, _, device = served
    snap = to_actions(device.table)
    phone = Phone(browser, url, device.table_code.value)
    phone.wait_title("Ada's turn")
    phone.evaluate("""() => {
        window.said = [];
        const title = document.getElementById('now-title');
        new MutationObserver(() => window.said.push(title.textContent))
            .observe(title, { childList: true, characterData: true, subtree: true });
    }""")
    snap = device.table.command(snap["id"], snap["seq"],
                                {"type": "sheet_goods", "player": "Ben", "goods": ["sugar"]})
    phone.wait_seq(snap["seq"])
    snap = device.table.command(snap["id"], snap["seq"],
                                {"type": "action", "player": "Ada", "choice": "gold"})
    phone.wait_title("Ben's turn")
    assert phone.evaluate("() => window.said") == ["Ben's turn"]
    phone.close()


def test_a_sheets_tick_boxes_name_the_good_in_the_phones_language(served, browser):
    url, _, device = served
    device.table.new_game(["Ada", "Ben"], "Test")
    context, page, errors = open_phone(browser, url, "de", device.table_code.value)
    wait_title(page, "Spiel aufbauen")
    boxes = page.locator("#now-body input.sheet-good")
    assert boxes.count() == 10
    assert page.get_by_role("checkbox", name="das Tableau von Ada zeigt Baumwolle").count() == 1
    assert page.get_by_role("checkbox", name="das Tableau von Ben zeigt Kaffee").count() == 1
    assert page.get_by_role("checkbox", name="das Tableau von Ada zeigt cotton").count() == 0
    assert errors == []
    context.close()
