"""The cube ledger: where each of the 49 cubes is (tower, storage space, tray or action space).

The device cannot see inside the tower, but it can know what is in there: every cube that is not on
the storage board, in the tray or on the action space is inside. That gives the vision per-colour
upper bounds (``bounds``) for what a tray reading may contain. Each move below is one sentence of
the rulebook; every move conserves the 49 cubes (``check``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..text import Msg
from . import words
from .constants import CUBES_PER_COLOUR, TOTAL_CUBES
from .errors import LimitReached, RulesError
from .offer import COLOURS

PLACES = ("tower", "storage", "tray", "action")


def _zero() -> dict[str, int]:
    return dict.fromkeys(COLOURS, 0)


@dataclass
class Ledger:
    # Before the set-up drop all cubes go into the tower: "Drop all 49 cubes into the tower".
    tower: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COLOURS, CUBES_PER_COLOUR))
    storage: dict[str, int] = field(default_factory=_zero)
    tray: dict[str, int] = field(default_factory=_zero)
    action: dict[str, int] = field(default_factory=_zero)

    def copy(self) -> Ledger:
        return Ledger(dict(self.tower), dict(self.storage), dict(self.tray), dict(self.action))

    def _take_from_tower(self, counts: dict[str, int], what: Msg) -> None:
        too_many = [
            Msg("{n} {colour} but only {inside} inside", n=counts[c], colour=words.colour(c),
                inside=self.tower[c])
            for c in COLOURS
            if counts.get(c, 0) > self.tower[c]
        ]
        if too_many:
            raise LimitReached("{what} cannot hold {cubes} the tower", what=what,
                               cubes=too_many)
        for c in COLOURS:
            self.tower[c] -= counts.get(c, 0)

    def setup_drop(self, tray: dict[str, int]) -> None:
        """"place any cubes that land in the tray on the appropriately colored storage space"."""
        self._take_from_tower(tray, Msg("the set-up tray"))
        for c in COLOURS:
            self.storage[c] += tray.get(c, 0)

    def drop_for_phase(self, colour: str) -> int:
        """Drop the phase colour's storage cubes and any bumped tray cubes; return how many.

        "drop all the cubes in the next storage space ... into the dice tower" and "Drop these
        cubes [left in the tray by a bump] into the tower along with the cubes on the appropriate
        storage space for this phase."
        """
        dropped = self.storage[colour] + sum(self.tray.values())
        self.tower[colour] += self.storage[colour]
        self.storage[colour] = 0
        for c in COLOURS:
            self.tower[c] += self.tray[c]
            self.tray[c] = 0
        return dropped

    def read_tray(self, tray: dict[str, int]) -> None:
        """"Place all the cubes that land in the tray in the action space".

        ``tray`` is the whole tray, as a picture shows it. Cubes a bump let fall since the drop lie
        in it too, but they are not this phase's: "leave the cubes in the tray until the start of
        the next phase". So the reading must still show them, and only the rest is the action.
        """
        missing = [Msg("{n} {colour}", n=self.tray[c], colour=words.colour(c))
                   for c in COLOURS if tray.get(c, 0) < self.tray[c]]
        if missing:
            raise LimitReached(
                "the reading leaves out {cubes} that fell out early (a bump) and "
                "stay in the tray until the next phase: read the whole tray, or correct the bump",
                cubes=missing,
            )
        dropped = {c: tray.get(c, 0) - self.tray[c] for c in COLOURS}
        self._take_from_tower(dropped, Msg("this phase's drop"))
        for c in COLOURS:
            self.action[c] += dropped[c]

    def bump(self, tray: dict[str, int]) -> None:
        """Cubes fell out "at an inappropriate time": "leave the cubes in the tray"."""
        self._take_from_tower(tray, Msg("a bump"))
        for c in COLOURS:
            self.tray[c] += tray.get(c, 0)

    def end_phase(self) -> None:
        """"move all cubes from the action space to their respective storage spaces"."""
        for c in COLOURS:
            self.storage[c] += self.action[c]
            self.action[c] = 0

    def bounds(self) -> dict[str, int]:
        """Most cubes of each colour a tray picture can show now: those inside the tower, plus
        bumped cubes still lying in the tray."""
        return {c: self.tower[c] + self.tray[c] for c in COLOURS}

    def check(self) -> None:
        """Every cube in exactly one place: 7 per colour, 49 in all."""
        for c in COLOURS:
            places = [self.tower[c], self.storage[c], self.tray[c], self.action[c]]
            if any(n < 0 for n in places) or sum(places) != CUBES_PER_COLOUR:
                raise RulesError("internal error: cube ledger broken for {colour}: {places}",
                                 colour=c, places=str(places))
        if sum(sum(getattr(self, p).values()) for p in PLACES) != TOTAL_CUBES:  # pragma: no cover
            raise RulesError("internal error: the ledger does not hold 49 cubes")

    def to_dict(self) -> dict:
        return {
            "tower": dict(self.tower),
            "storage": dict(self.storage),
            "tray": dict(self.tray),
            "action_space": dict(self.action),
            "inside_tower_total": sum(self.tower.values()),
        }
