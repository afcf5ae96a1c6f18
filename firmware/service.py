"""The composition root: config in, a running device out.

Opens the camera, the data file and the GPIO panel, wires the vision counter to the companion's
tray board, and serves the phone app with waitress. Everything is built here and passed in; no
other module reaches for a global.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from companion.amerigo import RulesError
from companion.durable import write_durably
from companion.errors import NeedsConfirmation
from companion.hub import Hub
from companion.store import Store, StoreError
from companion.table import GameTable, TableError
from companion.table_code import TableCode
from companion.text import Msg
from companion.tray import TrayBoard
from companion.web.access import AccessPolicy, HostNames
from companion.web.app import DeviceHooks, create_app
from companion.web.streams import StreamSlots
from firmware.config import Config
from firmware.panel import NullPanel, Panel, open_panel
from firmware.scene import SceneMemory
from firmware.session import CONFIRMED_DROPS, SessionCalibration, parse_corners
from firmware.sources import (
    DEMO_DIR,
    AwaitedCamera,
    CameraLibraryMissing,
    CameraSettings,
    DemoSource,
    FolderSource,
    Frame,
    FrameError,
    FrameSource,
    NoCamera,
    SourceError,
    SourceSettingError,
    open_source,
)
from firmware.watchdog import SystemdNotifier
from firmware.watcher import ChangedFrameTrigger, Outcome, SettleTrigger, TrayWatcher, Trigger
from vision import TrayReading, VisionError, count_cubes, load_image
from vision.calibration import Calibration
from vision.detector import CubeDetector, Detections, ModelConfig
from vision.overlay import encode_jpeg, tray_picture
from vision.settle import SettleDetector
from vision.visibility import too_dark

log = logging.getLogger(__name__)

STILL_SOURCES = (DemoSource, FolderSource)  # each picture is already a tray at rest


class CalibrationError(RuntimeError):
    """Calibration could not be done now; the message says why."""


class ModelError(RuntimeError):
    """The cube model could not be loaded; the message says why and where it was looked for."""


class SharedDetector:
    """One cube model for the whole device, used by one thread at a time.

    Why: the watch loop reads frames while a phone's request (tapped corners, "calibrate now")
    or a confirmed drop reads one too, on waitress's threads, and an OpenCV ``dnn`` network is
    not safe to run from two threads at once. Loading it once here, rather than on first use
    deep in a reading, also makes a missing or broken model an error at start."""

    def __init__(self, detector: CubeDetector):  # or anything with its config and detect
        self._detector = detector
        self._lock = threading.Lock()

    @property
    def config(self) -> ModelConfig:
        return self._detector.config

    def detect(self, image: np.ndarray, reference: np.ndarray | None = None) -> Detections:
        with self._lock:
            return self._detector.detect(image, reference)


def load_detector(model_dir: str | Path | None = None) -> SharedDetector:
    """The packaged cube model (or the one in ``model_dir``), or ModelError with the reason."""
    try:
        return SharedDetector(CubeDetector(model_dir))
    except VisionError as exc:
        raise ModelError(f"cannot load the cube model: {exc}") from exc


def save_image_atomically(path: Path, image: np.ndarray) -> None:
    """Write a JPEG so that a power cut leaves the old file or the new one, never half of one.

    Each call writes its own partial file: the watch loop keeping an empty tray and a player
    pressing "calibrate" may save the reference at the same moment, and with one shared
    partial name the second swap found the file already moved away. The last swap wins."""
    ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 95])
    if not ok:
        raise CalibrationError("could not encode the picture")
    write_durably(path, data.tobytes())


def camera_settings(config: Config) -> CameraSettings:
    camera = config.camera
    return CameraSettings(
        lens_height_mm=camera.lens_height_mm,
        mains_hz=camera.mains_hz,
        capture_timeout=camera.capture_timeout_seconds,
    )


def camera_or_awaited(config: Config) -> FrameSource:
    """The configured camera; one that is there but will not open (busy, a loose cable) is an
    ``AwaitedCamera``, tried again while the game goes on. A source that cannot be one (a
    mistyped ``--source``, a folder not there) stays a fault: only the settings can fix it. So
    does a camera whose library is not installed (``--source picamera`` in a venv without
    picamera2): only an install fixes that, and the fault page says how."""
    camera = config.camera
    size, settings = (camera.width, camera.height), camera_settings(config)
    try:
        return choose_source(camera.source, size, settings)
    except (SourceSettingError, CameraLibraryMissing):
        raise
    except SourceError as exc:
        spec = "picamera" if camera.source == "auto" else camera.source
        log.warning("the camera cannot be opened (%s); the game goes on without it, and it is "
                    "tried again every %.0f s", exc, CAMERA_RETRY_SECONDS)
        return AwaitedCamera(lambda: open_source(spec, size, settings), exc,
                             retry_seconds=CAMERA_RETRY_SECONDS)


CAMERA_RETRY_SECONDS = 10.0


def choose_source(
    spec: str, size: tuple[int, int] = (1152, 648), settings: CameraSettings | None = None
) -> FrameSource:
    """``auto`` means the Pi camera when there is one, otherwise the demo replay.

    Only a camera that is not there at all (``NoCamera``) makes it the demo: one that is there
    but busy or failing raises (the device then awaits it, ``camera_or_awaited``; ``calibrate``
    says why), or the players would confirm demo trays into their game."""
    if spec != "auto":
        return open_source(spec, size, settings)
    try:
        return open_source("picamera", size, settings)
    except NoCamera as exc:
        log.info("no Pi camera (%s); replaying the demo pictures instead", exc)
        return open_source("demo")


@dataclass
class Reader:
    """Counts one frame and draws the picture the phones see."""

    reference: np.ndarray | None = None
    picture_width: int = 960
    bounds: Callable[[], dict[str, int] | None] = lambda: None  # what the game allows
    calibration: Callable[[], Calibration | None] = lambda: None  # tapped corners, colours
    detector: SharedDetector | None = None  # None: the packaged model
    # told of every reading with its frame (the empty-tray keeper listens here)
    on_reading: Callable[[np.ndarray, TrayReading], None] = lambda image, reading: None
    last_read: np.ndarray | None = None  # the frame behind the latest reading
    # whether each frame read shows the last one's tray unchanged (firmware.scene)
    scene: SceneMemory = field(default_factory=SceneMemory)

    def __call__(self, image: np.ndarray) -> Outcome:
        started = time.perf_counter()
        reading = count_cubes(
            image,
            self.reference,
            bounds=self.bounds(),
            calibration=self.calibration(),
            detector=self.detector,
        )
        ms = (time.perf_counter() - started) * 1000
        self.last_read = image
        self.on_reading(image, reading)
        picture = encode_jpeg(tray_picture(image, reading), max_width=self.picture_width)
        body = {**reading.to_dict(), "ms": round(ms, 1)}
        if self.scene.unchanged(image):
            body["tray_unchanged"] = True  # the board dates it from that tray's first reading
        return Outcome(body, picture)


def empty_reference_for(config: Config, source: FrameSource) -> np.ndarray | None:
    """The empty-tray picture: the demo's own when replaying it, else the newer of the
    configured one and the one calibration saved (``DATA_DIR/empty.jpg``), else the other.

    Why the newer: calibration (the command, the page, or a tray read empty with certainty)
    always saves ``DATA_DIR/empty.jpg``; a configured picture that always won would take the
    evening's calibration back at the next start."""
    configured = config.vision.empty_reference
    saved = [Path(configured).expanduser()] if configured else []
    # a tie keeps the configured one first (sorted is stable)
    candidates = sorted([*saved, config.data_path / "empty.jpg"], key=_newest_first)
    if isinstance(source, DemoSource):
        candidates.insert(0, DEMO_DIR / "empty.jpg")
    for path in candidates:
        if path.is_file():
            try:
                return load_image(path)
            except VisionError as exc:
                log.warning("ignoring empty-tray reference %s: %s", path, exc)
    return None


