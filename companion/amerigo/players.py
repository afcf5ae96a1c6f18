"""One player's sheet and discs: VP, gold, cannons, tracks, posts, chests, goods, progress tokens.

The helpers here enforce the track rules that apply whatever the cause: gold tops out at 12 with the
excess scored as VP at once, VP never go below 0, cannons never above 12. Keeping them in one place
means no action can forget them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..text import Msg
from .constants import CANNON_MAX, GOLD_MAX, STARTING_PRODUCTION
from .errors import NotEnough
from .tokens import END, ONCE, family


@dataclass
class Token:
    name: str
    used: bool = False  # once-only tokens are "flipped face down after using"


@dataclass
class Player:
    name: str
    vp: int = 0
    gold: int = 0
    cannons: int = 0
    progress: int = 0  # spaces moved on the progress track ("first space" = 0)
    progress_at_end: bool = False  # the disc has reached the end of the progress track
    special: int = 0  # space of the player order disc on the special action track
    special_height: int = 0  # height in the stack on that space (higher = on top = earlier)
    special_at_end: bool = False
    posts: dict[str, int] = field(default_factory=dict)  # island -> trading posts established
    chests: int = 0
    chests_cashed: int = 0
    commodities: dict[str, int] = field(default_factory=dict)
    production: dict[str, int] = field(default_factory=dict)
    tokens: list[Token] = field(default_factory=list)
    villages_taken: int = 0  # village tiles taken from the supply so far (16 in all)
    villages: int = 0  # village tiles in the personal supply (planned, not yet built)
    landscapes: list[int] = field(default_factory=list)  # sizes of planned landscape tiles
    # The goods printed on his sheet, as the players entered them; None = not entered yet, when
    # every good of the game is assumed (so that logs from before this input still score the same).
    sheet_goods: list[str] | None = None

    @classmethod
    def new(cls, name: str, goods: tuple[str, ...]) -> Player:
        # "each player starts with one production token of each type of good printed on his sheet"
        # -- until the sheet is entered, every good of the game is assumed printed.
        return cls(
            name=name,
            commodities=dict.fromkeys(goods, 0),
            production=dict.fromkeys(goods, STARTING_PRODUCTION),
        )

    def print_sheet_goods(self, goods: list[str], assumed: tuple[str, ...]) -> None:
        """Set the goods printed on his sheet: the printed production token moves from the goods
        assumed (or entered) before to these; bought production tokens stay where they are."""
        before = self.sheet_goods if self.sheet_goods is not None else list(assumed)
        for good in before:
            self.production[good] -= STARTING_PRODUCTION
        for good in goods:
            self.production[good] = self.production.get(good, 0) + STARTING_PRODUCTION
        self.sheet_goods = list(goods)

    # --- the tracks ---------------------------------------------------------------------------

    def gain_gold(self, n: int) -> int:
        """Add gold; "If his total gold would exceed 12, he immediately scores 1 victory point for
        each excess gold." Returns the VP scored from the excess."""
        total = self.gold + n
        excess = max(0, total - GOLD_MAX)
        self.gold = min(total, GOLD_MAX)
        self.vp += excess
        return excess

    def spend_gold(self, n: int, why: Msg) -> None:
        if n > self.gold:
            raise NotEnough("{player} has {gold} gold, cannot spend {n} {why}", player=self.name,
                            gold=self.gold, n=n, why=why)
        self.gold -= n

    def gain_vp(self, n: int) -> None:
        self.vp += n

    def lose_vp(self, n: int) -> int:
        """"If a player's victory point total would be negative, he leaves his disc on 0/50"."""
        lost = min(self.vp, n)
        self.vp -= lost
        return lost

    def add_cannons(self, n: int) -> int:
        """Move the cannon disc right "up to a maximum of 12"; return the cannons actually added."""
        added = min(n, CANNON_MAX - self.cannons)
        self.cannons += added
        return added

    # --- progress tokens ------------------------------------------------------------------------

    def usable(self, usage: dict[str, str], name: str | None = None, fam: str | None = None
               ) -> list[Token]:
        """Tokens usable during play: permanent ones, and once-only ones not yet flipped."""
        out = []
        for t in self.tokens:
            if name is not None and t.name != name:
                continue
            if fam is not None and family(t.name) != fam:
                continue
            kind = usage[family(t.name)]
            if kind == END or (kind == ONCE and t.used):
                continue
            out.append(t)
        return out

    def has(self, usage: dict[str, str], fam: str) -> bool:
        return bool(self.usable(usage, fam=fam))

    def use_once(self, usage: dict[str, str], name: str) -> None:
        """Flip a once-only token (a permanent one stays face up)."""
        tokens = self.usable(usage, name=name)
        if not tokens:
            raise NotEnough("{player} has no usable progress token {token}", player=self.name,
                            token=name)
        if usage[family(name)] == ONCE:
            tokens[0].used = True

    def use_each(self, usage: dict[str, str], fam: str) -> int:
        """Use every usable copy of a token whose benefit counts per token (``tokens.PER_TOKEN``):
        flip the once-only ones and return how many copies gave their benefit."""
        copies = self.usable(usage, fam=fam)
        for t in copies:
            if usage[fam] == ONCE:
                t.used = True
        return len(copies)

    @property
    def posts_total(self) -> int:
        return sum(self.posts.values())

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "vp": self.vp,
            "gold": self.gold,
            "cannons": self.cannons,
            "progress": self.progress,
            "progress_at_end": self.progress_at_end,
            "special_track": self.special,
            "special_at_end": self.special_at_end,
            "trading_posts": dict(self.posts),
            "trading_posts_total": self.posts_total,
            "treasure_chests": self.chests,
            "commodities": dict(self.commodities),
            "production": dict(self.production),
            "sheet_goods": None if self.sheet_goods is None else list(self.sheet_goods),
            "progress_tokens": [{"name": t.name, "used": t.used} for t in self.tokens],
            "supply": {"villages": self.villages, "landscapes": sorted(self.landscapes)},
            "villages_left": 16 - self.villages_taken,
        }
