"""The fold: the game state is derived from the event log, one event at a time.

Nothing else ever changes a state, which is what makes undo, redo, replay and corrections exact:
``resolve`` works out which events are in force (undo/redo) and which readings were corrected, and
``fold`` applies those in order. ``apply_event`` raises a ``RulesError`` for an event that does not
fit the moment; the caller (``game.Game``) then keeps the previous state.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from ..text import Msg
from . import phase as phase_rules
from . import pirates as pirate_rules
from . import words
from .constants import (
    CANNON_MAX,
    CHEST_GOLD,
    GOLD_MAX,
    MAX_PLAYERS,
    MIN_PLAYERS,
    PHASE_COLOURS,
    PIRATE_SPACES,
    PRODUCTION_TOKENS_FOR_PLAYERS,
    ROUNDS,
    STARTING_GOLD_PER_PRECEDING_PLAYER,
    TOKEN_GOLD_ONCE,
)
from .errors import (
    MalformedEvent,
    NotEnough,
    NothingToUndo,
    NotOnOffer,
    OutOfTurn,
    RulesError,
    UnknownPlayer,
    WrongStage,
)
from .events import describe
from .islands import Island
from .ledger import Ledger
from .players import Player
from .settings import Settings
from .tokens import family

# Stages, each waiting for one kind of event (see ``expects``).
NEW = "new"  # waiting for game_created
SEATING = "seating"  # waiting for players_seated
SETUP = "setup"  # waiting for setup_drop_read and the first pirate_revealed
TRAY = "tray"  # the phase's cubes were dropped: waiting for tray_read
ACTIONS = "actions"  # waiting for the next player's action
ROUND_END = "round_end"  # after the white phase: waiting for round_ended
PIRATE = "pirate"  # waiting for the next pirate marker (pirate_revealed)
FINAL = "final"  # after round 5: waiting for final_scoring
OVER = "over"

EXPECTS = {
    NEW: "game_created",
    SEATING: "players_seated",
    SETUP: "setup_drop_read / pirate_revealed",
    TRAY: "tray_read",
    ACTIONS: "action",
    ROUND_END: "round_ended",
    PIRATE: "pirate_revealed",
    FINAL: "final_scoring",
    OVER: "nothing (the game is over)",
}

READINGS = ("setup_drop_read", "tray_read", "bump_read")


@dataclass
class GameState:
    settings: Settings = field(default_factory=Settings)
    name: str | None = None
    stage: str = NEW
    players: dict[str, Player] = field(default_factory=dict)  # in seating order
    ledger: Ledger = field(default_factory=Ledger)
    islands: dict[str, Island] = field(default_factory=dict)
    round: int = 0  # 1..5 once play starts
    phase: int = 0  # 0..6: index into PHASE_COLOURS
    setup_drop_done: bool = False
    pirates: list[int] = field(default_factory=list)  # values of the face-up pirate markers
    phase_order: list[str] = field(default_factory=list)  # fixed when the tray is read
    acted: list[str] = field(default_factory=list)
    skipped: list[dict] = field(default_factory=list)  # phases skipped (empty storage or tray)
    last_pirate_attack: dict | None = None
    last_action: dict | None = None
    landscapes_taken: int = 0
    tokens_taken: int = 0
    commodities_taken: dict[str, int] = field(default_factory=dict)
    production_bought: dict[str, int] = field(default_factory=dict)
    final_inputs: dict[str, dict] = field(default_factory=dict)
    events_applied: int = 0
    outcomes: dict[int, Msg] = field(default_factory=dict)  # event number -> what it brought about
    # A reading's event number -> the vision bounds just before it: what a correction may say.
    reading_bounds: dict[int, dict[str, int]] = field(default_factory=dict)
    # True only while a new command from the table is tried (``Game.command``): a few checks were
    # added after logs were stored that do not meet them, and a stored log must still load with
    # what it meant then (see ``phase._spaces_needed``).
    strict: bool = False

    def copy(self) -> GameState:
        return copy.deepcopy(self)

    # --- derived facts ---------------------------------------------------------------------------

    def order(self) -> list[str]:
        """Player order: "Beginning with the player whose disc is farthest along the special action
        track" and, on a stack, "in order from top to bottom"."""
        return [
            p.name
            for p in sorted(self.players.values(), key=lambda q: (-q.special, -q.special_height))
        ]

    def stacks(self) -> list[dict]:
        """Discs on the special-action track: per occupied space, the stack from top to bottom."""
        spaces: dict[int, list[Player]] = {}
        for p in self.players.values():
            spaces.setdefault(p.special, []).append(p)
        return [
            {"space": space,
             "stack": [p.name for p in sorted(ps, key=lambda q: -q.special_height)]}
            for space, ps in sorted(spaces.items(), reverse=True)
        ]

    def time_marker(self) -> int:
        """"the number on the topmost time marker" (settings.time_markers, one per round)."""
        return self.settings.time_markers[max(self.round, 1) - 1]

    def pirate_strength(self) -> int:
        """"the strength of the pirates – that is, the sum of all face-up pirate markers"."""
        return sum(self.pirates)

    def production_pool(self) -> dict | None:
        """Production tokens in this game (30/40/50 by player count) and how many are left."""
        if not self.players:
            return None
        pool = PRODUCTION_TOKENS_FOR_PLAYERS[len(self.players)]
        return {"in_game": pool, "left": pool - sum(self.production_bought.values())}

    @property
    def colour(self) -> str | None:
        return PHASE_COLOURS[self.phase] if self.round else None

    def turn(self) -> str | None:
        if self.stage != ACTIONS:
            return None
        return next(n for n in self.phase_order if n not in self.acted)

    def player(self, name: str) -> Player:
        if name not in self.players:
            known = list(self.players) or Msg("nobody yet")
            raise UnknownPlayer("'{name}' is not a player in this game (players: {known})",
                                name=name, known=known)
        return self.players[name]

    # --- the phase cycle -------------------------------------------------------------------------

    def start_phase(self) -> None:
        """Drop the cubes for the current phase, skipping phases with nothing to drop."""
        while True:
            colour = PHASE_COLOURS[self.phase]
            # "If a storage space is empty or no cubes fall out of the tower, skip this phase"
            if self.ledger.storage[colour] == 0:
                self.skipped.append({"round": self.round, "phase": colour, "why": "storage empty"})
                if not self._next_phase():
                    return
                continue
            self.ledger.drop_for_phase(colour)
            self.stage = TRAY
            return

    def _next_phase(self) -> bool:
        """Move on to the next phase; False (and the round end) after the white phase."""
        if self.phase + 1 >= len(PHASE_COLOURS):
            self.stage = ROUND_END
            return False
        self.phase += 1
        return True

    def end_phase(self) -> None:
        self.ledger.end_phase()
        self.acted = []
        self.phase_order = []
        if self._next_phase():
            self.start_phase()

    def check(self) -> None:
        """Invariants no event may break, checked after every event: should the engine ever have a
        bug, the command is refused instead of corrupting the game."""
        self.ledger.check()
        for p in self.players.values():
            if not (p.vp >= 0 and 0 <= p.gold <= GOLD_MAX and 0 <= p.cannons <= CANNON_MAX):
                raise RulesError("internal error: {player} has vp {vp}, gold {gold}, "
                                 "cannons {cannons}", player=p.name, vp=p.vp, gold=p.gold,
                                 cannons=p.cannons)

    # --- JSON snapshot ---------------------------------------------------------------------------

    def to_dict(self) -> dict:
        turn = self.turn()
        playing = self.stage in (TRAY, ACTIONS)
        return {
            "name": self.name,
            "stage": self.stage,
            "expects": " / ".join(self.expects_events()) or EXPECTS[OVER],
            "expects_events": self.expects_events(),
            "setup_drop_read": self.setup_drop_done,
            "round": self.round or None,
            "phase": self.colour if playing else None,
            "phase_number": self.phase + 1 if playing else None,
            "turn": turn,
            "player_order": self.order(),
            "start_player": self.order()[0] if self.players else None,
            "special_track_stacks": self.stacks(),
            "phase_order": list(self.phase_order),
            "acted": list(self.acted),
            "time_marker": self.time_marker() if self.round else None,
            "pirates": {"revealed": list(self.pirates), "strength": self.pirate_strength(),
                        "last_attack": self.last_pirate_attack},
            "cubes": self.ledger.to_dict(),
            "production_tokens": self.production_pool(),
            "vision_bounds": self.vision_bounds(),
            "offer": self._offer(),
            "options": {n: phase_rules.options(self, p) for n, p in self.players.items()}
            if self.stage == ACTIONS else {},
            "players": [self._player_dict(p) for p in self.players.values()],
            "islands": {n: i.to_dict() for n, i in self.islands.items()},
            "skipped_phases": list(self.skipped),
            "last_action": self.last_action,
            "settings": self.settings.to_dict(),
            "unconfirmed_settings": self.settings.unconfirmed() + [
                str(Msg("sheet goods of {player} (not entered: all {n} assumed)", player=p.name,
                        n=len(self.settings.goods)))
                for p in self.players.values() if p.sheet_goods is None],
            "events_applied": self.events_applied,
        }

    def _player_dict(self, p: Player) -> dict:
        d = p.to_dict()
        d["order"] = self.order().index(p.name) + 1
        d.update(phase_rules.track_values(self, p))
        usage = self.settings.token_usage
        for t in d["progress_tokens"]:
            t["usage"] = usage[family(t["name"])]
        return d

    def expects_events(self) -> list[str]:
        """The event types that move the game on now (set-up: the ones still missing)."""
        if self.stage == SETUP:
            missing = [] if self.setup_drop_done else ["setup_drop_read"]
            return missing + ([] if self.pirates else ["pirate_revealed"])
        if self.stage == OVER:
            return []
        return [EXPECTS[self.stage]]

    def vision_bounds(self) -> dict[str, int] | None:
        """Per colour, the most cubes a tray picture can show now: the cubes inside the tower and
        bumped cubes still lying in the tray."""
        return self.ledger.bounds()

    def _offer(self) -> dict | None:
        from .offer import tray_offer

        if self.stage != ACTIONS:
            return None
        return tray_offer(self.ledger.action).to_dict()