def _newest_first(path: Path) -> float:
    try:
        return -path.stat().st_mtime
    except OSError:  # not there: last, and skipped by the caller's is_file()
        return float("inf")


def trigger_for(config: Config, source: FrameSource, reference: np.ndarray | None) -> Trigger:
    if isinstance(source, STILL_SOURCES):
        return ChangedFrameTrigger()
    detector = SettleDetector(still_seconds=config.watcher.still_seconds)
    return SettleTrigger(detector, reference)


@dataclass
class PanelMirror:
    """Passes readings to the tray board and shows every status change on the panel's LEDs too.

    A refused panel button (``refuse``) is shown for ``REFUSAL_SECONDS``: the camera loop sets
    its status ten times a second, which would wipe the reason off the phones and the LEDs
    before anyone looked up from the table. A camera fault too waits those seconds (a camera
    that will not open is one all evening, and would hide every refusal), and so does
    anything else, until a press that works (``accepted``) ends it.
    """

    board: TrayBoard
    panel: Panel | NullPanel
    clock: Callable[[], float] = time.monotonic
    refused_until: float = float("-inf")
    # the status the refusal held back, shown again when a press that works ends it early
    _after_refusal: tuple = ("read", "", None)

    def publish_reading(self, frame_id: str, reading: dict, picture: bytes | None) -> dict:
        return self.board.publish_reading(frame_id, reading, picture)

    def publish_error(self, frame_id: str, message: str) -> dict:
        return self.board.publish_error(frame_id, message)

    def set_status(self, state: str, message: str = "", source: str | None = None) -> None:
        if self.clock() < self.refused_until:
            self._after_refusal = (state, message, source)
            return
        self.refused_until = float("-inf")
        self._show(state, message, source)

    def accepted(self) -> None:
        """A panel button that worked: an earlier refusal no longer applies."""
        if self.refused_until != float("-inf"):
            self.refused_until = float("-inf")
            self._show(*self._after_refusal)

    def refuse(self, message: str | Msg) -> None:
        """A panel button was refused: the reason on the phones, the red LED flickering."""
        if self.refused_until == float("-inf"):  # what was shown, until the loop says more
            before = self.board.status()
            self._after_refusal = (before.get("state", "read"), before.get("message", ""), None)
        self.refused_until = self.clock() + REFUSAL_SECONDS
        self._show("refused", message)

    def _show(self, state: str, message: str | Msg = "", source: str | None = None) -> None:
        self.board.set_status(state, message, source)
        try:
            self.panel.show(state)
        except ValueError:
            log.debug("panel has no pattern for %r", state)


