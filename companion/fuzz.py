"""Fuzzing the phone app: seeded random requests over every endpoint, and what they did.

Why: "every bad request is a 4xx with a reason, and the game survives" is a claim about all
requests, and hand-written tests only try the ones someone thought of. This sends a mix a phone,
a buggy client or a hostile one could send: plausible commands for the game as it stands (so the
game really moves on, through undo, corrections and new games), the same with one value
replaced by something nasty (huge or negative numbers, NaN, deep nesting, long or control-laden
text, wrong types, unknown fields), raw junk bodies (nesting deeper than 800 comes as one), junk
ids and query strings, retries with an ``Idempotency-Key`` (with a fresh ``base``, as a phone
that refreshed would send), drops sent with the camera reading they come from (``reading``) and
the players' yes to a question (``confirmed``), each player's sheet goods, looking at and
resuming kept games, a new table code now and then (the fuzzing phone keeps the new one, as the
page does), writes from strangers (no code, a wrong or an old one, another site's page), and
the live stream's first message. It counts the answers by status, keeps the 5xx ones, checks
that every refusal is JSON with an ``error`` in words, that a retried write is answered as the
first time, that no stranger's write is taken, and that ``GET /api/game`` keeps answering;
finally it "restarts" the app on the same data and checks that the game loads again to the
same state.

Used by ``scripts/fuzz-api.py`` (the real device, 10,000 requests) and the tests (fewer).
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from companion.amerigo.offer import COLOURS

# Flask's test client and what it can be closed with, made anew for a "restart".
AppFactory = Callable[[], tuple[Any, Callable[[], None]]]

NASTY: tuple[Any, ...] = (
    -1, 0, 2**31, 2**53, 2**63, 2**64, 10**30, -(10**30), 1.5, 1e308, True, None, "", " ",
    "x" * 600, "\u0000", "\x1b[31m", "\u202eevil", "Ada", "ADA", "²", "\ud800", [], {}, [[]],
    {"type": []}, ["gold"], {"$ref": 1},
)
JUNK_BODIES: tuple[bytes, ...] = (
    b"[" * 100_000, b"[" * 5_000 + b"]" * 5_000, b"{" * 1_000, b"", b"null", b"[]", b"3",
    b'"text"', b"{", b'{"base": NaN}', b'{"base": Infinity}', b'{"base": 1e999}',
    b'{"base": 1, "base": 2}', b"\xff\xfe\x00", b'{"base": ' + b"9" * 5_000 + b"}",
    b'{"command": {"type": "undo"}}', b"\x00" * 100, "{\"ünïcode\": \"\u2603\"}".encode(),
)
CONTENT_TYPES = ("application/json", "text/plain", "application/x-www-form-urlencoded", None,
                 "application/json; charset=latin-1")
NAMES = ("Ada", "Ben", "Cleo", "Dan", "Eva", "Finn", "ada", "Zoë", "李", "  ", "a" * 30, "x\ty",
         "\u200bBen", "Ben ")
BAD_IDS = ("0", "-1", "abc", "²", str(2**63), str(2**64), "9" * 30, "1.5", "%00", "1e3")
GOODS = ("cotton", "tobacco", "sugar", "coconut", "coffee")
# Where strangers write from: not the fuzzing phone's address, so their wrong codes do not make
# the device refuse the phone that plays (an address that sends 10 wrong codes must wait).
STRANGERS = tuple(f"192.0.2.{i}" for i in range(1, 255))
PATHS_GET = ("/api/tray", "/api/status", "/api/snapshot", "/api/health", "/api/game",
             "/api/games", "/api/calibration", "/api/camera/picture.jpg", "/", "/api/nothing",
             "/static/app.js", "/static/../../etc/passwd")
PATHS_POST = ("/api/tray/read", "/api/calibrate/empty", "/api/calibrate/corners", "/api/game",
              "/api/health", "/api/nothing")
LIMITS = ("30", "0", "501", "-1", "²", "abc", "", "1" * 40, "1.5", " 3", "٣")


@dataclass
class FuzzReport:
    requests: int = 0
    statuses: Counter = field(default_factory=Counter)
    server_errors: list[str] = field(default_factory=list)  # "METHOD PATH -> status: body"
    unclear: list[str] = field(default_factory=list)  # 4xx on /api without an "error" text
    retries: int = 0
    retries_answered_differently: list[str] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)  # GET /api/game not answering 200
    strangers: int = 0  # writes sent without the table's current code
    strangers_let_in: list[str] = field(default_factory=list)  # ... answered 2xx
    drops_from_readings: int = 0  # drops accepted with the camera reading they came from
    questions_answered: int = 0  # 409 questions answered yes and then accepted
    new_codes: int = 0
    resumed: int = 0  # earlier games put back on the table
    readable_after_restart: bool | None = None
    same_after_restart: bool | None = None
    final_seq: int | None = None
    games: int = 0  # games the run started
    longest: int = 0  # events in the longest game it played
    rounds: Counter = field(default_factory=Counter)  # commands accepted, by round
    commands_taken: Counter = field(default_factory=Counter)  # commands accepted, by type
    sent_paths: Counter = field(default_factory=Counter)  # requests by path ("/api/game/<id>")

    @property
    def five_xx(self) -> int:
        return sum(n for status, n in self.statuses.items() if status >= 500)

    @property
    def ok(self) -> bool:
        restarted = False not in (self.readable_after_restart, self.same_after_restart)
        return (not self.five_xx and not self.unclear and not self.unreadable
                and not self.retries_answered_differently and not self.strangers_let_in
                and restarted)

    def summary(self) -> str:
        statuses = ", ".join(f"{s}: {n}" for s, n in sorted(self.statuses.items()))
        return "\n".join([
            f"requests: {self.requests}",
            f"answers by status: {statuses}",
            f"5xx answers: {self.five_xx}",
            f"refusals without a reason in words: {len(self.unclear)}",
            f"retries with an Idempotency-Key: {self.retries}, "
            f"answered unlike the first time: {len(self.retries_answered_differently)}",
            f"GET /api/game failures during the run: {len(self.unreadable)}",
            f"writes without the current table code: {self.strangers}, "
            f"taken: {len(self.strangers_let_in)}; new codes: {self.new_codes}",
            f"drops accepted from a camera reading: {self.drops_from_readings}; questions "
            f"answered yes and taken: {self.questions_answered}; games resumed: {self.resumed}",
            f"games started: {self.games}, longest: {self.longest} events, commands accepted "
            "by round: " + ", ".join(f"{k}: {n}" for k, n in sorted(self.rounds.items())),
            "commands accepted by type: " + ", ".join(
                f"{k}: {n}" for k, n in sorted(self.commands_taken.items())),
            f"game readable after a restart: {_yes(self.readable_after_restart)}, "
            f"same state as before it: {_yes(self.same_after_restart)} "
            f"(the game had {self.final_seq} events)",
            *(f"  5xx: {line}" for line in self.server_errors[:20]),
            *(f"  unclear: {line}" for line in self.unclear[:10]),
            *(f"  retry: {line}" for line in self.retries_answered_differently[:10]),
            *(f"  unreadable: {line}" for line in self.unreadable[:10]),
            *(f"  stranger: {line}" for line in self.strangers_let_in[:10]),
        ])


def _yes(flag: bool | None) -> str:
    return "not checked" if flag is None else ("yes" if flag else "NO")


class Fuzzer:
    """Makes and sends one random request at a time (``step``), keeping what it learns."""

    def __init__(self, client: Any, rng: random.Random, report: FuzzReport):
        self.client = client
        self.rng = rng
        self.report = report
        self.game: dict = {"id": None}
        self.sent_with_key: list[tuple[str, str, dict, dict]] = []  # key, path, body, answer
        self.old_codes: list[str] = []  # table codes this phone had before a new one

    # -- the mix ------------------------------------------------------------------------
    def step(self) -> None:
        r = self.rng
        kind = r.choices(
            ("command", "mutant", "new_game", "junk", "get", "post", "retry", "stream",
             "games", "resume", "new_code", "stranger"),
            weights=(45, 15, 1, 8, 14, 6, 10, 3, 3, 0.5, 0.3, 2),
        )[0]
        getattr(self, f"_{kind}")()

    def _command(self, mutate: bool = False) -> None:
        if self.game.get("id") is None:
            self._new_game()
            return
        body = {"base": self._base(), "command": self._plausible_command()}
        from_reading = False
        if body["command"].get("type") in ("tray_read", "setup_drop_read"):
            from_reading = self._from_reading(body)
        if mutate:
            body = self._mutated(body)
        path = f"/api/game/{self._game_id()}/command"
        key = self._key() if self.rng.random() < 0.7 else None
        answer = self._post_json(path, body, key)
        if answer is None:
            return
        status, data = answer
        if from_reading and status == 200 and not mutate:
            self.report.drops_from_readings += 1
        if (status == 409 and isinstance(data, dict) and data.get("confirm")
                and isinstance(body, dict) and self.rng.random() < 0.7):
            # the players say yes: the same request again with "confirmed" (a new tap, new key)
            again = self._post_json(path, {**body, "confirmed": True},
                                    self._key() if key else None)
            if again is not None and again[0] == 200:
                self.report.questions_answered += 1

    def _from_reading(self, body: dict) -> bool:
        """Make a drop the page's "Use this reading": the latest camera reading's counts and
        id (now and then another id, or counts that are not the reading's)."""
        r = self.rng
        if r.random() < 0.5:
            return False
        _, tray = self._send("GET", "/api/tray")
        if not isinstance(tray, dict) or not isinstance(tray.get("id"), int):
            return False
        body["reading"] = tray["id"] if r.random() < 0.85 else r.choice(
            (tray["id"] + 1, 1, 2**40, 0, -3, "1", None))
        if r.random() < 0.9:
            body["command"]["tray"] = dict(tray.get("counts") or {})
        if r.random() < 0.15:
            body["confirmed"] = r.choice((True, False, 1, "yes", None))
        return True

    def _mutant(self) -> None:
        self._command(mutate=True)

    def _new_game(self) -> None:
        r = self.rng
        players = r.sample(NAMES[:6], r.randint(2, 5)) if r.random() < 0.8 else [
            r.choice(NAMES) for _ in range(r.randint(0, 7))]
        body: dict = {"players": players, "name": r.choice(("", "Friday", "x" * 70, "\x07"))}
        if r.random() < 0.2:
            body["settings"] = {"goods": ["cotton", "sugar"]} if r.random() < 0.5 else {
                r.choice(("time_markers", "colour", "goods")): r.choice(NASTY)}
        if r.random() < 0.3:
            body = self._mutated(body)
        self._post_json("/api/game", body, self._key() if r.random() < 0.7 else None)

    def _junk(self) -> None:
        r = self.rng
        path = r.choice((f"/api/game/{self._game_id()}/command", "/api/game",
                         "/api/calibrate/corners"))
        headers = {}
        content_type = r.choice(CONTENT_TYPES)
        if content_type:
            headers["Content-Type"] = content_type
        if r.random() < 0.3:
            headers["Idempotency-Key"] = r.choice(("short", "x" * 200, "ключ" * 5, self._key()))
        self._send("POST", path, data=r.choice(JUNK_BODIES), headers=headers)

    def _get(self) -> None:
        r = self.rng
        choice = r.randrange(5)
        if choice == 0:
            path = f"/api/tray/history?limit={r.choice(LIMITS)}"
        elif choice == 1:
            path = f"/api/tray/picture/{r.choice((*BAD_IDS, '1', '2'))}.jpg"
        elif choice == 2:
            path = f"/api/game/{r.choice((*BAD_IDS, str(self._game_id())))}/events.jsonl"
        else:
            path = r.choice(PATHS_GET)
        self._send(r.choice(("GET", "GET", "GET", "HEAD", "DELETE", "PUT")), path)

    def _post(self) -> None:
        r = self.rng
        path = r.choice([p for p in PATHS_POST if p != "/api/game"])
        body: Any = {"corners": r.choice((
            None, [[0, 0], [100, 0], [100, 100], [0, 100]], [[1, 2]], "corners",
            [[r.choice(NASTY), 1]] * 4, [[10, 10], [10, 10], [10, 10], [10, 10]],
        ))}
        self._post_json(path, body, None)

    def _games(self) -> None:
        """Look at a kept game (the History view), or the list of them."""
        r = self.rng
        if r.random() < 0.3:
            self._send("GET", "/api/games")
            return
        known = [str(i) for i in range(1, max(1, self.report.games) + 1)]
        self._send(r.choice(("GET", "GET", "GET", "HEAD", "PUT")),
                   f"/api/game/{r.choice((*known, *BAD_IDS))}")

    def _resume(self) -> None:
        """Put a kept game back on the table (sometimes one that is not there)."""
        r = self.rng
        known = [str(i) for i in range(1, max(1, self.report.games) + 1)]
        game_id = r.choice(known) if r.random() < 0.8 else r.choice(BAD_IDS)
        kwargs: dict = {}
        if r.random() < 0.2:  # a body it does not take
            kwargs = {"data": r.choice(JUNK_BODIES),
                      "headers": {"Content-Type": "application/json"}}
        status, _ = self._send("POST", f"/api/game/{game_id}/resume", **kwargs)
        if status == 200:
            self.report.resumed += 1

    def _new_code(self) -> None:
        """A new table code for this phone: it keeps the new one, every other phone watches."""
        old = self.client.environ_base.get("HTTP_X_TABLE_CODE")
        status, answer = self._send("POST", "/api/access/new-code")
        if status == 200 and isinstance(answer, dict) and isinstance(answer.get("code"), str):
            self.client.environ_base["HTTP_X_TABLE_CODE"] = answer["code"]
            if old:
                self.old_codes.append(old)
            self.report.new_codes += 1

    def _stranger(self) -> None:
        """A write from a phone without the current code (none, a wrong one, one that was the
        table's before a new one), or from another web site's page: never taken."""
        r = self.rng
        headers: dict = {"Content-Type": "application/json"}
        # "": no code (the header replaces the fuzzing phone's own, which must not ride along)
        code = r.choice(("", "WRONG2", "k7rm2q", *self.old_codes[-3:]))
        headers["X-Table-Code"] = code
        if r.random() < 0.2:  # another site's page, with the right code even
            headers = {**headers, "X-Table-Code": self.client.environ_base.get(
                "HTTP_X_TABLE_CODE", ""), "Origin": "http://evil.example",
                "Sec-Fetch-Site": r.choice(("cross-site", "same-site"))}
        path, body = r.choice((
            (f"/api/game/{self._game_id()}/command",
             {"base": self.game.get("seq", 0), "command": {"type": "undo"}}),
            ("/api/game", {"players": ["Eve", "Mallory"]}),
            (f"/api/game/{self._game_id()}/resume", None),
            ("/api/access/new-code", None),
            ("/api/calibrate/empty", None),
            ("/api/tray/read", None),
        ))
        data = json.dumps(body).encode() if body is not None else b""
        self.report.strangers += 1
        status, _ = self._send("POST", path, data=data, headers=headers,
                               environ_overrides={"REMOTE_ADDR": r.choice(STRANGERS)},
                               track=False)
        if status < 400:
            self.report.strangers_let_in.append(f"POST {path} with code {code!r} -> {status}")

    def _retry(self) -> None:
        """Send an earlier write again with its key, with the fresh base a refreshed phone has."""
        if not self.sent_with_key:
            self._command()
            return
        key, path, body, first = self.rng.choice(self.sent_with_key[-20:])
        if "base" in body and self.rng.random() < 0.7:
            body = {**body, "base": self._base()}
        self.report.retries += 1
        response = self._post_json(path, body, key, remember=False, track=False)
        if response is not None and response[1] != first:
            self.report.retries_answered_differently.append(
                f"{path} key {key}: first seq {first.get('seq')}, retry {response[1].get('seq')}"
                if isinstance(response[1], dict) else f"{path} key {key}")

    def _stream(self) -> None:
        """The stream's first messages: a snapshot that cannot be built would be a 500 here."""
        response = self.client.get("/api/stream", buffered=False)
        self._count("GET", "/api/stream", response.status_code, b"")
        try:
            chunks = iter(response.response)
            next(chunks)
            snapshot = next(chunks)
            if response.status_code == 200 and not snapshot.startswith(b"event: snapshot"):
                self.report.unclear.append(f"GET /api/stream first message: {snapshot[:80]!r}")
        finally:
            response.close()

    # -- plausible commands ---------------------------------------------------------------
    def _plausible_command(self) -> dict:
        r = self.rng
        state = self.game.get("state") or {}
        expected = state.get("expects_events") or []
        players = state.get("player_order") or []
        if r.random() < 0.75 and expected:
            kind = r.choice(expected)
        else:
            kind = r.choice(("undo", "redo", "tray_corrected", "bump_read", "chest_cashed",
                             "token_used", "action", "round_ended", "sheet_goods"))
        if kind in ("tray_read", "setup_drop_read", "bump_read"):
            return {"type": kind, "tray": self._tray(state.get("vision_bounds"), kind)}
        if kind == "pirate_revealed":
            return {"type": kind, "value": r.randint(0, 8)}
        if kind == "action":
            player = state.get("turn") if r.random() < 0.8 else r.choice(players or ["Ada"])
            offered = (state.get("options") or {}).get(player, {}).get("actions") or []
            if r.random() < 0.6 or not offered:  # gold is always allowed: the game moves on
                return {"type": "action", "player": player, "choice": r.choice(("gold", "vp"))}
            action = r.choice(offered)
            command = {"type": "action", "player": player, "choice": action["colour"]}
            if action.get("via") != "tray":
                command["via"] = action.get("via")
            return command
        if kind == "undo":
            return {"type": "undo"}
        if kind == "redo":
            return {"type": "undo", "redo": True}
        if kind == "tray_corrected":
            target = r.randint(1, max(1, self.game.get("seq", 1)))
            return {"type": kind, "target": target, "tray": self._tray(None, kind)}
        if kind in ("chest_cashed", "token_used"):
            command = {"type": kind, "player": r.choice(players or ["Ada"])}
            if kind == "token_used":
                command["token"] = r.choice(("gold3", "ap2:blue", "nonsense", 3))
            return command
        if kind == "sheet_goods":
            goods = list((state.get("settings") or {}).get("goods") or GOODS)
            chosen = r.sample(goods, r.randint(0, len(goods)))
            if r.random() < 0.1:
                chosen.append(r.choice(("gold", "cotton", "Sugar", 3, "")))
            return {"type": kind, "player": r.choice(players or ["Ada"]), "goods": chosen}
        if kind == "final_scoring":
            return {"type": kind, "players": {
                p: {"progress_vp": r.randint(0, 20), "special_vp": r.randint(0, 20)}
                for p in players}}
        return {"type": kind}

    def _tray(self, bounds: dict | None, kind: str) -> dict:
        """Cubes of each colour, mostly as many as the tower can still hold (so the rules take
        them), now and then more."""
        most = 2 if kind == "bump_read" else 7
        bounds = bounds if bounds and self.rng.random() < 0.9 else {}
        return {c: self.rng.randint(0, min(most, bounds.get(c, most))) for c in COLOURS}

    # -- nasty values -----------------------------------------------------------------------
    def _mutated(self, body: Any) -> Any:
        """``body`` with one value replaced, one field added or removed, somewhere inside."""
        body = json.loads(json.dumps(body))
        holders = [body]
        stack = [body]
        while stack:
            for value in _children(stack.pop()):
                if isinstance(value, dict | list):
                    holders.append(value)
                    stack.append(value)
        holder = self.rng.choice(holders)
        r = self.rng
        nasty = r.choice((*NASTY, _deep(r.randint(5, 800)), "x" * r.randint(400, 70_000)))
        if isinstance(holder, dict):
            move = r.randrange(3)
            if move == 0 or not holder:
                holder[r.choice(("extra", "note", "at", "type", "v", "__proto__"))] = nasty
            elif move == 1:
                holder[r.choice(list(holder))] = nasty
            else:
                holder.pop(r.choice(list(holder)))
        elif holder:
            holder[r.randrange(len(holder))] = nasty
        else:
            holder.append(nasty)
        return body

    # -- sending ----------------------------------------------------------------------------
    def _post_json(self, path: str, body: Any, key: str | None, remember: bool = True,
                   track: bool = True) -> tuple[int, Any] | None:
        headers = {"Content-Type": "application/json"}
        if key:
            headers["Idempotency-Key"] = key
        try:
            data = json.dumps(body).encode("utf-8", "surrogatepass")
        except (ValueError, RecursionError):
            return None
        status, answer = self._send("POST", path, data=data, headers=headers, track=track)
        if remember and status in (200, 201) and isinstance(answer, dict):
            if key and isinstance(body, dict):
                self.sent_with_key.append((key, path, body, answer))
            self.report.games += status == 201
            self.report.longest = max(self.report.longest, answer.get("seq", 0))
            self.report.rounds[(answer.get("state") or {}).get("round") or 0] += 1
            command = body.get("command") if isinstance(body, dict) else None
            if isinstance(command, dict) and isinstance(command.get("type"), str):
                self.report.commands_taken[command["type"]] += 1
        return status, answer

    def _send(self, method: str, path: str, track: bool = True, **kwargs) -> tuple[int, Any]:
        """Send one request; with ``track``, a game in the answer becomes the one this phone
        shows (as the page redraws with it), unless it is a kept game only looked at."""
        response = self.client.open(path, method=method, **kwargs)
        data = response.get_data()
        self._count(method, path, response.status_code, data)
        answer = _json(data)
        if track and isinstance(answer, dict) and answer.get("at_table") is not False:
            if "state" in answer and "seq" in answer:
                self.game = answer
            elif isinstance(answer.get("game"), dict) and "seq" in answer["game"]:
                self.game = answer["game"]  # a 409 brings the fresh game
        return response.status_code, answer

    def _count(self, method: str, path: str, status: int, data: bytes) -> None:
        report = self.report
        report.requests += 1
        report.statuses[status] += 1
        where = re.sub(r"^/api/game/[^/?]+", "/api/game/<id>", path.split("?")[0])
        where = re.sub(r"^/api/tray/picture/.*", "/api/tray/picture/<id>.jpg", where)
        report.sent_paths[where] += 1
        line = f"{method} {path[:80]} -> {status}: {data[:200]!r}"
        if status >= 500:
            report.server_errors.append(line)
        elif status >= 400 and path.startswith("/api/") and method != "HEAD":
            answer = _json(data)
            if not (isinstance(answer, dict) and isinstance(answer.get("error"), str)
                    and answer["error"]):
                report.unclear.append(line)

    def check_readable(self) -> dict | None:
        response = self.client.get("/api/game")
        if response.status_code != 200:
            self.report.unreadable.append(f"GET /api/game -> {response.status_code}")
            return None
        self.game = response.get_json()
        return self.game

    def _base(self) -> int:
        seq = self.game.get("seq", 0)
        return seq if self.rng.random() < 0.9 else self.rng.choice((0, seq - 1, seq + 1))

    def _game_id(self) -> int:
        return self.game.get("id") or 1

    def _key(self) -> str:
        return f"{self.rng.getrandbits(128):032x}"


def _children(value: Any) -> list:
    if isinstance(value, dict):
        return list(value.values())
    return list(value) if isinstance(value, list) else []


def _deep(depth: int) -> Any:
    value: Any = "bottom"
    for _ in range(depth):
        value = [value]
    return value


def _json(data: bytes) -> Any:
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        return None


def fuzz(make_app: AppFactory, n: int, seed: int = 0, check_every: int = 25) -> FuzzReport:
    """Send ``n`` random requests (or one more) to a fresh app, then restart it and check the
    game."""
    report = FuzzReport()
    client, close = make_app()
    fuzzer = Fuzzer(client, random.Random(seed), report)
    try:
        steps = 0
        while report.requests < n:  # a step may send two (the reading it uses, a yes)
            fuzzer.step()
            steps += 1
            if steps % check_every == 0:
                fuzzer.check_readable()
        before = fuzzer.check_readable()
    finally:
        close()
    client, close = make_app()
    try:
        after = client.get("/api/game")
        report.readable_after_restart = after.status_code == 200
        if before is not None and report.readable_after_restart:
            report.same_after_restart = after.get_json() == before
            report.final_seq = before.get("seq")
    finally:
        close()
    return report
