"""docs/events.md: every example line is a valid event; every event type is documented."""

from __future__ import annotations

import json
from pathlib import Path

from companion.amerigo.events import EVENT_TYPES, parse_event

DOC = Path(__file__).resolve().parents[2] / "docs" / "events.md"


def test_every_json_example_line_parses():
    lines = [x for x in DOC.read_text().splitlines() if x.startswith('{"v": 1')]
    assert len(lines) >= len(EVENT_TYPES)
    seen = set()
    for line in lines:
        e = parse_event(json.loads(line))
        seen.add(e["type"])
    assert seen == set(EVENT_TYPES)


def test_every_event_type_has_a_section():
    text = DOC.read_text()
    for t in EVENT_TYPES:
        assert f"### `{t}`" in text
