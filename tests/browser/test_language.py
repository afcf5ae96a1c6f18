"""A German phone sees German, an English one English, and the switch on the page is remembered."""

import pytest

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
SETUP_DROP = {"blue": 4, "black": 4, "red": 5, "brown": 3, "green": 4, "yellow": 5, "white": 3}


def to_actions(table):
    """A game at Ada's turn in the blue phase of round 1 (3 blue and 1 white in the tray)."""
    snap = table.new_game(["Ada", "Ben", "Cleo"], "Test")
    for command in ({"type": "setup_drop_read", "tray": SETUP_DROP},
                    {"type": "pirate_revealed", "value": 2},
                    {"type": "tray_read", "tray": {"blue": 3, "white": 1}}):
        snap = table.command(snap["id"], snap["seq"], command)
    return snap


def open_phone(browser, url, locale, code):
    """A phone that plays (it joins with the table code, as the QR code's link does)."""
    context = browser.new_context(viewport=PHONE, locale=locale)
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda m: errors.append(m.text) if "Content Security" in m.text else None)
    page.goto(f"{url}/?code={code}")
    page.wait_for_function("() => document.body.dataset.stage !== undefined")
    return context, page, errors


def wait_title(page, text):
    page.wait_for_function(
        "t => document.getElementById('now-title').textContent === t", arg=text, timeout=15000)


def test_a_german_phone_sees_german_and_an_english_one_english(served, browser):
    url, _, device = served
    to_actions(device.table)
    code = device.table_code.value
    german, de, de_errors = open_phone(browser, url, "de-DE", code)
    english, en, en_errors = open_phone(browser, url, "en-US", code)

    wait_title(de, "Ada ist am Zug")
    wait_title(en, "Ada's turn")
    assert de.evaluate("document.documentElement.lang") == "de"
    assert de.text_content("#score-title").startswith("Wertungsblatt")
    assert de.text_content("#code-chip") == f"Tisch {code}"
    assert en.text_content("#score-title").startswith("Score sheet")
    assert de.text_content("#undo") == "Rückgängig: Schale abgelesen: 3× blau, 1× weiß"
    assert en.text_content("#undo") == "Undo: Tray read: 3 blue, 1 white"
    assert de.text_content(".action-btn[data-colour='blue'] .action-name") == "Schiffe bewegen"
    assert "blau" in de.text_content("#tower tr[data-colour='blue'] th")
    # German puts the colour after the word Phase, as every other German phase text does.
    offer = ".offer-line:first-child"
    assert de.text_content(offer).strip() == "Phase blau: 2 Aktionen zur Wahl, 3 AP oder 2 Gold."
    assert en.text_content(offer).strip() == "blue phase: 2 actions on offer, 3 AP or 2 gold."
    assert de.locator("#game-log li").first.text_content().startswith("Schale abgelesen")

    # A refusal of the rules engine, in the phone's language.
    de.click(".action-btn[data-colour='blue']")
    form = de.locator(".action-form")
    for i, island in enumerate(("A", "B", "C")):
        if i:
            form.locator("text=+ Handelsposten hinzufügen").click()
        form.locator("input.island").nth(i).fill(island)
    form.locator("button[type=submit]").click()
    refusal = form.locator(".refusal")
    refusal.wait_for()
    assert refusal.text_content() == "Ada hat 2 Schiffe: höchstens 2 Handelsposten pro Aktion"
    de.screenshot(path="/tmp/cubetower-german.png", full_page=True)

    assert de_errors == [] and en_errors == []
    german.close()
    english.close()


def test_the_switch_changes_the_language_and_is_remembered(served, browser):
    url, _, device = served
    to_actions(device.table)
    context, page, errors = open_phone(browser, url, "en-US", device.table_code.value)
    wait_title(page, "Ada's turn")
    assert page.get_attribute(".lang-switch[data-lang='en']", "aria-pressed") == "true"

    with page.expect_navigation():
        page.click(".lang-switch[data-lang='de']")
    page.wait_for_function("() => document.body.dataset.stage !== undefined")
    wait_title(page, "Ada ist am Zug")
    assert page.get_attribute(".lang-switch[data-lang='de']", "aria-pressed") == "true"
    assert page.text_content("#read-now") == "Schale jetzt ablesen"

    page.reload()  # remembered: the browser still says English, the switch said German
    page.wait_for_function("() => document.body.dataset.stage !== undefined")
    wait_title(page, "Ada ist am Zug")
    other = context.new_page()  # the same phone, another tab
    other.goto(url)
    other.wait_for_function("() => document.body.dataset.stage !== undefined")
    wait_title(other, "Ada ist am Zug")

    with page.expect_navigation():
        page.click(".lang-switch[data-lang='en']")
    page.wait_for_function("() => document.body.dataset.stage !== undefined")
    wait_title(page, "Ada's turn")
    assert errors == []
    context.close()


def test_a_german_phone_reads_the_cameras_doubts_in_german(served, browser):
    """The counter's doubts come as data beside its English words; the phone reads them in its
    language, each once and at most two (the picture marks the rest)."""
    from vision.reading import Doubt

    url, _, device = served
    code = device.table_code.value
    german, de, de_errors = open_phone(browser, url, "de-DE", code)
    english, en, en_errors = open_phone(browser, url, "en-US", code)
    doubts = (Doubt("colour", "red", "brown", "top-left", times=2), Doubt("no_outline"),
              Doubt("one_more", "green", place="middle"))
    device.board.publish_reading("doubts", {
        "counts": {"red": 2}, "uncertain": True, "warnings": [d.text for d in doubts],
        "doubts": [d.to_dict() for d in doubts]}, None)
    for page in (de, en):
        page.click("a[data-view='device']")
        page.wait_for_selector("#tray-alert:not([hidden])")
    assert de.text_content("#tray-alert") == (
        "Bitte die Schale prüfen: ein Würfel oben links im Bild ist vielleicht rot oder braun "
        "(zweimal); der Umriss der Schale wurde nicht gefunden: sind ihre Ecken im Bild? "
        "(und 1 weitere auf dem Bild)")
    assert en.text_content("#tray-alert") == (
        f"Please check the tray: {doubts[0].text}; {doubts[1].text} (and 1 more on the picture)")
    assert de_errors == [] and en_errors == []
    german.close()
    english.close()
