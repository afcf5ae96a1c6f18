"""What the phone page is to a player using a screen reader, a large system font, or no colour
vision: accessible names, live regions that speak once, contrast, tap targets, reflow."""

import shutil

import pytest
from test_game_page import Phone, to_actions, to_first_drop
from test_language import open_phone, wait_title

from firmware.sources import DEMO_DIR

pytestmark = pytest.mark.browser

# The WCAG contrast ratio of an element's text against what is behind it, from computed styles:
# the backgrounds of the element and its ancestors laid over white, and each ancestor's opacity
# fading its whole box (text and background) into what is behind it.
CONTRAST = r"""
(el) => {
  const rgba = (s) => {
    const m = s.match(/[\d.]+/g).map(Number);
    return [m[0], m[1], m[2], m.length > 3 ? m[3] : 1];
  };
  const over = (top, under) => [0, 1, 2].map((i) => top[i] * top[3] + under[i] * (1 - top[3]));
  const chain = [];
  for (let n = el; n && n.nodeType === 1; n = n.parentElement) chain.unshift(n);
  let bg = [255, 255, 255];
  const fades = [];
  for (const n of chain) {
    const style = getComputedStyle(n);
    const o = Number(style.opacity);
    if (o < 1) fades.push([o, bg]);
    bg = over(rgba(style.backgroundColor), bg);
  }
  let fg = over(rgba(getComputedStyle(el).color), bg);
  for (const [o, behind] of fades.reverse()) {
    fg = fg.map((c, i) => c * o + behind[i] * (1 - o));
    bg = bg.map((c, i) => c * o + behind[i] * (1 - o));
  }
  const lum = (c) => {
    const v = c.map((x) => x / 255)
      .map((x) => (x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4));
    return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2];
  };
  const [a, b] = [lum(fg), lum(bg)];
  return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
}
"""


def listen(phone, element_id):
    """Keep in ``window.said`` each text the element (a live region) changes to: what a screen
    reader would say."""
    phone.evaluate("""id => {
        window.said = [];
        const node = document.getElementById(id);
        new MutationObserver(() => window.said.push(node.textContent))
            .observe(node, { childList: true, characterData: true, subtree: true });
    }""", element_id)

def test_the_live_title_speaks_only_when_it_changes(served, browser):
    # "#now-title" is aria-live: a screen reader says it each time its text is replaced, so an
    # update that leaves the title as it was (another phone entering a sheet) must not touch it
    url, _, device = served
    snap = to_actions(device.table)
    phone = Phone(browser, url, device.table_code.value)
    phone.wait_title("Ada's turn")
    listen(phone, "now-title")
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


def test_faded_rows_and_done_players_are_still_readable(served, browser):
    # a colour with no cube (the tray card, inside the tower) and a player who has acted are
    # shown fainter, but their words keep WCAG AA's 4.5:1 (opacity had made them 3.2:1 and 4:1)
    url, _, device = served
    snap = to_first_drop(device.table, ("Ada", "Ben", "Cleo"))
    for command in ({"type": "tray_read", "tray": {"blue": 3, "white": 1, "red": 2}},  # no red left
                    {"type": "action", "player": "Ada", "choice": "gold"}):
        snap = device.table.command(snap["id"], snap["seq"], command)
    assert snap["state"]["cubes"]["tower"]["red"] == 0
    phone = Phone(browser, url, device.table_code.value)
    phone.wait_title("Ben's turn")
    faded = {
        "table": ["#tower tr.zero th", "#tower tr.zero td", ".phase-order li.done"],
        "device": [".count.zero .name", ".count.zero .n"],
    }
    for view, selectors in faded.items():
        phone.click(f"#views a[data-view='{view}']")
        for selector in selectors:
            texts = phone.locator(selector)
            assert texts.count() > 0, selector
            for i in range(texts.count()):
                ratio = texts.nth(i).evaluate(CONTRAST)
                assert ratio >= 4.5, (selector, texts.nth(i).text_content(), round(ratio, 2))
    phone.close()


