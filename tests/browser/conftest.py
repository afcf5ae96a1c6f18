"""A real device on a folder source, served by the real waitress on a free local port.

The page's Content-Security-Policy allows no ``eval``: give ``wait_for_function`` a function
(``"() => ..."``), not a bare expression, which Playwright would have to eval in the page. A phone
plays only with the table code: open ``f"{url}/?code={device.table_code.value}"`` (the QR link).
"""

import threading

import pytest
from gpiozero.pins.mock import MockFactory

from companion.web.server import create_server
from firmware.config import Config, with_overrides
from firmware.service import build_device
from firmware.sources import FolderSource


@pytest.fixture
def served(tmp_path):
    """(url, frames folder, device): copy a picture into the folder and the tray changes."""
    frames = tmp_path / "frames"
    frames.mkdir()
    config = with_overrides(Config(), data_dir=str(tmp_path / "data"))
    device = build_device(config, FolderSource(frames), pin_factory=MockFactory())
    device.watcher.poll_seconds = 0.05
    device.start()
    server = create_server(device.app(), device.streams, api_threads=8)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.effective_port}", frames, device
    server.close()
    device.stop()
