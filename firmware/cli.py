"""The ``cubetower`` command: serve the device, count cubes in pictures, replay a game log."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import logging
import signal
import socket
import subprocess
import sys
import threading
import time
import tomllib
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlencode

from firmware.config import Config, ConfigError, load_config, with_overrides
from firmware.mdns import local_address
from firmware.panel import PanelConfig


def _without_name(reason: str, name: str) -> str:
    """A file's error without the file's name at its end: the line names it first already."""
    suffix = f": {Path(name)}"
    return reason[:-len(suffix)] if reason.endswith(suffix) else reason


def _count(args: argparse.Namespace) -> int:
    """One line per image; the --json form is a contract other tools parse."""
    from vision import VisionError, count_cubes, load_image
    from vision.counter import check_frame
    from vision.detector import CubeDetector

    try:
        detector = CubeDetector(args.model)  # once for all images; a broken one fails here
    except VisionError as exc:
        print(f"cubetower count: cannot load the cube model: {exc}", file=sys.stderr)
        return 2
    reference = None
    if args.empty:
        try:
            reference = check_frame(load_image(args.empty), "the reference")  # once, not per image
        except VisionError as exc:
            reason = _without_name(str(exc), args.empty)
            print(f"cubetower count: empty-tray reference {args.empty}: {reason}",
                  file=sys.stderr)
            return 2
    status = 0
    for name in args.images:
        started = time.perf_counter()
        try:
            reading = count_cubes(load_image(name), reference, detector=detector)
        except VisionError as exc:
            status = 2
            reason = _without_name(str(exc), name)
            line = {"image": name, "error": reason}
            print(json.dumps(line) if args.json else f"{name}: error: {reason}", flush=True)
            continue
        ms = round((time.perf_counter() - started) * 1000, 1)
        if args.json:
            cubes = [
                {k: v for k, v in cube.to_dict().items() if k != "uncertain"}
                for cube in reading.cubes
            ]
            line = {
                "image": name,
                "counts": reading.counts,
                "total": reading.total,
                "cubes": cubes,
                "ms": ms,
                "uncertain": reading.uncertain,
                "tray_corners": reading.to_dict().get("tray_corners"),
            }
            if reading.uncertain:
                line["warnings"] = list(reading.warnings) or ["some cubes are uncertain"]
                if reading.doubts:  # the same warnings as data, for a program that translates
                    line["doubts"] = [d.to_dict() for d in reading.doubts]
            print(json.dumps(line), flush=True)
        else:
            present = ", ".join(f"{n} {c}" for c, n in reading.counts.items() if n) or "empty"
            note = "  (uncertain: check the tray)" if reading.uncertain else ""
            print(f"{name}: {present}; total {reading.total} ({ms} ms){note}", flush=True)
    return status


def _frames_for(source, seconds: float):
    """The newest frame after ``seconds`` of reading (FrameError if none came 10 s later)."""
    from firmware.sources import FrameError

    deadline = time.monotonic() + seconds
    frame = None
    while frame is None or time.monotonic() < deadline:
        try:
            frame = source.read()
        except FrameError:
            if time.monotonic() > deadline + 10:
                raise
        time.sleep(0.1)
    return frame


@contextlib.contextmanager
def _tray_light_on(config: Config, live: bool):
    """The tray light on while a live camera settles and takes the empty tray: the service,
    which switches it on, is stopped for this command, and an exposure held on an unlit tray
    would over-expose every lit frame of the evening. The panel is let go afterwards (the
    light's pull-down switches it off) so that the service can open it again."""
    if not (live and config.panel.enabled and config.panel.light_enabled):
        yield
        return
    from firmware.service import Buttons, open_device_panel

    panel = open_device_panel(config, Buttons())  # buttons that do nothing while it calibrates
    try:
        panel.set_light(True)
        yield
    finally:
        panel.close()


def _calibrate(args: argparse.Namespace) -> int:
    """Save the camera's view of the empty tray, where `serve` looks for it; a live camera holds
    the exposure and white balance it settled on, saved in calibration.json for `serve`."""
    from firmware.service import (
        CalibrationError,
        camera_settings,
        choose_source,
        save_image_atomically,
    )
    from firmware.session import SessionCalibration
    from firmware.sources import FrameError, SourceError
    from vision import count_cubes
    from vision.visibility import too_dark

    try:
        config = with_overrides(
            load_config(args.config), source=args.source, data_dir=args.data_dir
        )
        camera = config.camera
        # the camera serve will read, never the demo: its pictures would be the reference
        spec = "picamera" if camera.source == "auto" else camera.source
        if spec == "demo":
            raise SourceError("the demo replay is no camera: calibrate the camera the device "
                              "reads (--source picamera, webcam or a folder)")
        source = choose_source(spec, (camera.width, camera.height), camera_settings(config))
    except (ConfigError, SourceError) as exc:
        print(f"cubetower calibrate: {exc}", file=sys.stderr)
        return 2
    path = config.data_path / "empty.jpg"
    held = None
    with source, _tray_light_on(config, source.live):
        try:
            frame = _frames_for(source, args.wait)  # let exposure and white balance settle
            if camera.lock_exposure and source.live:
                held = source.lock_exposure()
                frame = _frames_for(source, 0.5)  # frames taken with the held exposure
        except FrameError as exc:
            print(f"cubetower calibrate: {exc}", file=sys.stderr)
            return 2
        # the cubes the packaged model sees (the question the page asks before it keeps an
        # empty tray) and the tray's outline, for the darkness check below
        empty_reading = count_cubes(frame.image)
        seen = empty_reading.total
        if seen and not args.anyway:
            print(f"cubetower calibrate: the camera sees {seen} cube{'s' * (seen > 1)} in the "
                  "tray. A picture with cubes in it spoils every later reading: empty the tray "
                  "and calibrate again (or --anyway to keep this picture). Nothing was saved.",
                  file=sys.stderr)
            return 2
        try:
            save_image_atomically(path, frame.image)
            if held is not None:
                SessionCalibration(config.data_path / "calibration.json").set_camera_lock(held)
        except (CalibrationError, OSError) as exc:
            print(f"cubetower calibrate: cannot save {path}: {exc}", file=sys.stderr)
            return 2
    print(f"saved the empty tray from {source.name} to {path}")
    if held is not None:
        print(f"exposure and white balance held at {held['controls']}")
    dark = too_dark(frame.image, empty_reading.tray_corners)
    if dark is not None:
        print(f"cubetower calibrate: {dark:.0%} of the tray floor is nearly black in this "
              "picture: cubes there cannot be seen. Light the tray (hardware/lighting.md) and "
              "calibrate again.", file=sys.stderr)
    return 0


def _replay(args: argparse.Namespace) -> int:
    from companion.amerigo.replay import main as replay_main

    return replay_main([args.game])


def lan_addresses() -> list[str]:
    """This machine's IPv4 addresses other than loopback, for the URL printed for phones.

    Debian maps the host name to 127.0.1.1, so resolving it is not enough: ask ``hostname -I``
    (every configured address) first.
    """
    candidates: list[str] = []
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        done = subprocess.run(["hostname", "-I"], capture_output=True, text=True, timeout=2)
        candidates += done.stdout.split()
    with contextlib.suppress(OSError):
        candidates += [i[4][0] for i in socket.getaddrinfo(socket.gethostname(), None)]
    found: list[str] = []
    for address in candidates:
        if "." in address and not address.startswith("127.") and address not in found:
            found.append(address)
    return found


def phone_url(host: str, port: int) -> str:
    """The address phones open: this machine's LAN address when listening on all of them."""
    if host in ("0.0.0.0", "", "::"):
        addresses = lan_addresses() or ["127.0.0.1"]
        url_host = addresses[0]
    else:
        url_host = host
    return f"http://{url_host}:{port}/"


def running_text(url: str, port: int, code: str | None, name: str = "") -> str:
    """What ``serve`` says once it runs: the address phones open, the join line and a QR code
    that joins. ``name``: the mDNS name the device publishes (firmware/mdns.py), else the host
    name."""
    return (f"\ncubetower is running. Open {url} on a phone on the same network\n"
            f"(or http://{local_address(name or socket.gethostname(), port)}/ where mDNS "
            f"works):\n\n" + join_text(url, code))


def join_text(url: str, code: str | None) -> str:
    """``join code: <code>`` and a QR code of the page with the code in it: scanning joins."""
    text = io.StringIO()
    link = url
    if code:
        text.write(f"join code: {code}\n")
        text.write("Scan this to join the table (phones without the code only watch):\n")
        link = f"{url}?{urlencode({'code': code})}"
    try:
        import qrcode

        qr = qrcode.QRCode(border=1)
        qr.add_data(link)
        qr.print_ascii(out=text, invert=True)
    except Exception as exc:  # a QR code is a nicety; the URL and the code above are enough
        text.write(f"(no QR code: {exc})\n")
    return text.getvalue()


class Terminal:
    """Where ``serve`` talks to the person who started it. Three threads write here (the main
    loop, the start, a phone asking for a new code): each message goes out whole, so no line of
    one lands inside a line of another (people and tests look for a line ``join code: ...``)."""

    def __init__(self, out=sys.stdout):
        self._out = out
        self._lock = threading.Lock()

    def say(self, text: str) -> None:
        with self._lock:
            self._out.write(text if text.endswith("\n") else text + "\n")
            self._out.flush()


def _serve_config(args: argparse.Namespace) -> Config:
    """The settings file with the command line's flags on top; ConfigError when it is wrong."""
    return with_overrides(
        load_config(args.config),
        source=args.source,
        host=args.host,
        port=args.port,
        data_dir=args.data_dir,
    )


def _panel_config(args: argparse.Namespace) -> PanelConfig:
    """The ``[panel]`` table even from a settings file with a mistake elsewhere, so the red LED
    of a failed start lights the pins the panel is really wired to; the defaults otherwise."""
    try:
        return load_config(args.config).panel
    except ConfigError:
        pass
    try:
        with Path(args.config).open("rb") as handle:
            return PanelConfig.from_dict(tomllib.load(handle).get("panel", {}))
    except (OSError, TypeError, ValueError, AttributeError):
        return PanelConfig()


def name_announcer(config: Config, port: int, terminal: Terminal):
    """``<mdns_name>.local`` published for the addresses the server listens on; None when it
    listens on loopback only (phones could not reach it) or the setting is ``""``."""
    from firmware.mdns import NameAnnouncer

    host = config.server.host
    if not config.server.mdns_name or host.startswith("127.") or host in ("localhost", "::1"):
        return None
    everywhere = host in ("0.0.0.0", "", "::")
    announcer = NameAnnouncer(
        config.server.mdns_name, port, lan_addresses if everywhere else (lambda: [host]),
        say=terminal.say,
    )
    announcer.start()
    return announcer


# what the server took when it began listening: a settings file fixed later changes them only
# after a restart
LISTENING_SETTINGS = ("host", "port", "threads", "streams", "mdns_name")


def _fresh_config(args: argparse.Namespace, listening: Config, terminal: Terminal) -> Config:
    """The settings as the file says now, for the device's (next) start; says which of them the
    server, already listening, keeps until a restart (a file fixed while the page showed its
    mistake)."""
    fresh = _serve_config(args)
    differ = [f"{key} = {getattr(fresh.server, key)!r}" for key in LISTENING_SETTINGS
              if getattr(fresh.server, key) != getattr(listening.server, key)]
    if differ:
        terminal.say(f"the settings file's [server] {', '.join(differ)} take effect when "
                     "cubetower is restarted (the server was already listening)")
    return fresh


def _why_not_listening(exc: Exception) -> str:
    """Why the server could not listen, with the hint that fits the reason."""
    import errno

    if isinstance(exc, ValueError) or getattr(exc, "errno", None) == errno.EADDRNOTAVAIL:
        return (f"{getattr(exc, 'strerror', None) or exc}; --host must be an address of this "
                "machine, 0.0.0.0 for all of them")
    if getattr(exc, "errno", None) == errno.EACCES:
        return f"{exc.strerror}; ports under 1024 need root (the service's unit allows them)"
    return f"{exc.strerror or exc}; is cubetower already running? try --port"


def _serve(args: argparse.Namespace) -> int:
    """Web server and panel first, then the device (see firmware.startup): a failed start is
    shown on the phones and the LEDs, and tried again, instead of ending the process."""
    from companion.hub import Hub
    from companion.web.server import create_server
    from companion.web.streams import StreamSlots
    from firmware.service import Buttons, build_device, open_device_panel
    from firmware.startup import Startup
    from firmware.watchdog import SystemdNotifier

    try:
        config = _serve_config(args)
    except ConfigError:
        # shown on the page by Startup; listen where the flags or the defaults say meanwhile
        try:
            config = with_overrides(Config(), host=args.host, port=args.port)
        except ConfigError as exc:  # a wrong flag: there is nowhere to listen
            print(f"cubetower serve: {exc}", file=sys.stderr)
            return 2
    buttons = Buttons()
    panel = open_device_panel(replace(config, panel=_panel_config(args)), buttons)
    notifier = SystemdNotifier.from_environment()
    # the server's threads are sized for these stream slots: the device's app uses the same
    streams = StreamSlots(Hub(), config.server.streams)
    terminal = Terminal()
    startup = Startup(
        load=lambda: _fresh_config(args, config, terminal),
        build=lambda cfg: build_device(
            cfg, panel=panel, buttons=buttons, notifier=notifier, streams=streams
        ),
        panel=panel,
        config_path=str(args.config) if args.config else None,
        heartbeat=notifier.ping,
    )
    try:
        server = create_server(
            startup.app,
            streams,
            host=config.server.host,
            port=config.server.port,
            api_threads=config.server.threads,
        )
    except (OSError, ValueError) as exc:  # ValueError: waitress's word for a host it cannot use
        panel.show("error")
        startup.close()
        print(f"cubetower serve: cannot listen on {config.server.host}:{config.server.port} "
              f"({_why_not_listening(exc)})", file=sys.stderr)
        return 2
    host, port = config.server.host, int(server.effective_port)
    announcer = name_announcer(config, port, terminal)

    def started(device) -> None:
        url = phone_url(host, port)
        # before the first join line: a phone may ask for a new code the moment it reads it
        device.table_code.on_change(lambda code: terminal.say(join_text(url, code)))
        notifier.ready(f"serving on port {port}; camera: {device.source.name}")
        name = announcer.name_for_phones() if announcer else ""
        terminal.say(running_text(url, port, device.table_code.value, name))

    def cannot_start(fault) -> None:
        # the page shows what is wrong: systemd may call the service started (and not kill it
        # for taking too long), with the reason as its status
        notifier.ready(f"serving on port {port}; cannot start: {fault.what}")

    startup.on_started = started
    startup.on_fault = cannot_start
    stop = threading.Event()
    starting = threading.Thread(target=startup.run, args=(stop,), name="startup", daemon=True)
    starting.start()
    terminal.say(f"cubetower is listening on port {port}; starting the camera ...")

    def shut_down(signum, _frame):
        # Leave waitress's loop from the main thread; closing its sockets from inside the
        # handler would pull them from under the running select().
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, shut_down)
    try:
        server.run()
    except KeyboardInterrupt as why:
        logging.getLogger(__name__).info("stopping (%s)", why or "Ctrl-C")
    finally:
        server.close()
        if announcer:
            announcer.close()
        stop.set()
        starting.join(timeout=10)
        startup.close()
    return 0


