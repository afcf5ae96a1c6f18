"""Starting the device so that a failed start shows at the table, not only in a log.

The web server and the front panel come up first; the camera, the cube model and the database
after them, in :meth:`Startup.run`. Until the device is built, every phone gets the fault page
(``companion.web.fault``) saying what is wrong and what to do, and the panel's red LED is on. A
start that fails is tried again every ``retry_seconds``, reading the settings afresh each time,
so plugging the camera in, stopping the program that held it or correcting the settings file
brings the game up without anyone restarting the service.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from companion.store import DamagedStore, StoreError
from companion.web.fault import STARTING, Fault, create_fault_app
from firmware.config import Config, ConfigError
from firmware.panel import NullPanel, Panel
from firmware.service import Device, ModelError
from firmware.sources import CameraLibraryMissing, SourceError, SourceSettingError

log = logging.getLogger(__name__)

JOURNAL = "the log says more: journalctl -u cubetower -n 50"


def explain(exc: BaseException, config_path: str | None, retry_seconds: float) -> Fault:
    """The fault in words a player can act on, by the kind of failure."""
    again = f"cubetower tries again every {retry_seconds:.0f} seconds by itself"
    if isinstance(exc, ConfigError):
        where = config_path or "the settings file"
        return Fault(
            f"the settings file has a mistake: {exc}",
            f"Correct it (on the Pi: sudo nano {where}); {again}.",
        )
    if isinstance(exc, SourceSettingError):
        return Fault(
            f"the camera cannot be used: {exc}",
            f"Check the camera source in {config_path or 'the settings file'} ([camera] source) "
            "or on the command line (--source): demo, picamera, webcam[:N] or a folder that "
            f"exists. Then wait: {again}.",
        )
    if isinstance(exc, CameraLibraryMissing):
        return Fault(
            f"the camera cannot be used: {exc}",
            "The installation is incomplete: reinstall (cd ~/cubetower && sudo "
            "hardware/install.sh), or choose another camera source ([camera] source or "
            f"--source: webcam[:N], a folder, demo). Then wait: {again}.",
        )
    if isinstance(exc, SourceError):
        return Fault(
            f"the camera cannot be used: {exc}",
            "Pi camera: power the Pi off, reseat the ribbon cable at both ends (see "
            "hardware/README.md, Troubleshooting, Camera not found) and power it on again; if "
            "another program is using the camera (rpicam-hello, a second cubetower), stop it. "
            f"USB webcam: plug it in. Then wait: {again}.",
        )
    if isinstance(exc, ModelError):
        return Fault(
            str(exc),
            "The installation is incomplete: update and reinstall "
            "(cd ~/cubetower && git pull && sudo hardware/install.sh).",
        )
    if isinstance(exc, DamagedStore):
        return Fault(
            str(exc),
            "Set the damaged file aside and cubetower starts with a fresh one: sudo mkdir "
            f"{exc.path.parent}/damaged && sudo mv {exc.path}* {exc.path.parent}/damaged/ (the "
            f"games in it may be recovered later with sqlite3's .recover); {again}.",
        )
    if isinstance(exc, StoreError | OSError):
        return Fault(
            f"the game data cannot be opened: {exc}",
            "Check that the card is not full (df -h) and that the data folder belongs to the "
            f"service's user (sudo hardware/install.sh sets this up again); {again}.",
        )
    return Fault(f"an unexpected error: {exc!r}", f"Restart the Pi; {JOURNAL}.")


class SwitchApp:
    """A WSGI app that hands each request to the fault page until the device's app is ready."""

    def __init__(self, app):
        self._app = app

    def switch(self, app) -> None:
        self._app = app

    def __call__(self, environ, start_response):
        return self._app(environ, start_response)


@dataclass
class Startup:
    """Builds the device behind an already running web server and panel, retrying on failure.

    ``load`` reads the settings (again on every try), ``build`` makes the device from them (e.g.
    :func:`firmware.service.build_device` with the panel opened earlier); both may raise."""

    load: Callable[[], Config]
    build: Callable[[Config], Device]
    panel: Panel | NullPanel
    config_path: str | None = None
    retry_seconds: float = 10.0
    # told of every try while the device cannot start: the process is alive and retrying, so
    # systemd's watchdog must not restart it (the fault page would vanish with it)
    heartbeat: Callable[[], object] = lambda: None
    on_started: Callable[[Device], object] = lambda device: None
    on_fault: Callable[[Fault], object] = lambda fault: None  # each new fault, once
    fault: Fault = STARTING
    device: Device | None = None
    app: SwitchApp = field(init=False)

    def __post_init__(self) -> None:
        self.app = SwitchApp(create_fault_app(lambda: self.fault))

    def run(self, stop: threading.Event) -> Device | None:
        """Try to build and start the device until that works or ``stop`` is set."""
        self.panel.show("starting")
        while not stop.is_set():
            try:
                device = self.build(self.load())
            except Exception as exc:
                fault = explain(exc, self.config_path, self.retry_seconds)
                if fault != self.fault:
                    log.error("cubetower cannot start: %s. %s", fault.what, fault.do)
                    self.on_fault(fault)
                self.fault = fault
                self.panel.show("error")
                self.heartbeat()
                stop.wait(self.retry_seconds)
                continue
            self.device = device
            if stop.is_set():  # stopped while the camera was opening: close() stops it
                return None
            if self.fault is not STARTING:
                log.info("cubetower started after all (it was: %s)", self.fault.what)
            self.app.switch(device.app())
            device.start()
            self.on_started(device)
            return device
        return None

    def close(self) -> None:
        """Stop the device, or, when it never started, switch the LEDs off and free the pins."""
        if self.device is not None:
            self.device.stop()
            return
        try:
            self.panel.show("stopped")
        finally:
            self.panel.close()