SIZES = "els => els.map(e => [e.getBoundingClientRect().width, e.getBoundingClientRect().height])"


def test_the_small_buttons_are_a_fingers_size(served, browser):
    # about 44 x 44 CSS px: the bump button on the Table card and a reading's Correct in the
    # history (both were 38 px high), a row's ✕ in an action form (it was 15 px wide), the
    # header's language switch and table code
    url, _, device = served
    snap = to_first_drop(device.table, ("Ada", "Ben", "Cleo"))
    phone = Phone(browser, url, device.table_code.value)
    phone.wait_title("Phase blue (round 1): drop the cubes")
    sizes = {"bump": phone.locator("#now-body button.bump").evaluate_all(SIZES)}
    phone.click("#views a[data-view='history']")
    sizes["correct"] = phone.locator("#game-log button.correct").evaluate_all(SIZES)
    snap = device.table.command(snap["id"], snap["seq"],
                                {"type": "tray_read", "tray": {"blue": 3, "white": 1}})
    phone.click("#views a[data-view='table']")
    phone.wait_title("Ada's turn")
    phone.click(".action-btn[data-colour='blue']")
    phone.click(".action-form button.add")
    sizes["remove"] = phone.locator(".action-form button.remove").evaluate_all(SIZES)
    # the header's language switch and table code (both were 25 px high)
    sizes["language"] = phone.locator("header .lang-switch").evaluate_all(SIZES)
    sizes["code"] = phone.locator("header #code-chip").evaluate_all(SIZES)
    assert [len(found) for found in sizes.values()] == [1, 1, 2, 2, 1]
    for name, found in sizes.items():
        for width, height in found:
            assert width >= 44 and height >= 44, (name, width, height)
    phone.close()


# What reaches past the phone's edge, outside a box that scrolls on its own (.scroll: the tables)
PAST_THE_EDGE = """() => [...document.querySelectorAll('body *')]
    .filter((e) => e.getClientRects().length && !e.closest('.scroll'))
    .filter((e) => e.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5)
    .map((e) => `${e.tagName}.${e.className}: ${e.textContent.trim().slice(0, 30)}`)"""


@pytest.mark.parametrize("lang", ["en", "de"])
def test_the_page_fits_the_phone_at_twice_the_text_size(served, browser, lang):
    # the phone's text size at 200 % (its browser's default font size, as a reader sets it): the
    # page follows it, nothing goes past the 390 px screen's edge (the tower table did), all four
    # views stay on the bottom bar (the fourth went off it), and the header no longer sticks at
    # the top taking 40 % of the screen
    url, _, device = served
    to_actions(device.table, ("Ada", "Benedikt", "Cleopatra", "Dan"))
    context, page, errors = open_phone(browser, url, lang, device.table_code.value)
    context.new_cdp_session(page).send("Page.setFontSizes",
                                       {"fontSizes": {"standard": 32, "fixed": 26}})
    page.reload()
    page.wait_for_function("() => document.body.dataset.stage === 'actions'")
    assert page.evaluate("() => getComputedStyle(document.body).fontSize") == "32px"
    for view in ("table", "sheet", "history", "device"):
        page.click(f"#views a[data-view='{view}']")
        if view == "table":
            page.click(".action-btn[data-colour='blue']")
            page.click("#more summary")
        if view == "device":
            page.click(".calibrate summary")
        assert page.evaluate(PAST_THE_EDGE) == [], view
    screen = page.viewport_size
    links = page.locator("#views a")
    for i in range(links.count()):
        box = links.nth(i).bounding_box()
        on_screen = box["x"] >= 0 and box["x"] + box["width"] <= screen["width"]
        assert on_screen, links.nth(i).text_content()
        assert box["height"] >= 44
        assert links.nth(i).evaluate("a => a.scrollWidth <= a.clientWidth")
    assert page.locator("#views").bounding_box()["height"] <= 0.2 * screen["height"]
    header = page.locator("header")
    assert (header.evaluate("h => getComputedStyle(h).position") != "sticky"
            or header.bounding_box()["height"] <= 0.2 * screen["height"])
    assert errors == []
    context.close()


