"""What the phone page is to a player using a screen reader, a large system font, or no colour
vision: accessible names, live regions that speak once, contrast, tap targets, reflow."""

import pytest
from test_game_page import Phone, to_actions

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
