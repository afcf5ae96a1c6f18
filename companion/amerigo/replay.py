"""``cubetower replay GAME.jsonl``: fold an event file and print the state and score sheet as JSON.

Users and tests write such files by hand, so an error names the line it comes from; and whatever
the file holds (a picture, a log saved as UTF-16, a line of 100,000 ``[``), it ends in exit code 2
and one line in words, never a traceback. The file is read a line at a time, so a long log takes
no more memory than its longest line and the folded game.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

from .errors import RulesError
from .game import Game

USAGE = "usage: cubetower replay GAME.jsonl"

# The deepest event nests 3 (final scoring's per-player inputs; the phone's requests may nest 8).
# Deeper is refused in words, before the rules engine sees it and rather than the JSON decoder's
# RecursionError at about 1,000.
MAX_DEPTH = 32

# An event is well under 1 KiB (a phone's request is at most 64 KiB); a line this long is no
# event, and reading on would take all of a Pi's memory
MAX_LINE_BYTES = 16 * 2**20

_BOM = b"\xef\xbb\xbf"  # UTF-8's byte order mark, which Windows Notepad writes first
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


class BadLog(ValueError):
    """A file that is not text of JSON lines to begin with (not UTF-8, nested too deep...).

    Only this command says it, in English (like its usage line), so unlike a ``RulesError`` it
    carries no message id for the phones' catalogues.
    """


def replay_lines(lines: Iterable[str]) -> Game:
    """Apply non-empty lines one by one; a ``RulesError`` or ``BadLog`` from a line says
    "line N: ..."; ``BadLog`` also comes through from ``lines`` itself (see ``_text_lines``)."""
    game = Game()
    for n, line in enumerate(lines, start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        raw = _json(line, n)
        try:
            game.apply(raw)
        except RulesError as exc:
            raise exc.within("line {n}: {error}", n=n) from None
    return game


def _json(line: str, n: int) -> object:
    """Line ``n`` decoded; every way it can fail is a ``RulesError`` or a ``BadLog``."""
    try:
        raw = json.loads(line)
    except json.JSONDecodeError as exc:
        raise RulesError("line {n}: not valid JSON ({reason} at column {column})", n=n,
                         reason=exc.msg, column=exc.colno) from None
    except RecursionError:  # the decoder's own guard, far deeper than MAX_DEPTH
        raise BadLog(f"line {n}: lists or objects nested more than {MAX_DEPTH} deep") from None
    except ValueError:  # a whole number longer than Python converts (4,300 digits)
        raise BadLog(f"line {n}: not valid JSON (a number with too many digits)") from None
    if _deeper_than(raw, MAX_DEPTH):
        raise BadLog(f"line {n}: lists or objects nested more than {MAX_DEPTH} deep")
    return raw


def _deeper_than(value: object, limit: int) -> bool:
    """Whether lists and objects nest more than ``limit`` deep (a stack, not recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            inner: Iterable = item.values()
        elif isinstance(item, list):
            inner = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((x, depth + 1) for x in inner)
    return False


def _text_lines(f: BinaryIO) -> Iterator[str]:
    """The file's lines as text, one at a time: UTF-8, less a byte order mark at the very start.

    Lines end at ``\\n``, ``\\r\\n`` or a lone ``\\r`` (as a text editor counts them), not at the
    other breaks ``str.splitlines`` knows: a raw U+2028 in a note is valid JSON. A byte that is
    not UTF-8 raises ``BadLog`` naming it and its line.
    """
    n = 0
    while chunk := f.readline(MAX_LINE_BYTES + 1):
        if len(chunk) > MAX_LINE_BYTES:  # /dev/zero, a picture without newlines: not a log
            raise BadLog(f"line {n + 1} is longer than {MAX_LINE_BYTES // 2**20} MiB: not a "
                         "game's event log")
        if n == 0 and chunk.startswith(_BOM):
            chunk = chunk[len(_BOM):]
        if chunk.endswith(b"\n"):
            chunk = chunk[:-2] if chunk.endswith(b"\r\n") else chunk[:-1]
        for piece in chunk.split(b"\r"):  # neither byte occurs inside a UTF-8 sequence
            n += 1
            try:
                yield piece.decode("utf-8")
            except UnicodeDecodeError as exc:
                hint = ("; it looks like UTF-16: save it as UTF-8"
                        if n == 1 and piece.startswith(_UTF16_BOMS) else "")
                raise BadLog(f"not a text file of JSON lines (byte 0x{piece[exc.start]:02x} "
                             f"at line {n} is not UTF-8{hint})") from None


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or args[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr)
        return 2
    path = Path(args[0])
    try:
        with path.open("rb") as f:
            game = replay_lines(_text_lines(f))
    except OSError as exc:
        print(f"error: cannot read {path}: {exc.strerror}", file=sys.stderr)
        return 2
    except (RulesError, BadLog) as exc:
        print(f"error: {path}: {exc}", file=sys.stderr)
        return 2
    print(json.dumps({"state": game.state_dict(), "score_sheet": game.score_sheet()}, indent=2))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