@pytest.mark.parametrize("lang", ["en", "de"])
def test_the_headers_taps_fit_a_narrow_phone_at_twice_the_text_size(served, browser, lang):
    # the language switch and the table code, now 44 px high, on a 320 px phone at the text
    # size it came with and at 200 %: each whole on the screen (the switch's two languages go
    # onto two lines rather than past the screen's edge), and nothing else pushed past it
    url, _, device = served
    device.table.new_game(["Ada", "Ben", "Cleo"], "Thursday at Anna's")
    context, page, errors = open_phone(browser, url, lang, device.table_code.value)
    page.set_viewport_size({"width": 320, "height": 640})
    for size in (16, 32):
        if size == 32:
            context.new_cdp_session(page).send("Page.setFontSizes",
                                               {"fontSizes": {"standard": 32, "fixed": 26}})
            page.reload()
        page.wait_for_selector("#code-chip", state="visible")
        controls = page.locator("header :is(#code-chip, .lang-switch)")
        assert controls.count() == 3
        for box in controls.evaluate_all(
                "els => els.map(e => e.getBoundingClientRect().toJSON())"):
            assert box["left"] >= 0 and box["right"] <= 320, (size, box)
            assert box["width"] >= 44 and box["height"] >= 44, (size, box)
        assert page.evaluate(PAST_THE_EDGE) == [], size
    assert errors == []
    context.close()


def test_a_new_reading_of_the_drop_is_said_once(served, browser):
    # while the card waits for a drop, its reading is a polite live region: a new reading is
    # said; another phone's update (a sheet entered) leaves it as it was, so it is not said again
    url, frames, device = served
    snap = to_first_drop(device.table)
    phone = Phone(browser, url, device.table_code.value)
    phone.wait_title("Phase blue (round 1): drop the cubes")
    reading = phone.locator("#now-reading")
    assert reading.get_attribute("aria-live") == "polite"
    listen(phone, "now-reading")
    snap = device.table.command(snap["id"], snap["seq"],
                                {"type": "sheet_goods", "player": "Ben", "goods": ["sugar"]})
    phone.wait_seq(snap["seq"])
    phone.wait_for_timeout(300)
    assert phone.evaluate("() => window.said") == []
    shutil.copy(DEMO_DIR / "drop01.jpg", frames / "a.jpg")
    phone.wait_for_function("() => window.said.length > 0", timeout=15000)
    phone.wait_for_timeout(300)
    said = phone.evaluate("() => window.said")
    assert len(said) == 1 and said[0].startswith("Latest reading:")
    phone.close()


def test_what_bold_and_a_line_through_show_is_said_in_words(served, browser):
    # a screen reader reads neither bold nor a line through: who is on turn and who has acted in
    # this phase, and which lines of the history are undone, are said in words
    url, _, device = served
    snap = to_actions(device.table)
    for command in ({"type": "action", "player": "Ada", "choice": "gold"},
                    {"type": "action", "player": "Ben", "choice": "gold"},
                    {"type": "undo"}):
        snap = device.table.command(snap["id"], snap["seq"], command)
    phone = Phone(browser, url, device.table_code.value)
    phone.wait_title("Ben's turn")
    order = phone.locator(".phase-order")
    assert order.aria_snapshot() == (
        "- list:\n  - listitem: Ada (acted this phase)\n  - listitem: Ben (on turn)\n"
        "  - listitem: Cleo")
    for box in order.locator(".visually-hidden").all():  # on the screen: the names alone
        assert box.bounding_box()["width"] <= 1
    phone.click("#views a[data-view='history']")
    undone = phone.locator("#game-log li.undone")
    assert undone.count() == 1
    assert "(undone)" in undone.aria_snapshot()
    assert undone.locator(".visually-hidden").bounding_box()["width"] <= 1
    assert "(undone)" not in phone.locator("#game-log li:not(.undone)").first.aria_snapshot()
    phone.close()


