"""Which tray reading may be used for a drop: one reading starts at most one phase.

Why: the camera's latest reading stays on every phone until the tray changes, so the same picture
was accepted for two phases in a row (one empty tray skipped brown and then green; one drop was
used for yellow and white). A phase's drop therefore needs a camera reading taken after the
previous phase began, or counts the players typed themselves; and an empty phase drop ("nothing
fell") is only taken when a player says so. The set-up drop has no phase before it: an unusual one
(no cube, all 49, a reading from before the game, a reading the counter doubted) is asked about,
not refused, since each can really happen.

"After" is decided by reading ids, not by the clock: the store marks every game event with the
newest reading id at the time it was written (``Store.reading_mark``), and ids only grow.
"""

from __future__ import annotations

from dataclasses import dataclass

from companion.amerigo.constants import TOTAL_CUBES
from companion.amerigo.offer import COLOURS
from companion.errors import NeedsConfirmation, TableError

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
    fresh = drop.reading_id is None or drop.after is None or drop.reading_id > drop.after
    if drop.kind == PHASE:
        if not fresh:
            since = f"the {drop.previous} phase began" if drop.previous else "the set-up drop"
            raise StaleReading(
                f"This tray reading was taken before {since}, so it cannot start the "
                f"{drop.phase} phase too. Drop the {drop.phase} cubes and wait for the new "
                "reading, or enter the counts by hand."
            )
        if total == 0 and not drop.confirmed:
            raise NeedsConfirmation(
                f"Nothing fell from the tower? Then the {drop.phase} phase has no actions and is "
                f"skipped. Only say yes once the {drop.phase} cubes have been dropped."
            )
        return
    if drop.confirmed:
        return
    doubts = []
    if total == 0:
        doubts.append("it shows no cube in the tray (did all 49 stay inside the tower?)")
    elif total >= TOTAL_CUBES:
        doubts.append(f"it shows all {TOTAL_CUBES} cubes in the tray (none stayed in the tower?)")
    if not fresh:
        doubts.append("this reading was taken before the game was started")
    if drop.reading_id is not None and drop.reading and drop.reading.get("uncertain"):
        doubts.append("the counter was unsure of this reading")
    if doubts:
        why = "; ".join(doubts)
        raise NeedsConfirmation(f"Use this as the set-up drop? {why[0].upper()}{why[1:]}.")


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
        raise TableError(f"there is no tray reading #{drop.reading_id}")
    if reading.get("error"):
        raise TableError("that picture of the tray could not be read; read the tray again")
    counts = reading.get("counts") or {}
    if any(int(counts.get(c, 0)) != int(drop.counts.get(c, 0)) for c in COLOURS):
        raise TableError(
            f"these counts are not those of tray reading #{drop.reading_id}; "
            "send counts typed by hand without the reading"
        )
