"""systemd's side: READY=1 and WATCHDOG=1 reach a real NOTIFY_SOCKET datagram socket, the pings
stop while the camera delivers nothing (so systemd restarts the process), and the page, the LEDs
and /api/health show the stall meanwhile."""

from __future__ import annotations

import contextlib
import itertools
import os
import socket
import threading
import time
from dataclasses import replace

import numpy as np
import pytest
from fake_detector import demo_detector
from fake_picamera2 import install
from gpiozero.pins.mock import MockFactory, MockPWMPin

from firmware.config import Config, with_overrides
from firmware.service import build_device, camera_settings
from firmware.sources import Frame, FrameSource, NoFrameYet, PiCameraSource
from firmware.watchdog import SystemdNotifier
from firmware.watcher import Outcome, TrayWatcher

_names = itertools.count()


class NotifySocket:
    """What systemd listens on: an AF_UNIX datagram socket (abstract, so no path length limit)."""

    def __init__(self):
        self.address = f"@cubetower-test-{os.getpid()}-{next(_names)}"
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind("\0" + self.address[1:])
        self.sock.settimeout(0.05)

    def messages(self, seconds: float) -> list[str]:
        """Everything received within ``seconds``."""
        got, deadline = [], time.monotonic() + seconds
        while time.monotonic() < deadline:
            with contextlib.suppress(TimeoutError):
                got.append(self.sock.recv(4096).decode())
        return got

    def close(self):
        self.sock.close()


@pytest.fixture
def systemd():
    listener = NotifySocket()
    yield listener
    listener.close()


# the notifier ----------------------------------------------------------------------------------


def test_the_notifier_speaks_sd_notify_to_the_socket(systemd):
    notifier = SystemdNotifier(systemd.address, watchdog_usec=30_000_000)
    assert notifier.ready("serving")
    assert notifier.ping()
    assert notifier.stopping()
    assert systemd.messages(0.2) == ["READY=1\nSTATUS=serving", "WATCHDOG=1", "STOPPING=1"]


def test_a_socket_path_works_too(tmp_path):
    path = tmp_path / "n"
    if len(str(path)) > 100:
        pytest.skip("tmp path too long for an AF_UNIX address")
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(str(path))
        assert SystemdNotifier(str(path)).ready()
        assert sock.recv(100) == b"READY=1"


def test_pings_are_sent_a_few_times_per_watchdog_interval_not_every_frame(systemd):
    clock = iter([0.0, 0.1, 0.2, 0.3, 2.6, 2.7, 5.2])
    notifier = SystemdNotifier(systemd.address, 10_000_000, clock=lambda: next(clock))
    sent = [notifier.ping() for _ in range(7)]
    assert sent == [True, False, False, False, True, False, True]  # every 10 s / 4


def test_the_environment_systemd_sets_is_read():
    env = {"NOTIFY_SOCKET": "/run/systemd/notify", "WATCHDOG_USEC": "30000000",
           "WATCHDOG_PID": str(os.getpid())}
    notifier = SystemdNotifier.from_environment(env)
    assert notifier.address == "/run/systemd/notify" and notifier.watchdog_seconds == 30
    assert notifier.watching
    other = SystemdNotifier.from_environment({**env, "WATCHDOG_PID": "1"})
    assert not other.watching  # the watchdog was meant for another process
    assert not SystemdNotifier.from_environment({}).ready()  # not under systemd: silent


def test_an_unreachable_socket_is_said_once_and_never_raises(tmp_path, caplog):
    notifier = SystemdNotifier(str(tmp_path / "gone"), 1_000_000, clock=itertools.count().__next__)
    with caplog.at_level("WARNING"):
        assert not notifier.ping()
        assert not notifier.ping()
    assert caplog.text.count("cannot notify systemd") == 1


# the watch loop --------------------------------------------------------------------------------


class LiveSource(FrameSource):
    """A live camera that delivers while ``delivering`` is set, else blocks in its read."""

    name = "test camera"
    live = True

    def __init__(self):
        self.delivering = threading.Event()
        self.delivering.set()
        self.count = 0

    def read(self):
        self.delivering.wait()
        self.count += 1
        return Frame(np.zeros((4, 4, 3), np.uint8), f"f{self.count}", time.time())


class Sink:
    def publish_reading(self, *a):
        return {}

    def publish_error(self, *a):
        return {}

    def set_status(self, *a, **k):
        pass


