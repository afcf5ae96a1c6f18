"""Shared fixtures: where the optional reference data lives, and a real browser."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
RENDERS = SHARED / "data" / "trays-rendered"


@pytest.fixture(scope="session")
def renders_dir() -> Path:
    """The labelled renders; only on developer machines and CI."""
    if not (RENDERS / "labels.json").is_file():
        pytest.skip("../shared/data/trays-rendered is not here (it never is on a user's machine)")
    return RENDERS


def chromium_path() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.fixture(scope="session")
def browser():
    """Headless Chromium through Playwright; CI must have it, a laptop may skip."""
    executable = chromium_path()
    if executable is None:
        if os.environ.get("CI"):
            pytest.fail("CI needs Chromium for the browser tests (scripts/ensure-test-tools.sh)")
        pytest.skip("no Chromium installed (sudo apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=executable,
            args=[
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        yield browser
        browser.close()
