"""Islands: discovery, trading posts, built tiles and the completion payout.

The device does not see the map, so islands are named by the players (any text, e.g. "A" or
"north") and created when first mentioned, together with whether they are big ("Islands with 20 or
more land spaces are referred to as big islands"). The scoring below is the rulebook's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .constants import (
    CHESTS,
    COMPLETION_VP,
    DISCOVERY_VP,
    POST_MULTIPLIER,
    TRADING_POSTS,
)
from .errors import LimitReached, MalformedEvent, NotOnOffer
from .players import Player


@dataclass
class Island:
    name: str
    big: bool
    posts: dict[str, int] = field(default_factory=dict)  # player -> trading posts on this island
    completed: bool = False
    completed_by: str | None = None
    payout: dict[str, int] = field(default_factory=dict)  # VP paid at completion, per player

    def to_dict(self) -> dict:
        return {
            "big": self.big,
            "posts": dict(self.posts),
            "discovered": bool(self.posts),
            "completed": self.completed,
            "completed_by": self.completed_by,
            "completion_payout": dict(self.payout),
        }


def get_island(islands: dict[str, Island], name: str, big: bool | None) -> Island:
    """The island ``name``; a new one needs ``big`` (true/false), an old one must agree with it."""
    isl = islands.get(name)
    if isl is None:
        if big is None:
            raise MalformedEvent(
                "island '{island}' is mentioned for the first time: say whether it is big "
                '("big": true for 20 or more land spaces)', island=name
            )
        if big and sum(1 for i in islands.values() if i.big) >= CHESTS:
            raise LimitReached("island '{island}' cannot be big: there are only {chests} chests",
                               island=name, chests=CHESTS)
        isl = islands[name] = Island(name, big)
    elif big is not None and big != isl.big:
        if isl.big:
            raise MalformedEvent("island '{island}' was recorded as big", island=name)
        raise MalformedEvent("island '{island}' was recorded as small", island=name)
    if isl.completed:
        raise NotOnOffer("island '{island}' is already complete", island=name)
    return isl


def establish_post(isl: Island, player: Player, gold_per_post: int) -> int:
    """Place one trading post; return the discovery VP (3 for the first post on the island).

    "The first player to establish a trading post on an island scores 3 victory points for his
    discovery." "Each time the token's owner establishes a trading post, he receives 1 gold."
    """
    if player.posts_total >= TRADING_POSTS:
        raise LimitReached("{player} has placed all {n} trading posts", player=player.name,
                           n=TRADING_POSTS)
    # The completion table ("1 : 1x ... 6 : 21x") has no row for a 7th post of one player: such an
    # island could never be scored, so the post is refused before it is placed.
    most = max(POST_MULTIPLIER)
    if isl.posts.get(player.name, 0) >= most:
        raise LimitReached(
            "{player} already has {most} trading posts on island '{island}', the most the "
            "completion table scores ({most} posts: {factor}x the time marker); "
            "a 7th post there cannot be placed",
            player=player.name, most=most, island=isl.name, factor=POST_MULTIPLIER[most],
        )
    discovery = DISCOVERY_VP if not isl.posts else 0
    isl.posts[player.name] = isl.posts.get(player.name, 0) + 1
    player.posts[isl.name] = player.posts.get(isl.name, 0) + 1
    player.gain_vp(discovery)
    player.gain_gold(gold_per_post)  # 1 per gold_per_post token held
    return discovery


def complete(isl: Island, completer: Player, players: dict[str, Player], time_marker: int) -> None:
    """"When a player covers the last empty space of an island, he scores 3 victory points ...; if
    the island is a big island, he also takes the treasure chest" and every player with posts there
    scores the table value for his number of posts "times the number on the topmost time marker"."""
    isl.completed = True
    isl.completed_by = completer.name
    completer.gain_vp(COMPLETION_VP)
    if isl.big:
        completer.chests += 1
    for name, count in isl.posts.items():
        vp = POST_MULTIPLIER[count] * time_marker
        players[name].gain_vp(vp)
        isl.payout[name] = vp