# Each element with text of its own on the view shown whose contrast is under WCAG AA's (4.5:1;
# 3:1 from 24 px, or 18.66 px bold), with its ratio; a disabled button needs none
LOW_CONTRAST = """() => {
    const ratio = """ + CONTRAST + """;
    const low = [];
    for (const e of document.querySelectorAll('body *')) {
        const own = [...e.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
        if (!own || !e.getClientRects().length || e.closest('button:disabled')) continue;
        const style = getComputedStyle(e);
        const size = parseFloat(style.fontSize);
        const large = size >= 24 || (Number(style.fontWeight) >= 700 && size >= 18.66);
        const r = ratio(e);
        if (r < (large ? 3 : 4.5)) low.push(`${e.tagName}.${e.className} ${e.textContent}: ${r}`);
    }
    return low;
}"""


@pytest.mark.parametrize("lang", ["en", "de"])
def test_every_text_on_the_four_views_has_aa_contrast(served, browser, lang):
    # a player's turn with a form open (a form's ✕ was 4.4:1), the More list open, the tray card
    # with no reading yet, the calibration open
    url, _, device = served
    snap = to_actions(device.table)
    device.table.command(snap["id"], snap["seq"],
                         {"type": "action", "player": "Ada", "choice": "gold"})
    context, page, errors = open_phone(browser, url, lang, device.table_code.value)
    page.wait_for_function("() => document.body.dataset.seq !== ''")
    page.click(".action-btn[data-colour='blue']")
    page.click(".action-form button.add")
    page.click("#more summary")
    for view in ("table", "sheet", "history", "device"):
        page.click(f"#views a[data-view='{view}']")
        if view == "device":
            page.click(".calibrate summary")
        assert page.evaluate(LOW_CONTRAST) == [], view
    assert errors == []
    context.close()


@pytest.mark.parametrize("lang", ["en", "de"])
def test_an_action_buttons_name_is_its_words_then_its_colour(served, browser, lang):
    # a screen reader hears the cube's colour; a voice control finds the button by the words on
    # it, so its name starts with them (WCAG's label in name: "Move Ships (blue), 3 AP" did not)
    url, _, device = served
    to_actions(device.table)
    context, page, errors = open_phone(browser, url, lang, device.table_code.value)
    page.wait_for_function("() => document.body.dataset.stage === 'actions'")
    german = {"blue": "blau", "black": "schwarz", "red": "rot", "brown": "braun", "green": "grün",
              "yellow": "gelb", "white": "weiß"}
    buttons = page.locator(".action-btn")
    assert buttons.count() >= 2
    for button in buttons.all():
        words = button.evaluate(
            "b => [...b.querySelectorAll('.action-name, .via, .ap')].map(e => e.textContent)")
        colour = button.get_attribute("data-colour")
        colour = german[colour] if lang == "de" else colour
        name = " ".join([*words, f"({colour})"])
        assert button.get_attribute("aria-label") is None
        assert button.aria_snapshot() == f'- button "{name}"'
    assert errors == []
    context.close()


def active(page, selector):
    """Whether the element with the keyboard's focus matches ``selector``."""
    return page.evaluate("s => !!document.activeElement && document.activeElement.matches(s)",
                         selector)