# --- applying events ---


def _need(state: GameState, *stages: str, what: Msg) -> None:
    if state.stage not in stages:
        raise WrongStage("{what} is not possible now: the game expects {expects}", what=what,
                         expects=EXPECTS[state.stage])


def apply_event(state: GameState, e: dict, n: int | None = None) -> None:
    """Apply one parsed, in-force event (undo/corrections already resolved) to ``state``.

    ``n`` is the event's number in the log; what it brought about is kept in ``state.outcomes[n]``
    for the history list (e.g. "+4 gold, +1 VP from gold over 12").
    """
    t = e["type"]
    handler = _APPLY.get(t)
    if handler is None:  # tray_corrected / undo: resolved before the fold
        return
    before = state.stage, state.round, state.phase
    if n is not None and t in READINGS:
        state.reading_bounds[n] = state.ledger.bounds()
    outcome = handler(state, e)
    state.check()
    state.events_applied += 1
    if (state.stage, state.round, state.phase) != before and state.stage in (TRAY, ROUND_END):
        nxt = (Msg("next: round {round}, {colour} phase", round=state.round,
                   colour=words.colour(state.colour)) if state.stage == TRAY
               else Msg("next: round end"))
        outcome = Msg("{outcome}; {next}", outcome=outcome, next=nxt) if outcome else nxt
    if n is not None and outcome:
        state.outcomes[n] = outcome