REFUSAL_SECONDS = 5.0


@dataclass
class Device:
    config: Config
    source: FrameSource
    store: Store
    hub: Hub
    board: TrayBoard
    table: GameTable
    watcher: TrayWatcher
    panel: Panel | NullPanel
    session: SessionCalibration
    table_code: TableCode  # what a phone needs to change the game
    detector: SharedDetector | None = None  # the one model every reading uses
    notifier: SystemdNotifier = field(default_factory=lambda: SystemdNotifier(None))
    streams: StreamSlots | None = None  # the phones' live streams; default: config.server.streams
    stop_event: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None
    # the picture (and exposure held) calibrate_empty last asked about: what a yes keeps
    asked_empty: tuple[Frame, dict | None] | None = field(default=None, repr=False)
    # the latest confirmed drop's (game, event number) and the frame it was confirmed on: a
    # correction of it while that frame is still the tray's teaches the corrected counts
    _drop_frame: tuple[tuple, object] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.streams is None:
            self.streams = StreamSlots(self.hub, self.config.server.streams)

    def start(self) -> None:
        self.board.set_status("starting", source=self.source.name)
        self.panel.show("starting")
        self.panel.set_light(True)
        self.thread = threading.Thread(
            target=self.watcher.run, args=(self.stop_event,), name="tray-watcher", daemon=True
        )
        self.thread.start()

    def stop(self) -> None:
        self.notifier.stopping()
        self.stop_event.set()
        if self.thread:
            self.thread.join(timeout=5)
        self.panel.show("stopped")
        self.panel.close()
        self.source.close()
        self.store.close()

    # after the camera was told to hold its exposure: frames it has taken since (a few frames)
    LOCK_SETTLE_SECONDS = 0.5
    LOCK_FRAME_TIMEOUT = 5.0
    # how long a question about the empty tray's picture stands: a yes later takes a new picture
    ASKED_EMPTY_KEEP_SECONDS = 300.0

    def calibrate_empty(self, confirmed: bool = False) -> dict:
        """Keep the camera's current frame as the empty-tray reference, on disk and in use.

        A live camera first settles on the light once more and then holds that exposure and
        white balance (saved with the calibration), and the reference is a frame taken after.
        Why it asks first when it sees cubes: a cube in the reference hides that cube, in that
        place, from every later reading; so it is kept only once a player says the tray really
        is empty (NeedsConfirmation, then ``confirmed``). The yes keeps the picture it was
        asked about, not a newer one, which the players never saw counted (a hand in it).
        A floor the camera shows mostly black is kept, and said (``floor_too_dark``: its nearly
        black share, ``vision.visibility``): cubes there cannot be seen until the tray is lit."""
        asked, self.asked_empty = self.asked_empty, None
        if confirmed and asked is not None and (
            time.time() - asked[0].captured_at <= self.ASKED_EMPTY_KEEP_SECONDS
        ):
            frame, held = asked
        else:
            frame, held = self._empty_candidate()
        empty_reading = count_cubes(
            frame.image, calibration=self.session.calibration, detector=self.detector
        )
        seen = empty_reading.total
        if seen and not confirmed:
            self.asked_empty = (frame, held)
            if seen == 1:
                raise NeedsConfirmation(
                    "The camera sees {n} cube in the tray. A picture with cubes in it spoils "
                    "every later reading: empty the tray and calibrate again. Keep this picture "
                    "as the empty tray anyway?", n=seen)
            raise NeedsConfirmation(
                "The camera sees {n} cubes in the tray. A picture with cubes in it spoils every "
                "later reading: empty the tray and calibrate again. Keep this picture as the "
                "empty tray anyway?", n=seen)
        path = self._use_as_empty(frame.image)
        log.info("empty-tray reference saved to %s (%d cubes seen without it)", path, seen)
        result = {"saved": str(path), "frame_id": frame.frame_id, "cubes_seen": seen}
        if held is not None:
            result["exposure_held"] = held.get("controls")
        dark = too_dark(frame.image, empty_reading.tray_corners)
        if dark is not None:  # saved all the same: the players may light the tray and redo it
            log.warning("the empty tray's floor is %.0f %% nearly black: too dark", 100 * dark)
            result["floor_too_dark"] = round(dark, 2)
        return result

    def _empty_candidate(self) -> tuple[Frame, dict | None]:
        """The frame to keep as the empty tray: the latest, or with a live camera the first one
        after it fixed its exposure (and what it fixed)."""
        frame = self.watcher.last_frame
        if frame is None:
            raise CalibrationError(Msg("no picture from the camera yet; wait a moment and try "
                                       "again"))
        held = self._hold_exposure()
        if held is not None:
            frame = self._frame_since(time.time() + self.LOCK_SETTLE_SECONDS)
        return frame, held

    def _hold_exposure(self) -> dict | None:
        if not (self.config.camera.lock_exposure and self.source.live):
            return None
        try:
            held = self.source.lock_exposure()
        except FrameError as exc:
            raise CalibrationError(Msg("the camera could not fix its exposure: {reason}",
                                       reason=str(exc))) from exc
        if held is not None:
            self.session.set_camera_lock(held)
        return held

    def _frame_since(self, moment: float) -> Frame:
        """The watch loop's first frame taken at or after ``moment`` (unix seconds)."""
        deadline = time.monotonic() + self.LOCK_FRAME_TIMEOUT + max(0.0, moment - time.time())
        while time.monotonic() < deadline:
            frame = self.watcher.last_frame
            if frame is not None and frame.captured_at >= moment:
                return frame
            time.sleep(0.05)
        raise CalibrationError(Msg("the camera gave no picture after fixing its exposure; try "
                                   "again"))

    def _use_as_empty(self, image: np.ndarray) -> Path:
        path = self.config.data_path / "empty.jpg"
        save_image_atomically(path, image)
        self.watcher.read_frame.reference = image
        self.watcher.trigger.set_reference(image)
        return path

    def keep_if_empty(self, image: np.ndarray, reading: TrayReading) -> bool:
        """A tray read empty with certainty becomes the empty-tray reference.

        Why: the counter is far surer with the empty tray beside the frame, and players forget
        to calibrate; the tray is emptied every phase, so the reference also follows the
        evening's light and a nudged camera. Only a reading with nothing to doubt counts: no
        cube, no warning, and, when a reference was in use, the frame read empty without it
        too (a cube baked into the reference would hide that cube from then on).
        """
        if not self.config.vision.auto_empty_reference or isinstance(self.source, DemoSource):
            return False  # the demo replays another table: its frames are no reference here
        if reading.total or reading.uncertain or reading.warnings:
            return False
        if self.watcher.read_frame.reference is not None:
            alone = count_cubes(
                image, calibration=self.session.calibration, detector=self.detector
            )
            if alone.total or alone.uncertain or alone.warnings:
                return False
        try:
            path = self._use_as_empty(image)
        except (OSError, CalibrationError) as exc:
            log.warning("could not keep the empty tray as reference: %s", exc)
            return False
        log.info("the tray was read empty: kept as the empty-tray reference (%s)", path)
        return True

    def set_corners(self, value) -> dict:
        """Tray corners tapped on the camera's picture (None: find the tray automatically)."""
        frame = self.watcher.last_frame
        if frame is None:
            raise CalibrationError(Msg("no picture from the camera yet; wait a moment and try "
                                       "again"))
        height, width = frame.image.shape[:2]
        corners = None if value is None else parse_corners(value, (width, height))
        result = self.session.set_corners(corners, frame.image)
        self.watcher.request_read()
        return result

    def camera_picture(self) -> bytes | None:
        """The camera's whole latest frame as JPEG, for tapping the tray's corners."""
        frame = self.watcher.last_frame
        return None if frame is None else encode_jpeg(frame.image)

    def learn_from_game(self, snapshot: dict) -> None:
        """A drop the players just confirmed teaches the counter this table's colours; a new
        game starts them afresh. Never lets a problem here spoil the players' command."""
        history = snapshot.get("history") or []
        if not history:
            return
        latest = history[-1]
        try:
            if latest["type"] == "players_seated":
                self.session.forget_colours()
            elif latest["type"] in CONFIRMED_DROPS and latest.get("in_force", True):
                frame = self.watcher.read_frame.last_read
                if frame is not None:
                    tag = (snapshot.get("id"), latest["n"])
                    self._drop_frame = (tag, frame)
                    self.session.learn(frame, latest["tray"], self.watcher.read_frame.reference,
                                       tag=tag)
            elif latest["type"] in ("tray_corrected", "undo"):
                self._relearn(snapshot.get("id"), history, latest)
        except Exception:  # the game's command has landed; calibration is a bonus
            log.exception("could not learn from the confirmed drop")

    def _relearn(self, game_id, history: list[dict], latest: dict) -> None:
        """A correction or undo (or redo) changed what a confirmed drop held: what it taught is
        taken back, and while the tray still holds that drop it teaches its counts as they
        stand now (a misread confirmed and corrected at once must not teach the misreading)."""
        by_n = {h["n"]: h for h in history}
        line, seen = latest, set()
        while line is not None and line["type"] in ("tray_corrected", "undo") \
                and line["n"] not in seen:
            seen.add(line["n"])
            line = by_n.get(line.get("target"))
        if line is None or line["type"] not in CONFIRMED_DROPS:
            return
        tag = (game_id, line["n"])
        self.session.unlearn(tag)
        kept = self._drop_frame
        if (line["in_force"] and kept is not None and kept[0] == tag
                and kept[1] is self.watcher.read_frame.last_read):
            self.session.learn(kept[1], line["tray"], self.watcher.read_frame.reference, tag=tag)

    def app(self):
        hooks = DeviceHooks(
            read_now=self.watcher.request_read,
            calibrate_empty=self.calibrate_empty,
            set_corners=self.set_corners,
            camera_picture=self.camera_picture,
            calibration_status=self.session.status,
            health=self.watcher.health,
        )
        return create_app(
            self.board,
            self.hub,
            hooks,
            self.table,
            access=self.access_policy(),
            streams=self.streams,
        )

    def access_policy(self) -> AccessPolicy:
        """The table code, and the names the phone app answers to: this machine's own name (and
        its .local name) and the configured ones, besides addresses, localhost and *.local."""
        name = socket.gethostname()
        names = [name, f"{name}.local", *self.config.server.allowed_hosts]
        return AccessPolicy(self.table_code, HostNames.of(names))