@pytest.mark.parametrize("lang", ["en", "de"])
def test_a_table_that_scrolls_sideways_is_reached_and_scrolled_with_the_keys(served, browser,
                                                                             lang):
    # on a 320 px phone the four players' table is wider than the screen and scrolls sideways in
    # its own box (as the score sheet does later in a game): a player on a keyboard (or a
    # switch) reaches that box with Tab, hears what it is, sees where the focus is, and scrolls
    # it with the arrow keys
    url, _, device = served
    to_actions(device.table, ("Ada", "Benedikt", "Cleopatra", "Dan"))
    context, page, errors = open_phone(browser, url, lang, device.table_code.value)
    page.set_viewport_size({"width": 320, "height": 640})
    page.wait_for_function("() => document.body.dataset.stage === 'actions'")
    page.click("#views a[data-view='sheet']")
    box = page.locator(".scroll:has(> #players)")
    assert box.evaluate("b => b.scrollWidth > b.clientWidth + 20")
    name = {"en": "Players, scrolls sideways", "de": "Spieler, seitlich scrollbar"}
    region = page.get_by_role("region", name=name[lang])
    assert region.count() == 1
    assert region.evaluate("r => r.contains(document.getElementById('players'))")
    page.focus("header .lang-switch >> nth=-1")  # the header's last control: the view is next
    for _ in range(40):
        page.keyboard.press("Tab")
        if active(page, ".scroll:has(> #players)"):
            break
    assert active(page, ".scroll:has(> #players)")
    outline = box.evaluate(
        "b => [getComputedStyle(b).outlineStyle, getComputedStyle(b).outlineWidth]")
    assert outline[0] not in ("none", "auto") and float(outline[1].removesuffix("px")) >= 2, outline
    assert box.evaluate("b => b.scrollLeft") == 0
    page.keyboard.press("ArrowRight")
    page.wait_for_function(
        "() => document.querySelector('.scroll:has(> #players)').scrollLeft > 0")
    assert errors == []
    context.close()


def test_an_opened_form_takes_the_focus_and_gives_it_back(served, browser):
    # a screen reader or a keyboard was left on the button that opened a form, not in the form;
    # the form's Cancel or its sending left the focus nowhere (on the page's body)
    url, _, device = served
    snap = to_first_drop(device.table)
    phone = Phone(browser, url, device.table_code.value)
    phone.wait_title("Phase blue (round 1): drop the cubes")
    bump = "#now-body button.bump"
    phone.focus(bump)
    phone.keyboard.press("Enter")  # a form with no heading: the form itself takes the focus
    assert active(phone, "#now-body .counts-form")
    phone.keyboard.press("Tab")  # and the next Tab goes into its fields
    assert active(phone, "#now-body .counts-form button, #now-body .counts-form input")
    phone.click("#now-body .counts-form button:text('Cancel')")
    assert phone.locator("#now-body .counts-form").count() == 0
    assert active(phone, bump)

    snap = device.table.command(snap["id"], snap["seq"],
                                {"type": "tray_read", "tray": {"blue": 3, "white": 1}})
    phone.wait_title("Ada's turn")
    phone.wait_for_timeout(600)  # past the moment the page holds its buttons after a change
    blue = ".action-btn[data-colour='blue']"
    phone.click(blue)
    assert active(phone, ".action-form h3")  # its heading: a phone's keyboard stays down
    assert phone.locator(".action-form h3").get_attribute("tabindex") == "-1"
    phone.click(".action-form button:text('Cancel')")
    assert active(phone, blue)
    phone.focus(blue)
    phone.keyboard.press("Enter")
    assert active(phone, ".action-form h3")
    phone.click(".action-form button[type=submit]")
    phone.wait_title("Ben's turn")  # Ada's buttons are gone: the card's title says what now
    phone.wait_for_function("() => document.activeElement.id === 'now-title'")

    # a form opened again when another phone's change redraws its list does not take the
    # focus from where this phone's player is
    phone.click("#views a[data-view='history']")
    correct = f"#game-log li[data-n='{snap['seq']}'] button.correct"
    phone.click(correct)
    assert active(phone, "#game-log .counts-form")
    device_view = "#views a[data-view='device']"
    phone.focus(device_view)
    snap = device.table.command(snap["id"], snap["seq"] + 1,
                                {"type": "sheet_goods", "player": "Ben", "goods": ["sugar"]})
    phone.wait_seq(snap["seq"])
    assert phone.locator("#game-log .counts-form").count() == 1
    assert active(phone, device_view)
    phone.click("#game-log .counts-form button:text('Cancel')")
    assert active(phone, correct)
    phone.close()
