"""A child process's output, read on a thread so that a test waits for a line with a deadline.

A bare ``for line in process.stdout`` blocks for ever when the line never comes (the child hangs,
or prints something else): one such wait stopped a whole CI run until its time ran out. Here a
missing line fails the test within its deadline, with the last lines the child printed and its
log, which say why.
"""

from __future__ import annotations

import queue
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

_ENDED = object()


class ChildOutput:
    """The lines of ``process.stdout`` (opened with ``text=True``) as they come."""

    def __init__(self, process: subprocess.Popen, log: Path | None = None):
        self.process = process
        self.log = log  # where the child's stderr goes, shown when a wait fails
        self.seen: list[str] = []
        self._lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._pump, name="child-output", daemon=True).start()

    def _pump(self) -> None:
        try:
            for line in self.process.stdout:
                self._lines.put(line)
        except (OSError, ValueError):  # the test closed the pipe
            pass
        self._lines.put(_ENDED)

    def wait_for(self, wanted: Callable[[str], bool], seconds: float = 60, what: str = "") -> str:
        """The first line from now on for which ``wanted`` is true; fails the test after
        ``seconds`` or when the child ends first."""
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                self._fail(f"no {what or 'such line'} within {seconds:g} s")
            try:
                line = self._lines.get(timeout=left)
            except queue.Empty:
                continue
            if line is _ENDED:
                self._fail(f"the process ended (exit code {self.process.poll()}) "
                           f"before printing {what or 'the line'}")
            self.seen.append(line)
            if wanted(line):
                return line

    def _fail(self, why: str) -> None:
        printed = "".join(self.seen[-40:]) or "(nothing)\n"
        message = f"{why}\n--- it printed (last 40 lines):\n{printed}"
        if self.log is not None and self.log.is_file():
            tail = self.log.read_text(errors="replace").splitlines()[-40:]
            message += "--- its log (last 40 lines):\n" + "\n".join(tail)
        pytest.fail(message)
