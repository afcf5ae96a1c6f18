"""HTTP endpoints for the game: start one, send a command, read the snapshot.

Every refusal is a JSON body ``{"error": "..."}`` a phone can show as it is: 400 for a command the
rules refuse or a malformed request, 409 when another phone changed the game first (with the fresh
snapshot, so the phone can redraw at once), 404 when there is no game, 422 when an
``Idempotency-Key`` comes back with another request. A write sent again with the same
``Idempotency-Key`` is answered as the first time and applied once.
"""

from __future__ import annotations

from flask import Blueprint, Response, jsonify, request

from companion.amerigo import RulesError
from companion.store import SeqConflict
from companion.table import GameTable, KeyReused, TableError
from companion.web.inputs import idempotency_key, json_body

NEW_GAME_FIELDS = frozenset({"players", "name", "settings"})
COMMAND_FIELDS = frozenset({"base", "command"})


def game_blueprint(table: GameTable) -> Blueprint:
    api = Blueprint("game", __name__)

    @api.errorhandler(TableError)
    def table_error(exc: TableError):
        status = 422 if isinstance(exc, KeyReused) else 400
        return jsonify(error=str(exc), kind=type(exc).__name__), status

    @api.errorhandler(RulesError)
    def rules_error(exc: RulesError):
        return jsonify(error=str(exc), kind=type(exc).__name__), 400

    @api.errorhandler(SeqConflict)
    def conflict(exc: SeqConflict):
        return jsonify(error=str(exc), game=table.snapshot()), 409

    @api.get("/api/game")
    def current_game():
        return jsonify(table.snapshot())

    @api.get("/api/games")
    def all_games():
        return jsonify(games=table.games())

    @api.get("/api/game/<int:game_id>/events.jsonl")
    def export(game_id: int):
        try:
            lines = table.log_text(game_id)
        except TableError as exc:
            return jsonify(error=str(exc), kind="TableError"), 404
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
            body.get("players", []), body.get("name", ""), body.get("settings"), key=key
        )
        return jsonify(snapshot), 201

    @api.post("/api/game/<int:game_id>/command")
    def command(game_id: int):
        key = idempotency_key(request.headers)
        body = json_body(request.get_data(), request.mimetype, COMMAND_FIELDS)
        base = body.get("base")
        if not isinstance(base, int) or isinstance(base, bool) or base < 0:
            raise TableError("'base' must be the number of events your screen shows (an integer)")
        return jsonify(table.command(game_id, base, body.get("command"), key=key))

    return api