def _game_created(state: GameState, e: dict) -> None:
    _need(state, NEW, what=Msg("creating the game"))
    base = state.settings.to_dict()
    override = dict(e.get("settings", {}))
    if "token_usage" in override:
        override["token_usage"] = {**base["token_usage"], **override["token_usage"]}
    state.settings = Settings.from_dict({**base, **override})
    state.name = e.get("name")
    state.stage = SEATING


def _players_seated(state: GameState, e: dict) -> None:
    _need(state, SEATING, what=Msg("seating players"))
    names = e["players"]
    if not MIN_PLAYERS <= len(names) <= MAX_PLAYERS:
        n = len(names)
        raise MalformedEvent("Amerigo is for {min}-{max} players, not {n}", min=MIN_PLAYERS,
                             max=MAX_PLAYERS, n=n)
    if len(set(names)) != len(names):
        raise MalformedEvent("two players have the same name")
    for i, name in enumerate(names):
        p = Player.new(name, state.settings.goods)
        # "Stack all of the player order discs ... on the first space": first listed = top.
        p.special_height = len(names) - 1 - i
        # "All other players receive one gold for each other player preceding them"
        p.gain_gold(i * STARTING_GOLD_PER_PRECEDING_PLAYER)
        state.players[name] = p
    state.stage = SETUP


