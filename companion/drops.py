"""Which tray reading may be used for a drop: one reading starts at most one phase.

Why: the camera's latest reading stays on every phone until the tray changes, so the same picture
was accepted for two phases in a row (one empty tray skipped brown and then green; one drop was
used for yellow and white). A phase's drop therefore needs a camera reading taken after the
previous phase began, or counts the players typed themselves; and an empty phase drop ("nothing
fell") is only taken when a player says so. The set-up drop has no phase before it: an unusual one
(no cube, all 49, a reading from before the game, a reading the counter doubted) is asked about,
not refused, since each can really happen.

"After" is decided by reading ids, not by the clock: the store marks every game event with the
newest reading id at the time it was written (``Store.reading_mark``), and ids only grow. A
reading of a tray the camera saw unchanged (after a restart, or "read now") counts as taken when
that tray was first read (``same_tray_as``).
"""

from __future__ import annotations

from dataclasses import dataclass

from companion.amerigo.constants import TOTAL_CUBES
from companion.amerigo.offer import COLOURS
from companion.amerigo.words import colour
from companion.errors import NeedsConfirmation, TableError
from companion.text import Msg, joined

SETUP, PHASE = "setup_drop_read", "tray_read"


class StaleReading(TableError):
    """The reading was there before the previous phase began: it may be that phase's drop."""


@dataclass(frozen=True)
class Drop:
    """A drop the players want to use, and where its counts came from.

    ``reading_id``: the camera reading they chose (None: counts typed by hand);
    ``reading``: that reading's stored body; ``after``: the reading id a reading for this drop must
    be newer than (the newest one when the previous phase began, or when the game was created;
    None when unknown, for a game from before the marks were kept)."""

    kind: str
    counts: dict[str, int]
    reading_id: int | None = None
    reading: dict | None = None
    after: int | None = None
    confirmed: bool = False
    phase: str = ""  # the phase this drop is for ("green"), for the messages
    previous: str = ""  # the phase before it ("brown"; "" before the first phase)


def check_drop(drop: Drop) -> None:
    """Return if the drop may be used; StaleReading / TableError if not; NeedsConfirmation
    when a player must say yes first."""
    if drop.kind not in (SETUP, PHASE):
        return
    total = sum(int(drop.counts.get(c, 0)) for c in COLOURS)
    if drop.reading_id is not None:
        _same_as_reading(drop)
    # a reading of a tray the camera saw unchanged is as old as that tray's first reading
    taken = (drop.reading or {}).get("same_tray_as") or drop.reading_id
    fresh = drop.reading_id is None or drop.after is None or taken > drop.after
    if drop.kind == PHASE:
        if not fresh:
            since = (Msg("the {colour} phase began", colour=colour(drop.previous))
                     if drop.previous else Msg("the set-up drop"))
            raise StaleReading(
                "This tray reading was taken before {since}, so it cannot start the "
                "{colour} phase too. Drop the {colour} cubes and wait for the new "
                "reading, or enter the counts by hand.", since=since, colour=colour(drop.phase),
            )
        if total == 0 and not drop.confirmed:
            raise NeedsConfirmation(
                "Nothing fell from the tower? Then the {colour} phase has no actions and is "
                "skipped. Only say yes once the {colour} cubes have been dropped.",
                colour=colour(drop.phase),
            )
        return
    if drop.confirmed:
        return
    doubts = _setup_doubts(total)
    if not fresh:
        doubts.append(Msg("This reading was taken before the game was started"))
    if drop.reading_id is not None and drop.reading and drop.reading.get("uncertain"):
        doubts.append(Msg("The counter was unsure of this reading"))
    if doubts:
        raise NeedsConfirmation("Use this as the set-up drop? {why}.", why=joined(doubts, "; "))


def _setup_doubts(total: int) -> list[Msg]:
    """What makes a set-up drop of ``total`` cubes unusual enough to ask about."""
    if total == 0:
        return [Msg("It shows no cube in the tray (did all 49 stay inside the tower?)")]
    if total >= TOTAL_CUBES:
        return [Msg("It shows all {n} cubes in the tray (none stayed in the tower?)",
                    n=TOTAL_CUBES)]
    return []


def check_correction(history: list[dict], target: int, counts: dict[str, int],
                     confirmed: bool) -> None:
    """A correction that makes a drop unusual is asked about, as that drop itself would have
    been (``check_drop``): a phase's drop corrected to no cube skips the phase, and a set-up
    drop corrected to no cube or all 49 is rarely true. Why: one slip in the Correct form
    (every count cleared) would otherwise quietly skip a phase everyone played.
    NeedsConfirmation when a player must say yes first; an unknown target is left to the
    rules, whose words refuse it."""
    if confirmed:
        return
    line = next((h for h in history if h["n"] == target), None)
    if line is None:
        return
    total = sum(int(counts.get(c, 0)) for c in COLOURS)
    if line["type"] == PHASE and total == 0:
        raise NeedsConfirmation(
            "Correct #{n} to no cube? Then its phase has no actions and is skipped.",
            n=target)
    if line["type"] == SETUP:
        doubts = _setup_doubts(total)
        if doubts:
            raise NeedsConfirmation("Correct the set-up drop? {why}.", why=joined(doubts, "; "))


def previous_drop(phase: str, round_: int, skipped: list[dict]) -> str:
    """The phase whose drop came before this phase's ("" when it is the set-up drop).

    A phase skipped for an empty storage space had no drop (rulebook: "If a storage space is
    empty ... skip this phase"), so it is passed over."""
    if phase not in COLOURS:
        return ""
    i = COLOURS.index(phase)
    r = round_
    while True:
        i -= 1
        if i < 0:
            i, r = len(COLOURS) - 1, r - 1
        if r < 1:
            return ""
        if {"round": r, "phase": COLOURS[i], "why": "storage empty"} not in skipped:
            return COLOURS[i]


def _same_as_reading(drop: Drop) -> None:
    reading = drop.reading
    if reading is None:
        raise TableError("there is no tray reading #{reading}", reading=drop.reading_id)
    if reading.get("error"):
        raise TableError("that picture of the tray could not be read; read the tray again")
    counts = reading.get("counts") or {}
    if any(int(counts.get(c, 0)) != int(drop.counts.get(c, 0)) for c in COLOURS):
        raise TableError(
            "these counts are not those of tray reading #{reading}; "
            "send counts typed by hand without the reading", reading=drop.reading_id,
        )
