"""The phone page in a real headless Chromium, against the real waitress server."""

import shutil
from pathlib import Path

import pytest

from firmware.sources import DEMO_DIR

pytestmark = pytest.mark.browser



def _page_on(browser, url: str, frames, picture: str, code: str):
    """A playing phone's page once the device has read ``picture`` (a demo frame)."""
    shutil.copy(DEMO_DIR / picture, frames / "a.jpg")
    page = browser.new_page()
    page.goto(f"{url}/?code={code}#device")  # the tray, the camera and its calibration
    page.wait_for_selector("#tray-picture:not([hidden])", timeout=15000)
    return page


def _wait_for_text(page, element_id: str, text: str, start: bool = False) -> None:
    """Wait (15 s at most) until the element's text starts with / includes ``text``."""
    how = "startsWith" if start else "includes"
    page.wait_for_function(
        f"() => document.getElementById('{element_id}').textContent.{how}('{text}')", timeout=15000
    )

def test_page_updates_live_when_the_tray_changes(served, browser):
    url, frames, _ = served
    page = browser.new_page(viewport={"width": 390, "height": 844})  # a phone
    page.goto(f"{url}/#device")
    page.wait_for_function("() => document.getElementById('status').dataset.state !== 'starting'")
    assert page.text_content("#tray-caption").startswith("Waiting")

    shutil.copy(DEMO_DIR / "drop01.jpg", frames / "a.jpg")  # the tray changes: no reload
    page.wait_for_selector("#tray-picture:not([hidden])", timeout=15000)
    api = page.request.get(f"{url}/api/tray").json()
    assert api["total"] > 0
    for colour, n in api["counts"].items():
        assert page.text_content(f'[data-count="{colour}"]') == str(n)
    assert page.text_content("#ap") == str(api["ap"])
    assert page.text_content("#gold") == str(api["gold"])
    assert page.text_content("#actions") == ", ".join(api["actions"])
    page.wait_for_function("() => document.getElementById('tray-picture').naturalWidth > 0")
    assert page.locator("#history li").count() >= 1
    page.screenshot(path=str(frames.parent / "phone.png"), full_page=True)
    page.close()


def test_read_now_button_reads_again(served, browser):
    url, frames, device = served
    page = _page_on(browser, url, frames, "drop02.jpg", device.table_code.value)
    reads = device.watcher.reads
    page.click("#read-now")
    page.wait_for_function(
        "() => document.querySelectorAll('#history li').length >= 2", timeout=15000
    )
    assert device.watcher.reads > reads
    page.close()


def test_calibrate_from_the_page_saves_the_empty_tray(served, browser):
    url, frames, device = served
    page = _page_on(browser, url, frames, "empty.jpg", device.table_code.value)
    page.click("summary:has-text('Calibrate')")
    page.click("#calibrate")
    _wait_for_text(page, "calibrate-result", "Saved", start=True)
    assert (device.config.data_path / "empty.jpg").is_file()
    page.close()


def test_calibrating_a_tray_in_the_dark_says_to_light_it(served, browser):
    url, frames, device = served
    page = _page_on(browser, url, frames, "empty.jpg", device.table_code.value)
    dark = Path(__file__).resolve().parents[1] / "fixtures" / "vision" / "dark-tray" / "empty.jpg"
    shutil.copy(dark, frames / "b.jpg")  # the newest picture: the camera now sees a dark tray
    page.wait_for_function(
        "() => document.querySelectorAll('#history li').length >= 2", timeout=15000
    )
    page.click("summary:has-text('Calibrate')")
    page.click("#calibrate")
    _wait_for_text(page, "calibrate-result", "nearly black")
    text = page.text_content("#calibrate-result")
    assert text.startswith("Saved") and "Light the tray" in text
    assert (device.config.data_path / "empty.jpg").is_file()
    page.close()


def test_tray_corners_tapped_on_the_camera_picture(served, browser):
    url, frames, device = served
    corners = [[423, 115], [830, 243], [740, 535], [329, 404]]  # the demo tray's floor
    page = _page_on(browser, url, frames, "drop04.jpg", device.table_code.value)
    page.click("summary:has-text('Calibrate')")
    page.click("#corners-start")
    page.wait_for_function(
        "() => document.getElementById('corners-picture').naturalWidth > 0", timeout=15000
    )
    box = page.locator("#corners-picture").bounding_box()
    natural = page.evaluate("document.getElementById('corners-picture').naturalWidth")
    scale = box["width"] / natural
    for x, y in corners:  # taps where the tray's corners show on this screen
        page.locator("#corners-picture").click(position={"x": x * scale, "y": y * scale})
    assert page.locator(".corner-mark").count() == 4

    def marks_on_their_corners():
        picture = page.locator("#corners-picture").bounding_box()
        shown = picture["width"] / natural
        for i, (x, y) in enumerate(corners):
            mark = page.locator(".corner-mark").nth(i).bounding_box()
            centre = (mark["x"] + mark["width"] / 2, mark["y"] + mark["height"] / 2)
            assert abs(centre[0] - (picture["x"] + x * shown)) <= 2
            assert abs(centre[1] - (picture["y"] + y * shown)) <= 2

    marks_on_their_corners()
    page.set_viewport_size({"width": 844, "height": 390})  # the phone turned: a bigger picture
    page.wait_for_function(
        "w => document.getElementById('corners-picture').clientWidth !== w", arg=box["width"])
    marks_on_their_corners()
    page.set_viewport_size({"width": 390, "height": 844})
    page.click("#corners-save")
    _wait_for_text(page, "corners-result", "Saved", start=True)
    saved = device.session.status()["corners"]
    tolerance = 1.5 / scale  # one screen pixel of tap, in the picture's pixels
    for tapped, wanted in zip(saved, corners, strict=True):
        assert abs(tapped[0] - wanted[0]) <= tolerance and abs(tapped[1] - wanted[1]) <= tolerance
    page.click("#corners-auto")
    _wait_for_text(page, "corners-result", "by itself")
    assert device.session.status()["corners"] is None
    page.close()