def _maybe_start_play(state: GameState) -> None:
    if state.setup_drop_done and state.pirates:
        state.round, state.phase = 1, 0
        state.start_phase()


def _setup_drop_read(state: GameState, e: dict) -> None:
    _need(state, SETUP, what=Msg("reading the set-up drop"))
    if state.setup_drop_done:
        raise WrongStage("the set-up drop was already read (correct it with tray_corrected)")
    state.ledger.setup_drop(e["tray"])
    state.setup_drop_done = True
    _maybe_start_play(state)


def _pirate_revealed(state: GameState, e: dict) -> None:
    _need(state, SETUP, PIRATE, what=Msg("revealing a pirate marker"))
    if state.stage == SETUP and state.pirates:
        raise WrongStage("the set-up pirate marker was already revealed")
    if len(state.pirates) >= PIRATE_SPACES:
        raise WrongStage("all {n} pirate markers are face up", n=PIRATE_SPACES)
    pirate_rules.check_marker(state.settings, state.pirates, e["value"])
    state.pirates.append(e["value"])
    if state.stage == SETUP:
        _maybe_start_play(state)
    else:
        state.round += 1
        state.phase = 0
        state.start_phase()


def _tray_read(state: GameState, e: dict) -> Msg | None:
    _need(state, TRAY, what=Msg("reading the tray"))
    state.ledger.read_tray(e["tray"])
    if sum(state.ledger.action.values()) == 0:
        # "If a storage space is empty or no cubes fall out of the tower, skip this phase"
        skipped = state.colour
        state.skipped.append({"round": state.round, "phase": skipped, "why": "no cubes out"})
        state.end_phase()
        # said in the history: "Tray read: no cubes" alone did not say the phase was skipped
        return Msg("the {colour} phase is skipped: no cube fell out",
                   colour=words.colour(skipped))
    state.phase_order = state.order()
    state.acted = []
    state.stage = ACTIONS


def _bump_read(state: GameState, e: dict) -> None:
    if state.stage == SETUP and not state.setup_drop_done:
        raise WrongStage("a bump before the set-up drop: read the set-up drop instead")
    # "If cubes fall out of the tower at an inappropriate time (e.g., someone bumps the table),
    # leave the cubes in the tray until the start of the next phase." -- at any time in play,
    # also after a phase's drop and before its reading (``Ledger.read_tray`` keeps them apart).
    _need(state, SETUP, TRAY, ACTIONS, ROUND_END, PIRATE, what=Msg("recording a bump"))
    state.ledger.bump(e["tray"])


def _action(state: GameState, e: dict) -> None:
    p = state.player(e["player"])
    _need(state, ACTIONS, what=Msg("an action by {player}", player=p.name))
    turn = state.turn()
    if p.name != turn:
        raise OutOfTurn("it is {turn}'s turn, not {player}'s", turn=turn, player=p.name)
    summary = phase_rules.perform(state, e)
    state.last_action = {"player": p.name, "choice": e["choice"], **summary}
    state.acted.append(p.name)
    if len(state.acted) == len(state.phase_order):
        state.end_phase()
    return phase_rules.describe_outcome(summary)


