"""Typed device configuration from a TOML file, with command-line flags on top.

Unknown keys are rejected with a message naming the key and the allowed ones: a typo in a config
file on a headless Pi must fail loudly at start, not be silently ignored all evening.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import tomllib
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path

from companion.store import KEEP_PICTURES, KEEP_READINGS
from firmware.panel import PanelConfig, PanelConfigError

LABEL = r"[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?"
HOST_NAME = re.compile(rf"(\*\.)?{LABEL}(\.{LABEL})*")  # for [server] allowed_hosts


class ConfigError(ValueError):
    """The configuration is wrong; the message names the file, section and key."""


def default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "cubetower"


MAX_THREADS = 64
MAX_STREAMS = 200  # a thread each: a Pi runs a few hundred threads, not thousands
MAX_PORT = 65535  # a TCP port is 16 bits: the OS would take 99999 as 99999 - 65536
# The counter reads no picture narrower or lower than this (vision.counter.MIN_SIDE, copied, not
# imported: reading the settings must not load OpenCV; a test keeps the two the same).
MIN_PICTURE_SIDE = 64
# vision.counter.MAX_PIXELS: the counter refuses a larger picture (it would take more memory than
# a Pi has), so a camera asked for one would fail every reading
MAX_PICTURE_PIXELS = 64_000_000
# the longest a still tray may be awaited before it is read: longer, and a drop is never read
# while players wait (the panel's hold_time has the same bound)
MAX_STILL_SECONDS = 60


@dataclass(frozen=True)
class ServerConfig:
    host: str = "0.0.0.0"
    port: int = 8000
    threads: int = 16  # threads answering the API (page, buttons), never taken by streams
    # live streams open at once, each on a thread of its own besides ``threads``; a phone beyond
    # them takes the slot of the oldest stream (see companion/web/streams.py)
    streams: int = 64
    # names the phone app answers to besides its addresses, localhost, *.local and its host
    # name (any other Host is refused: DNS rebinding); "*.club.lan" allows every name under it
    allowed_hosts: tuple[str, ...] = ()
    # phones open http://<mdns_name>.local/ whatever the Pi's host name (firmware/mdns.py);
    # "" publishes nothing (avahi still answers to the host name)
    mdns_name: str = "cubetower"


@dataclass(frozen=True)
class CameraConfig:
    source: str = "auto"  # auto | demo | picamera | webcam[:N] | a folder path
    width: int = 1152
    height: int = 648
    # lens above the tray floor (mount.scad's camera_height): a Camera Module 3 is focused there;
    # 0: one autofocus cycle at start, then the lens is held
    lens_height_mm: float = 0.0
    mains_hz: int = 0  # 50 or 60: exposure avoids the lamps' flicker; 0: no flicker avoidance
    capture_timeout_seconds: float = 2.0  # a picture later than this: the camera is restarted
    lock_exposure: bool = True  # hold exposure and white balance from the empty-tray calibration


@dataclass(frozen=True)
class WatcherConfig:
    poll_seconds: float = 0.1
    still_seconds: float = 0.6
    # no picture from a live camera for this long: /api/health fails and systemd's watchdog
    # (WatchdogSec= in the unit, which must be longer) is no longer fed
    stall_seconds: float = 10.0


@dataclass(frozen=True)
class VisionConfig:
    empty_reference: str = ""  # picture of the empty tray; a newer calibration wins
    picture_width: int = 960  # width of the annotated picture sent to phones
    # keep a tray read empty with certainty as the empty-tray reference (fresh light, no button)
    auto_empty_reference: bool = True


@dataclass(frozen=True)
class Config:
    data_dir: str = ""
    # tray readings kept in the database, the newest; older ones are deleted as new ones come
    keep_readings: int = KEEP_READINGS
    server: ServerConfig = field(default_factory=ServerConfig)
    camera: CameraConfig = field(default_factory=CameraConfig)
    watcher: WatcherConfig = field(default_factory=WatcherConfig)
    vision: VisionConfig = field(default_factory=VisionConfig)
    panel: PanelConfig = field(default_factory=PanelConfig)

    @property
    def data_path(self) -> Path:
        return Path(self.data_dir).expanduser() if self.data_dir else default_data_dir()


def _check_value(where: str, name: str, expected, value):
    if typing.get_origin(expected) is tuple:  # tuple[str, ...]: a TOML list of strings
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{where}: '{name}' must be a list of strings, got {value!r}")
        return tuple(value)
    if isinstance(expected, types.UnionType) or typing.get_origin(expected) is typing.Union:
        expected = tuple(typing.get_args(expected))
    if expected is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if expected is float and isinstance(value, float) and not math.isfinite(value):
        # TOML has nan and inf: no setting means anything with nan, and every timeout or wait
        # given inf ends in OverflowError (threading's waits take no infinite timeout)
        raise ConfigError(f"{where}: '{name}' must be a finite number, got {value!r}")
    ok = isinstance(value, expected) and not (isinstance(value, bool) and expected is not bool)
    if not ok:
        wanted = getattr(expected, "__name__", str(expected))
        raise ConfigError(f"{where}: '{name}' must be {wanted}, got {value!r}")
    return value


def build(cls, data: dict, where: str):
    """Make dataclass ``cls`` from ``data``, refusing keys it does not have."""
    if not isinstance(data, dict):
        raise ConfigError(f"{where} must be a table")
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    unknown = sorted(set(data) - set(names))
    if unknown:
        raise ConfigError(
            f"{where}: unknown key {unknown[0]!r}; allowed keys are {', '.join(names)}"
        )
    values = {}
    for name, value in data.items():
        expected = hints[name]
        if hasattr(expected, "from_dict"):  # a section that checks itself
            try:
                values[name] = expected.from_dict(value)
            except PanelConfigError as exc:
                raise ConfigError(f"{where} [{name}]: {exc}") from exc
        elif dataclasses.is_dataclass(expected):
            values[name] = build(expected, value, f"{where} [{name}]")
        else:
            values[name] = _check_value(where, name, expected, value)
    return cls(**values)


def load_config(path: str | Path | None) -> Config:
    if path is None:
        return Config()
    path = Path(path)
    try:
        with path.open("rb") as handle:
            data = tomllib.load(handle)
    except FileNotFoundError as exc:
        raise ConfigError(f"config file {path} not found") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {path} is not valid TOML: {exc}") from exc
    except UnicodeDecodeError as exc:  # tomllib reads bytes as UTF-8 and lets this through
        raise ConfigError(f"config file {path} is not a text file (not UTF-8 at byte "
                          f"{exc.start})") from exc
    except OSError as exc:  # a folder, no permission, a card that fails
        raise ConfigError(f"config file {path} cannot be read: {exc.strerror or exc}") from exc
    config = build(Config, data, str(path))
    if not 1 <= config.server.port <= MAX_PORT:
        raise ConfigError(
            f"{path} [server]: port must be 1-{MAX_PORT}, got {config.server.port}"
        )
    if not 1 <= config.server.threads <= MAX_THREADS:
        raise ConfigError(
            f"{path} [server]: threads must be 1-{MAX_THREADS}, got {config.server.threads}"
        )
    if not 1 <= config.server.streams <= MAX_STREAMS:
        raise ConfigError(
            f"{path} [server]: streams must be 1-{MAX_STREAMS}, got {config.server.streams}"
        )
    for name in config.server.allowed_hosts:
        if not HOST_NAME.fullmatch(name):
            raise ConfigError(
                f"{path} [server]: allowed_hosts: {name!r} is not a host name "
                "(a name such as \"cubetower.club.lan\" or \"*.club.lan\"; no scheme or port)"
            )
    name = config.server.mdns_name
    if name and not (len(name) <= 63 and re.fullmatch(LABEL, name)):
        raise ConfigError(
            f"{path} [server]: mdns_name {name!r} must be one name of letters, digits and "
            "hyphens, without '.local' (\"cubetower\" answers as cubetower.local), or \"\" for none"
        )
    if config.keep_readings < KEEP_PICTURES:
        # the newest KEEP_PICTURES readings keep their pictures, and the phones' History shows
        # the last few dozen: fewer would delete readings a phone still shows
        raise ConfigError(
            f"{path}: keep_readings must be at least {KEEP_PICTURES} (tray readings kept; "
            f"about 750 bytes each), got {config.keep_readings}"
        )
    check_camera(config, str(path))
    check_watcher(config, str(path))
    check_vision(config, str(path))
    return config


# The Camera Module 3 focuses from 10 cm, its Wide version from 5 cm: nearer is a typo (cm for mm).
CLOSEST_FOCUS_MM = 50


def check_camera(config: Config, where: str) -> None:
    """Camera settings that cannot work are refused at start, with what to write instead."""
    camera, watcher = config.camera, config.watcher
    if camera.lens_height_mm != 0 and camera.lens_height_mm < CLOSEST_FOCUS_MM:
        raise ConfigError(
            f"{where} [camera]: lens_height_mm is in millimetres (25 cm is 250) and no Camera "
            f"Module 3 focuses nearer than {CLOSEST_FOCUS_MM}; got {camera.lens_height_mm:g} "
            "(0: autofocus once at start)"
        )
    for name in ("width", "height"):
        # the camera's frames are what the counter reads: smaller, every reading fails
        size = getattr(camera, name)
        if size < MIN_PICTURE_SIDE:
            raise ConfigError(
                f"{where} [camera]: {name} must be at least {MIN_PICTURE_SIDE} pixels (the "
                f"counter reads no smaller picture), got {size}"
            )
    if camera.width * camera.height > MAX_PICTURE_PIXELS:
        raise ConfigError(
            f"{where} [camera]: width x height must be at most {MAX_PICTURE_PIXELS // 1_000_000} "
            f"megapixels (the counter reads no larger picture; 1152 x 648 is plenty), got "
            f"{camera.width} x {camera.height}"
        )
    if camera.mains_hz not in (0, 50, 60):
        raise ConfigError(
            f"{where} [camera]: mains_hz must be 50, 60 or 0 (off), got {camera.mains_hz}"
        )
    if camera.capture_timeout_seconds <= 0:
        raise ConfigError(
            f"{where} [camera]: capture_timeout_seconds must be more than 0, "
            f"got {camera.capture_timeout_seconds:g}"
        )
    if watcher.stall_seconds <= camera.capture_timeout_seconds:
        raise ConfigError(
            f"{where} [watcher]: stall_seconds ({watcher.stall_seconds:g}) must be longer than "
            f"[camera] capture_timeout_seconds ({camera.capture_timeout_seconds:g})"
        )


def check_watcher(config: Config, where: str) -> None:
    """Watch-loop times that cannot work are refused at start (stall_seconds: check_camera)."""
    watcher = config.watcher
    if watcher.poll_seconds <= 0:
        # the loop waits poll_seconds between looks at the camera: 0 keeps a CPU core busy
        raise ConfigError(
            f"{where} [watcher]: poll_seconds must be more than 0, got {watcher.poll_seconds:g}"
        )
    if watcher.poll_seconds >= watcher.stall_seconds:
        # the camera is only looked at every poll_seconds: a wait as long as stall_seconds
        # makes a working camera look stalled (/api/health fails, the watchdog goes unfed)
        raise ConfigError(
            f"{where} [watcher]: poll_seconds ({watcher.poll_seconds:g}) must be shorter than "
            f"stall_seconds ({watcher.stall_seconds:g})"
        )
    if not 0 <= watcher.still_seconds <= MAX_STILL_SECONDS:
        # how long the tray must be still before it is read; vision.settle refuses less than 0
        raise ConfigError(
            f"{where} [watcher]: still_seconds must be 0-{MAX_STILL_SECONDS} (seconds), got "
            f"{watcher.still_seconds:g}"
        )


def check_vision(config: Config, where: str) -> None:
    """Vision settings that cannot work are refused at start, not at every reading."""
    width = config.vision.picture_width
    if width < 1:
        # the phones' picture is shrunk to this width (vision.overlay.encode_jpeg refuses < 1);
        # it is never counted, so the counter's smallest picture does not apply
        raise ConfigError(
            f"{where} [vision]: picture_width must be at least 1 (pixels), got {width}"
        )


def with_overrides(config: Config, **flags) -> Config:
    """Apply command-line flags (None means "not given") over the file's values.

    ``--port`` is checked as the file's port is, a ConfigError for the CLI to print: the OS would
    take 99999 as 99999 - 65536, and waitress fails with a traceback on a negative one. 0 stays
    allowed on the command line (any free port, the one the terminal prints): tests use it."""
    port = flags.get("port")
    if port is not None and not 0 <= port <= MAX_PORT:
        raise ConfigError(f"--port must be 1-{MAX_PORT} (0: any free port), got {port}")
    server = dataclasses.replace(
        config.server,
        **{k: v for k, v in {"host": flags.get("host"), "port": port}.items() if v is not None},
    )
    camera = config.camera
    if flags.get("source"):
        camera = dataclasses.replace(camera, source=flags["source"])
    data_dir = flags.get("data_dir") or config.data_dir
    return dataclasses.replace(config, server=server, camera=camera, data_dir=str(data_dir or ""))
