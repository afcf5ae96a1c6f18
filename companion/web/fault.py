"""The page the phones get while the device cannot run: what is wrong and what to do about it.

Why a page at all: the device runs headless on a table. When the camera is missing or busy, or
the settings file has a mistake, a service that exits only leaves a line in a log nobody at the
table reads, and systemd restarts it again and again. Served instead of the game until the device
is up, this page (and ``/api/health``, which says 503 with the same reason) shows the fault on
every phone that opens the address. It reloads itself, so the game appears once the fault is
fixed. The caller passes a callable that says the current problem; this module knows nothing of
cameras or settings.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from flask import Flask, jsonify, render_template_string, request


@dataclass(frozen=True)
class Fault:
    """Why the device is not running: ``what`` went wrong, what the players can ``do``."""

    what: str
    do: str
    starting: bool = False  # not a fault yet: the device is still starting

    def to_dict(self) -> dict:
        state = "starting" if self.starting else "error"
        return {"ok": False, "state": state, "error": self.what, "what_to_do": self.do}


STARTING = Fault("cubetower is starting", "Wait a few seconds; this page reloads itself.", True)

PAGE = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <meta http-equiv="refresh" content="{{ reload }}">
  <title>cubetower: {{ title }}</title>
  <link rel="icon" href="data:,">
  <style>
    body { font: 17px/1.45 system-ui, sans-serif; margin: 0; background: #f6f1e7; color: #2b1d0e; }
    main { max-width: 36em; margin: 0 auto; padding: 1.2em; }
    h1 { font-size: 1.4em; }
    .what { background: #fff; border-left: 6px solid {{ colour }}; padding: .8em 1em; }
    .do { background: #fff; padding: .8em 1em; margin-top: 1em; }
    small { color: #6b5a48; }
  </style>
</head>
<body>
  <main>
    <h1>{{ title }}</h1>
    <p class="what" role="alert"><strong>What is wrong:</strong> {{ fault.what }}</p>
    <p class="do"><strong>What to do:</strong> {{ fault.do }}</p>
    <p><small>This page reloads every {{ reload }} seconds and shows the game as soon as the
    device runs.</small></p>
  </main>
</body>
</html>
"""


def create_fault_app(current: Callable[[], Fault], *, reload_seconds: int = 5) -> Flask:
    """A Flask app answering every request with ``current()``: the page, or 503 JSON for /api."""
    app = Flask(__name__)
    app.json.sort_keys = False

    @app.route("/", defaults={"path": ""}, methods=["GET", "POST", "PUT", "DELETE"])
    @app.route("/<path:path>", methods=["GET", "POST", "PUT", "DELETE"])
    def fault_page(path: str):
        fault = current()
        if path.startswith("api/"):
            return jsonify(fault.to_dict()), 503, {"Retry-After": str(reload_seconds)}
        if request.method != "GET":
            return jsonify(fault.to_dict()), 503
        title = "cubetower is starting" if fault.starting else "cubetower cannot start"
        colour = "#c9a227" if fault.starting else "#b3261e"
        html = render_template_string(
            PAGE, fault=fault, title=title, colour=colour, reload=reload_seconds
        )
        return html, 503, {"Retry-After": str(reload_seconds), "Cache-Control": "no-store"}

    return app
