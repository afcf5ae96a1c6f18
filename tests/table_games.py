"""Games brought to a given moment through a ``GameTable``, for the tests that start there."""

from __future__ import annotations

from companion.table import GameTable

SETUP_DROP = {"blue": 4, "black": 4, "red": 5, "brown": 3, "green": 4, "yellow": 5, "white": 3}


def at_adas_black_turn_with_gold(table: GameTable) -> dict:
    """Ada's turn in round 1's black phase of an Ada-Ben game, with 2 gold (both took gold in
    the blue phase) and 3 black cubes in the tray: Load Cannons for 3 AP, or up to 5 with her
    gold. The game's snapshot."""
    snap = table.new_game(["Ada", "Ben"], "Test")
    for command in ({"type": "setup_drop_read", "tray": SETUP_DROP},
                    {"type": "pirate_revealed", "value": 2},
                    {"type": "tray_read", "tray": {"blue": 3, "white": 1}},
                    {"type": "action", "player": "Ada", "choice": "gold"},
                    {"type": "action", "player": "Ben", "choice": "gold"},
                    {"type": "tray_read", "tray": {"black": 3}}):
        snap = table.command(snap["id"], snap["seq"], command)
    return snap