@dataclass
class Buttons:
    """What the panel's buttons do. The panel is opened before the device exists (so a failed
    start can light the red LED); until the device is built a press does nothing."""

    read_now: Callable[[], object] = lambda: None
    undo: Callable[[], object] = lambda: None
    redo: Callable[[], object] = lambda: None
    """Undo held for ``[panel] hold_time`` seconds (a short press is ``undo``)."""
    next: Callable[[], object] = lambda: None


def open_device_panel(config: Config, buttons: Buttons, *, pin_factory=None) -> Panel | NullPanel:
    """The front panel, its buttons calling whatever ``buttons`` holds at the time of a press."""
    return open_panel(
        config.panel,
        on_read_now=lambda: buttons.read_now(),
        on_undo=lambda: buttons.undo(),
        on_next=lambda: buttons.next(),
        on_redo=lambda: buttons.redo(),
        pin_factory=pin_factory,
    )


def build_device(
    config: Config,
    source: FrameSource | None = None,
    *,
    pin_factory=None,
    detector=None,
    notifier: SystemdNotifier | None = None,
    panel: Panel | NullPanel | None = None,
    buttons: Buttons | None = None,
    streams: StreamSlots | None = None,
) -> Device:
    """Everything the device is made of; ``pin_factory`` lets tests use gpiozero's MockFactory,
    ``detector`` another cube model (default: the packaged one, loaded here: ModelError when it
    cannot be, before the camera or the database is opened), ``notifier`` the line to systemd
    (default: the one systemd gave this process, if any). ``panel`` and ``buttons``: a panel
    opened earlier (:func:`open_device_panel`), otherwise one is opened here; ``streams``: the
    stream slots (and their hub) a server made before the device was sized for. A start that fails
    after the camera was opened closes it again, so the next try does not find it busy."""
    notifier = notifier or SystemdNotifier.from_environment()
    if detector is None:
        detector = load_detector()
    elif not isinstance(detector, SharedDetector):
        detector = SharedDetector(detector)
    source = source or camera_or_awaited(config)
    try:
        return _compose(config, source, detector, notifier, panel, buttons, pin_factory, streams)
    except BaseException:
        try:
            source.close()
        except Exception:
            log.exception("could not close %s after the failed start", source.name)
        raise