def _sheet_goods(state: GameState, e: dict) -> Msg:
    p = state.player(e["player"])
    _need(state, SETUP, TRAY, ACTIONS, ROUND_END, PIRATE, FINAL,
          what=Msg("entering a player sheet"))
    # "Each player starts with a production token of each type of good printed on his player
    # sheet." Which goods a sheet prints is read off the sheet by the players.
    goods = e["goods"]
    unknown = [g for g in goods if g not in state.settings.goods]
    if unknown:
        if len(unknown) == 1:
            raise MalformedEvent("{unknown} is not a good of this game; the goods are {goods}",
                                 unknown=unknown, goods=list(state.settings.goods))
        raise MalformedEvent("{unknown} are not goods of this game; the goods are {goods}",
                             unknown=unknown, goods=list(state.settings.goods))
    if len(set(goods)) != len(goods):
        raise MalformedEvent("a player sheet prints each good once: a good is listed twice")
    p.print_sheet_goods(goods, state.settings.goods)
    return Msg("{player} starts with production in {goods}", player=p.name,
               goods=words.goods(goods) or Msg("no goods"))


def _chest_cashed(state: GameState, e: dict) -> None:
    p = state.player(e["player"])
    _need(state, SETUP, TRAY, ACTIONS, ROUND_END, PIRATE, FINAL, what=Msg("cashing a chest"))
    # "He can remove this treasure chest from the game at any time and take 3 gold."
    if p.chests <= 0:
        raise NotEnough("{player} has no treasure chest", player=p.name)
    p.chests -= 1
    p.chests_cashed += 1
    p.gain_gold(CHEST_GOLD)


def _token_used(state: GameState, e: dict) -> None:
    p = state.player(e["player"])
    _need(state, SETUP, TRAY, ACTIONS, ROUND_END, PIRATE, FINAL,
          what=Msg("using a progress token"))
    name = e["token"]
    if name not in TOKEN_GOLD_ONCE:
        raise NotOnOffer(
            "progress token {token} is not used on its own: it acts within an action or scoring",
            token=name,
        )
    if not p.usable(state.settings.token_usage, name=name):
        raise NotEnough("{player} has no unused progress token {token}", player=p.name, token=name)
    p.use_once(state.settings.token_usage, name)
    p.gain_gold(TOKEN_GOLD_ONCE[name])


def _round_ended(state: GameState, e: dict) -> None:
    _need(state, ROUND_END, what=Msg("ending the round"))
    state.last_pirate_attack = {
        "round": state.round,
        "strength": state.pirate_strength(),
        "players": pirate_rules.fight(
            list(state.players.values()), state.pirate_strength(), state.settings.token_usage
        ),
    }
    # "The game ends after the 5th game round. Players conduct an intermediate scoring as usual,
    # then final scoring takes place." Otherwise: "Reveal one more pirate marker."
    state.stage = FINAL if state.round >= ROUNDS else PIRATE
    parts = []
    for name, r in state.last_pirate_attack["players"].items():
        if r["fought_off"] and r["gold"]:
            parts.append(Msg("{player} fires {n}, +{gold} gold", player=name,
                             n=r["cannons_fired"], gold=r["gold"]))
        elif r["fought_off"]:
            parts.append(Msg("{player} fires {n}", player=name, n=r["cannons_fired"]))
        else:
            parts.append(Msg("{player} fires {n}, loses {vp} VP", player=name,
                             n=r["cannons_fired"], vp=r["vp_lost"]))
    return Msg("pirates {strength}: {players}", strength=state.pirate_strength(), players=parts)


def _final_scoring(state: GameState, e: dict) -> None:
    _need(state, FINAL, what=Msg("final scoring"))
    inputs = e.get("players", {})
    for name in inputs:
        state.player(name)
    s = state.settings
    for name in state.players:
        got = inputs.get(name, {})
        tracks = (("progress_vp", s.progress_track_vp, Msg("progress track")),
                  ("special_vp", s.special_track_vp, Msg("special track")))
        for key, known, track in tracks:
            if known is None and key not in got:
                raise MalformedEvent(
                    "enter {player}'s VP on the {track}: its VP spaces are not set, so final "
                    "scoring needs them ({key})", key=key, player=name, track=track,
                )
            if known is not None and key in got:
                raise MalformedEvent("{key} for {player} comes from the settings: leave it out",
                                     key=key, player=name)
    state.final_inputs = {n: dict(inputs.get(n, {})) for n in state.players}
    state.stage = OVER


