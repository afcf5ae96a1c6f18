"""The Flask app the players open on their phones.

The app is handed everything it needs (the tray board, the update hub, plain callables for what
only the device can do, and who may write) so it runs the same under waitress on the Pi and in
Flask's test client. Every write needs the table code (``companion.web.access``). Every text a
phone reads is said in that phone's language (``companion.i18n``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from flask import Flask, Response, jsonify, render_template, request
from werkzeug.exceptions import HTTPException

from companion.amerigo.offer import COLOURS
from companion.errors import NeedsConfirmation
from companion.hub import Hub
from companion.i18n import Catalogue, load_catalogues
from companion.i18n.web import Localizer, install
from companion.store import NotSaved
from companion.table import GameTable
from companion.text import Msg, said_by
from companion.tray import TrayBoard, empty_tray_body
from companion.web.access import AccessPolicy, install_access
from companion.web.game_api import confirmation_needed, game_blueprint
from companion.web.inputs import MAX_BODY_BYTES, BadInput, json_body, query_int
from companion.web.server import hang_up, unsent_bytes
from companion.web.streams import StreamSlots, sse_message

log = logging.getLogger(__name__)

CALIBRATE_FIELDS = frozenset({"confirmed"})  # the players' yes to "cubes seen: keep it anyway?"


@dataclass
class DeviceHooks:
    """What only the device can do; each is optional so the app also runs without a camera."""

    read_now: Callable[[], None] | None = None
    # keep the current frame as the empty tray: calibrate_empty(confirmed); NeedsConfirmation
    # when cubes are seen in it, RuntimeError when it cannot be done now
    calibrate_empty: Callable[[bool], dict] | None = None
    # tray corners tapped on the camera's picture: [[x, y] * 4], or None for automatic;
    # ValueError for corners that cannot be a tray, RuntimeError when it cannot be done now
    set_corners: Callable[[list | None], dict] | None = None
    camera_picture: Callable[[], bytes | None] | None = None  # the whole frame, JPEG
    calibration_status: Callable[[], dict] | None = None
    # {"ok": bool, ...}: whether the camera delivers; not ok makes /api/health answer 503
    health: Callable[[], dict] | None = None


NO_CAMERA = Msg("this device has no camera to calibrate")


def create_app(
    board: TrayBoard,
    hub: Hub,
    hooks: DeviceHooks | None = None,
    table: GameTable | None = None,
    *,
    access: AccessPolicy,
    streams: StreamSlots | None = None,
    catalogues: dict[str, Catalogue] | None = None,
) -> Flask:
    """``streams`` bounds the live streams; its ``limit`` must match the server's stream
    threads (``companion.web.server.create_server``)."""
    hooks = hooks or DeviceHooks()
    streams = streams or StreamSlots(hub)
    app = Flask(__name__)
    app.json.sort_keys = False
    localizer = Localizer(catalogues if catalogues is not None else load_catalogues())
    install(app, localizer)  # first: the language is chosen before any refusal is said
    install_access(app, access, hub)
    app.register_error_handler(NeedsConfirmation, confirmation_needed)
    app.config["MAX_CONTENT_LENGTH"] = MAX_BODY_BYTES

    @app.errorhandler(BadInput)
    def bad_input(exc: BadInput):
        return jsonify(error=exc.msg, kind="BadInput"), 400

    @app.errorhandler(NotSaved)
    def not_saved(exc: NotSaved):
        log.warning("a write was refused by the data file: %s", exc)
        return jsonify(error=exc.msg, kind="NotSaved"), 503

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException):
        """Werkzeug's refusals (no such page, too big, wrong method) in words, as JSON."""
        if exc.code == 413:
            message = Msg("the request is too big (at most {n} KiB)", n=MAX_BODY_BYTES // 1024)
        else:
            message = f"{exc.name}: {exc.description}"
        response = jsonify(error=message, kind=type(exc).__name__)
        response.status_code = exc.code or 500
        if exc.code == 405 and exc.valid_methods:
            response.headers["Allow"] = ", ".join(exc.valid_methods)
        return response

    def tray_body() -> dict:
        return board.latest() or empty_tray_body()

    def snapshot() -> dict:
        body = {"tray": tray_body(), "status": board.status()}
        if table is not None:
            body["game"] = table.snapshot()
        return body

    @app.get("/")
    def index():
        return render_template("index.html", colours=COLOURS)

    @app.get("/api/tray")
    def api_tray():
        return jsonify(tray_body())

    @app.get("/api/tray/history")
    def api_tray_history():
        limit = query_int(request.args, "limit", 30, 1, 500)
        return jsonify(readings=board.history(limit))

    @app.get("/api/tray/picture/<int:reading_id>.jpg")
    def api_tray_picture(reading_id: int):
        picture = board.picture(reading_id)
        if picture is None:
            missing = Msg("no picture kept for reading {reading}", reading=reading_id)
            return jsonify(error=missing, kind="NotFound"), 404
        response = Response(picture, mimetype="image/jpeg")
        response.cache_control.max_age = 86400  # a reading's picture never changes
        return response

    @app.post("/api/tray/read")
    def api_tray_read():
        if hooks.read_now is None:
            return jsonify(error=Msg("this device has no camera loop to read from"),
                           kind="NoCamera"), 503
        hooks.read_now()
        return jsonify(ok=True), 202

    @app.post("/api/calibrate/empty")
    def api_calibrate_empty():
        if hooks.calibrate_empty is None:
            return jsonify(error=NO_CAMERA, kind="NoCamera"), 503
        data = request.get_data()  # no body: a plain "calibrate now"
        body = json_body(data, request.mimetype, CALIBRATE_FIELDS) if data else {}
        confirmed = body.get("confirmed", False)
        if not isinstance(confirmed, bool):
            raise BadInput("'confirmed' must be true or false")
        try:
            return jsonify(hooks.calibrate_empty(confirmed))
        except RuntimeError as exc:
            return jsonify(error=said_by(exc), kind=type(exc).__name__), 409

    @app.get("/api/calibration")
    def api_calibration():
        if hooks.calibration_status is None:
            return jsonify(error=NO_CAMERA, kind="NoCamera"), 503
        return jsonify(hooks.calibration_status())

    @app.post("/api/calibrate/corners")
    def api_calibrate_corners():
        if hooks.set_corners is None:
            return jsonify(error=NO_CAMERA, kind="NoCamera"), 503
        usage = Msg('send {{"corners": [[x, y], [x, y], [x, y], [x, y]]}} '
                    'or {{"corners": null}} for the automatic tray finder')
        try:
            body = json_body(request.get_data(), request.mimetype, frozenset({"corners"}))
        except BadInput as exc:
            return jsonify(error=Msg("{reason}: {usage}", reason=exc.msg, usage=usage),
                           kind="BadInput"), 400
        if "corners" not in body:
            return jsonify(error=usage, kind="BadInput"), 400
        try:
            return jsonify(hooks.set_corners(body["corners"]))
        except ValueError as exc:
            return jsonify(error=said_by(exc), kind=type(exc).__name__), 400
        except RuntimeError as exc:
            return jsonify(error=said_by(exc), kind=type(exc).__name__), 409

    @app.get("/api/camera/picture.jpg")
    def api_camera_picture():
        picture = hooks.camera_picture() if hooks.camera_picture else None
        if picture is None:
            return jsonify(error=Msg("no picture from the camera yet"), kind="NotFound"), 404
        response = Response(picture, mimetype="image/jpeg")
        response.headers["Cache-Control"] = "no-store"
        return response

    @app.get("/api/status")
    def api_status():
        return jsonify(board.status())

    @app.get("/api/snapshot")
    def api_snapshot():
        return jsonify(snapshot())

    @app.get("/api/stream")
    def api_stream():
        # subscribe before taking the snapshot: an update in between arrives twice, never lost
        slot = streams.open(request.environ.get("waitress.client_disconnected", lambda: False),
                            unsent_bytes(request.environ), hang_up(request.environ))
        catalogue = localizer.current()  # the stream runs after the request context is gone
        try:
            first = sse_message("snapshot", localizer.json_for(snapshot(), catalogue))
        except BaseException:
            streams.release(slot)
            raise
        body = streams.stream(slot, first, lambda update: localizer.json_for(update.data,
                                                                             catalogue))
        response = Response(body, mimetype="text/event-stream")
        response.headers["Cache-Control"] = "no-cache"
        response.headers["X-Accel-Buffering"] = "no"
        return response

    if table is not None:
        app.register_blueprint(game_blueprint(table))

    @app.get("/api/health")
    def api_health():
        """200 while the device works; 503 (with the problem in words) while its camera stalls
        or its pictures fail."""
        camera = hooks.health() if hooks.health else None
        ok = camera is None or bool(camera.get("ok"))
        body = {"ok": ok, "phones": streams.count, "stream_slots": streams.limit}
        if camera is not None:
            body["camera"] = camera
        return jsonify(body), 200 if ok else 503

    return app