def _compose(config, source, detector, notifier, panel, buttons, pin_factory, streams):
    store = Store(config.data_path / "cubetower.sqlite", keep_readings=config.keep_readings)
    try:
        return _wire(
            config, source, detector, notifier, panel, buttons, pin_factory, streams, store
        )
    except BaseException:
        store.close()
        raise


def _wire(config, source, detector, notifier, panel, buttons, pin_factory, streams, store):
    table_code = TableCode(config.data_path / "table-code")
    hub = streams.hub if streams is not None else Hub()
    board = TrayBoard(store, hub)
    table = GameTable(store, hub)
    reference = empty_reference_for(config, source)
    session = SessionCalibration(config.data_path / "calibration.json", detector)
    if config.camera.lock_exposure:
        source.use_exposure_lock(session.camera_lock)
    reader = Reader(
        reference,
        config.vision.picture_width,
        table.vision_bounds,
        calibration=lambda: session.calibration,
        detector=detector,
        scene=SceneMemory(config.data_path / "last-tray.png"),
    )
    mirror = PanelMirror(board, NullPanel("not opened yet"))
    watcher = TrayWatcher(
        source,
        reader,
        mirror,
        trigger_for(config, source, reference),
        poll_seconds=config.watcher.poll_seconds,
        stall_seconds=config.watcher.stall_seconds,
        heartbeat=notifier.ping,
    )
    if panel is None:
        buttons = Buttons()
        panel = open_device_panel(config, buttons, pin_factory=pin_factory)
    buttons = buttons or Buttons()
    buttons.read_now = watcher.request_read
    buttons.undo = lambda: game_button(table.undo_latest, mirror)
    buttons.redo = lambda: game_button(table.redo_latest, mirror)
    buttons.next = lambda: game_button(lambda: confirm_latest(board, table), mirror)
    mirror.panel = panel
    device = Device(
        config, source, store, hub, board, table, watcher, mirror.panel, session, table_code,
        detector, notifier, streams,
    )
    reader.on_reading = device.keep_if_empty
    table_code.on_change(
        lambda _: log.info("a phone asked for a new table code: the others watch until they join")
    )
    table.on_change(device.learn_from_game)
    return device


def confirm_latest(board: TrayBoard, table: GameTable) -> dict:
    latest = board.latest()
    if latest is None or latest.get("error"):
        raise TableError("there is no good tray reading to confirm")
    return table.confirm_tray(latest["counts"], reading_id=latest.get("id"))


def needs_a_yes() -> Msg:
    """What the phones say when Next met a question (an unusual drop): the panel cannot say yes,
    and the question on the tray card could not be answered there. The page knows this message
    id (app.js) and offers the button that asks the question where a player can answer it."""
    return Msg("The device's Next button did not use this reading: a player must say yes to it "
               "first, on a phone.")


def game_button(action: Callable[[], dict], mirror: PanelMirror) -> None:
    """A panel button that changes the game: a refusal blinks the error LED, never crashes."""
    try:
        action()
        mirror.accepted()
    except NeedsConfirmation as exc:
        log.warning("panel button refused, a phone must say yes: %s", exc)
        mirror.refuse(needs_a_yes())
    except (TableError, RulesError, StoreError) as exc:
        log.warning("panel button refused: %s", exc)
        said = getattr(exc, "msg", None)  # the rules' and the table's Msg: each phone's words
        mirror.refuse(said if isinstance(said, Msg) else str(exc))
