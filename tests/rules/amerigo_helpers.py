"""Building games for the rules tests: the set-up of the rulebook's example, and short cuts.

``arrange`` changes a live player directly, for tests that need e.g. "he already had 9 gold"
without playing the phases that got him there; the command under test is then a real command.
"""

from __future__ import annotations

from companion.amerigo.game import Game
from companion.amerigo.offer import COLOURS

# "Example: Still remaining in the tower are 2x red and yellow; 3x blue, black and green; and 4x
# brown and white." -> the set-up tray held 7 minus those.
SETUP_REMAINING = {"blue": 3, "black": 3, "red": 2, "brown": 4, "green": 3, "yellow": 2, "white": 4}
SETUP_TRAY = {c: 7 - n for c, n in SETUP_REMAINING.items()}
# "The starting player is red. White, in second, receives 1 gold, while blue receives 2 gold and
# yellow 3 gold."
RULEBOOK_PLAYERS = ["red", "white", "blue", "yellow"]
# A set-up drop where only the 7 blue cubes fall out: after the first drop all 49 are inside, so a
# test may read any tray it likes (up to 7 per colour) in the blue phase.
ALL_INSIDE_TRAY = {c: (7 if c == "blue" else 0) for c in COLOURS}


def counts(**kw: int) -> dict[str, int]:
    return {c: kw.get(c, 0) for c in COLOURS}


def new_game(players=None, tray=None, pirate=6, settings=None) -> Game:
    """A game through set-up, waiting for the first (blue) tray read (see ALL_INSIDE_TRAY)."""
    g = Game()
    created = {"type": "game_created"}
    if settings:
        created["settings"] = settings
    g.command(created)
    g.command({"type": "players_seated", "players": players or RULEBOOK_PLAYERS})
    g.command({"type": "setup_drop_read", "tray": tray or ALL_INSIDE_TRAY})
    g.command({"type": "pirate_revealed", "value": pirate})
    return g


def arrange(g: Game, name: str, **attrs) -> None:
    p = g.state.players[name]
    for k, v in attrs.items():
        setattr(p, k, v)


def forfeit(g: Game, name: str | None = None) -> dict:
    """The player whose turn it is takes the first action on offer and forfeits all its AP."""
    st = g.state_dict()
    name = name or st["turn"]
    opts = st["options"][name]["actions"]
    colour = next((a["colour"] for a in opts if a["colour"] not in ("black", "white")),
                  opts[0]["colour"])
    return g.command({"type": "action", "player": name, "choice": colour, "ap": 0})


def finish_phase(g: Game) -> None:
    phase = (g.state.round, g.state.phase)
    while g.state.stage == "actions" and (g.state.round, g.state.phase) == phase:
        forfeit(g)


def read(g: Game, **kw: int) -> dict:
    return g.command({"type": "tray_read", "tray": counts(**kw)})


def act(g: Game, player: str, choice: str, **fields) -> dict:
    return g.command({"type": "action", "player": player, "choice": choice, **fields})


def player(g: Game, name: str) -> dict:
    return next(p for p in g.state_dict()["players"] if p["name"] == name)
