"""Numbers printed on the boards but not in the rulebook text: settings with marked defaults.

The rulebook text lost its pictures, so some values are unknown to us. They are never guessed
silently: each is either a setting with a default marked ``DEFAULT`` (and why), or ``None``, which
means "unknown: the players enter the value when it matters" (e.g. the VP they reached on the
progress track at final scoring). A game can override any of them in its ``game_created`` event.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace

from .constants import PIRATE_MARKERS
from .errors import MalformedEvent
from .offer import COLOURS
from .tokens import END, ONCE, PERMANENT

# DEFAULT, unconfirmed: "4 time markers" are stacked "in ascending order on the printed time marker
# space"; the topmost counts when an island is completed and one is removed after each round. The
# worked example ("In the second game round ... 12 VP (3x4)") fixes round 2 = 4; 5-4-3-2-1 (the
# printed space showing through in round 5) is the common reading and is not confirmed.
DEFAULT_TIME_MARKERS: tuple[int, ...] = (5, 4, 3, 2, 1)

# The types of goods in the game: "40 commodity tokens – 8 of each type" (five types), named in the
# final scoring example ("Cotton ... Tobacco ... Sugar ... Coconut ... Coffee"). Which of them each
# player sheet prints is player input (the ``sheet_goods`` event), not a setting.
DEFAULT_GOODS: tuple[str, ...] = ("cotton", "tobacco", "sugar", "coconut", "coffee")

# DEFAULT, a plausibility cap, not a printed value. "Each village and landscape tile has two
# victory point values on it" -- printed on the tiles only. Tiles cover 1 to 6 squares ("costs 1-6
# AP, depending on its size"); the examples pay 2 VP for a 2-square village on a small island and
# 10 VP for three tiles (9 squares) on a big one. A tile entered with more is taken for a typo.
DEFAULT_TILE_VP_MAX = 12
# DEFAULT, a plausibility cap, not a printed value: the six pirate markers' values are printed on
# them only (the examples show a 4: "Six pirates", then "10 pirates" a round later). A marker above
# 12 could never be fought off, as the cannon track stops at 12 ("up to a maximum of 12"). Setting
# ``pirate_markers`` (the six printed values) replaces the cap with an exact check.
DEFAULT_PIRATE_MARKER_MAX = 12

# Whether a progress token is permanent, once-only (1x) or end-of-game (E). Keys are token families.
TOKEN_USAGE_DEFAULTS: dict[str, str] = {
    "ap2": PERMANENT,  # text: "Each time the token's owner chooses this action"
    "ap1": PERMANENT,  # text: "Each time the token's owner chooses either of the depicted actions"
    "ships8": ONCE,  # DEFAULT (issue: "+8 per ship once"; text: "he may use this token")
    "pirates_plus2": PERMANENT,  # DEFAULT (text gives no time limit)
    "pirates_half": PERMANENT,  # DEFAULT (text gives no time limit)
    "pirates_gold": PERMANENT,  # DEFAULT ("at the end of a game round", no limit given)
    "plan_two": PERMANENT,  # DEFAULT (text gives no time limit)
    "swap_green_red": PERMANENT,  # DEFAULT (text gives no time limit)
    "order_jump": PERMANENT,  # DEFAULT (text gives no time limit)
    "gold3": ONCE,  # text: "Once only, the token's owner receives 3 gold."
    "gold5": ONCE,  # text: "Once only, the token's owner receives 5 gold."
    "gold_per_post": PERMANENT,  # text: "Each time the token's owner establishes a trading post"
    "gold_half": PERMANENT,  # text: "Each time the token's owner takes gold instead"
    "vp_instead": PERMANENT,  # DEFAULT (text: "Instead of performing an action ...")
    "vp_posts": END,  # text: "During final scoring"
    "vp7": END,  # text: "During final scoring"
    "vp_gold": END,  # text: "During final scoring"
}

# The token families whose usage above is a DEFAULT, not the text's.
UNCONFIRMED_TOKEN_USAGE = (
    "ships8", "pirates_plus2", "pirates_half", "pirates_gold", "plan_two", "swap_green_red",
    "order_jump", "vp_instead",
)


@dataclass(frozen=True)
class Settings:
    """The per-game values the rulebook text does not give (see module docstring)."""

    # Value of the topmost time marker in rounds 1..5. DEFAULT: see DEFAULT_TIME_MARKERS.
    time_markers: tuple[int, ...] = DEFAULT_TIME_MARKERS
    goods: tuple[str, ...] = DEFAULT_GOODS
    # Progress track: number of the last space (first space = 0) and {space: printed VP}.
    # None = unknown: the players say when a disc sits at the end, and enter the VP at the end.
    progress_track_length: int | None = None
    progress_track_vp: dict[int, int] | None = None
    # Special action track: the same, plus the colour printed on each space (index 0 = first space).
    # None = unknown: a player using white as a joker names the colour under his disc.
    special_track_length: int | None = None
    special_track_vp: dict[int, int] | None = None
    special_track_colours: tuple[str, ...] | None = None
    token_usage: dict[str, str] = field(default_factory=lambda: dict(TOKEN_USAGE_DEFAULTS))
    # Most VP one built tile may score (DEFAULT cap, see DEFAULT_TILE_VP_MAX).
    tile_vp_max: int = DEFAULT_TILE_VP_MAX
    # The six values printed on the pirate markers, if the players enter them (None = unknown:
    # a revealed marker is then only held to pirate_marker_max, a DEFAULT cap).
    pirate_markers: tuple[int, ...] | None = None
    pirate_marker_max: int = DEFAULT_PIRATE_MARKER_MAX

    def unconfirmed(self) -> list[str]:
        """Settings still at a default the rulebook text does not confirm (show them to players)."""
        out = []
        if self.time_markers == DEFAULT_TIME_MARKERS:
            out.append("time_markers")
        for fam in UNCONFIRMED_TOKEN_USAGE:
            if self.token_usage.get(fam) == TOKEN_USAGE_DEFAULTS[fam]:
                out.append(f"token_usage.{fam}")
        if self.tile_vp_max == DEFAULT_TILE_VP_MAX:
            out.append("tile_vp_max (a cap: more VP on one tile is taken for a typo)")
        if self.pirate_markers is None and self.pirate_marker_max == DEFAULT_PIRATE_MARKER_MAX:
            out.append("pirate_marker_max (a cap: the six marker values are not entered)")
        for name in ("progress_track_vp", "special_track_vp"):
            if getattr(self, name) is None:
                out.append(f"{name} (unknown: entered at final scoring)")
        return out

    def to_dict(self) -> dict:
        d = asdict(self)
        d["time_markers"] = list(self.time_markers)
        d["goods"] = list(self.goods)
        for key in ("progress_track_vp", "special_track_vp"):
            if d[key] is not None:
                d[key] = {str(k): v for k, v in sorted(d[key].items())}
        for key in ("special_track_colours", "pirate_markers"):
            if d[key] is not None:
                d[key] = list(d[key])
        return d

    @classmethod
    def from_dict(cls, data: dict | None) -> Settings:
        """Defaults overridden by ``data``; raise ``MalformedEvent`` naming a bad key or value."""
        if data is None:
            return cls()
        if not isinstance(data, dict):
            raise MalformedEvent("settings must be a JSON object")
        known = {f for f in cls.__dataclass_fields__}
        unknown = set(data) - known
        if unknown:
            raise MalformedEvent("unknown setting(s): {keys}", keys=", ".join(sorted(unknown)))
        s = cls()
        changes: dict = {}
        if "time_markers" in data:
            tm = data["time_markers"]
            if not (isinstance(tm, list) and len(tm) == 5 and all(_nat(v) for v in tm)):
                raise MalformedEvent("setting time_markers must be 5 numbers >= 0 (rounds 1-5)")
            changes["time_markers"] = tuple(tm)
        if "goods" in data:
            g = data["goods"]
            if not (isinstance(g, list) and g and all(isinstance(x, str) and x for x in g)):
                raise MalformedEvent("setting goods must be a list of good names")
            if len(set(g)) != len(g):
                raise MalformedEvent("setting goods lists a good twice")
            changes["goods"] = tuple(g)
        for key in ("progress_track_length", "special_track_length"):
            if key in data and data[key] is not None:
                if not (_nat(data[key]) and data[key] > 0):
                    raise MalformedEvent("setting {key} must be a whole number > 0 or null",
                                         key=key)
                changes[key] = data[key]
        for key in ("progress_track_vp", "special_track_vp"):
            if key in data and data[key] is not None:
                changes[key] = _space_map(key, data[key])
        if data.get("special_track_colours") is not None:
            cols = data["special_track_colours"]
            if not (isinstance(cols, list) and all(c in COLOURS for c in cols)):
                raise MalformedEvent("setting special_track_colours must list action colours")
            changes["special_track_colours"] = tuple(cols)
        for key in ("tile_vp_max", "pirate_marker_max"):
            if key in data:
                if not _nat(data[key]):
                    raise MalformedEvent("setting {key} must be a whole number >= 0", key=key)
                changes[key] = data[key]
        if data.get("pirate_markers") is not None:
            pm = data["pirate_markers"]
            if not (isinstance(pm, list) and len(pm) == PIRATE_MARKERS
                    and all(_nat(v) for v in pm)):
                raise MalformedEvent(
                    "setting pirate_markers must be the {n} numbers printed on the "
                    "pirate markers", n=PIRATE_MARKERS,
                )
            changes["pirate_markers"] = tuple(pm)
        if "token_usage" in data:
            tu = data["token_usage"]
            if not isinstance(tu, dict):
                raise MalformedEvent("setting token_usage must map token families to usage")
            merged = dict(s.token_usage)
            for k, v in tu.items():
                if k not in TOKEN_USAGE_DEFAULTS:
                    raise MalformedEvent("setting token_usage: unknown token family '{family}'",
                                         family=k)
                if v not in (PERMANENT, ONCE, END):
                    raise MalformedEvent(
                        "setting token_usage['{family}'] must be permanent/once/end",
                                         family=k)
                merged[k] = v
            changes["token_usage"] = merged
        return replace(s, **changes)


def _nat(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _space_map(key: str, raw: object) -> dict[int, int]:
    if not isinstance(raw, dict):
        raise MalformedEvent('setting {key} must map space numbers to VP, e.g. {{"4": 1}}', key=key)
    out: dict[int, int] = {}
    for k, v in raw.items():
        try:
            space = int(k)
        except (TypeError, ValueError):
            raise MalformedEvent("setting {key}: {space} is not a space number", key=key,
                                 space=repr(k)) from None
        if space < 0 or not _nat(v):
            raise MalformedEvent("setting {key}: space {space} must be >= 0 with VP >= 0", key=key,
                                 space=k)
        out[space] = v
    return out


def track_vp(vp_spaces: dict[int, int], position: int) -> int:
    """Highest printed VP "reached or passed" at ``position``."""
    return max((vp for space, vp in vp_spaces.items() if space <= position), default=0)
