"""Telling systemd that the device is up, and that its camera loop is still capturing.

The unit runs with ``Type=notify`` and ``WatchdogSec=``: systemd waits for ``READY=1`` and kills
and restarts the service when ``WATCHDOG=1`` stops coming (the watch loop stops sending it when
the camera has given no picture for a while, and cannot send it when it hangs). This is
sd_notify(3)'s whole protocol: one datagram to the AF_UNIX socket named in ``$NOTIFY_SOCKET``, so
no libsystemd binding is needed. Without that variable (a laptop, the tests) nothing is sent.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Callable, Mapping

log = logging.getLogger(__name__)


class SystemdNotifier:
    def __init__(
        self,
        address: str | None,
        watchdog_usec: int | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.address = address or None
        self.watchdog_seconds = watchdog_usec / 1_000_000 if watchdog_usec else None
        self._clock = clock
        self._last_ping: float | None = None
        self._warned = False

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] = os.environ) -> SystemdNotifier:
        """The socket and watchdog interval systemd gave this process (none: a quiet notifier)."""
        usec = environ.get("WATCHDOG_USEC", "")
        pid = environ.get("WATCHDOG_PID", "")
        if pid and pid != str(os.getpid()):  # meant for another process (we were forked off)
            usec = ""
        return cls(environ.get("NOTIFY_SOCKET"), int(usec) if usec.isdigit() else None)

    @property
    def watching(self) -> bool:
        return self.address is not None and self.watchdog_seconds is not None

    def notify(self, message: str) -> bool:
        """Send one sd_notify message; False when there is no socket or it cannot be reached."""
        if self.address is None:
            return False
        target = self.address
        if target.startswith("@"):  # an abstract socket
            target = "\0" + target[1:]
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
                sock.sendto(message.encode(), target)
        except OSError as exc:
            if not self._warned:  # say it once; the loop calls this many times a minute
                log.warning("cannot notify systemd at %s: %s", self.address, exc)
                self._warned = True
            return False
        return True

    def ready(self, status: str = "") -> bool:
        return self.notify("READY=1" + (f"\nSTATUS={status}" if status else ""))

    def stopping(self) -> bool:
        return self.notify("STOPPING=1")

    def ping(self) -> bool:
        """WATCHDOG=1, at most four times per watchdog interval (systemd needs one)."""
        if not self.watching:
            return False
        now = self._clock()
        if self._last_ping is not None and now - self._last_ping < self.watchdog_seconds / 4:
            return False
        self._last_ping = now
        return self.notify("WATCHDOG=1")
