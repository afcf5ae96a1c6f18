"""HTTP endpoints for the game: start one, send a command, read the snapshot.

Every refusal is a JSON body ``{"error": "..."}`` a phone can show as it is: 400 for a command the
rules refuse or a malformed request, 409 when another phone changed the game first (with the fresh
snapshot, so the phone can redraw at once), 404 when there is no game.
"""

from __future__ import annotations

import json

from flask import Blueprint, Response, jsonify, request

from companion.amerigo import RulesError
from companion.store import SeqConflict
from companion.table import GameTable, TableError


def json_body() -> dict:
    body = request.get_json(silent=True)
    if not isinstance(body, dict):
        raise TableError("send a JSON object (Content-Type: application/json)")
    return body


def game_blueprint(table: GameTable) -> Blueprint:
    api = Blueprint("game", __name__)

    @api.errorhandler(TableError)
    def table_error(exc: TableError):
        return jsonify(error=str(exc), kind="TableError"), 400

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
            events = table.events(game_id)
        except TableError as exc:
            return jsonify(error=str(exc), kind="TableError"), 404
        lines = "".join(json.dumps(event) + "\n" for event in events)
        response = Response(lines, mimetype="application/x-ndjson")
        response.headers["Content-Disposition"] = (
            f'attachment; filename="cubetower-game-{game_id}.jsonl"'
        )
        return response

    @api.post("/api/game")
    def new_game():
        body = json_body()
        snapshot = table.new_game(
            body.get("players", []), str(body.get("name", "")), body.get("settings")
        )
        return jsonify(snapshot), 201

    @api.post("/api/game/<int:game_id>/command")
    def command(game_id: int):
        body = json_body()
        base = body.get("base")
        if not isinstance(base, int) or isinstance(base, bool) or base < 0:
            raise TableError("'base' must be the number of events your screen shows (an integer)")
        return jsonify(table.command(game_id, base, body.get("command")))

    return api