def test_the_loop_feeds_the_watchdog_only_while_the_camera_delivers(systemd):
    source = LiveSource()
    notifier = SystemdNotifier(systemd.address, watchdog_usec=200_000)  # a ping every 50 ms
    watcher = TrayWatcher(
        source, lambda image: Outcome({}, None), Sink(),
        poll_seconds=0.01, stall_seconds=0.3, heartbeat=notifier.ping,
    )
    stop = threading.Event()
    thread = threading.Thread(target=watcher.run, args=(stop,), daemon=True)
    thread.start()
    try:
        assert "WATCHDOG=1" in systemd.messages(0.3)
        assert watcher.health()["ok"]
        source.delivering.clear()  # the capture hangs: the loop itself is stuck
        systemd.messages(0.7)  # the last pings before the stall counts (0.3 s)
        assert systemd.messages(0.5) == []  # systemd would now restart the process
        health = watcher.health()
        assert not health["ok"] and "no picture" in health["problem"]
        source.delivering.set()
        assert "WATCHDOG=1" in systemd.messages(0.3)
        assert watcher.health()["ok"]
    finally:
        stop.set()
        source.delivering.set()
        thread.join(2)


def test_a_still_source_never_counts_as_stalled():
    class Folder(FrameSource):
        name = "folder"

        def read(self):
            raise NoFrameYet("empty folder")

    ticks = iter(range(0, 1000, 100))
    watcher = TrayWatcher(Folder(), lambda i: None, Sink(), clock=lambda: next(ticks))
    watcher.step()
    assert watcher.health()["ok"]


# the whole device with a Pi camera that stalls ---------------------------------------------------


def test_a_stalled_pi_camera_shows_on_the_page_the_leds_and_health_and_starves_the_watchdog(
    tmp_path, monkeypatch, systemd
):
    rig = install(monkeypatch, model="imx708")
    monkeypatch.setattr(PiCameraSource, "RETRY_SECONDS", 0.1)
    config = with_overrides(Config(), data_dir=str(tmp_path))
    config = replace(
        config,
        camera=replace(config.camera, lens_height_mm=250, capture_timeout_seconds=0.05),
        watcher=replace(config.watcher, poll_seconds=0.02, stall_seconds=0.4),
    )
    source = PiCameraSource(settings=camera_settings(config))
    factory = MockFactory(pin_class=MockPWMPin)
    device = build_device(
        config, source, pin_factory=factory, detector=demo_detector(),
        notifier=SystemdNotifier(systemd.address, watchdog_usec=200_000),
    )
    client = device.app().test_client()
    device.start()
    try:
        assert "WATCHDOG=1" in systemd.messages(0.4)
        assert client.get("/api/health").status_code == 200

        rig.script = ["stall"] * 10_000  # the ribbon works loose
        rig.start_failures = 10_000  # and the camera does not come back
        systemd.messages(0.9)  # pings until stall_seconds (0.4) have passed
        assert systemd.messages(0.5) == []

        health = client.get("/api/health")
        assert health.status_code == 503
        body = health.get_json()
        assert body["ok"] is False and "no picture" in body["camera"]["problem"]
        status = client.get("/api/status").get_json()
        assert status["state"] == "error" and "Pi camera" in status["message"]
        tray = client.get("/api/tray").get_json()  # the page shows this one in its alert box
        assert "the Pi camera gave no picture" in tray["error"]
        assert device.panel.status == "error"  # the red LED
        assert source.restarts >= 1
        assert [c[2] for c in rig.captures()][-1] == 0.05  # every capture had its timeout

        rig.script.clear()  # the ribbon is pushed back in
        rig.start_failures = 0
        assert "WATCHDOG=1" in systemd.messages(0.6)
        assert client.get("/api/health").status_code == 200
        assert rig.open == 1  # the dead cameras were all closed
    finally:
        device.stop()
        factory.reset()
    assert "STOPPING=1" in systemd.messages(0.1)


def test_serve_tells_systemd_it_is_ready_feeds_the_watchdog_and_says_it_stops(tmp_path, systemd):
    """The real command under the environment systemd gives a Type=notify service."""
    import signal
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "NOTIFY_SOCKET": systemd.address, "WATCHDOG_USEC": "2000000",
           "PYTHONPATH": str(root)}
    env.pop("WATCHDOG_PID", None)
    server = subprocess.Popen(
        [sys.executable, "-m", "firmware.cli", "serve", "--source", "demo", "--host",
         "127.0.0.1", "--port", "0", "--data-dir", str(tmp_path)],
        cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        got: list[str] = []
        deadline = time.monotonic() + 60  # loading the model on a busy machine
        while time.monotonic() < deadline and not ("WATCHDOG=1" in got and len(got) > 1):
            got += systemd.messages(0.2)
        ready = [m for m in got if m.startswith("READY=1")]
        assert len(ready) == 1 and ready[0].startswith("READY=1\nSTATUS=serving on port ")
        assert "camera: demo replay" in ready[0]
        assert "WATCHDOG=1" in got
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=15) == 0
        assert "STOPPING=1" in systemd.messages(0.2)
    finally:
        if server.poll() is None:
            server.kill()
