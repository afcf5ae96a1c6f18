"""Naming the seven cube colours.

Why this space: the camera's white balance and exposure drift, and the light may be a warm lamp.
Dividing a cube's linear RGB by the linear RGB of the bare floor under it (von Kries adaptation
with the tray as the grey reference) cancels the light's colour, its strength, vignetting and
large-scale shading. What is left is the cube's paint relative to the tray's paint; it is then
put into CIE Lab so that distances are roughly perceptual. Black, brown and red are told apart
mostly by lightness and chroma; white and yellow along the blue-yellow (b) axis.

A print of unusual colour (a dark wood tray, say) shifts every cube the same way: per frame a
lightness factor and a tint are fitted to all its cubes together (``ColourModel.fit_frame``),
with the sheen the painted tops mirror. What one frame cannot separate is left as an interval
or a nuisance rather than forced: a clipped channel is only a bound (``cube_colour``), a top may
get less of the light than the floor (tilt, a neighbour's shadow), the floor beside a cube may
carry a glare. A calibration (see ``vision.calibration``) moves the default references into
one session's reading, measured on a drop whose contents the players confirmed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np

from vision.reading import COLOURS

# The floor is taken to reflect this share of the light (a pale print); cube/floor ratios are
# scaled by it before conversion to Lab, so a white cube lands near L = 100.
FLOOR_ALBEDO = 0.6

# Default references, in floor-normalised Lab (L from 0 up, may pass 100 for cubes lighter than
# the print; a and b signed), as seen on a pale print (FLOOR_ALBEDO). Measured by
# ``python -m vision.fitcolours`` on the development sessions only (s000-s002). The white's was
# read in the light each session's other colours set (``fitcolours --left-out``): nearly all
# unclipped whites there lie on one print (wood), and read in frames they helped fit they took
# that print for untinted, so the old white (124.2, -5.8, -40.9) carried the wood's tint and
# pulled every frame holding a white towards it (a brown on the wood read black).
DEFAULT_REFS: dict[str, tuple[float, float, float]] = {
    "blue": (65.0, 28.3, -75.7),
    "black": (40.9, 2.8, -15.9),
    "red": (61.1, 45.5, 7.4),
    "brown": (64.8, 12.9, 13.5),
    "green": (76.6, -43.9, 16.5),
    "yellow": (111.5, -23.4, 80.4),
    "white": (123.1, -2.5, -26.1),
}
DEFAULT_SPREAD: dict[str, tuple[float, float, float]] = {
    "blue": (10.0, 7.0, 7.0),
    "black": (10.0, 7.0, 7.0),
    "red": (10.0, 9.0, 8.8),
    "brown": (10.0, 7.0, 7.0),
    "green": (10.0, 7.0, 11.1),
    "yellow": (10.0, 19.3, 15.4),
    "white": (10.0, 7.0, 7.0),
}
# No colour is trusted to be tighter than this. Three development sessions cannot show how much
# other rooms, prints and cameras vary, so this is set wide on purpose (not fitted): about a
# tenth of the lightness range and of a strong colour's chroma.
MIN_SPREAD = np.array([10.0, 7.0, 7.0], np.float32)

_LIN_LUT = (np.arange(256, dtype=np.float32) / 255.0) ** 2.2


def to_linear(bgr_u8: np.ndarray) -> np.ndarray:
    """Approximate linear light from 8-bit camera values (gamma 2.2).

    The same table look-up by OpenCV (cv2.LUT) when the values are 8-bit: numpy's indexing
    first widens every value to a 64-bit index and takes about six times as long."""
    u = np.asarray(bgr_u8)
    if u.dtype != np.uint8 or u.size == 0:
        return _LIN_LUT[u]
    return cv2.LUT(np.ascontiguousarray(u).reshape(-1, 1), _LIN_LUT).reshape(u.shape)


_RGB2XYZ = np.array(
    [[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]], np.float32
)
_WHITE = np.array([0.9505, 1.0, 1.089], np.float32)
# Luminance (CIE Y) of linear light in OpenCV's B, G, R order: the middle row of _RGB2XYZ.
LUMA_BGR = np.array([0.0722, 0.7152, 0.2126], np.float32)


def lab_from_linear(bgr_lin: np.ndarray) -> np.ndarray:
    """CIE Lab (D65) of linear BGR rows, without clipping: a ratio above 1 gives L above 100.

    The element-wise steps run on X, Y and Z as three contiguous rows (the same operations on
    the same values, so the same bits): numpy loops slowly over a last axis of only three,
    and the colour fit asks for thousands of rows at a time."""
    rgb = np.asarray(bgr_lin, np.float32).reshape(-1, 3)[:, ::-1]
    xyz = np.ascontiguousarray((rgb @ _RGB2XYZ.T).T)
    xyz /= _WHITE[:, None]
    f = np.where(xyz > 0.008856, np.cbrt(np.maximum(xyz, 1e-9)), 7.787 * xyz + 16 / 116)
    return np.stack([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])], axis=1)


_RGB2XYZ_INV = np.linalg.inv(_RGB2XYZ).astype(np.float32)


def linear_from_lab(lab: np.ndarray) -> np.ndarray:
    """Linear BGR rows of Lab rows (the inverse of ``lab_from_linear``; may be negative for a
    colour outside the camera's gamut)."""
    lab = np.asarray(lab, np.float32).reshape(-1, 3)
    fy = (lab[:, 0] + 16) / 116
    f = np.stack([fy + lab[:, 1] / 500, fy, fy - lab[:, 2] / 200], axis=1)
    xyz = np.where(f > 6 / 29, f**3, (f - 16 / 116) / 7.787) * _WHITE
    return (xyz @ _RGB2XYZ_INV.T)[:, ::-1]


# A channel at or above this (linear; 8-bit 250) may be clipped: the light was at least that.
CLIPPED = 0.95
# A cube's colour is the median of its brighter half; when this share of those pixels is clipped
# in a channel, that median is only a bound. Slightly under a half: the clipped pixels are the
# brightest ones, so from about a half on they decide the median.
CENSOR_SHARE = 0.4


# A clipped floor is taken to be at most this much brighter than it reads (one stop). Auto
# exposure keeps the frame's mean well under full scale and the floor is most of the frame, so
# only a bright print in a bright spot clips, and not by much.
FLOOR_OVER = 2.0


# The share of the floor's light a cube's top may get (see ``ColourModel.shaded_distances``)
# and the prior sd of its log: a neighbour's shadow or a tilt halves it at most, light bounced
# off neighbours adds little.
SHADES = np.array([0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2], np.float32)
SHADE_SIGMA = 0.25
# A frame's sheen (see ``ColourModel.fit_frame``) as shares of a white cube's reading, and its
# prior sd: the few per cent a paint or varnish mirrors at most.
VEILS = (0.0, 0.02, 0.04, 0.06, 0.08)
VEIL_SIGMA = 0.04
# The darkest print the lightness fit allows for, as a factor on the cube / floor ratio over the
# pale print assumed (FLOOR_ALBEDO 0.6): black felt or dark-stained wood reflects 3-5 %.
DARK_PRINT = 0.6 / 0.035

# The camera's tone curve is not known: 8-bit values are taken as light ** (1 / 2.2), but
# cameras apply the sRGB curve, their own S-curves or a film-like curve, whose slope (gamma)
# ranges from about 1.6 to 3. A curve of another gamma turns every cube / floor ratio r into
# r ** c with c = 2.2 / gamma (the floor, r = 1, stays put): a contrast factor per frame,
# searched within exp(+-CONTRAST_SPAN) and held near 1 by a log-normal prior of sd
# CONTRAST_SIGMA (gamma 1.6-3 is log c within +-0.32, about one sd).
CONTRAST_SPAN = 0.6
CONTRAST_SIGMA = 0.3
CONTRAST_STEPS = 5
# Another contrast's fit whose cost (a sum of squared spreads and prior terms) is within this of
# the best is as plausible (a likelihood ratio of e) and may flag the cubes it names otherwise.
FIT_OPEN = 2.0
# Cubes of one lightness are the lightness factor's to explain: all the contrast could add is
# a trade of their chroma against the print's (three blue bricks on a pale print read as bluish
# blacks). It is only fitted to frames whose cubes' luminance ratios span more than this (log;
# a factor 2, less than any two colours' but black and brown, blue and red).
CONTRAST_MIN_SPAN = float(np.log(2.0))


def toned(ratios: np.ndarray, contrast: float) -> np.ndarray:
    """Cube/floor ratios (scaled by FLOOR_ALBEDO) as a camera of contrast ``contrast`` times
    the assumed one would read them: the raw ratio to the floor raised to that power, so that
    the floor itself (raw ratio 1) is unchanged."""
    if contrast == 1.0:
        return ratios
    raw = np.maximum(np.asarray(ratios, np.float32) / FLOOR_ALBEDO, 1e-6)
    return (FLOOR_ALBEDO * raw**contrast).astype(np.float32)


def row_medians(x: np.ndarray) -> np.ndarray:
    """``np.median(x, axis=1)`` of a 2-D float array, the same bits, several times faster.

    For an even row length numpy partitions around both middle elements, which costs many
    times one partition; the lower middle element is also the largest of those left of the
    upper one after a single partition. The pair is then averaged as numpy averages it."""
    x = np.asarray(x)
    if x.ndim != 2 or x.shape[1] == 0 or not np.issubdtype(x.dtype, np.floating):
        return np.median(x, axis=1)
    part = np.array(x, order="C")  # (a copy: partition works in place)
    k = part.shape[1] // 2
    part.partition(k, axis=1)
    if part.shape[1] % 2:
        return part[:, k].copy()
    return np.mean(np.stack([part[:, :k].max(axis=1), part[:, k]], axis=1), axis=1)


def cube_colour(pixels_lin: np.ndarray, floor_lin: np.ndarray) -> dict:
    """A cube's colour measurement from its interior pixels and the bare floor behind them.

    ``ratio``: the median cube/floor ratio (``floor_ratio``) of the brighter half (the faces
    towards the light carry the paint's colour best). ``low`` (bool per B, G, R): the cube's
    own pixels are clipped there, so the true ratio is at least ``ratio``. ``high``: the floor
    is clipped there (a bright print in strong light), so the true ratio is at most ``ratio``.
    Both: that channel says nothing. A piece whose median reads dull while a good share of it
    shows one strong paint is a mix, measured on that paint alone (``_strong_paint``).
    """
    pixels_lin = np.asarray(pixels_lin, np.float32).reshape(-1, 3)
    floor_lin = np.asarray(floor_lin, np.float32).reshape(-1, 3)
    ratio = floor_ratio(pixels_lin, floor_lin)
    m = _measured(pixels_lin, floor_lin, ratio)
    strong = _strong_paint(ratio, m["ratio"])
    if strong is not None:
        m = {**_measured(pixels_lin[strong], floor_lin[strong], ratio[strong]),
             "floor_spread": m["floor_spread"]}
    return m


def _measured(pixels_lin: np.ndarray, floor_lin: np.ndarray, ratio: np.ndarray) -> dict:
    """``cube_colour``'s measurement of a set of pixels (see there)."""
    lum = ratio @ LUMA_BGR
    lo_q, hi_q = np.percentile(lum, [50, 85])
    top = (lum >= lo_q) & (lum <= hi_q)
    return {
        "ratio": row_medians(ratio[top].T),
        "low": (pixels_lin[top] >= CLIPPED).mean(axis=0) >= CENSOR_SHARE,
        "high": (floor_lin[top] >= CLIPPED).mean(axis=0) >= CENSOR_SHARE,
        "floor": row_medians(floor_lin[top].T),
        "floor_spread": _floor_spread(floor_lin),
    }


# Paint chroma (floor-normalised Lab) that no pale or dark paint reaches: midway between the
# most chromatic of white, black and brown and the least chromatic of blue, red, green, yellow
# (their references: about 26 and 46). Shadows only darken, so shaded floor reads neutral.
_DULL = ("white", "black", "brown")
STRONG_CHROMA = 0.5 * (
    max(float(np.hypot(*DEFAULT_REFS[c][1:])) for c in _DULL)
    + min(float(np.hypot(*DEFAULT_REFS[c][1:])) for c in DEFAULT_REFS if c not in _DULL))
# The share of a piece that must be strongly coloured for it to be a coloured cube's: a third (a
# piece is meant to be one cube; the rest may be shaded floor between cubes and a neighbour's
# fringe).
STRONG_SHARE = 1 / 3
# Hues within this of the strong pixels' modal hue are one paint (degrees; the strong paints'
# hues lie 50 degrees apart or more).
HUE_REACH = 30.0
# The strong paints' hues (degrees, floor-normalised Lab): a strongly coloured part of another
# hue (a white cube in a tinted light reads cyan against the floor) is no paint of theirs.
STRONG_HUES = np.array([np.degrees(np.arctan2(DEFAULT_REFS[c][2], DEFAULT_REFS[c][1])) % 360
                        for c in DEFAULT_REFS if c not in _DULL], np.float32)


def _strong_paint(ratio: np.ndarray, median: np.ndarray) -> np.ndarray | None:
    """The pixels of one strong paint (a boolean mask), when the piece's median reads dull but
    a third of its pixels or more are strongly coloured, most of them in one strong paint's
    hue; else None.

    Why: where a cube's piece also holds shaded floor (neutral: shadows only darken) and a
    neighbour's pixels, the channel-wise median lies between the paints and the floor and reads
    as a dull colour (a red or green as brown, a blue as white). A dull cube's own pixels are
    never strongly coloured, so a third of them strongly coloured is a coloured cube's; and the
    piece is meant to be one cube, so its own paint outnumbers a neighbour's fringe."""
    if len(ratio) < 9 or np.hypot(*lab_from_linear(median)[0, 1:]) >= STRONG_CHROMA:
        return None
    lab = lab_from_linear(ratio)
    strong = np.hypot(lab[:, 1], lab[:, 2]) >= STRONG_CHROMA
    if strong.sum() < STRONG_SHARE * len(ratio):
        return None
    hue = np.degrees(np.arctan2(lab[:, 2], lab[:, 1]))
    hist = np.bincount(((hue[strong] % 360) // HUE_REACH).astype(int))
    mode = (np.argmax(hist) + 0.5) * HUE_REACH
    if np.min(np.abs((STRONG_HUES - mode + 180) % 360 - 180)) > HUE_REACH:
        return None
    near = strong & (np.abs((hue - mode + 180) % 360 - 180) <= HUE_REACH)
    return near if near.sum() > 0.5 * strong.sum() else None


def _floor_spread(floor_lin: np.ndarray) -> float:
    """How unevenly lit the floor behind a cube is: log of the 90th over the 10th percentile of
    its luminance. The camera sees past a cube's top to the floor beyond it; where a shadow edge
    runs there (a tower's mouth) that floor is not the light on the cube."""
    lum = np.maximum(floor_lin @ LUMA_BGR, 1e-4)
    hi, lo = np.percentile(lum, [90, 10])
    return float(np.log(hi / lo))


def floor_ratio(pixels_lin: np.ndarray, floor_lin: np.ndarray) -> np.ndarray:
    """Linear BGR of pixels divided by the floor behind them, scaled to a pale print's albedo."""
    return pixels_lin / np.maximum(floor_lin, 1e-3) * FLOOR_ALBEDO


@dataclass
class ColourModel:
    """Per colour: a reference (floor-normalised Lab) and its spread (one sd per Lab axis).

    The spread says how much that colour's appearance varies (tilt of the cube to the light,
    noise, prints): white and yellow vary a lot in lightness, black hardly in chroma.
    """

    refs: dict[str, tuple[float, float, float]]
    spread: dict[str, tuple[float, float, float]] = field(
        default_factory=lambda: dict(DEFAULT_SPREAD)
    )
    # How far the frame's print and light may move every cube's ratio, as prior sds of the log
    # factors fitted per frame (``fit_print``): a lightness factor and a blue/red tint. Wide by
    # default (any print, any light); narrow once a calibration drop measured this session's.
    light_sigma: float = 0.6
    tint_sigma: float = 0.2
    # Whether each frame's fit looks for the camera's contrast (``toned``): not once a
    # calibration drop has put the references into this session's camera's own reading.
    fit_contrast: bool = True

    @classmethod
    def default(cls) -> ColourModel:
        return cls(dict(DEFAULT_REFS), dict(DEFAULT_SPREAD))

    def matrix(self) -> np.ndarray:
        return np.array([self.refs[c] for c in COLOURS], np.float32)

    def sds(self) -> np.ndarray:
        return np.maximum(np.array([self.spread[c] for c in COLOURS], np.float32), MIN_SPREAD)

    def distances(self, lab: np.ndarray) -> np.ndarray:
        """Spread-scaled distance of each Lab row to each colour, shape (N, 7)."""
        lab = np.asarray(lab, np.float32).reshape(-1, 3)
        d = (lab[:, None, :] - self.matrix()[None]) / self.sds()[None]
        return np.sqrt((d * d).sum(axis=2))

    def ratio_distances(
        self, ratios: np.ndarray, gains: np.ndarray, low=None, high=None, veil: float = 0.0
    ) -> tuple[np.ndarray, np.ndarray]:
        """Distances (G, N, 7) of cube/floor ratios (N x 3) divided by each row of per-channel
        factors ``gains`` (G x 3), and their Lab (G, N, 3).

        A censored channel (``low``: the cube clipped, the truth is at least the reading;
        ``high``: the floor clipped, the truth is at most the reading and at least the reading
        over ``FLOOR_OVER``, or over the factor given when ``high`` holds numbers: see
        ``floor_over``) is compared with each colour only where the reading contradicts
        it: the reading is moved to that colour's own value within its interval before the
        Lab distance is taken. ``veil``: the share of a white cube's reading that the frame's
        sheen adds to every cube (see ``fit_frame``), taken off first.
        """
        ratios = np.asarray(ratios, np.float32).reshape(-1, 3)
        g = np.asarray(gains, np.float32).reshape(-1, 3)
        n, ng = len(ratios), len(g)
        m = ratios[None, :, :] / g[:, None, :]
        veil = np.asarray(veil, np.float32).reshape(-1, 1, 1)  # one, or one per row of gains
        if veil.any():
            m = np.maximum(m - veil * self._white_linear(), 1e-4)
        labs = lab_from_linear(m.reshape(-1, 3)).reshape(ng, n, 3)
        ref, sds = self.matrix(), self.sds()
        dist = np.sqrt(_sq_distances(labs.reshape(-1, 3), ref, sds)).reshape(ng, n, len(ref))
        if low is None and high is None:
            return dist, labs
        low = np.zeros((n, 3), bool) if low is None else np.asarray(low, bool).reshape(n, 3)
        over = _over(high, n)
        high = over > 1.0
        idx = np.nonzero(low.any(axis=1) | high.any(axis=1))[0]
        if len(idx) == 0:
            return dist, labs
        r = np.maximum(linear_from_lab(ref), 1e-4)[None, None]  # (1, 1, 7, 3)
        mm = m[:, idx, None, :]
        lo = low[idx][None, :, None, :]
        # the interval the true ratio lies in: a clipped cube may be any brighter; a clipped
        # floor at most ``over`` brighter than read, so the ratio at most that much lower
        top = np.where(lo, np.inf, mm)
        bottom = mm / over[idx][None, :, None, :]
        mm = _clamped(r, bottom, top)
        labc = lab_from_linear(mm.reshape(-1, 3)).reshape(mm.shape)
        dc = (labc - ref) / sds
        dist[:, idx, :] = np.sqrt(_sum3(dc * dc))
        return dist, labs

    def _white_linear(self) -> np.ndarray:
        return np.maximum(linear_from_lab(np.array(self.refs["white"]))[0], 0.0)

    def shaded_distances(self, ratios, gains, low=None, high=None, veil=0.0) -> np.ndarray:
        """Distances (N, 7) allowing each cube's top its own share of the floor's light.

        A cube's top is lit like the floor beside it only when it lies flat in the open: a
        tilted cube, one in a neighbour's or a wall's shadow, or a top read partly off its
        shaded side, gets less (and only a little more, by light reflected from neighbours).
        Each colour is compared at the share in ``SHADES`` that fits it best, paying
        (log share / SHADE_SIGMA)^2 for it.
        """
        g = np.asarray(gains, np.float32).reshape(1, 3) * SHADES[:, None]
        dist, _ = self.ratio_distances(ratios, g, low, high, veil)  # (S, N, 7)
        cost = dist**2 + (np.log(SHADES) / SHADE_SIGMA)[:, None, None] ** 2
        return np.sqrt(cost.min(axis=0))

    def _glare_distances(self, ratios, gains, low, high, room, veil=0.0) -> np.ndarray:
        """Distances (N, 7) if the floor beside each cube carries a glare: the light mirrored
        by the print adds the light's own colour to the floor (not to the cube), so the cube
        reads darker and greyer against it. The glare's share of the floor g (white light, the
        colour a white cube shows) is tried up to ``room`` (per cube: how much brighter the
        floor there is than the frame's usual floor allows), paying (g / GLARE_SIGMA)^2."""
        w = np.maximum(linear_from_lab(np.array(self.refs["white"]))[0], 1e-3)
        w = w * np.asarray(gains, np.float32) / max(float(w.max()), 1e-3)
        w = w / float(w.max())
        best = np.full((len(ratios), len(COLOURS)), np.inf, np.float32)
        for share in GLARE_SHARES:
            ok = share <= room
            if not ok.any():
                break
            f = 1.0 / np.maximum(1.0 - share * w, 0.05)
            d = self.shaded_distances(ratios[ok] * f, gains, low[ok], high[ok], veil)
            d = np.sqrt(d * d + (share / GLARE_SIGMA) ** 2)
            best[ok] = np.minimum(best[ok], d)
        return best

    def _veiled_distances(self, raw, contrast, gains, low, over, excess, veil=0.0, tint=None
                          ) -> np.ndarray:
        """Distances (N, 7) if a glare lies on cube and floor alike.

        Why: the lamp mirrored by the tray's surface adds its own light to the top of a cube
        standing in the spot as much as to the floor (both face up), so every ratio is pulled
        towards the floor's own: a black, a green or a yellow there reads like a pale grey
        (the floor-only glare of ``_glare_distances`` cannot undo that). A share s of the
        floor's reading taken off both gives back the cube's own ratio, (r - s A) / (1 - s),
        per channel with s scaled by ``tint`` (``_glare_tint``: the glare is grey after the
        camera's white balance, the floor has the print's colour, so a cream floor takes more
        of it, relatively, in blue); without ``tint`` it has the floor's colour.
        s is tried at ``VEIL_STEPS`` of the floor's excess over the frame's usual floor (a glare
        only brightens, a shadow only darkens, so the excess is the most it can be), raw ratios
        first, then toned like the others; the hypothesis costs ``VEIL_COST`` (squared spreads).
        """
        raw = np.asarray(raw, np.float32).reshape(-1, 3)
        best = np.full((len(raw), len(COLOURS)), np.inf, np.float32)
        for k in VEIL_STEPS:
            share = (k * excess).astype(np.float32)
            ok = share > 0
            if not ok.any():
                break
            s = share[ok, None] * (1.0 if tint is None else tint[ok])
            r = np.maximum(raw[ok] - s * FLOOR_ALBEDO, 1e-4) / np.maximum(1.0 - s, 0.05)
            d = self.shaded_distances(toned(r, contrast), gains, low[ok], over[ok], veil)
            best[ok] = np.minimum(best[ok], np.sqrt(d * d + VEIL_COST))
        return best

    def _clipped_glare_distances(self, raw, contrast, gains, low, cubes, veil=0.0
                                 ) -> np.ndarray:
        """Distances (N, 7) for cubes whose floor is clipped in every channel, if a grey glare
        lies on cube and floor alike (inf for the others).

        Why: such a floor reads full scale whatever the glare on it, so neither the ratio to
        it nor its excess over the usual floor (``_veiled_distances``) says how much of the
        cube's reading is the glare (a yellow or a brown under it read white, sure). Read in
        the camera's units instead: the cube reads its own share of the usual floor's light
        plus the glare G, the same in every channel (the lamp is grey after white balance),
        so its own ratio is (C - G) / D, with D the frame's usual unclipped floor. G is
        bounded both ways by physics: the floor there is clipped, so D + G reaches full scale
        in every channel (G >= CLIPPED - min D); a paint reflects nothing less than nothing,
        so G is at most the cube's darkest unclipped channel. G is tried at
        ``CLIPPED_GLARE_STEPS`` across that range, at the cost of ``VEIL_COST``.
        """
        raw = np.asarray(raw, np.float32).reshape(-1, 3)
        best = np.full((len(raw), len(COLOURS)), np.inf, np.float32)
        usual = _usual_floor(cubes)
        if usual is None:
            return best
        for i, c in enumerate(cubes):
            floor = np.asarray(c["floor"], np.float32).reshape(3)
            if not (np.asarray(c.get("high", (False,) * 3), bool).all() and low[i].sum() < 3):
                continue
            seen = raw[i] * floor / FLOOR_ALBEDO  # the cube's reading (linear, full scale 1)
            g_lo = max(CLIPPED - float(usual.min()), 0.0)
            g_hi = float(seen[~low[i]].min())
            if g_hi <= g_lo:
                continue
            g = (g_hi - (g_hi - g_lo) * CLIPPED_GLARE_STEPS)[:, None]
            r = np.maximum(seen[None] - g, 1e-4) / usual * FLOOR_ALBEDO
            d = self.shaded_distances(toned(r, contrast), gains, np.repeat(low[i:i + 1], len(g),
                                                                         axis=0), None, veil)
            best[i] = np.sqrt(d * d + VEIL_COST).min(axis=0)
        return best

    def log_likelihood(self, lab: np.ndarray) -> np.ndarray:
        return self._loglik(self.distances(lab))

    def _loglik(self, d: np.ndarray) -> np.ndarray:
        return -0.5 * d * d - np.log(self.sds()).sum(axis=1)

    def probabilities(self, lab: np.ndarray) -> np.ndarray:
        """A soft assignment (N, 7): Gaussian likelihoods, normalised."""
        return _softmax(self.log_likelihood(lab))

    def _costs(self, ratios, gains, low=None, high=None, veil=0.0, names=None) -> np.ndarray:
        """Robust misfit of the cubes for each row of per-channel factors ``gains`` (G x 3)."""
        return self._cube_costs(ratios, gains, low, high, veil, names).sum(axis=1)

    def _cube_costs(self, ratios, gains, low=None, high=None, veil=0.0, names=None
                    ) -> np.ndarray:
        """Each cube's robust misfit (G, N) for each row of per-channel factors ``gains``."""
        g = np.asarray(gains, np.float32).reshape(-1, 3)
        dist, _ = self.ratio_distances(ratios, g, low, high, veil)
        if names is not None:  # the colours are known (a confirmed drop): only fit the light
            idx = np.asarray(names, int).reshape(1, -1, 1)
            d = np.take_along_axis(dist, np.broadcast_to(idx, (len(g), len(ratios), 1)), 2)
            return np.minimum(d[:, :, 0] ** 2, 9.0)
        # no penalty for names that reverse the cubes' measured lightness order: each top has
        # its own share of the light (``shaded_distances``) and its own sheen, so a glossy black
        # may read lighter than a brown in a neighbour's shadow (s001/drop04: a black at L 55
        # beside a brown at 50 forced the brown to black)
        d = _min_last(dist)
        return np.minimum(d * d, 9.0)

    def fit_print(
        self,
        ratios: np.ndarray,
        light_sigma: float | None = None,
        tint_sigma: float | None = None,
        *,
        low=None,
        high=None,
    ) -> np.ndarray:
        """Per-channel factors (B, G, R) that best explain a frame's cube colours (no sheen);
        see ``fit_frame``."""
        return self.fit_frame(ratios, light_sigma, tint_sigma, low=low, high=high,
                              veils=(0.0,))[0]

    def fit_frame(
        self,
        ratios: np.ndarray,
        light_sigma: float | None = None,
        tint_sigma: float | None = None,
        *,
        low=None,
        high=None,
        veils=None,
        names=None,
    ) -> tuple[np.ndarray, float]:
        """Per-channel factors (B, G, R) and a sheen that best explain a frame's cube colours.

        Cube/floor ratios assume a pale cream print. A darker print makes every cube look
        lighter by one factor; a print of another hue (grey, white, pink) tints every cube the
        same way. Both are fitted to the frame's cubes as a lightness factor and a blue/red
        tint against green, each held near "as assumed" by a log-normal prior, so that a frame
        with one or two cubes keeps the defaults. Clipped channels (``low``/``high``, see
        ``ratio_distances``) count only as bounds.

        The sheen (``veil``): painted tops mirror a little of the light; where the light sits
        near the camera (a ring light) every top sends the camera the same few per cent of the
        light's own colour, which lifts and greys the dark cubes (black and brown) and hardly
        changes the others. It is one share of a white cube's reading for the whole frame
        (``VEILS``, prior sd ``VEIL_SIGMA``). ``names`` (a colour index per cube), when the
        colours are known, fits only the print, light and sheen to them.
        """
        gains, veil, _ = self.fit_light(ratios, light_sigma, tint_sigma, low=low, high=high,
                                        veils=veils, names=names, contrasts=(1.0,))
        return gains, veil

    def fit_light(
        self,
        ratios: np.ndarray,
        light_sigma: float | None = None,
        tint_sigma: float | None = None,
        *,
        low=None,
        high=None,
        veils=None,
        names=None,
        contrasts=None,
        others: list | None = None,
    ) -> tuple[np.ndarray, float, float]:
        """``fit_frame`` plus the camera's contrast (see ``toned``): (gains, veil, contrast).

        Each contrast in ``contrasts`` (default: ``CONTRAST_STEPS`` over exp(+-CONTRAST_SPAN))
        tones the ratios, the print and light are fitted coarsely to them, and the contrast
        whose fit costs least (prior included) is refined. Why: a camera of another tone curve
        spreads the cubes' lightness further apart or closer together than the references,
        which no single lightness factor undoes (white and black cannot both be matched)."""
        ratios = np.asarray(ratios, np.float32).reshape(-1, 3)
        if len(ratios) == 0:
            return np.ones(3, np.float32), 0.0, 1.0
        if contrasts is None and not self.fit_contrast:
            contrasts = (1.0,)
        if contrasts is None:
            contrasts = np.exp(np.linspace(-CONTRAST_SPAN, CONTRAST_SPAN, CONTRAST_STEPS))
        over = _over(high, len(ratios))
        lum = np.log(np.maximum(ratios @ LUMA_BGR, 1e-6))
        if float(lum.max() - lum.min()) < CONTRAST_MIN_SPAN:
            contrasts = (1.0,)
        best_c, best_cost, start = 1.0, np.inf, None
        scans = []
        coarse = self._coarse_scans(ratios, contrasts, light_sigma, tint_sigma, low, over, names)
        for c, (*klt, cost) in zip(contrasts, coarse, strict=True):
            cost += (np.log(c) / CONTRAST_SIGMA) ** 2
            scans.append((cost, float(c), klt))
            if cost < best_cost:
                best_c, best_cost, start = float(c), cost, klt
        if others is not None:  # the other contrasts that fit about as well, coarsely
            others += [(c, np.exp(np.array([k + b, k, k + r], np.float32)))
                       for cost, c, (k, b, r) in scans
                       if c != best_c and cost <= best_cost + FIT_OPEN]
        gains, veil, _ = self._fit_gains(toned(ratios, best_c), light_sigma, tint_sigma, low,
                                         over**best_c, veils, names, start=start)
        return gains, veil, best_c

    def _sigmas(self, light_sigma, tint_sigma) -> tuple[float, float]:
        """The priors' sds: those given, else the model's own."""
        return (self.light_sigma if light_sigma is None else light_sigma,
                self.tint_sigma if tint_sigma is None else tint_sigma)

    @staticmethod
    def _coarse_grid(light_sigma: float, tint_sigma: float) -> tuple[np.ndarray, ...]:
        """The whole range of the print and light search, coarsely: log lightness, blue tint
        and red tint values, and the half widths of the lightness and tint ranges."""
        span_k = min(1.6, 3.0 * light_sigma)
        # a print may be far darker than the pale one assumed (a ratio up to DARK_PRINT times
        # larger), hardly lighter: the range reaches further up, at the same step
        more = max(0, int(np.ceil((min(np.log(DARK_PRINT), 3.0 * light_sigma) - span_k)
                                  / (span_k / 4))))
        top_k, n_k = span_k * (1 + more / 4), 9 + more
        span_t = min(0.5, 3.0 * tint_sigma)
        tints = np.linspace(-span_t, span_t, 5)
        return np.linspace(-span_k, top_k, n_k), tints, tints, span_k, span_t

    def _coarse_scans(self, ratios, contrasts, light_sigma, tint_sigma, low, over, names
                      ) -> list[tuple[float, float, float, float]]:
        """``_fit_gains``' coarse search (log lightness, blue tint, red tint, cost) at each
        contrast. The grid of factors and its prior are the same for all contrasts: made once.
        (One ``_costs`` call over all contrasts' rows at once was tried: no faster, and at
        times much slower, its arrays large enough for each allocation to fault in fresh
        pages.)"""
        light_sigma, tint_sigma = self._sigmas(light_sigma, tint_sigma)
        ks, tbs, trs, _, _ = self._coarse_grid(light_sigma, tint_sigma)
        kk, bb, rr = (a.ravel() for a in np.meshgrid(ks, tbs, trs, indexing="ij"))
        g = np.exp(np.stack([kk + bb, kk, kk + rr], axis=1))
        prior = (kk / light_sigma) ** 2 + (bb * bb + rr * rr) / tint_sigma**2
        out = []
        for c in contrasts:
            cost = self._costs(toned(ratios, c), g, low, over**c, 0.0, names)
            cost += prior
            j = int(np.argmin(cost))
            out.append((float(kk[j]), float(bb[j]), float(rr[j]), float(cost[j])))
        return out

    def _fit_gains(self, ratios, light_sigma, tint_sigma, low, high, veils, names,
                   start=None):
        """The print, light and sheen search of ``fit_frame`` at one contrast: (gains, veil,
        cost), refined from ``start`` (a coarse result, see ``_coarse_scans``) when given,
        else from the whole range's coarse best."""
        light_sigma, tint_sigma = self._sigmas(light_sigma, tint_sigma)
        veils = VEILS if veils is None else veils
        ks, tbs, trs, span_k, span_t = self._coarse_grid(light_sigma, tint_sigma)

        def best(ks, tbs, trs, v):
            kk, bb, rr = (a.ravel() for a in np.meshgrid(ks, tbs, trs, indexing="ij"))
            g = np.exp(np.stack([kk + bb, kk, kk + rr], axis=1))
            cost = self._costs(ratios, g, low, high, v, names)
            cost += (kk / light_sigma) ** 2 + (bb * bb + rr * rr) / tint_sigma**2
            j = int(np.argmin(cost))
            return float(kk[j]), float(bb[j]), float(rr[j]), float(cost[j])

        # the whole range coarsely (no local minimum to be caught in), then finely around
        # the best, then the sheen, then the tint again
        if start is None:
            k, b_, r_, cost = best(ks, tbs, trs, 0.0)
        else:
            k, b_, r_ = start
        step_k, step_t = span_k / 4, span_t / 2
        k, b_, r_, cost = best(k + np.linspace(-step_k, step_k, 7),
                               b_ + np.linspace(-step_t, step_t, 5),
                               r_ + np.linspace(-step_t, step_t, 5), 0.0)
        v = 0.0
        if len(veils) > 1:
            g = np.exp(np.array([[k + b_, k, k + r_]]))
            vs = np.asarray(veils, np.float32)
            costs = (self._costs(ratios, np.repeat(g, len(vs), axis=0), low, high, vs, names)
                     + (vs / VEIL_SIGMA) ** 2)
            v = float(veils[int(np.argmin(costs))])
            if v:
                fine = np.linspace(-step_t / 2, step_t / 2, 3)
                k, b_, r_, cost = best(k + np.linspace(-step_k / 3, step_k / 3, 3), b_ + fine,
                                       r_ + fine, v)
        return np.exp(np.array([k + b_, k, k + r_])).astype(np.float32), v, cost

    def name_cubes(self, cubes: list[dict]) -> list[str]:
        """Name a frame's cubes together: fit the frame's print and light to all of them, then
        give each ``lab`` (after the fit), ``p`` (7 probabilities), ``d`` (7 spread-scaled
        distances, clipped channels as bounds) and ``gains``. Each cube dict needs ``ratio``;
        ``low``/``high`` (clipping, see ``cube_colour``) are optional. Returns warnings in
        words (cubes whose colour the clipped light hides).
        """
        if not cubes:
            return []
        ratios = np.array([c["ratio"] for c in cubes], np.float32).reshape(-1, 3)
        low = np.array([c.get("low", (False,) * 3) for c in cubes], bool).reshape(-1, 3)
        high = np.array([c.get("high", (False,) * 3) for c in cubes], bool).reshape(-1, 3)
        over = floor_over(cubes, high)
        fit = _fit_set(cubes)
        others: list = []
        gains, veil, contrast = self.fit_light(ratios[fit], low=low[fit], high=over[fit],
                                               others=others)
        raw_ratios, raw_over = ratios, over
        ratios, over = toned(ratios, contrast), over**contrast
        _, labs = self.ratio_distances(ratios, gains[None], low, over, veil)
        dist = self.shaded_distances(ratios, gains, low, over, veil)
        excess = _floor_excess(cubes)
        glare = _glare_room(cubes, excess)
        if np.any(glare > 0):
            dist = np.minimum(dist, self._glare_distances(ratios, gains, low, over, glare, veil))
        if np.any(excess > 0):
            tint = _glare_tint(cubes)
            dist = np.minimum(dist, self._veiled_distances(raw_ratios, contrast, gains, low,
                                                           over, excess, veil, tint))
        dist = np.minimum(dist, self._clipped_glare_distances(raw_ratios, contrast, gains, low,
                                                              cubes, veil))
        dist = dist[None]
        p = _softmax(self._loglik(dist[0]))
        near = self._other_fits(raw_ratios, low, raw_over, others, dist[0])
        hinges = self._light_hinges(cubes, ratios, gains, low, over, veil, dist[0])
        warnings = []
        for i, c in enumerate(cubes):
            c["lab"], c["p"], c["d"], c["gains"] = labs[0, i], p[i], near[i], gains
            c["veil"], c["contrast"] = veil, contrast
            c["light_unsure"] = bool(hinges[i])
            c["floor_excess"] = float(excess[i])
            if int((low[i] & high[i]).sum()) >= 2 and "xy" in c and _left_open(near[i]):
                x, y = c["xy"]
                warnings.append(f"the light is clipped on a cube near ({x:.0f}, {y:.0f}) and "
                                "the floor around it: its colour is hard to tell")
        return warnings

    def _other_fits(self, ratios, low, over, others, dist) -> np.ndarray:
        """Distances (N, 7) as ``dist``, but each colour other than a cube's best as near as
        any of the frame's other plausible fits (``others``: (contrast, gains) pairs whose
        coarse cost came within FIT_OPEN of the best) brings it.

        Why: a frame of a few cubes often fits about as well under two contrasts (or prints),
        and a name that holds under one but not the other is a guess, however clear it looks
        under the chosen one (s001/drop02: the brown on the wood print is brown at the
        assumed contrast, black at a steeper one that fits 0.3 better). The counter flags a
        cube whose second colour comes within a spread of its best (``BETWEEN_SD``); the name
        itself still comes from the best fit.
        """
        out = dist.copy()
        best = dist.argmin(axis=1)
        rows = np.arange(len(dist))
        for c, g in others:
            d = self.shaded_distances(toned(ratios, c), g, low, over**c)
            keep = out[rows, best]
            out = np.minimum(out, d)
            out[rows, best] = keep
        return out

    def _light_hinges(self, cubes, ratios, gains, low, over, veil, dist) -> np.ndarray:
        """Per cube, whether its name hangs on light the floor reading cannot give (bool).

        A cube's ratio reads its light off the floor the camera sees behind it. Where that
        floor is unevenly lit (``floor_spread``: a shadow edge behind the cube, the tower's
        mouth), the light on the cube lies anywhere between the floor's darker and brighter
        parts, about half the spread either way of what was divided by. Beyond the share
        the naming already allows every top (``SHADE_SIGMA``), the cube is named again at
        both ends of that range; a name that changes there is a guess, however far the other
        colours come out at the middle (s004/drop07 without a reference: a white cube at the
        mouth read brown, 3.97 spreads off, just inside the "unlike every colour" bar).
        """
        half = 0.5 * np.array([float(c.get("floor_spread", 0.0)) for c in cubes], np.float32)
        out = np.zeros(len(cubes), bool)
        idx = np.nonzero(half > SHADE_SIGMA)[0]
        if len(idx) == 0:
            return out
        name = dist[idx].argmin(axis=1)
        for sign in (-1.0, 1.0):
            r = ratios[idx] * np.exp(sign * half[idx])[:, None]
            d = self.shaded_distances(r, gains, low[idx], over[idx], veil)
            out[idx] |= d.argmin(axis=1) != name
        return out

    def to_dict(self) -> dict:
        return {
            "refs": {k: [float(x) for x in v] for k, v in self.refs.items()},
            "spread": {k: [float(x) for x in v] for k, v in self.spread.items()},
            "light_sigma": float(self.light_sigma),
            "tint_sigma": float(self.tint_sigma),
            "fit_contrast": bool(self.fit_contrast),
        }

    @classmethod
    def from_dict(cls, d: dict) -> ColourModel:
        refs = {k: tuple(float(x) for x in d["refs"][k]) for k in COLOURS}
        spread_in = d.get("spread") or {}
        spread = {
            k: tuple(float(x) for x in spread_in.get(k, DEFAULT_SPREAD[k])) for k in COLOURS
        }
        return cls(
            refs,
            spread,
            float(d.get("light_sigma", cls.light_sigma)),
            float(d.get("tint_sigma", cls.tint_sigma)),
            bool(d.get("fit_contrast", cls.fit_contrast)),
        )


def _sum3(x: np.ndarray) -> np.ndarray:
    """``x.sum(axis=-1)`` over a last axis of three, in the same order (so the same bits): a
    numpy reduction over so short an axis costs ten times the three slices' adds."""
    return x[..., 0] + x[..., 1] + x[..., 2]


def _clamped(r: np.ndarray, bottom: np.ndarray, top: np.ndarray) -> np.ndarray:
    """``np.minimum(np.maximum(r, bottom), top)`` of the colours' own values ``r`` (1, 1, 7, 3)
    and each cube's interval (G, K, 1, 3), the same values (np.clip: the same, several times
    slower). Why: numpy's broadcast loops over a last axis of three are slow; repeating the
    intervals to full size first lets both steps run as flat loops."""
    out = np.repeat(bottom, r.shape[2], axis=2)
    np.maximum(np.broadcast_to(r, out.shape), out, out=out)
    np.minimum(out, np.repeat(top, r.shape[2], axis=2), out=out)
    return out


def _min_last(x: np.ndarray) -> np.ndarray:
    """``x.min(axis=-1)`` over a short last axis (the seven colours), slice by slice: the same
    values, an order of magnitude faster than numpy's reduction along so short an axis."""
    out = x[..., 0].copy()
    for i in range(1, x.shape[-1]):
        np.minimum(out, x[..., i], out=out)
    return out


def _sq_distances(labs: np.ndarray, ref: np.ndarray, sds: np.ndarray) -> np.ndarray:
    """Squared spread-scaled distances (N, 7) of Lab rows to the references, as two small
    matrix products (the frame fit asks for thousands of rows at a time)."""
    w = 1.0 / sds**2
    d2 = (labs * labs) @ w.T - 2.0 * labs @ (ref * w).T + (ref * ref * w).sum(axis=1)
    return np.maximum(d2, 0.0)


def _over(high, n: int) -> np.ndarray:
    """Per cube and channel, how much brighter than read the floor may be (N x 3; 1 where it
    is not clipped). ``high`` is None, booleans (clipped: up to ``FLOOR_OVER``) or the factors
    themselves (``floor_over``)."""
    if high is None:
        return np.ones((n, 3), np.float32)
    h = np.asarray(high).reshape(n, 3)
    if h.dtype == bool:
        return np.where(h, FLOOR_OVER, 1.0).astype(np.float32)
    return np.clip(h.astype(np.float32), 1.0, FLOOR_OVER)


# The floor's colour (print times light) at a clipped spot is taken to lie within this factor
# of the most extreme colour the frame's unclipped floor shows, per pair of channels: the
# brightest spots are lit by the frame's main light, whose colour the less bright floor also
# shows; the margin leaves the print's own pattern some room.
FLOOR_HUE_MARGIN = 1.25


def floor_over(cubes: list[dict], high: np.ndarray) -> np.ndarray:
    """Per cube and channel, how much brighter than read its clipped floor may be (N x 3).

    A clipped channel only says the floor was at least full scale. When another channel of
    the same floor is not clipped, the floor's colour bounds it: the clipped channel is at most
    the unclipped one times the largest ratio of the two that the frame's unclipped floors
    show (``FLOOR_HUE_MARGIN`` more). Without that (every floor clipped there, fewer than two
    to compare, or a floor already beyond the others' colours) the bound stays ``FLOOR_OVER``.
    Why: a pale cube on a floor clipped in two channels otherwise may be read up to twice as
    dark there, and a light sage green came within reach of black (s003/drop06).
    """
    high = np.asarray(high, bool).reshape(-1, 3)
    over = np.where(high, FLOOR_OVER, 1.0).astype(np.float32)
    floors = [c.get("floor") for c in cubes]
    if not high.any() or any(f is None for f in floors):
        return over
    f = np.maximum(np.asarray(floors, np.float32).reshape(-1, 3), 1e-4)
    # a censored channel bounds nothing, itself least: under its median full scale (0.93)
    # may still hide a clipped share, and paired with itself it would bound it at the margin
    clean = (f < CLIPPED) & ~high
    for i, j in np.argwhere(high):
        for u in np.nonzero(clean[i])[0]:
            both = clean[:, j] & clean[:, u]
            if both.sum() < 2:
                continue
            top = float(np.max(f[both, j] / f[both, u])) * FLOOR_HUE_MARGIN
            bound = f[i, u] * top / f[i, j]
            # below 1 the reading already lies beyond the frame's floor colours: this floor is
            # unlike the others (another print or light here), so the pair tells nothing
            if bound >= 1.0:
                over[i, j] = min(over[i, j], bound)
    return over


# A cube clipped on cube and floor alike has its colour hidden only when its clipped channels,
# read as intervals (``ratio_distances``), bring a second colour within CLIP_BETWEEN spreads of
# its best or leave the best further than CLIP_FAR: the counter's own tests of a name (its
# BETWEEN_SD and FAR_SD, not imported: the counter imports this module).
CLIP_BETWEEN = 1.0
CLIP_FAR = 4.0


def _left_open(d: np.ndarray) -> bool:
    """Whether a clipped cube's distances (7) leave its colour open.

    Why: the clipped channels are already compared as bounds; when the unclipped ones still
    name the cube clearly (s003/drop06: a yellow clipped in green and red, its blue at a
    twentieth of the floor's, 0.05 spreads from yellow and 3 from green) the words "its colour
    is hard to tell" are false, and a flag on a right reading teaches players to ignore flags.
    """
    first, second = np.sort(np.asarray(d, np.float64))[:2]
    return bool(first > CLIP_FAR or second - first < CLIP_BETWEEN)


# A cube whose floor behind varies by more than this factor (``_floor_spread``) does not take
# part in the frame's fit, when at least FIT_MIN others do.
FIT_SPREAD = float(np.log(2.0))
FIT_MIN = 3


def _fit_set(cubes: list[dict]) -> np.ndarray:
    """Which cubes the frame's print and light are fitted to (bool per cube).

    The fit reads the light off the cube / floor ratios, which hold only where the floor the
    camera sees behind a cube is lit like the cube. Behind a cube at a tower's mouth it may lie
    in the mouth's deep shadow, several times darker than the light on the cube, and its ratio
    reads several times too light (s004: up to 14 times across one cube). Those cubes are still
    named, against the light the others show; with fewer than FIT_MIN others every cube counts,
    as before.
    """
    spread = np.array([float(c.get("floor_spread", 0.0)) for c in cubes])
    fit = spread <= FIT_SPREAD
    return fit if fit.sum() >= FIT_MIN else np.ones(len(cubes), bool)


# Glare: shares of the floor's reading the mirrored light may make up, and the prior sd.
GLARE_SHARES = (0.15, 0.3, 0.45, 0.6)
GLARE_SIGMA = 0.3


def _glare_room(cubes: list[dict], excess: np.ndarray) -> np.ndarray:
    """Per cube, the largest share of the floor beside it that a glare may make up: the floor's
    excess over the median floor of the frame's cubes (``_floor_excess``), counted only
    where that floor is clipped in a channel (auto exposure keeps the diffuse floor under full
    scale; vignetting and falloff brighten parts of it too, without clipping)."""
    if not excess.any():
        return excess
    clipped = (np.asarray([c["floor"] for c in cubes], np.float32).reshape(-1, 3)
               >= CLIPPED).any(axis=1)
    return np.where(clipped, excess, 0.0)


# A glare on cube and floor (``_veiled_distances``): the shares of the floor's excess it is
# tried at, and what the hypothesis costs in squared spreads (a likelihood ratio of e^-0.5 to
# the plain reading; drawn trays with the reference, seeds 0 / 1, with the grey glare: 191 /
# 177 of 200 at 1.0, 191 / 178 at 0.5, 191 / 176 at 2.0).
VEIL_STEPS = (0.25, 0.5, 0.75, 1.0)
VEIL_COST = 1.0
# (drawn with the reference, seeds 0 / 1: cap 1.5 -> 190 / 177, 3 -> 191 / 177, 6 -> 191 / 177)
GLARE_TINT_MAX = 3.0


# The glare's size on a floor clipped in every channel, between its physical bounds lo and hi
# (``_clipped_glare_distances``), is tried at hi - q (hi - lo) for these q: halving towards hi,
# where what is left of the cube's darkest channel (a dark paint's) is small and a small change
# in the glare is a large one in the colour.
CLIPPED_GLARE_STEPS = np.array([1.0, 0.5, 0.25, 0.125, 0.0625, 0.03125, 0.0], np.float32)


def _usual_floor(cubes: list[dict]) -> np.ndarray | None:
    """The frame's usual floor (3,): the per-channel median of the floors beside the cubes
    where no channel is clipped (there the floor reads what it is); None without one."""
    floors = [c.get("floor") for c in cubes]
    if any(f is None for f in floors):
        return None
    f = np.asarray(floors, np.float32).reshape(-1, 3)
    clean = (f < CLIPPED).all(axis=1)
    if not clean.any():
        return None
    return np.maximum(np.median(f[clean], axis=0), 1e-3).astype(np.float32)


def _floor_excess(cubes: list[dict]) -> np.ndarray:
    """Per cube, the share of the floor's reading beside it above the frame's usual floor
    (the median of the cubes' floors): the most a glare may add there (a glare only
    brightens, a shadow only darkens)."""
    floors = [c.get("floor") for c in cubes]
    if len(floors) < 2 or any(f is None for f in floors):
        return np.zeros(len(cubes))
    f = np.asarray(floors, np.float32).reshape(-1, 3)
    lum = f @ LUMA_BGR
    return np.clip(1.0 - float(np.median(lum)) / np.maximum(lum, 1e-4), 0.0, None)


def _glare_tint(cubes: list[dict]) -> np.ndarray:
    """Per cube and channel, a grey glare's share of its floor's reading relative to the
    luminance's: lum / floor (N x 3). The camera's white balance makes the light grey; the floor
    is the print's colour in it, the mirrored light is not. Capped at GLARE_TINT_MAX (a channel
    of the floor near black would take any glare at all as all of it)."""
    f = np.maximum(np.asarray([c["floor"] for c in cubes], np.float32).reshape(-1, 3), 1e-4)
    lum = f @ LUMA_BGR
    return np.clip(lum[:, None] / f, 0.0, GLARE_TINT_MAX)


def _softmax(logit: np.ndarray) -> np.ndarray:
    logit = logit - logit.max(axis=-1, keepdims=True)
    p = np.exp(logit)
    return p / p.sum(axis=-1, keepdims=True)
