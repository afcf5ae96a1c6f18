"""Who may do what: anyone on the network may watch; only the table writes.

Every request passes here before its endpoint runs, so an endpoint added later is guarded
without anyone remembering to guard it:

- the ``Host`` must be a name this device answers to, so a web page that re-points its own
  domain at the device (DNS rebinding) gets nothing, not even the game to read;
- a write (any method but GET, HEAD, OPTIONS) must come from the device's own page, not from
  another site a player has open (``Origin``, ``Sec-Fetch-Site``), and must carry the table
  code in the ``X-Table-Code`` header;
- guessing is slow: an address that sent too many wrong codes is told to wait;
- every answer carries the usual browser security headers.
"""

from __future__ import annotations

import ipaddress
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from flask import Flask, Response, jsonify, request

from companion.hub import Hub
from companion.table_code import TableCode
from companion.text import Msg

CODE_HEADER = "X-Table-Code"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
SECURITY_HEADERS = {
    # the page's own scripts, styles and pictures only: no inline script, no other site
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
        "frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",  # the QR link carries the code: never pass it on
    "Cross-Origin-Resource-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
}


def host_name(host: str) -> str:
    """``Host`` without its port, brackets or trailing dot, in lower case."""
    host = host.strip().lower()
    if host.startswith("["):  # [::1]:8000
        return host[1:].split("]", 1)[0]
    if host.count(":") == 1:
        host = host.split(":", 1)[0]
    return host.rstrip(".")


@dataclass(frozen=True)
class HostNames:
    """The names the device answers to.

    Any IP address is allowed: a browser sends an address as ``Host`` only when it was pointed
    at that address, so it cannot be another site's name re-pointed at the device. Names are
    ``localhost``, anything under ``.local`` (mDNS, how phones find a Pi), and the device's own
    and configured names (``"*.club.lan"`` allows every name under ``club.lan``).
    """

    names: frozenset[str] = frozenset()

    @classmethod
    def of(cls, names: Iterable[str]) -> HostNames:
        return cls(frozenset(host_name(n) for n in names if n.strip()))

    def allows(self, host: str) -> bool:
        name = host_name(host)
        if not name:
            return False
        try:
            ipaddress.ip_address(name)
            return True
        except ValueError:
            pass
        if name == "localhost" or name.endswith(".local") or name in self.names:
            return True
        return any(n.startswith("*.") and name.endswith(n[1:]) for n in self.names)


class Throttle:
    """At most ``limit`` wrong codes per ``window`` seconds from one address, then it waits.

    Why: 31 ** 6 codes are many, but a script on the club's Wi-Fi could try hundreds a second;
    at 10 a minute guessing takes centuries. While an address waits even the right code is
    refused, or the refusals would still tell a guesser which code is right."""

    def __init__(
        self, limit: int = 10, window: float = 60.0, clock: Callable[[], float] = time.monotonic
    ):
        self.limit = limit
        self.window = window
        self._clock = clock
        self._wrong: dict[str, list[float]] = {}
        self._lock = threading.Lock()

    def _recent(self, address: str, now: float) -> list[float]:
        times = [t for t in self._wrong.get(address, ()) if now - t < self.window]
        if times:
            self._wrong[address] = times
        else:
            self._wrong.pop(address, None)
        return times

    def wait(self, address: str) -> float:
        """Seconds this address must wait before its next code is looked at (0: none)."""
        with self._lock:
            now = self._clock()
            times = self._recent(address, now)
            return self.window - (now - times[-self.limit]) if len(times) >= self.limit else 0.0

    def wrong(self, address: str) -> None:
        with self._lock:
            now = self._clock()
            if len(self._wrong) > 1000:  # forget quiet addresses so a flood cannot fill memory
                for other in list(self._wrong):
                    self._recent(other, now)
            times = self._recent(address, now)
            times.append(now)
            self._wrong[address] = times


@dataclass(frozen=True)
class AccessPolicy:
    """What the app checks a request against: the table's code and the names it answers to."""

    code: TableCode
    hosts: HostNames = field(default_factory=HostNames)
    throttle: Throttle = field(default_factory=Throttle)

    def judge(self, offered: str | None, address: str) -> str | None:
        """None when ``offered`` is the table's code; otherwise ``"wait"`` or ``"wrong"``."""
        if self.throttle.wait(address) > 0:
            return "wait"
        if self.code.matches(offered):
            return None
        if offered:
            self.throttle.wrong(address)
        return "wrong"


def cross_site(host: str) -> Msg | None:
    """Why this write looks sent by another web site, or None when it is the device's own page.

    A browser marks where a request comes from (``Sec-Fetch-Site``, ``Origin``); a client that
    sends neither (curl, a script) is no other site's page and is judged by its code alone."""
    site = request.headers.get("Sec-Fetch-Site")
    if site and site not in ("same-origin", "none"):
        return Msg("this request came from another web site ({site}), not from the table's page",
                   site=site)
    origin = request.headers.get("Origin")
    if origin is None:
        return None
    if origin == "null" or urlsplit(origin).netloc.lower() != host.lower():
        return Msg("this request came from another web site ({site}), not from the table's page",
                   site=origin)
    return None


def refuse(reason: Msg, *, join: bool = False) -> tuple[Response, int]:
    body = {"error": reason, "kind": "AccessError"}
    if join:
        body["join"] = True  # the page shows its "join the table" field again
    return jsonify(body), 403


def too_many(seconds: float) -> tuple[Response, int]:
    wait = max(1, round(seconds))
    response = jsonify(
        error=Msg("too many wrong table codes from this phone: wait {wait} s and try again",
                  wait=wait),
        kind="AccessError",
    )
    response.headers["Retry-After"] = str(wait)
    return response, 429


def install_access(app: Flask, policy: AccessPolicy, hub: Hub | None = None) -> None:
    """Guard every request of ``app``, and add the two endpoints a phone joins with."""

    @app.before_request
    def guard():
        host = request.headers.get("Host", "")
        if not policy.hosts.allows(host):
            return refuse(Msg(
                "this device does not answer to the name '{name}'; open it by its address or its "
                ".local name", name=host_name(host) or "(none)",
            ))
        if request.method in SAFE_METHODS:
            return None
        why = cross_site(host)
        if why:
            return refuse(Msg("refused: {why}", why=why))
        offered = request.headers.get(CODE_HEADER)
        if not offered:
            return refuse(Msg(
                "this phone is only watching: enter the table code (shown on a phone that "
                "plays, and in the device's terminal) or scan the table's QR code to play"),
                join=True,
            )
        verdict = policy.judge(offered, request.remote_addr or "")
        if verdict == "wait":
            return too_many(policy.throttle.wait(request.remote_addr or ""))
        if verdict == "wrong":
            return refuse(Msg(
                "that table code is not (or no longer) this table's: ask a player for the "
                "current one"), join=True,
            )
        return None

    @app.after_request
    def security_headers(response: Response) -> Response:
        for name, value in SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)
        return response

    @app.get("/api/access")
    def access():
        """Whether the code this phone keeps still lets it play (watchers may ask too)."""
        offered = request.headers.get(CODE_HEADER)
        if not offered:
            return jsonify(writer=False)
        verdict = policy.judge(offered, request.remote_addr or "")
        if verdict == "wait":
            return too_many(policy.throttle.wait(request.remote_addr or ""))
        return jsonify(writer=verdict is None)

    @app.post("/api/access/new-code")
    def new_code():
        """A fresh code for the phone that asked (it had the old one); every other phone watches."""
        code = policy.code.renew()
        if hub is not None:
            hub.publish("access", {"renewed": True})
        return jsonify(code=code)