_APPLY = {
    "game_created": _game_created,
    "players_seated": _players_seated,
    "setup_drop_read": _setup_drop_read,
    "pirate_revealed": _pirate_revealed,
    "tray_read": _tray_read,
    "bump_read": _bump_read,
    "action": _action,
    "sheet_goods": _sheet_goods,
    "chest_cashed": _chest_cashed,
    "token_used": _token_used,
    "round_ended": _round_ended,
    "final_scoring": _final_scoring,
}


# --- the log: undo/redo and corrections ----------------------------------------------------------


@dataclass
class Resolution:
    """Which events are in force, after undo/redo, and the readings as corrected."""

    active: list[bool]
    targets: dict[int, int]  # index of an undo event -> index of its target (0-based)
    corrected: dict[int, dict]  # index of a reading -> the tray that replaces it


def resolve(events: list[dict]) -> Resolution:
    """Work out undo/redo targets and corrections (events are parsed; raises RulesError)."""
    active: list[bool] = []
    targets: dict[int, int] = {}
    for i, e in enumerate(events):
        active.append(True)
        if e["type"] == "undo":
            t = _undo_target(events, active, targets, i, e)
            targets[i] = t
            # Toggle along the chain: undoing an undo puts its target back in force, and so on.
            cur = t
            active[cur] = False
            while events[cur]["type"] == "undo":
                cur = targets[cur]
                active[cur] = not active[cur]
        elif e["type"] == "tray_corrected":
            t = e["target"] - 1
            if not (0 <= t < i) or events[t]["type"] not in READINGS:
                raise MalformedEvent(
                    "tray_corrected target #{target} is not an earlier tray reading",
                    target=e["target"],
                )
            if not active[t]:
                raise NothingToUndo("event #{target} was undone: nothing to correct",
                                    target=e["target"])
    corrected: dict[int, dict] = {}
    for i, e in enumerate(events):
        if e["type"] == "tray_corrected" and active[i] and active[e["target"] - 1]:
            corrected[e["target"] - 1] = e["tray"]
    return Resolution(active, targets, corrected)


def _undo_target(events: list[dict], active: list[bool], targets: dict[int, int], i: int,
                 e: dict) -> int:
    if "target" in e:
        t = e["target"] - 1
        if not 0 <= t < i:
            raise NothingToUndo("undo target #{target} is not an earlier event", target=e["target"])
        if events[t]["type"] == "game_created":
            raise NothingToUndo("the game's creation cannot be undone")
        if not active[t]:
            raise NothingToUndo("event #{target} is already undone", target=e["target"])
        return t
    if e.get("redo"):
        # Redo = undo the latest undo, as long as nothing new happened since.
        for j in range(i - 1, -1, -1):
            if not active[j]:
                continue
            if events[j]["type"] == "undo":
                if events[targets[j]]["type"] == "undo":
                    continue  # an earlier redo: look further back for the undo to take back
                return j
            raise NothingToUndo("nothing to redo: something happened since the last undo")
        raise NothingToUndo("nothing to redo")
    for j in range(i - 1, -1, -1):
        if active[j] and events[j]["type"] not in ("undo", "game_created"):
            return j
    raise NothingToUndo("nothing to undo")


def fold(events: list[dict], settings: Settings | None = None) -> tuple[GameState, Resolution]:
    """State after the parsed ``events``; a RulesError names the event number that failed."""
    res = resolve(events)
    state = GameState(settings=settings or Settings())
    for i, e in enumerate(events):
        if not res.active[i]:
            continue
        if i in res.corrected:
            e = {**e, "tray": res.corrected[i]}
        try:
            apply_event(state, e, i + 1)
        except RulesError as exc:
            # in the history's words: a correction or undo that makes a later event impossible
            raise exc.within("#{n} in the history ({event}) would no longer be possible: {error}",
                             n=i + 1, event=describe(e)) from None
    return state, res
