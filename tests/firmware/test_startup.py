"""A failed start shows at the table: the page and the red LED say what is wrong, and it retries.

The device is built behind an already running web app and panel (gpiozero's mock pins); a camera
that is missing at first, a settings file with a mistake and a database that cannot be opened
each give the fault page, and the game appears once the fault is gone.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from child_output import ChildOutput
from fake_detector import demo_detector
from gpiozero.pins.mock import MockFactory, MockPWMPin
from test_watchdog import NotifySocket
from werkzeug.test import Client

from companion.store import DamagedStore
from companion.web.fault import STARTING, Fault, create_fault_app
from firmware.config import Config, ConfigError, load_config, with_overrides
from firmware.service import Buttons, ModelError, build_device, open_device_panel
from firmware.sources import CameraLibraryMissing, FolderSource, SourceError, SourceSettingError
from firmware.startup import Startup

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def fake():
    return demo_detector()


@pytest.fixture
def factory():
    factory = MockFactory(pin_class=MockPWMPin)
    yield factory
    factory.reset()


def wait_for(condition, timeout=5.0):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_the_fault_page_says_what_is_wrong_and_what_to_do():
    fault = Fault("the camera cannot be used: no Raspberry Pi camera found", "Reseat the ribbon.")
    client = create_fault_app(lambda: fault).test_client()
    page = client.get("/")
    assert page.status_code == 503
    text = page.get_data(as_text=True)
    assert "cubetower cannot start" in text
    assert "no Raspberry Pi camera found" in text and "Reseat the ribbon." in text
    assert 'http-equiv="refresh"' in text  # the game shows up by itself once it runs
    health = client.get("/api/health")
    assert health.status_code == 503
    assert health.get_json() == {"ok": False, "state": "error", "error": fault.what,
                                 "what_to_do": fault.do}
    # a phone still open on the game page gets the reason for its command, not a crash
    assert client.post("/api/game", json={"players": ["Ada"]}).get_json()["error"] == fault.what
    assert client.get("/api/stream").status_code == 503


def test_the_fault_page_escapes_the_message():
    client = create_fault_app(lambda: Fault("<script>x</script>", "do")).test_client()
    assert "<script>x</script>" not in client.get("/").get_data(as_text=True)


def test_a_missing_camera_lights_the_red_led_shows_the_page_and_recovers(tmp_path, factory, fake):
    config = with_overrides(Config(), data_dir=str(tmp_path / "data"))
    frames = tmp_path / "frames"
    buttons = Buttons()
    panel = open_device_panel(config, buttons, pin_factory=factory)
    camera_there = threading.Event()

    def build(cfg):
        if not camera_there.is_set():
            raise SourceError("no Raspberry Pi camera found (check the ribbon cable)")
        frames.mkdir(exist_ok=True)
        return build_device(cfg, FolderSource(frames), detector=fake, panel=panel,
                            buttons=buttons)

    startup = Startup(lambda: config, build, panel, retry_seconds=0.05)
    http = Client(startup.app)  # the WSGI app waitress serves, before and after the start
    assert http.get("/api/health").json == STARTING.to_dict()
    stop = threading.Event()
    runner = threading.Thread(target=startup.run, args=(stop,))
    runner.start()
    try:
        wait_for(lambda: startup.fault is not STARTING)
        green = factory.pin(config.panel.status_led_pin)
        red = factory.pin(config.panel.error_led_pin)
        assert red.state and not green.state
        page = http.get("/")
        assert page.status_code == 503
        text = page.get_data(as_text=True)
        assert "no Raspberry Pi camera found" in text and "reseat the ribbon" in text
        buttons.read_now()  # a press before the device exists does nothing, and no harm

        camera_there.set()
        runner.join(timeout=5)
        assert startup.device is not None
        assert http.get("/api/health").json["ok"] is True
        assert http.get("/").status_code == 200
        assert factory.pin(config.panel.light_pin).state  # the device started: light on
        assert buttons.read_now == startup.device.watcher.request_read  # the button is wired
    finally:
        stop.set()
        runner.join(timeout=5)
        startup.close()
    assert panel.status == "stopped"


def test_a_settings_mistake_is_shown_and_read_again_on_the_next_try(tmp_path, factory, fake):
    settings = tmp_path / "config.toml"
    settings.write_text('[camera]\nsorce = "picamera"\n')
    panel = open_device_panel(Config(), Buttons(), pin_factory=factory)

    def load():
        return with_overrides(load_config(settings), data_dir=str(tmp_path / "data"))

    def build(cfg):
        return build_device(cfg, FolderSource(tmp_path), detector=fake, panel=panel)

    startup = Startup(load, build, panel, config_path=str(settings), retry_seconds=0.05)
    stop = threading.Event()
    runner = threading.Thread(target=startup.run, args=(stop,))
    runner.start()
    try:
        wait_for(lambda: startup.fault is not STARTING)
        assert "unknown key 'sorce'" in startup.fault.what
        assert f"sudo nano {settings}" in startup.fault.do
        settings.write_text('[camera]\nsource = "picamera"\n')  # corrected while it runs
        runner.join(timeout=5)
        assert startup.device is not None
    finally:
        stop.set()
        runner.join(timeout=5)
        startup.close()


@pytest.mark.parametrize(
    ("error", "words"),
    [
        (ConfigError("x.toml: unknown key 'a'"), "settings file has a mistake"),
        (SourceError("the Pi camera would not start: busy"), "another program is using"),
        # a mistyped --source: the fix is in the settings, not the ribbon cable
        (SourceSettingError("frame folder nosuch does not exist or is not a folder"),
         "--source): demo, picamera, webcam[:N] or a folder that exists"),
        # --source picamera in a venv without picamera2: waiting for it helps nothing
        (CameraLibraryMissing("picamera2 is not installed."),
         "installation is incomplete: reinstall (cd ~/cubetower && sudo hardware/install.sh)"),
        (ModelError("cannot load the cube model: gone"), "reinstall"),
        (PermissionError(13, "Permission denied"), "data folder belongs"),
        (DamagedStore("the data file /d/cubetower.sqlite is damaged: file is not a database",
                      Path("/d/cubetower.sqlite")),
         "sudo mkdir /d/damaged && sudo mv /d/cubetower.sqlite* /d/damaged/"),
    ],
)
def test_each_kind_of_failure_says_what_to_do(error, words, factory):
    panel = open_device_panel(Config(), Buttons(), pin_factory=factory)

    def build(cfg):
        raise error

    startup = Startup(lambda: Config(), build, panel, retry_seconds=0.01)
    stop = threading.Event()
    runner = threading.Thread(target=startup.run, args=(stop,))
    runner.start()
    wait_for(lambda: startup.fault is not STARTING)
    stop.set()
    runner.join(timeout=5)
    startup.close()
    assert words in startup.fault.what + " " + startup.fault.do


class RecordingSource(FolderSource):
    closed = False

    def close(self):
        self.closed = True


def test_a_start_that_fails_after_the_camera_opened_closes_the_camera(tmp_path, factory, fake):
    (tmp_path / "data").write_text("a file where the data folder should be")
    source = RecordingSource(tmp_path)
    config = with_overrides(Config(), data_dir=str(tmp_path / "data"))
    with pytest.raises(Exception, match="cannot create data folder"):
        build_device(config, source, pin_factory=factory, detector=fake)
    assert source.closed  # the next try would otherwise find the camera busy


def get(url):
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def test_serve_with_a_broken_settings_file_serves_the_fault_page(tmp_path):
    """What systemd starts: the process stays up and says it is ready (so systemd neither kills
    it for a slow start nor restarts it), the page says why, SIGTERM ends it cleanly."""
    settings = tmp_path / "config.toml"
    settings.write_text("[server\nport = 80\n")
    systemd = NotifySocket()
    env = {**os.environ, "NOTIFY_SOCKET": systemd.address, "WATCHDOG_USEC": "30000000"}
    env.pop("WATCHDOG_PID", None)
    server = subprocess.Popen(
        [sys.executable, "-m", "firmware.cli", "serve", "--source", "demo", "--host",
         "127.0.0.1", "--port", "0", "--data-dir", str(tmp_path / "data"),
         "--config", str(settings)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
    )
    try:
        line = ChildOutput(server).wait_for(
            lambda s: s.startswith("cubetower is listening on port "), what="its port"
        )
        url = f"http://127.0.0.1:{line.split()[5].rstrip(';')}/"
        deadline = time.monotonic() + 20
        while True:
            status, body = get(url + "api/health")
            assert status == 503
            health = json.loads(body)
            if health["state"] == "error" or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert "is not valid TOML" in health["error"], health
        assert str(settings) in health["what_to_do"]
        status, page = get(url)
        assert status == 503 and b"cubetower cannot start" in page
        ready = [m for m in systemd.messages(0.5) if m.startswith("READY=1")]
        assert ready and "cannot start: the settings file has a mistake" in ready[0]
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=15) == 0
    finally:
        systemd.close()
        if server.poll() is None:
            server.kill()
