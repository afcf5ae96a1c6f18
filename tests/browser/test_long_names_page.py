"""Four players with the longest names allowed, on a narrow phone: 320 and 360 px wide, at the text
size it came with and at 200 %, in English and German. Nothing may push the page sideways or go
past the screen's edge (a table too wide for the phone scrolls in its own box), and nothing may be
cut off, from a player's turn through the pirates' attack and the final scoring to the game's end
and its History."""

import json

import pytest
from test_game_page import EXAMPLE
from test_language import open_phone

from companion.table import NAME_MAX

pytestmark = pytest.mark.browser

# the example game's players, renamed: two names of one unbroken word, two with spaces
NAMES = {"Ada": "Maximilianeadelheidrunas", "Ben": "Anna Maria von Hohenberg",
         "Cleo": "Bartholomäusfriedemanner", "Dan": "Cleopatra Wilhelmine Ruh"}
# how many of the example game's events bring it to each moment
STAGES = {
    "actions": 14,  # Bartholomäusfriedemanner's turn: 6 actions, gold to buy AP, VP instead
    "pirate": 80,  # the pirates of round 2 beat one player
    "final": 195,  # the final scoring's form, the last pirates' results above it
    "over": 196,  # the ranking, the score sheet, the History
}

# What goes past the screen's right edge or is cut off: the page wider than the screen; an
# element or a text reaching past the edge, unless a box that clips or scrolls holds it (the
# .scroll boxes of the tables, the header's game title that ends in "…"); and such a box that
# cuts its content off, unless it is one of those (a screen reader's hidden text clips too).
OVERFLOWS = r"""() => {
  const width = document.documentElement.clientWidth;
  const clips = (e) => getComputedStyle(e).overflowX !== "visible";
  const held = (e) => {
    for (let n = e; n && n !== document.body; n = n.parentElement) if (clips(n)) return true;
    return false;
  };
  const name = (e) => e.tagName.toLowerCase() + (e.id ? `#${e.id}` : "")
    + [...e.classList].map((c) => `.${c}`).join("");
  const words = (s) => s.trim().replace(/\s+/g, " ").slice(0, 40);
  const out = [];
  if (document.documentElement.scrollWidth > window.innerWidth) {
    out.push(`the page is ${document.documentElement.scrollWidth} px wide`);
  }
  for (const e of document.querySelectorAll("body *")) {
    if (!e.getClientRects().length) continue;
    const right = e.getBoundingClientRect().right;
    if (right > width + 0.5 && !held(e.parentElement)) {
      out.push(`${name(e)} reaches ${Math.round(right)} px: ${words(e.textContent)}`);
    }
    if (clips(e) && !e.matches(".scroll, .game-title, .visually-hidden")
        && e.scrollWidth > e.clientWidth + 1) {
      out.push(`${name(e)} cuts off ${e.scrollWidth - e.clientWidth} px: ${words(e.textContent)}`);
    }
  }
  const texts = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  for (let n = texts.nextNode(); n; n = texts.nextNode()) {
    const e = n.parentElement;
    if (!n.textContent.trim() || !e.getClientRects().length || held(e)) continue;
    range.selectNodeContents(n);
    const right = range.getBoundingClientRect().right;
    if (right > width + 0.5) {
      out.push(`text in ${name(e)} reaches ${Math.round(right)} px: ${words(n.textContent)}`);
    }
  }
  return out;
}"""

# The pirates' results and the final scoring's form, in boxes that scroll sideways at large text
# (focusable named regions, as the page's other tables' boxes), the names taking lines instead
BOXES = r"""(lang) => [".attack table", ".final-form table"]
  .map((table) => [table, document.querySelector(table)]).filter(([, e]) => e)
  .map(([table, e]) => [table, e.parentElement])
  .filter(([, box]) => !(box.className === "scroll" && box.tabIndex === 0
    && box.getAttribute("role") === "region"
    && (box.ariaLabel || "").endsWith(lang === "en" ? ", scrolls sideways"
                                                    : ", seitlich scrollbar")))
  .map(([table, box]) => `${table} is not in a named scroll box: ${box.outerHTML.slice(0, 80)}`)"""
SCROLLED = r"""() => [...document.querySelectorAll("#now-body .scroll")]
  .filter((box) => box.scrollWidth > box.clientWidth)
  .map((box) => `${box.ariaLabel} scrolls ${box.scrollWidth - box.clientWidth} px`)"""


def example_events():
    text = EXAMPLE.read_text()
    for old, new in NAMES.items():
        text = text.replace(json.dumps(old), json.dumps(new))
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def play_to(table, events, upto):
    created, seated, *rest = events[:upto]
    snap = table.new_game(seated["players"], created["name"])
    for event in rest:
        snap = table.command(snap["id"], snap["seq"], {k: v for k, v in event.items() if k != "v"})
    return snap


def show(page, view):
    page.click(f"#views a[data-view='{view}']")
    page.wait_for_selector(f"#view-{view}:not([hidden])")


def test_the_longest_names_fit_a_narrow_phone(served, browser):
    url, _, device = served
    assert {len(name) for name in NAMES.values()} == {NAME_MAX}
    events = example_events()
    phones = []  # (language, text size, page, its errors, its DevTools session)
    for lang in ("en", "de"):
        for size in (16, 32):
            context, page, errors = open_phone(browser, url, lang, device.table_code.value)
            phones.append((lang, size, page, errors, context.new_cdp_session(page)))
    found = []
    for stage, upto in STAGES.items():
        snap = play_to(device.table, events, upto)
        assert snap["state"]["stage"] == stage
        for lang, size, page, _, devtools in phones:
            page.wait_for_function("([id, seq]) => CT.game() && CT.game().id === id"
                                   " && document.body.dataset.seq === String(seq)",
                                   arg=[snap["id"], snap["seq"]])
            for width in (360, 320):
                page.set_viewport_size({"width": width, "height": 640})
                # the phone's text size (its browser's default font size), set again: a new
                # screen size puts it back to 16 px
                devtools.send("Page.setFontSizes",
                              {"fontSizes": {"standard": size, "fixed": size * 13 // 16}})
                font = page.evaluate("() => getComputedStyle(document.body).fontSize")
                assert font == f"{size}px"
                places = ["table"]
                if stage == "over":
                    places += ["sheet", "history", "earlier game"]
                for place in places:
                    if place == "earlier game":  # the game looked at from the History's list
                        page.evaluate("id => CT.go('history', id)", snap["id"])
                        page.wait_for_selector("#game-viewer .ranking li")
                        if not page.locator("#game-viewer details[open]").count():
                            page.click("#game-viewer details summary")
                    else:
                        show(page, place)
                    if stage == "actions" and not page.locator(".action-form").count():
                        page.click(".action-btn >> nth=0")
                        page.click("#more summary")
                    problems = page.evaluate(OVERFLOWS)
                    if size == 16 and place == "table":  # the tables fit as they are
                        problems += page.evaluate(SCROLLED)
                    found += [f"{stage} {lang} {size}px {width}px {place}: {p}" for p in problems]
            if stage in ("pirate", "final"):
                found += [f"{stage} {lang}: {problem}" for problem in page.evaluate(BOXES, lang)]
    assert not found, "\n".join(found)
    for _, _, page, errors, _ in phones:
        assert errors == []
        page.context.close()
