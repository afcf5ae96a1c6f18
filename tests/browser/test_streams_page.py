"""Live streams in a real headless Chromium: reloaded and closed pages give their stream back."""

import time

import pytest

pytestmark = pytest.mark.browser


def _phones(page, url: str) -> int:
    return page.request.get(f"{url}/api/health").json()["phones"]


def _until_phones(page, url: str, count: int, timeout: float = 5.0) -> float:
    started = time.monotonic()
    while _phones(page, url) != count:
        assert time.monotonic() - started < timeout, f"still {_phones(page, url)} streams open"
        time.sleep(0.05)
    return time.monotonic() - started


def _connected(page) -> None:
    page.wait_for_function(
        "() => window.CT && window.CT.source && window.CT.source.readyState === 1", timeout=15000
    )


def test_reloaded_and_closed_pages_free_their_streams_within_seconds(served, browser):
    url, _, device = served
    watcher = browser.new_page()  # asks the device how many streams are open
    watcher.goto(url)
    _connected(watcher)
    page = browser.new_page()
    page.goto(url)
    _connected(page)
    assert _until_phones(watcher, url, 2) < 5
    for _ in range(5):  # reloads once a second: the old stream goes, the new one comes
        page.reload()
        _connected(page)
        time.sleep(1)
    assert _until_phones(watcher, url, 2) < 2  # was ~45 s per closed page
    assert device.streams.evictions == 0
    page.close()
    assert _until_phones(watcher, url, 1) < 2
    watcher.close()