def test_a_camera_that_is_gone_is_said_in_words_on_the_tray_card(served, browser):
    """A phone cannot hover over the "problem" chip: the reason shows on the card, and goes
    once the camera is back."""
    url, frames, device = served
    page = _page_on(browser, url, frames, "drop01.jpg", device.table_code.value)
    assert page.locator("#camera-problem").is_hidden()
    # gone at once, as an unplugged drive: rmtree alone empties the folder before removing it,
    # and a look in between rightly says "holds no picture any more" instead
    gone = frames.with_name("frames-unplugged")
    frames.rename(gone)
    shutil.rmtree(gone)
    page.wait_for_selector("#camera-problem:not([hidden])", timeout=15000)
    assert page.text_content("#camera-problem").startswith("Camera problem: the frame folder")
    assert "is gone" in page.text_content("#camera-problem")
    frames.mkdir()
    shutil.copy(DEMO_DIR / "drop02.jpg", frames / "b.jpg")
    page.wait_for_selector("#camera-problem", state="hidden", timeout=15000)
    page.close()


def test_a_refused_button_on_the_device_is_said_on_the_tray_card(served, browser):
    """The panel's Next pressed with no game: the red LED flickers, and the phones say why."""
    url, frames, device = served
    page = _page_on(browser, url, frames, "drop01.jpg", device.table_code.value)
    device.watcher.sink.refuse("no game is open; start one on a phone first")
    page.wait_for_selector("#camera-problem:not([hidden])", timeout=15000)
    assert page.text_content("#camera-problem") == (
        "A button on the device was refused: no game is open; start one on a phone first")
    assert page.text_content("#status") == "button refused"
    page.close()


def test_a_refused_button_is_said_in_the_phones_language(served, browser):
    """The table's refusal is a Msg: each phone says it in its own words."""
    from companion.table import TableError

    url, frames, device = served
    shutil.copy(DEMO_DIR / "drop01.jpg", frames / "a.jpg")
    context = browser.new_context(extra_http_headers={"Accept-Language": "de-DE,de;q=0.9"})
    page = context.new_page()
    page.goto(f"{url}/?code={device.table_code.value}#device")
    page.wait_for_selector("#tray-picture:not([hidden])", timeout=15000)
    device.watcher.sink.refuse(TableError("no game is open").msg)
    page.wait_for_selector("#camera-problem:not([hidden])", timeout=15000)
    assert page.text_content("#camera-problem") == (
        "Eine Taste am Gerät wurde abgelehnt: kein Spiel offen")
    context.close()


def test_next_on_a_reading_that_needs_a_yes_says_so_and_asks_on_the_phone(served, browser):
    """The panel's Next on a set-up drop the device asks about (no cube in the tray): the tray
    card does not show the question nobody can answer there, but that a phone must say yes, and
    its button asks it and uses the reading."""
    from firmware.service import confirm_latest, game_button

    url, frames, device = served
    snap = device.table.new_game(["Ada", "Ben"])
    page = _page_on(browser, url, frames, "empty.jpg", device.table_code.value)
    page.wait_for_function("() => document.body.dataset.stage === 'setup'")
    game_button(lambda: confirm_latest(device.board, device.table), device.watcher.sink)
    page.wait_for_selector("#next-asks:not([hidden])", timeout=15000)
    assert page.locator("#camera-problem").is_hidden()
    assert page.text_content("#next-asks p") == (
        "The device's Next button did not use this reading: a player must say yes to it first, "
        "on a phone.")
    assert "set-up drop?" not in page.text_content("#tray-card")
    assert device.table.snapshot()["seq"] == snap["seq"]

    page.click("#next-asks-use")
    page.wait_for_selector("#ask[open]")
    asked = page.text_content("#ask-text")
    assert asked.startswith("Use this as the set-up drop? It shows no cube")
    page.click("#ask-yes")
    page.wait_for_selector("#next-asks", state="hidden")
    assert device.table.snapshot()["state"]["setup_drop_read"]
    page.close()
