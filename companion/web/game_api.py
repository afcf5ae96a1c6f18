"""HTTP endpoints for the game: start one, send a command, read the snapshot.

Every refusal is a JSON body ``{"error": "..."}`` a phone can show as it is: 400 for a command the
rules refuse or a malformed request, 409 when another phone changed the game first (with the fresh
snapshot, so the phone can redraw at once; for a new game or a resume, when another game is at
the table than the one its ``replaces`` names), 404 when there is no game, 422 when an
``Idempotency-Key`` comes back with another request. A write sent again with the same
``Idempotency-Key`` is answered as the first time and applied once. A 409 with ``"confirm"``
instead asks a question (``companion.errors.NeedsConfirmation``): the same request again with
``"confirmed": true`` is the players' yes.
"""

from __future__ import annotations

from flask import Blueprint, Response, jsonify, request

from companion.amerigo import RulesError
from companion.errors import NeedsConfirmation
from companion.store import SeqConflict
from companion.table import ANY_GAME, GameTable, KeyReused, NoGame, TableError
from companion.web.inputs import idempotency_key, json_body

# "replaces": the id of the game the phone shows at the table (null: none); left out, any
NEW_GAME_FIELDS = frozenset({"players", "name", "settings", "replaces"})
RESUME_FIELDS = frozenset({"replaces"})  # the same "replaces"; a bare POST takes no body
# "reading": the camera reading a drop's counts come from; "confirmed": the players' yes
COMMAND_FIELDS = frozenset({"base", "command", "reading", "confirmed"})


def confirmation_needed(exc: NeedsConfirmation):
    """The question a phone puts to the players before sending the request again."""
    return jsonify(error=exc.question, confirm=exc.question, kind="NeedsConfirmation"), 409


def game_blueprint(table: GameTable) -> Blueprint:
    api = Blueprint("game", __name__)
    api.register_error_handler(NeedsConfirmation, confirmation_needed)

    @api.errorhandler(TableError)
    def table_error(exc: TableError):
        status = 422 if isinstance(exc, KeyReused) else 400
        return jsonify(error=exc.msg, kind=type(exc).__name__), status

    @api.errorhandler(RulesError)
    def rules_error(exc: RulesError):
        return jsonify(error=exc.msg, kind=type(exc).__name__), 400

    @api.errorhandler(SeqConflict)
    def conflict(exc: SeqConflict):
        return jsonify(error=exc.msg, kind="SeqConflict", game=table.snapshot()), 409

    @api.get("/api/game")
    def current_game():
        return jsonify(table.snapshot())

    @api.get("/api/games")
    def all_games():
        return jsonify(games=table.games())

    @api.get("/api/game/<int:game_id>")
    def one_game(game_id: int):
        try:
            return jsonify(table.view(game_id))
        except TableError as exc:
            return jsonify(error=exc.msg, kind="TableError"), 404

    @api.post("/api/game/<int:game_id>/resume")
    def resume(game_id: int):
        data = request.get_data()  # none at all: resumed whatever is at the table, as before
        body = json_body(data, request.mimetype, RESUME_FIELDS) if data else {}
        try:
            return jsonify(table.resume(game_id, replaces=body.get("replaces", ANY_GAME)))
        except NoGame as exc:  # a bad "replaces" is a 400, a stale one a 409, as for a new game
            return jsonify(error=exc.msg, kind="TableError"), 404

    @api.get("/api/game/<int:game_id>/events.jsonl")
    def export(game_id: int):
        try:
            lines = table.log_text(game_id)
        except TableError as exc:
            return jsonify(error=exc.msg, kind="TableError"), 404
        response = Response(lines, mimetype="application/x-ndjson")
        response.headers["Content-Disposition"] = (
            f'attachment; filename="cubetower-game-{game_id}.jsonl"'
        )
        return response

    @api.post("/api/game")
    def new_game():
        key = idempotency_key(request.headers)
        body = json_body(request.get_data(), request.mimetype, NEW_GAME_FIELDS)
        snapshot = table.new_game(
            body.get("players", []), body.get("name", ""), body.get("settings"), key=key,
            replaces=body.get("replaces", ANY_GAME),
        )
        return jsonify(snapshot), 201

    @api.post("/api/game/<int:game_id>/command")
    def command(game_id: int):
        key = idempotency_key(request.headers)
        body = json_body(request.get_data(), request.mimetype, COMMAND_FIELDS)
        base = body.get("base")
        if not isinstance(base, int) or isinstance(base, bool) or base < 0:
            raise TableError("'base' must be the number of events your screen shows (an integer)")
        reading = body.get("reading")
        if reading is not None and (
            not isinstance(reading, int) or isinstance(reading, bool) or reading < 1
        ):
            raise TableError("'reading' must be the number of the tray reading used (or left out)")
        confirmed = body.get("confirmed", False)
        if not isinstance(confirmed, bool):
            raise TableError("'confirmed' must be true or false")
        return jsonify(table.command(
            game_id, base, body.get("command"), key=key, reading_id=reading, confirmed=confirmed
        ))

    return api
