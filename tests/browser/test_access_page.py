"""Only the table writes, in a real browser: a phone without the code watches; the QR link joins."""

import pytest

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
SETUP = {"blue": 4, "black": 4, "red": 5, "brown": 3, "green": 4, "yellow": 5, "white": 3}


def open_phone(browser, url, errors):
    """A new phone (its own browser context: its own localStorage) collecting page errors and
    refusals of the Content-Security-Policy."""
    page = browser.new_page(viewport=PHONE)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on(
        "console",
        lambda m: errors.append(m.text) if "Content Security Policy" in m.text else None,
    )
    page.goto(url)
    page.wait_for_function("() => document.body.dataset.access !== undefined")
    return page


def access(page):
    return page.evaluate("document.body.dataset.access")


def test_a_phone_without_the_code_watches_and_cannot_write(served, browser):
    url, _, device = served
    snap = device.table.new_game(["Ada", "Ben"])
    snap = device.table.command(snap["id"], snap["seq"], {"type": "setup_drop_read", "tray": SETUP})
    errors = []
    watcher = open_phone(browser, url, errors)
    watcher.wait_for_function("n => document.body.dataset.seq === String(n)", arg=snap["seq"])
    assert access(watcher) == "watching"
    assert watcher.locator("#join-card").is_visible()
    assert not watcher.locator("#code-card").is_visible()
    # the game is there to read, but nothing that writes is on the screen
    assert watcher.text_content("#now-title") == "Set up the game"
    watcher.click("#views a[data-view='sheet']")
    watcher.wait_for_selector("#players-card", state="visible")
    watcher.click("#views a[data-view='table']")
    for selector in ("#undo", "#read-now", "#now-body button", "#now-body form",
                     "summary:has-text('Calibrate')"):
        assert all(not b.is_visible() for b in watcher.locator(selector).all()), selector
    # and the device refuses a write the page is made to send anyway
    status = watcher.evaluate(
        """async (id) => (await fetch(`/api/game/${id}/command`, {method: "POST",
             headers: {"Content-Type": "application/json"},
             body: JSON.stringify({base: 2, command: {type: "undo"}})})).status""",
        snap["id"],
    )
    assert status == 403 and device.table.snapshot()["seq"] == snap["seq"]

    # a wrong code is refused in words; the right one (typed in lower case) makes it a player
    watcher.fill("#join-code", "WRONG2")
    watcher.click("#join")
    watcher.wait_for_function(
        "() => document.getElementById('join-result').textContent.includes('not this table')"
    )
    assert access(watcher) == "watching"
    watcher.fill("#join-code", device.table_code.value.lower())
    watcher.click("#join")
    watcher.wait_for_function("() => document.body.dataset.access === 'playing'")
    assert watcher.locator("#undo").is_visible()
    watcher.click("#views a[data-view='device']")  # the tray, the camera, the table code
    watcher.wait_for_selector("#read-now", state="visible")
    assert watcher.text_content("#table-code") == device.table_code.value
    assert errors == []
    watcher.close()


def test_the_qr_link_joins_and_the_page_keeps_the_code(served, browser):
    url, _, device = served
    code = device.table_code.value
    errors = []
    phone = open_phone(browser, f"{url}/?code={code}", errors)
    assert access(phone) == "playing"
    assert "code=" not in phone.url  # taken out of the address bar at once
    assert phone.evaluate("localStorage.getItem('cubetower.tableCode')") == code
    assert phone.text_content("#table-code") == code
    assert phone.text_content("#join-link") == f"{url}/?code={code}"

    phone.reload()  # plain URL now: the phone remembers it plays
    phone.wait_for_function("() => document.body.dataset.stage === 'none'")
    assert access(phone) == "playing"
    phone.fill(".new-game input.player-name >> nth=0", "Ada")
    phone.fill(".new-game input.player-name >> nth=1", "Ben")
    phone.click("text=Start the game")
    phone.wait_for_function("() => document.body.dataset.stage === 'setup'")
    assert device.table.snapshot()["state"]["players"][0]["name"] == "Ada"
    assert errors == []
    phone.close()


def test_a_new_code_sends_every_other_phone_back_to_watching(served, browser):
    url, _, device = served
    device.table.new_game(["Ada", "Ben"])
    old = device.table_code.value
    errors = []
    keeper = open_phone(browser, f"{url}/?code={old}", errors)
    other = open_phone(browser, f"{url}/?code={old}", errors)
    for page in (keeper, other):
        page.wait_for_function("() => document.body.dataset.stage === 'setup'")
        assert access(page) == "playing"

    keeper.click("#views a[data-view='device']")
    keeper.click("#new-code")
    keeper.click("#new-code-yes")
    keeper.wait_for_function(
        "() => document.getElementById('code-result').textContent.startsWith('New code')"
    )
    new = device.table_code.value
    assert new != old
    assert keeper.text_content("#table-code") == new and access(keeper) == "playing"
    assert keeper.evaluate("localStorage.getItem('cubetower.tableCode')") == new

    # the other phone hears of it over the live stream and watches, saying why
    other.wait_for_function("() => document.body.dataset.access === 'watching'", timeout=5000)
    assert "no longer" in other.text_content("#join-result")
    assert other.evaluate("localStorage.getItem('cubetower.tableCode')") is None
    assert not other.locator("#now-body button").first.is_visible()

    # the keeper chooses to only watch, from the Device view: it is shown the join card, saying so
    keeper.click("#leave")
    keeper.wait_for_function("() => document.body.dataset.access === 'watching'")
    keeper.wait_for_selector("#join-card", state="visible")
    assert keeper.evaluate("document.body.dataset.view") == "table"
    assert keeper.text_content("#join-result") == "This phone only watches now."
    assert errors == []
    keeper.close()
    other.close()


@pytest.mark.parametrize("lang", ["en", "de"])
def test_a_playing_phones_header_fits_the_phones_width(served, browser, lang):
    # the table chip, the camera's status and the language switch beside the title once
    # made a joined 390 px phone scroll sideways, with Deutsch cut off
    url, _, device = served
    device.table.new_game(["Ada", "Ben", "Cleo"], name="Thursday at Anna's")
    errors = []
    phone = open_phone(browser, f"{url}/?code={device.table_code.value}", errors)
    assert access(phone) == "playing"
    if lang == "de":
        phone.click(".lang-switch[data-lang='de']")
        phone.wait_for_function("() => document.documentElement.lang === 'de'")
        phone.wait_for_function("() => document.body.dataset.access === 'playing'")
    phone.wait_for_selector("#code-chip", state="visible")
    width = phone.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"the page is {width} px wide on a {PHONE['width']} px phone"
    for selector in ("#code-chip", "#status", ".lang-switch[data-lang='de']"):
        box = phone.locator(selector).bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], selector
    # and the game's title keeps room to be read (it was squeezed to one letter beside the chips)
    assert phone.locator("#game-title").bounding_box()["width"] >= 7 * 16 - 1
    assert errors == []
    phone.close()