def settle_seconds(text: str) -> float:
    """``calibrate --wait``: 0-60 seconds. A camera's exposure settles within 5 s
    (``PiCameraSource.SETTLE_FRAMES``); nan read no frame worth keeping, and 1e9 waited for
    ever."""
    try:
        seconds = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 <= seconds <= 60:  # False for nan too
        raise argparse.ArgumentTypeError(f"{text}: from 0 to 60 seconds")
    return seconds


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cubetower", description=__doc__)
    parser.add_argument("-v", "--verbose", action="store_true", help="log more")
    commands = parser.add_subparsers(dest="command", required=True)

    serve = commands.add_parser("serve", help="run the device and its phone app")
    serve.add_argument(
        "--source",
        help="demo | picamera | webcam[:N] | a folder whose newest image is the frame "
        "(default: the Pi camera if there is one, else the demo replay)",
    )
    serve.add_argument("--host", help="address to listen on (default 0.0.0.0: the whole LAN)")
    serve.add_argument("--port", type=int, help="port (default 8000)")
    serve.add_argument("--data-dir", help="where the game database and calibration live")
    serve.add_argument("--config", type=Path, help="a TOML config file")
    serve.set_defaults(run=_serve)

    count = commands.add_parser("count", help="count the cubes in tray pictures")
    count.add_argument("--empty", help="a picture of the same empty tray (calibration)")
    count.add_argument("--json", action="store_true", help="one JSON object per line")
    count.add_argument(
        "--model", help="a folder with another model.onnx and model.json (default: the packaged)"
    )
    count.add_argument("images", nargs="+", metavar="IMAGE")
    count.set_defaults(run=_count)

    calibrate = commands.add_parser(
        "calibrate", help="save the camera's picture of the EMPTY tray as the reference"
    )
    calibrate.add_argument("--source", help="as for serve, but never the demo (default: the Pi "
                           "camera)")
    calibrate.add_argument("--data-dir", help="where serve looks for empty.jpg")
    calibrate.add_argument("--config", type=Path, help="a TOML config file")
    calibrate.add_argument("--wait", type=settle_seconds, default=3.0,
                           help="seconds to let exposure settle (0-60)")
    calibrate.add_argument("--anyway", action="store_true",
                           help="keep the picture even if the camera sees cubes in it")
    calibrate.set_defaults(run=_calibrate)

    replay = commands.add_parser("replay", help="replay a game's event log to its score sheet")
    replay.add_argument("game", metavar="GAME.jsonl")
    replay.set_defaults(run=_replay)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
