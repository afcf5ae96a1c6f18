"""``cubetower replay GAME.jsonl``: fold an event file and print the state and score sheet as JSON.

Users and tests write such files by hand, so an error names the line it comes from.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .errors import RulesError
from .game import Game

USAGE = "usage: cubetower replay GAME.jsonl"


def replay_lines(lines: list[str]) -> Game:
    """Apply non-empty lines one by one; a RulesError message starts with "line N:"."""
    game = Game()
    for n, line in enumerate(lines, start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            raise RulesError("line {n}: not valid JSON ({reason} at column {column})", n=n,
                             reason=exc.msg, column=exc.colno) from None
        try:
            game.apply(raw)
        except RulesError as exc:
            raise exc.within("line {n}: {error}", n=n) from None
    return game


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or args[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr)
        return 2
    path = Path(args[0])
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        print(f"error: cannot read {path}: {exc.strerror}", file=sys.stderr)
        return 2
    try:
        game = replay_lines(text.splitlines())
    except RulesError as exc:
        print(f"error: {path}: {exc}", file=sys.stderr)
        return 2
    print(json.dumps({"state": game.state_dict(), "score_sheet": game.score_sheet()}, indent=2))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
