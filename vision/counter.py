"""The seam the rest of the project calls: ``load_image`` and ``count_cubes``.

Pipeline: find (or take) the tray floor and rectify it (``vision.tray``); model the bare floor and
mark what differs (``vision.segment``); turn blobs into cubes using the known cube size (and, where
the count is in doubt or at the tower's mouth, projected cube models: ``vision.cubefit``); name each
cube's colour against the floor (``vision.colours``); use the game's per-colour upper bounds, when
given, to re-name the least certain cubes; report a confidence per cube and, in words, anything
the counter was unsure of.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np

from vision.calibration import Calibration
from vision.colours import FLOOR_ALBEDO, LUMA_BGR, ColourModel, cube_colour, to_linear
from vision.cubefit import HALO_PX, MOUTH_VIEW_CM, fitted, mouth_fit, on_one_side, widened
from vision.errors import VisionError
from vision.mouth import floor_inside, mouth_floor, mouth_top_faces
from vision.outlines import Outlines
from vision.reading import COLOURS, Cube, TrayReading
from vision.segment import (
    BRIGHT_CEIL,
    CHROMA_STEP,
    EDGE_RUN_CM,
    EDGE_WALL_CM,
    SHADOW_MAX_CM,
    SIDE_BAR_CM,
    SLIVER_CM,
    _chroma,
    blobs,
    cube_masks,
    floor_model,
    split_blob,
)
from vision.tray import TrayView, find_tray, view_from_corners

# Below this a cube is reported as uncertain.
UNSURE_BELOW = 0.6
# Sharp edges apart from every blob spanning this (cm) both ways: a cube's outline or L.
OUTLINE_SPAN = (0.6, 1.6)
# Such a piece is counted as a cube painted like the print (``_painted_like_floor``) when it
# spans a cube's picture on the floor plane (its top's diagonal 1.41 cm, plus a side and the
# contact shadow: CUBE_SPAN_CM at most, on its narrowest bearing at least OUTLINE_SPAN[0]),
# its convex hull holds at least PAINTED_HULL_CM2 (half a top face), its edges are darker
# than the floor estimate by more than PAINTED_STEP (log: the shaded sides and the contact
# shadow; a shadow only darkens) and what they wrap is not (the top lies in the floor's own
# light).
CUBE_SPAN_CM = 2.2
# Such an L nearer a cube than SHADOW_MAX_CM, but BESIDE_CM clear of its outline (its own edges
# and halo), may be that cube's shadow: not counted, but said (``_painted_beside_cubes``).
BESIDE_CM = 0.5
PAINTED_HULL_CM2 = 0.5
PAINTED_STEP = 0.1
# A cube's colour is also uncertain when it lies further than FAR_SD spreads from its colour's
# reference (beyond how any colour was seen to vary), or when another colour's reference is
# less than BETWEEN_SD spreads further away than its own.
FAR_SD = 4.0
BETWEEN_SD = 1.0
# White paint is the palest thing in the tray: it reflects at least as much of every colour of
# light as any print, so in one light (a glare adds the same to cube and floor) a white cube
# reads no darker than the floor beside it in any channel. A cube named white that reads darker
# than its floor in a channel, beside a floor lit above the frame's usual one, got its name from
# the fitted light, not from its own light: a darker cube under a glare reads so too. Its
# ``ratio`` is cube / floor scaled by FLOOR_ALBEDO, so "darker" is a ratio under it.
# A piece named white that reads as its floor within FLOOR_LIKE in every channel (ratio over
# FLOOR_ALBEDO within 1 +- FLOOR_LIKE: sensor noise, JPEG and the floor's gentle gradient) has
# nothing of its own to tell it from that floor: a white cube on a print as pale as it, or a
# piece of bare floor cut off between a cube and a wall. It is named so, but said unsure: only
# without the reference, as with it bare floor matches the empty tray's and is not found.
FLOOR_LIKE = 0.1
# A lone cube's footprint on the floor plane, in cm^2, before measuring the frame's own cubes:
# the 1 cm^2 top plus the side faces a camera 20-30 cm up sees, roughly.
SINGLE_CUBE_CM2 = 1.5
# A lone cube's blob is nearly convex and about square (its top, a side or two, its shadow);
# one less solid or longer than this is flagged (a cube, or light the floor model missed?).
SOLID_MIN = 0.85
ASPECT_MAX = 1.8
# A blob with less than this share of its area over the floor is not in the tray.
IN_TRAY_SHARE = 0.35
# Without a reference, a blob running along the floor's outline for more than 2.5 cm and on
# average thinner than this (cm) across is a wall band, not a row of cubes against the wall.
WALL_BAND_CM = 0.8
# The frame's lone cubes may make a cube's blob this much smaller or larger than the geometry
# says (lens, blur, its shadow); the geometry's own guess counts as this many lone cubes.
SCALE_RANGE = (0.6, 2.0)
SCALE_PRIOR = 0.5
# A cube's top, visible sides and halo lie within REACH_CM of its top face's centre; what a blob
# holds beyond every top face's reach is another cube when a disc CORE_CM across fits in it over
# at least CORE_AREA_CM2.
REACH_CM = 0.85
CORE_CM = 0.6
CORE_AREA_CM2 = 0.3
# A cube's side is at most SIDE_LIGHT times as bright as its top (a lamp 20 degrees above the
# floor lights a side 2.7 times as much as a top); nothing but a cube is BRIGHTER than the floor
# (a shadow darkens; noise and the tone match err by a few per cent).
SIDE_LIGHT = 3.0
BRIGHTER = 1.1
# A faint blob is a cube only if sharp edges run along this share of its outline.
OUTLINED_SHARE = 0.4
# A near miss of the cube-model fit is bare floor (``_bare_floor``) when at least BARE_SHARE
# of it is painted like the floor within BARE_RING_CM around it (within ``CHROMA_STEP``: a
# shade or shadow changes lightness, not paint) and it is no brighter than that floor's
# lit part (a shadow only darkens).
BARE_SHARE = 0.5
BARE_RING_CM = 1.0
# A straight line of the floor or a wall (a crease, a rim's edge, a wall shadow's edge) that runs
# on this far past both ends of a piece, and on across it, is not hidden by it (as the tray
# finder's RUN_ON_CM: further than a cube's own edge lined up with it could reach).
STRIP_RUN_CM = 1.0


def load_image(path) -> np.ndarray:
    """Read an image file as BGR uint8; VisionError with a reason a person understands."""
    p = Path(os.fspath(path))
    if not p.exists():
        raise VisionError(f"file not found: {p}")
    if p.is_dir():
        raise VisionError(f"not a file but a folder: {p}")
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise VisionError(f"cannot read file: {p} ({exc.strerror or exc})") from exc
    if not data:
        raise VisionError(f"empty file: {p}")
    img = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    if img is None or img.size == 0:
        raise VisionError(f"not an image file (cannot decode): {p}")
    return img


def _mean_std(sample: np.ndarray) -> tuple[float, float]:
    """Mean and standard deviation over every pixel and channel of a BGR sample, from
    OpenCV's per-channel ones (numpy's over a strided uint8 view cost 0.4 ms a frame)."""
    m, sd = cv2.meanStdDev(np.ascontiguousarray(sample))
    m, var = m.ravel(), sd.ravel() ** 2
    mean = float(m.mean())
    return mean, float(np.sqrt((var + (m - mean) ** 2).mean()))


def _check_frame(image, what: str = "image") -> np.ndarray:
    if not isinstance(image, np.ndarray):
        raise VisionError(f"{what} must be a numpy array (BGR uint8), not {type(image).__name__}")
    if image.dtype != np.uint8:
        raise VisionError(f"{what} must be 8-bit (uint8), not {image.dtype}")
    if image.ndim == 2:
        image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    elif image.ndim == 3 and image.shape[2] == 4:
        image = cv2.cvtColor(image, cv2.COLOR_BGRA2BGR)
    elif image.ndim != 3 or image.shape[2] != 3:
        raise VisionError(f"{what} must be H x W x 3 (BGR), not shape {image.shape}")
    h, w = image.shape[:2]
    if h < 64 or w < 64:
        raise VisionError(f"{what} is too small to count cubes in ({w} x {h} px)")
    mean, spread = _mean_std(image[::4, ::4])
    if mean < 8:
        raise VisionError(f"{what} is (almost) all black: is the camera covered or the light off?")
    if mean > 250:
        raise VisionError(f"{what} is (almost) all white: over-exposed")
    if spread < 2:
        raise VisionError(f"{what} is one flat colour: nothing to see")
    return np.ascontiguousarray(image)


def _bounds(bounds) -> dict[str, int] | None:
    if bounds is None:
        return None
    out = {}
    for c, v in dict(bounds).items():
        if c not in COLOURS:
            raise VisionError(f"unknown colour in bounds: {c!r}")
        out[c] = max(0, int(v))
    return out


_VIEW_CACHE: dict[tuple, TrayView] = {}


def _fingerprint(img: np.ndarray) -> tuple:
    """Cheap identity of a reference frame (the same empty tray is passed for a whole evening)."""
    sample = np.ascontiguousarray(img[::17, ::13])
    return (img.shape, hash(sample.tobytes()))


def _view_for(image: np.ndarray, reference, calibration) -> TrayView:
    if calibration is not None and calibration.corners is not None:
        h, w = image.shape[:2]
        return view_from_corners(calibration.corners, image_size=(w, h))
    if reference is None:
        return find_tray(image)
    # The empty tray has no cubes on it: the better frame to find the tray in, and the same
    # one all evening, so it is looked at once.
    key = _fingerprint(reference)
    view = _VIEW_CACHE.get(key)
    if view is None:
        try:
            view = find_tray(reference)
        except VisionError:
            return find_tray(image)
        if len(_VIEW_CACHE) > 8:
            _VIEW_CACHE.clear()
        _VIEW_CACHE[key] = view
    return view


def _check_inputs(image, reference, calibration):
    image = _check_frame(image)
    if reference is not None:
        reference = _check_frame(reference, "reference")
        if reference.shape != image.shape:
            raise VisionError(
                f"reference is {reference.shape[1]} x {reference.shape[0]} but the frame is "
                f"{image.shape[1]} x {image.shape[0]}: it must come from the same camera"
            )
    if calibration is not None and not isinstance(calibration, Calibration):
        raise VisionError("calibration must be a vision.calibration.Calibration")
    return image, reference


def measure_cubes(
    image, reference=None, *, calibration=None
) -> tuple[TrayView, list[dict], list[str]]:
    """Find the cube-sized things on the floor and measure each one's colour against the floor.

    Returns the tray view, one dict per cube: ``ratio`` (linear BGR over the floor, scaled
    to a pale print), ``xy`` (input-image pixels), ``ambiguous`` and ``why`` ("split": a blob
    whose cube count is unsure, "part": under two thirds of a cube counted as one, "faint":
    barely differs from the floor, "edge": partly beyond the floor's outline), and notes in
    words about what could not be read. Colour naming is left to the caller (``count_cubes``,
    calibration).
    """
    image, reference = _check_inputs(image, reference, calibration)
    view = _view_for(image, reference, calibration)
    judge_mouth = view.hidden is not None and view.camera() is not None
    if judge_mouth:
        view = widened(view, MOUTH_VIEW_CM)
    rect = view.rectify(image)
    ref_rect = view.rectify(reference) if reference is not None else None
    bg_lin = floor_model(rect, ref_rect, view.px_per_cm, view.floor_box)
    rect_lin = to_linear(rect)
    # sharp edges, whatever the floor model: cubes outlined all round, and their top faces
    outlines = Outlines(rect_lin, view.px_per_cm, view.floor_box, view.cube_footprint)
    doubts: list = []
    notes: list[str] = []
    shadowed: list = []
    strong, weak = cube_masks(
        rect, bg_lin, view.px_per_cm, view.floor_box, have_reference=reference is not None,
        outlines=outlines, beyond=tuple(k for k in range(4) if k != view.hidden),
        doubts=doubts, shadowed=shadowed,
    )
    for fx, fy in doubts:
        x, y = view.rect_to_image(np.array([[fx, fy]]))[0]
        notes.append(f"a dark patch near ({x:.0f}, {y:.0f}) was taken for shadow: a black cube "
                     "in the shadow?")
    if judge_mouth and reference is None:
        # what differs from the mouth's own floor beyond the tower's side; its blobs are
        # counted and judged by the cube models (``mouth_fit``), as with the empty tray; the
        # floor pass's cubes say where the floor just inside the side shows (``floor_inside``)
        mouth_floor_in = floor_inside(rect_lin, strong, view.px_per_cm, view.floor_box,
                                      view.hidden)
        strong = strong | mouth_floor(rect_lin, view.px_per_cm, view.floor_box, view.hidden,
                                       mouth_floor_in)
    edges = outlines.edges()
    loose: list = []
    painted = None
    if reference is None:
        # a cube painted like the print: only its shaded sides and shadow show, an L of edges
        loose = _loose_outlines(edges, strong, view)
        painted = _painted_like_floor(loose, rect_lin, bg_lin, view)
        if shadowed:  # found from the darkening they wrap (``segment._shadowed_tops``)
            painted = painted | shadowed[0]
        strong = strong | painted
        beside, said = _painted_beside_cubes(edges, strong, rect_lin, bg_lin, view, painted)
        painted = painted | beside
        strong = strong | beside
        notes += said
    tops = outlines.top_faces()
    if judge_mouth and reference is None:
        # the mouth's own top faces: each a cube for the mouth's cube models, and blob for
        # them (``mouth_top_faces``)
        more, faces = mouth_top_faces(rect_lin, view.px_per_cm, view.floor_box, view.hidden,
                                      tops, mouth_floor_in)
        tops = np.concatenate([tops, more])
        strong = strong | faces
    cube_area = SINGLE_CUBE_CM2 * view.px_per_cm**2

    # A blob belongs to the tray when enough of it lies over the floor: a cube against a far
    # wall reaches past the crease in the picture with its top and the side facing the camera
    # (seen obliquely, more than half of it), a cube on the rim or in the tower's mouth lies
    # (almost) wholly beyond it.
    x0, y0, x1, y1 = view.floor_box
    candidates = []
    beyond = _beyond_mouth(view)
    found_blobs = list(blobs(strong, weak))
    for b in found_blobs:
        b.painted = reference is None and bool(np.any(painted[b.mask]))
        inside = np.count_nonzero(b.mask[y0:y1, x0:x1]) / max(b.area, 1.0)
        mouth = beyond is not None and bool(np.any(b.mask[beyond]))
        b.judged = judge_mouth and mouth and not b.weak
        b.one_light = reference is None  # the floor estimate knows the lit floor only
        if b.judged:
            # its cubes are judged one by one by where their bases stand (``mouth_fit``)
            b.beyond = inside < IN_TRAY_SHARE
        elif inside < IN_TRAY_SHARE:
            if mouth and not b.weak and b.area > 0.5 * cube_area:
                # beyond the tower's side: the floor runs on under the mouth, the ramp starts
                # there too; the outline cannot tell which this lies on (README)
                x, y = view.rect_to_image(np.array([b.centroid]))[0]
                notes.append(f"something cube-sized at the tower's mouth near ({x:.0f}, {y:.0f}) "
                             "was not counted: still on the ramp, or on the floor under the "
                             "mouth?")
            if (mouth or b.weak or inside <= 0.0 or b.area <= 0.5 * cube_area
                    or _thinnest(b) < SLIVER_CM * view.px_per_cm):
                continue
            # A clear, cube-thick change just beyond the outline elsewhere and running onto the
            # floor: the outline is short of the crease there (a wall's hard shadow edge taken
            # for the side, s002) and a cube stands against that wall. Counted, but flagged as
            # at the tray's edge. A cube on the table is not joined to the floor: the wall
            # (its face and rim) lies between.
            b.beyond = True
        else:
            b.beyond = False
        if _thinnest(b) < SLIVER_CM * view.px_per_cm:
            bar = (_side_bar(b, found_blobs, view.px_per_cm, view.floor_box)
                   if reference is None else None)
            if bar == "lone":
                b.painted = True  # its area is a side's and a shadow's: not a cube's size
            else:
                if bar == "near":  # maybe the cube's shadow beside it: not counted, but said
                    x, y = view.rect_to_image(np.array([b.centroid]))[0]
                    notes.append(BAR_NEAR_WORDS.format(at=f"({x:.0f}, {y:.0f})"))
                continue  # a sliver of wall or shadow edge: a cube is 1 cm across from any side
        if reference is None and _in_side_strip(b, edges, view.floor_box, view.px_per_cm):
            continue  # a piece of wall, rim or wall shadow between the side and a line
        hug = _along_edge(b, view.floor_box) if reference is None else 0.0
        if hug > 2.5 * view.px_per_cm and b.area < WALL_BAND_CM * view.px_per_cm * hug:
            # a wall band the outline let in (long and thinner than a cube along the edge):
            # no floor model knows the walls' light; cubes lying along that wall may be
            # hidden in it. A row of cubes against a wall is a cube or more thick.
            if b.area > 1.5 * cube_area:
                x, y = view.rect_to_image(np.array([b.centroid]))[0]
                notes.append(f"the tray's edge near ({x:.0f}, {y:.0f}) could not be read "
                             "(a wall, or cubes against it?)")
            continue
        b.edge = inside < 0.8  # partly beyond the floor's outline: in the tray or on its rim?
        b.mouth = b.edge and mouth  # partly beyond the tower's side: on the floor or the ramp?
        candidates.append(b)
    # The frame's own lone cubes say how big a cube looks here (camera height and angle), within
    # what the geometry allows.
    # Where the camera can be worked out from the outline, a cube's expected area depends on
    # where it stands (an oblique camera sees more side the further away the cube is).
    def expected(b) -> float:
        f = view.cube_footprint(*b.centroid)
        if f is None:
            return cube_area
        # plus a rim of HALO_PX all round: lens blur, JPEG and the contact shadow
        return f + HALO_PX * 4.0 * np.sqrt(f)

    for b in candidates:
        b.expected = expected(b)
    # (not from a cube painted like the floor: its area is the rectangle its L spans, a guess)
    scale = _frame_scale([b.area / b.expected for b in candidates
                          if not b.weak and not b.beyond and not b.painted])
    for b in candidates:
        b.expected *= scale
    found = [b for b in candidates
             if not b.weak or (_cube_shaped(b, b.expected) and _outlined(b, edges))]

    cubes: list[dict] = []
    for b in found:
        cubes += _cubes_in(b, b.expected, rect_lin, bg_lin, view, tops)
    notes += _outlines_left_out(loose, view)
    return view, cubes, notes


def count_cubes(image, reference=None, *, bounds=None, calibration=None) -> TrayReading:
    """Count the cubes in the tray, by colour. See the module docstring for the pipeline."""
    bounds = _bounds(bounds)
    view, cubes, notes = measure_cubes(image, reference, calibration=calibration)
    model = calibration.colours if calibration is not None else ColourModel.default()
    warnings: list[str] = list(notes)
    warnings += model.name_cubes(cubes)  # sets each cube's lab, p, d (vision.colours)

    if bounds:
        _apply_bounds(cubes, bounds, warnings)

    out = []
    for c in cubes:
        k = int(np.argmax(c["p"]))
        conf = float(c["p"][k])
        # a colour far from every reference, or about as near to another, is a guess however
        # the probabilities (which only compare the colours) come out
        others = np.delete(c["d"], k)
        far = c["d"][k] > FAR_SD
        between = c["d"][k] > float(others.min()) - BETWEEN_SD
        # a black piece with no top face of its own beside another cube may be its shadow
        shadow = COLOURS[k] == "black" and c.get("bare", False)
        # the name changes within the light the uneven floor behind it leaves open
        light = c.get("light_unsure", False)
        dim = COLOURS[k] == "white" and _darker_than_floor(c)
        if c["ambiguous"] or far or between or shadow or light:
            conf *= 0.6
        x, y = c["xy"]
        unsure = conf < UNSURE_BELOW or c["ambiguous"] or far or between or shadow or light
        if unsure:
            warnings.append(_unsure_words(c, k, x, y, shadow, light, far, between))
        elif dim:  # the name itself stays, and so does its confidence: only a doubt said
            unsure = True
            warnings.append(DIM_WHITE_WORDS.format(at=f"({x:.0f}, {y:.0f})"))
        elif reference is None and COLOURS[k] == "white" and _reads_as_floor(c):  # likewise
            unsure = True
            warnings.append(FLOOR_WHITE_WORDS.format(at=f"({x:.0f}, {y:.0f})"))
        out.append(Cube(COLOURS[k], x, y, round(conf, 3), unsure))
    corners = tuple((float(x), float(y)) for x, y in view.corners)
    return TrayReading(tuple(out), tuple(warnings), corners)


# Why a cube's blob was in doubt (``_cubes_in``'s "why"), in words for the players; {at} is the
# position, {colour} the name given.
WHY_WORDS = {
    "split": "a blob near {at} could not be split with certainty",
    "part": "only part of a cube shows near {at}: a {colour} cube whose top looks like the "
            "floor, or a shadow?",
    "faint": "something faint near {at} may be a {colour} cube or a shadow",
    "shape": "something near {at} is not cube-shaped: a {colour} cube, or a change in the light?",
    "mouth": "a {colour} cube near {at} is at the tower's mouth: on the tray's floor or still on "
             "the ramp?",
    "edge": "a {colour} cube near {at} is at the tray's edge: in the tray or on its rim?",
    "painted": "a cube near {at} shows only its sides and shadow: a {colour} cube painted like "
               "the floor, or a mark on the print?",
}


DIM_WHITE_WORDS = ("a cube near {at} is named white but reads darker than the floor beside it: "
                   "a white cube, or a darker one under a glare?")


BAR_NEAR_WORDS = ("a bar of side and shadow near {at} beside a cube was not counted: a cube "
                  "whose top looks like the floor, or that cube's shadow?")


FLOOR_WHITE_WORDS = ("a cube near {at} is named white but reads just like the floor beside it: "
                     "a white cube, or a piece of bare floor?")


def _reads_as_floor(c: dict) -> bool:
    """Whether a piece reads as the floor beside it in every channel (``ratio`` is cube / floor
    scaled by FLOOR_ALBEDO). Then nothing of its own tells it from that floor: a white cube on
    a print as pale as white, or bare floor left between a cube and a wall or another cube's
    outline, read so alike, and only the first is a cube."""
    ratio = c.get("ratio")
    if ratio is None:
        return False
    rel = np.asarray(ratio, np.float64) / FLOOR_ALBEDO
    return bool(np.all(np.abs(rel - 1.0) < FLOOR_LIKE))


def _darker_than_floor(c: dict) -> bool:
    """Whether a cube reads darker than the floor beside it in some channel, that floor lit
    above the frame's usual one (``floor_excess``: a glare only brightens). No white cube
    does in the floor's own light; a darker paint with a glare on it does."""
    ratio = c.get("ratio")
    lit = c.get("floor_excess", 0.0) > 0.0
    return lit and ratio is not None and bool(np.min(ratio) < FLOOR_ALBEDO)


def _unsure_words(c: dict, k: int, x: float, y: float, shadow: bool, light: bool, far: bool,
                  between: bool) -> str:
    """What the players are asked about an unsure cube: its blob's doubt first, then its
    colour's."""
    at, colour = f"({x:.0f}, {y:.0f})", COLOURS[k]
    if c["why"] in WHY_WORDS:
        return WHY_WORDS[c["why"]].format(at=at, colour=colour)
    if shadow:  # (why is None here)
        return f"a black cube near {at}, or the shadow of the cube beside it?"
    if light and not between:
        return (f"a cube near {at} looks {colour}, but the light changes sharply around it: "
                "its colour is hard to tell")
    if far and not between:
        return f"a cube near {at} is named {colour} but is unlike every cube colour " \
               "(light or print unusual?)"
    second = COLOURS[int(np.argsort(c["p"])[-2])]
    return f"a cube near {at} looks {colour} but could be {second}"


def _cubes_in(b, cube_area, rect_lin, bg_lin, view, tops=None) -> list[dict]:
    """The cubes in one blob: how many (area, cube-wide cores, top faces), where, and their
    colour. A blob whose count is unsure asks projected cube models fitted to it
    (``fitted``); one top face beside a part no paint of its cube can show is two cubes
    (``_brighter_beyond``)."""
    est = b.area / cube_area
    if b.weak and est < 0.5:
        return []  # a faint small change: a crumb of shadow, not a cube
    # everything below on the blob's box (a full-view mask per blob is slow)
    full_centroid = b.centroid  # in the view (the box's own is relative to the box)
    full_mask, full_lin = b.mask, rect_lin
    judged, wholly_beyond = getattr(b, "judged", False), getattr(b, "beyond", False)
    painted = getattr(b, "painted", False)
    one_light = judged and getattr(b, "one_light", False)
    b, bx, by = _cropped(b)
    h, w = b.mask.shape
    rect_lin = rect_lin[by: by + h, bx: bx + w]
    bg_lin = bg_lin[by: by + h, bx: bx + w]
    if tops is not None:
        tops = tops - np.array([bx, by], np.float64)
    n = _by_area(b.mask, est, view.px_per_cm)
    # Cubes in a cluster hide parts of each other (the area undercounts them), but each top
    # face seen whole is one cube.
    seeds = None
    faces_n = 0  # the count from whole top faces and the cube-wide rest beyond them, if any
    mine = np.zeros((0, 2))
    if tops is not None and len(tops):
        ix = np.round(tops).astype(int)
        ok = (ix[:, 0] >= 0) & (ix[:, 0] < w) & (ix[:, 1] >= 0) & (ix[:, 1] < h)
        ix = ix[ok]
        mine = tops[ok][b.mask[ix[:, 1], ix[:, 0]]]
        # (one face in a blob the area alone counts as more: its cube and its shadow make two
        # cores between one and 1.5 cubes' worth; the face's reach tells)
        if len(mine) >= 2 or (len(mine) == 1 and (est > 1.5 or n > 1)):
            # each whole top face is one cube; what lies beyond every face's cube is counted
            # by its own area (a cube whose top is not enclosed); the whole blob's area, shadows
            # and halos between the cubes included, overcounts (tried as a floor: with the
            # reference extras 8 -> 13)
            rest = _unexplained(b.mask, mine, view.px_per_cm, cube_area)
            n = faces_n = len(mine) + len(rest)
            seeds = np.concatenate([mine, rest]) if n > 1 else None
        elif len(mine) == 1 and n == 1:
            other = _brighter_beyond(b.mask, mine[0], rect_lin, bg_lin, view.px_per_cm)
            if other is not None:  # another cube, too little of it in view for its area
                n, seeds = 2, np.array([mine[0], other])
    unsure = abs(est - n) > 0.35 or est < 0.45
    # counted by area alone, and its cube-wide cores say otherwise
    unsure = unsure or (seeds is None and not _cores_agree(b.mask, n, view.px_per_cm))
    why = None
    if unsure:
        why = "split"  # stays so when the fit below overrules the count: the two disagreed
        # cube models fitted to the blob are asked, and heard when decisive
        floor_in: list = []  # bare floor the fit left out (``_bare_floor``)

        def bare(piece, corner):
            if not _bare_floor(piece, corner, full_mask, full_lin, view, tops, (bx, by)):
                return False
            floor_in.append((piece, corner))
            return True

        fit = None if judged else fitted(b, (bx, by), view, tops, full_centroid, cube_area,
                                         bare=bare)
        if fit is not None and floor_in:
            # the bare floor is no cube's: neither split among them nor named with one
            b = replace(b, mask=_without(b.mask, *floor_in[0], (bx, by)))
        if fit is not None and len(fit) != n:
            n = len(fit)
            seeds = fit - np.array([bx, by]) if n > 1 else None
        elif fit is not None:
            # two ways of counting that share no step (area, faces and cores; projected cube
            # models, which know what hides what) agree, the models decisively: not a guess
            why = None
        elif not judged and _counts_agree(b.mask, est, n, faces_n, view.px_per_cm):
            # the models left it open, but three counts agree: not a guess either; the blob's
            # other doubts (at the edge, ...) still apply
            unsure = False
        if why == "split" and n == 1 and est < 0.65:
            # nothing was split: one cube's worth counted from under two thirds of one (a
            # white top on a pale print looks like the floor, only its shaded side and shadow
            # differ; or a shadow alone). Said as such: "could not be split" tells the
            # players nothing there.
            why = "part"
    if not unsure:
        why = _blob_doubt(b, n, len(mine))
    if painted and why in (None, "part"):
        why = "painted"  # found from its sides and shadow alone (``_painted_like_floor``)
    keep = None
    if judged:
        # at the tower's mouth: the cube models count, and say which cubes are on the floor
        fit = mouth_fit(b, (bx, by), view, tops, full_centroid, cube_area, one_light)
        if fit is None and wholly_beyond:
            return []
        if fit is not None:
            centres, keep = fit
            if not keep.any():
                return []
            n = len(centres)
            seeds = centres - np.array([bx, by]) if n > 1 else None
            why = "mouth" if why is None and b.mouth else why
    out = []
    inner = _interior(b.mask, view.px_per_cm)
    pieces = split_blob(b, n, seeds=seeds)
    for k, m in enumerate(pieces):
        if keep is not None and not keep[min(k, len(keep) - 1)]:
            continue  # a cube still on the ramp: its pixels kept it from the others' pieces
        ys, xs = np.nonzero(m)
        if len(xs) == 0:
            continue
        # colour from well inside the outline (the outline is widened by blur and its shadow)
        core = m & inner
        cy, cx = np.nonzero(core) if np.count_nonzero(core) >= 0.25 * len(xs) else (ys, xs)
        if one_light:
            cy, cx = on_one_side(cy, cx, (bx, by), view)
        x, y = view.rect_to_image(np.array([[xs.mean() + bx, ys.mean() + by]]))[0]
        out.append({
            # ratio over the floor of the brighter half, and its clipped channels
            **cube_colour(rect_lin[cy, cx], bg_lin[cy, cx]),
            "xy": (float(x), float(y)),
            "ambiguous": why is not None,
            "why": why,
            # one of several pieces, with no whole top face of its own: named black, it may
            # be a shadow (a shadow has no top face)
            "bare": len(pieces) > 1 and not _holds_face(m, tops),
        })
    return out


def _blob_doubt(b, n: int, faces: int) -> str | None:
    """The doubt about a blob whose count is sure ("faint", "mouth", "edge", "shape"; see
    ``WHY_WORDS``), or None. ``faces``: the whole top faces inside it.

    One cube's blob that is not cube-shaped may be light the floor model missed; but a whole
    top face inside it is a cube's own closed square outline (``Outlines.top_faces``), and
    what spoils the shape is then its shadow or a side: no doubt about the cube."""
    if b.weak:
        return "faint"
    if b.mouth:
        return "mouth"
    if b.edge:
        return "edge"
    if n == 1 and faces == 0 and not _compact(b.mask):
        return "shape"
    return None


def _counts_agree(mask: np.ndarray, est: float, n: int, faces_n: int, px_per_cm: float) -> bool:
    """Whether a cluster of ``n`` cubes counted from its top faces (``faces_n``: whole top
    faces plus the cube-wide rest beyond their reach, ``_unexplained``) is counted alike by its
    area (``est`` cubes' worth, between two counts resolved by its cores: ``_by_area``) and by
    its cube-wide cores alone (``_cores_agree``).

    Why: a cluster's area lies between two counts whenever its cubes hide each other's sides
    and share their halos, so "area near a whole count" flags most clusters, right or not;
    three counts reached by different steps (closed square outlines; area; the blob's widths)
    agreeing is better evidence than the area's distance to a whole number. A count by faces
    alone is not enough (a face missed, a shadow's core counted): all three must agree."""
    return (n >= 2 and faces_n == n and _by_area(mask, est, px_per_cm) == n
            and _cores_agree(mask, n, px_per_cm))


def _painted_beside_cubes(edges: np.ndarray, strong: np.ndarray, rect_lin: np.ndarray,
                          bg_lin: np.ndarray, view: TrayView, painted: np.ndarray | None = None
                          ) -> tuple[np.ndarray, list[str]]:
    """The Ls of edges within a shadow's reach of a cube (but clear of its outline,
    ``BESIDE_CM``) that pass as a cube painted like the floor (``_painted_like_floor``): a mask
    of those counted, and a note for each one that is not.

    Why: such a cube standing beside another (a white beside a blue on a pale print) may be
    the other cube's hard shadow from a lamp, which passes the same tests (s002's point lamp:
    three shadows read as black cubes when counted). But a cast shadow starts at its caster's
    base and runs on unbroken from it, so floor in the floor's own light between the L and
    every cube near it (``_lit_between``) says the L is no cube's shadow: it is counted (and
    flagged, as every such cube is). Not beside a cube itself found from its L (``painted``):
    its top lies in the floor's light too, and a second piece there is likelier that cube's
    L broken in two than another cube. Otherwise the reading says so instead of being sure."""
    near = _loose_outlines(edges, strong, view, BESIDE_CM)
    counted = np.zeros_like(strong)
    if not near:
        return counted, []
    notes = []
    for piece in near:
        mask = _painted_like_floor([piece], rect_lin, bg_lin, view)
        if not piece["counted"]:
            continue
        if _lit_between(piece["contour"], strong, rect_lin, bg_lin, view.px_per_cm, painted):
            counted |= mask
            continue
        x, y = view.rect_to_image(np.array([piece["centre"]]))[0]
        notes.append(f"an outline near ({x:.0f}, {y:.0f}) beside a cube was not counted: a "
                     "cube painted like the floor, or a shadow?")
    return counted, notes


def _lit_between(contour: np.ndarray, strong: np.ndarray, rect_lin: np.ndarray,
                 bg_lin: np.ndarray, px_per_cm: float, painted: np.ndarray | None = None
                 ) -> bool:
    """Whether, between an L of edges (its outer contour, rectified px) and each cube piece of
    ``strong`` within ``SHADOW_MAX_CM`` of it, the floor on the shortest line joining them is
    mostly in the floor's own light (not darker than the floor estimate by ``PAINTED_STEP``).

    Why: a shadow only darkens, and a cube's cast shadow is one patch from the cube's base to
    its tip: the line from the cube to any part of its shadow stays in shadow. Lit floor on
    that line for every cube near the L means no cube nearby cast it. The line's ends are
    left out (the edges' blur and the cube's halo, ``HALO_PX``); a gap too short to show
    floor proves nothing (False), and so does a cube near it found from its own L (a piece of
    ``painted``: False)."""
    reach = round(SHADOW_MAX_CM * px_per_cm)
    bx, by, bw, bh = cv2.boundingRect(contour)
    H, W = strong.shape
    x0, y0 = max(bx - reach, 0), max(by - reach, 0)
    x1, y1 = min(bx + bw + reach, W), min(by + bh + reach, H)
    n, labels = cv2.connectedComponents(strong[y0:y1, x0:x1], connectivity=8)
    pts = contour.reshape(-1, 2)[::2].astype(np.float32)
    for k in range(1, n):
        ys, xs = np.nonzero(labels == k)
        if painted is not None and painted[ys + y0, xs + x0].any():
            return False
        cube = np.stack([xs + x0, ys + y0], axis=1).astype(np.float32)[::3]
        d = np.hypot(pts[:, None, 0] - cube[None, :, 0], pts[:, None, 1] - cube[None, :, 1])
        i, j = np.unravel_index(np.argmin(d), d.shape)
        if d[i, j] > reach:
            continue
        steps = int(d[i, j])
        t = np.arange(HALO_PX + 1, steps - HALO_PX) / max(steps, 1)
        if len(t) < 2:
            return False
        line = pts[i] + t[:, None] * (cube[j] - pts[i])
        lx, ly = np.round(line[:, 0]).astype(int), np.round(line[:, 1]).astype(int)
        ratio = np.log((rect_lin[ly, lx] @ LUMA_BGR + 1e-4) / (bg_lin[ly, lx] @ LUMA_BGR + 1e-4))
        if np.median(ratio) < -PAINTED_STEP:
            return False
    return True


def _loose_outlines(edges: np.ndarray, strong: np.ndarray, view: TrayView,
                    apart_cm: float = SHADOW_MAX_CM) -> list[dict]:
    """The pieces of sharp edges on the floor, further than ``SHADOW_MAX_CM`` from anything
    taken for a cube, that span ``OUTLINE_SPAN[0]`` to ``CUBE_SPAN_CM`` both ways: each as
    its outer contour and its box's centre (rectified px), ``counted`` False.

    Why: a cube painted like the print (a white cube on a pale print, its top clipped like
    the floor) changes only its shaded sides and its shadow, an L of edges the floor estimate
    does not take for a change. A lamp's shadow of a cube lies within SHADOW_MAX_CM of the
    cube and is outlined too: what lies there says nothing.
    """
    x0, y0, x1, y1 = view.floor_box
    ppc = view.px_per_cm
    r = max(1, round(EDGE_WALL_CM * ppc))  # the creases along the sides are no cube's
    box = (slice(y0 + r, y1 - r), slice(x0 + r, x1 - r))
    # the reach worked out at half resolution (0.1 ms; a round dilation at full costs 3 ms)
    far = cv2.distanceTransform(strong[::2, ::2] ^ 1, cv2.DIST_L2, 3) > apart_cm * ppc / 2
    far = cv2.resize(far.astype(np.uint8), strong.shape[::-1], interpolation=cv2.INTER_NEAREST)
    e = edges[box] & far[box]
    if not e.any():
        return []
    # each 8-connected piece's box from its outer contour (ten times cheaper than labelling)
    contours, _ = cv2.findContours(e, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    out = []
    for c in contours:
        bx, by, bw, bh = cv2.boundingRect(c)
        if OUTLINE_SPAN[0] * ppc <= min(bw, bh) and max(bw, bh) <= CUBE_SPAN_CM * ppc:
            out.append({"contour": c + np.array([x0 + r, y0 + r], np.int32),
                        "centre": (bx + bw / 2 + x0 + r, by + bh / 2 + y0 + r),
                        "span_px": (min(bw, bh), max(bw, bh)), "counted": False})
    return out


def _painted_like_floor(loose: list[dict], rect_lin: np.ndarray, bg_lin: np.ndarray,
                        view: TrayView) -> np.ndarray:
    """The cubes painted like the print among the loose outlines (``_loose_outlines``): each
    one's smallest enclosing rectangle (uint8 mask, rectified view); such pieces are marked
    ``counted``.

    Why: such a cube's top looks like the floor and its outline against the floor is faint,
    but its visible sides and its contact shadow are darker than the floor and sharply edged,
    an L (a V, turned) wrapping the top on the side nearer the camera; the L and the top it
    wraps fill the L's smallest enclosing rectangle. A thin line (a band's edge in the print)
    does not span a cube on its narrowest bearing, nor covers half a top with its hull; two
    lines longer than a cube's edge along the floor's axes are a corner of the creases
    (``_crease_run``). The L must be darker than the floor estimate (shade and shadow only
    darken), what it wraps not (a top in the floor's own light, not a shadow's inside). A
    mark printed like that cannot be told from it: such a cube is always flagged.
    """
    out = np.zeros(rect_lin.shape[:2], np.uint8)
    ppc = view.px_per_cm
    for piece in loose:
        c = piece["contour"]
        rect = cv2.minAreaRect(c)
        if min(rect[1]) < OUTLINE_SPAN[0] * ppc:
            continue  # a line, not a cube's L
        if cv2.contourArea(cv2.convexHull(c)) < PAINTED_HULL_CM2 * ppc * ppc:
            continue
        if _crease_run(c, ppc):
            continue  # a corner of the creases, not a cube's L
        box = np.round(cv2.boxPoints(rect)).astype(np.int32)
        bx, by, bw, bh = cv2.boundingRect(np.vstack([box, c.reshape(-1, 2)]))
        H, W = out.shape
        if bx < 0 or by < 0 or bx + bw > W or by + bh > H:
            continue
        m = np.zeros((bh, bw), np.uint8)
        cv2.fillPoly(m, [box - np.array([bx, by], np.int32)], 1)
        edge = np.zeros_like(m)
        cv2.drawContours(edge, [c - np.array([bx, by], np.int32)], -1, 1, -1)
        ratio = np.log((rect_lin[by: by + bh, bx: bx + bw] @ LUMA_BGR + 1e-4)
                       / (bg_lin[by: by + bh, bx: bx + bw] @ LUMA_BGR + 1e-4))
        inside = (m > 0) & (cv2.dilate(edge, np.ones((3, 3), np.uint8)) == 0)
        if not inside.any():
            continue
        if (np.median(ratio[edge > 0]) < -PAINTED_STEP
                and np.median(ratio[inside]) >= -PAINTED_STEP):
            out[by: by + bh, bx: bx + bw] |= m | edge
            piece["counted"] = True
    return out


def _crease_run(contour: np.ndarray, px_per_cm: float) -> bool:
    """Whether an edge piece (its outer contour, rectified px) runs straight along the floor's
    sides for longer than ``EDGE_RUN_CM``: a crease (the floor's corner draws an L of two),
    as no cube's edge is that long (1 cm, a little more with its side)."""
    run = round(EDGE_RUN_CM * px_per_cm) | 1
    bx, by, bw, bh = cv2.boundingRect(contour)
    # a margin of a run all round: the opening must not take the border for edge
    m = np.zeros((bh + 2 * run, bw + 2 * run), np.uint8)
    cv2.drawContours(m, [contour - np.array([bx - run, by - run], np.int32)], -1, 1, 1)
    return bool(cv2.morphologyEx(m, cv2.MORPH_OPEN, np.ones((1, run), np.uint8)).any()
                or cv2.morphologyEx(m, cv2.MORPH_OPEN, np.ones((run, 1), np.uint8)).any())


def _outlines_left_out(loose: list[dict], view: TrayView) -> list[str]:
    """A note for each loose outline (``_loose_outlines``) not counted as a cube that spans a
    cube's width both ways (``OUTLINE_SPAN``): a cube painted like the print may be missing
    there. Not counted (a print's pattern can draw such an L), but the reading says it may be
    short."""
    lo, hi = OUTLINE_SPAN
    ppc = view.px_per_cm
    notes = []
    for piece in loose:
        short, long_ = piece["span_px"]
        if piece["counted"] or not (lo * ppc <= short and long_ <= hi * ppc):
            continue
        x, y = view.rect_to_image(np.array([piece["centre"]]))[0]
        notes.append(f"an outline near ({x:.0f}, {y:.0f}) was not counted: a cube painted "
                     "like the floor?")
    return notes


def _bare_floor(piece: np.ndarray, corner: tuple[int, int], blob: np.ndarray,
                rect_lin: np.ndarray, view: TrayView, tops, origin: tuple[int, int]) -> bool:
    """Whether ``piece`` (a view-px mask with its top-left ``corner``: the blob a cube model
    left out would have explained) is bare floor, not a cube: no top face in it, at least
    ``BARE_SHARE`` of it painted like the floor around the blob within ``BARE_RING_CM``, and
    no brighter than that floor's lit part. Floor enclosed by cubes and the rim, or cut off
    by a lamp's hard shadow edge, joins a cluster's blob and its area counts one cube too
    many; a cube there has a paint of its own or a top brighter than the floor's shadow."""
    ppc = view.px_per_cm
    H, W = blob.shape
    r = max(1, round(BARE_RING_CM * ppc))
    ys, xs = np.nonzero(piece)
    if len(xs) == 0:
        return False
    ys, xs = ys + corner[1], xs + corner[0]
    x0, y0 = max(0, xs.min() - r), max(0, ys.min() - r)
    x1, y1 = min(W, xs.max() + r + 1), min(H, ys.max() + r + 1)
    if x1 <= x0 or y1 <= y0:
        return False
    m = np.zeros((y1 - y0, x1 - x0), np.uint8)
    ok = (xs >= x0) & (xs < x1) & (ys >= y0) & (ys < y1)
    m[ys[ok] - y0, xs[ok] - x0] = 1
    if tops is not None and len(tops):
        t = np.round(tops + np.array(origin) - np.array([x0, y0])).astype(int)
        inside = (t[:, 0] >= 0) & (t[:, 0] < m.shape[1]) & (t[:, 1] >= 0) & (t[:, 1] < m.shape[0])
        if m[t[inside, 1], t[inside, 0]].any():
            return False  # a whole top face: a cube
    fx0, fy0, fx1, fy1 = view.floor_box
    floor = np.zeros_like(m, bool)
    floor[max(0, fy0 - y0): max(0, fy1 - y0), max(0, fx0 - x0): max(0, fx1 - x0)] = True
    k = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1, 2 * r + 1))
    ring = (cv2.dilate(m, k) > 0) & ~blob[y0:y1, x0:x1] & floor
    if np.count_nonzero(ring) < 0.25 * len(xs):
        return False  # too little floor around to say
    lin = rect_lin[y0:y1, x0:x1]
    inner = m > 0
    light = lin.sum(axis=2)
    mine = float(np.median(light[inner]))
    if mine > np.percentile(light[ring], 90):
        return False  # brighter than the floor around: a shadow only darkens
    # the floor in the same light (a shadow's ambient light may tint it: compare like with
    # like): the ring's pixels within ``BRIGHT_CEIL`` of the piece's lightness
    near = ring & (light <= BRIGHT_CEIL * mine) & (light >= mine / BRIGHT_CEIL)
    if np.count_nonzero(near) < 0.25 * len(xs):
        return False
    chroma = _chroma(lin, ppc)
    ref = np.median(chroma[near], axis=0)
    alike = np.abs(chroma[inner] - ref).max(axis=1) < CHROMA_STEP
    return bool(alike.mean() >= BARE_SHARE)


def _without(mask: np.ndarray, piece: np.ndarray, corner: tuple[int, int],
             origin: tuple[int, int]) -> np.ndarray:
    """A cropped blob (top-left ``origin`` in the view) less ``piece`` (a view-px mask with
    top-left ``corner``)."""
    out = mask.copy()
    h, w = mask.shape
    ox, oy = corner[0] - origin[0], corner[1] - origin[1]
    ph, pw = piece.shape
    a0, b0, a1, b1 = max(0, ox), max(0, oy), min(w, ox + pw), min(h, oy + ph)
    if a1 > a0 and b1 > b0:
        out[b0:b1, a0:a1] &= piece[b0 - oy: b1 - oy, a0 - ox: a1 - ox] == 0
    return out


def _holds_face(m: np.ndarray, tops) -> bool:
    """Whether a piece (on the blob's box) holds one of the top faces (box px)."""
    if tops is None or len(tops) == 0:
        return False
    h, w = m.shape
    ix = np.round(tops).astype(int)
    ok = (ix[:, 0] >= 0) & (ix[:, 0] < w) & (ix[:, 1] >= 0) & (ix[:, 1] < h)
    return bool(np.any(m[ix[ok][:, 1], ix[ok][:, 0]]))


def _brighter_beyond(mask: np.ndarray, face, rect_lin: np.ndarray, bg_lin: np.ndarray,
                     px_per_cm: float) -> np.ndarray | None:
    """The centre (x, y) of another cube's part in a blob with one top face, or None.

    A cube's faces share its paint: a side is at most ``SIDE_LIGHT`` times as bright as its
    top (a low lamp grazing the side), and a shadow is darker than the floor. So where a blob
    is brighter than the floor in some channel *and* more than that factor brighter than the
    top face's cube, beyond that cube's reach (``REACH_CM``), over at least ``CORE_AREA_CM2``
    (as any piece a top face leaves), another cube stands: a white cube beside a black one, cut
    by the view's edge, too little of it in view for its area to count (s000/drop08)."""
    h, w = mask.shape
    fx, fy = face
    yy, xx = np.mgrid[0:h, 0:w]
    d2 = (xx - fx) ** 2 + (yy - fy) ** 2
    top = d2 <= (0.3 * px_per_cm) ** 2
    if np.count_nonzero(top & mask) < 5:
        return None  # (decided before the ratio is worked out over the whole box)
    ratio = rect_lin / np.maximum(bg_lin, 1e-4)
    top_ratio = np.median(ratio[top & mask], axis=0)
    over = (ratio > BRIGHTER) & (ratio > SIDE_LIGHT * top_ratio)
    bright = over[..., 0] | over[..., 1] | over[..., 2]  # (np.any over axis 2: slower)
    far = mask & bright & (d2 > (REACH_CM * px_per_cm) ** 2)
    if np.count_nonzero(far) < CORE_AREA_CM2 * px_per_cm**2:
        return None
    ys, xs = np.nonzero(far)
    return np.array([xs.mean(), ys.mean()])


def _by_area(mask: np.ndarray, est: float, px_per_cm: float) -> int:
    """Cubes in a piece holding ``est`` cubes' worth of area: the nearest count, or, between two
    counts (shadows, overlap), the count of cube-wide cores when it is one of the two."""
    n = max(1, round(est))
    frac = est - np.floor(est)
    if est > 1.3 and 0.3 < frac < 0.7:
        cores = _cores(mask, px_per_cm)
        if int(np.floor(est)) <= cores <= int(np.ceil(est)):
            n = cores
    return n


def _cores_agree(mask: np.ndarray, n: int, px_per_cm: float) -> bool:
    """Whether a blob counted as ``n`` cubes (2 or more) by its area alone has as many
    cube-wide cores; one cube is not asked (a cube and its shadow have two)."""
    return n < 2 or _cores(mask, px_per_cm) == n


def _unexplained(mask: np.ndarray, faces: np.ndarray, px_per_cm: float,
                 cube_area: float) -> np.ndarray:
    """Centres (k, 2) of the cubes in a blob that no top face in ``faces`` explains.

    A cube's top, its visible sides and its halo lie within ``REACH_CM`` of its top's centre
    (half the 1 cm top's diagonal plus a side seen obliquely); the rest of the blob, opened by
    a disc a cube's core wide (``CORE_CM`` across: a shaded side, a shadow or the halo between
    two cubes is thinner), holds the cubes whose tops were not enclosed: as many as its area
    holds cubes (by ``cube_area``, cores deciding between two counts), at least one per piece of
    ``CORE_AREA_CM2``, placed by k-means on its pixels. (Pieces mostly beyond the floor's
    outline are kept: a cube at the near wall shows most of itself there; tried: dev missed
    2 -> 5.)"""
    h, w = mask.shape
    seeds = np.full((h, w), 255, np.uint8)
    ix = np.clip(np.round(faces).astype(int), 0, [w - 1, h - 1])
    seeds[ix[:, 1], ix[:, 0]] = 0
    dist = cv2.distanceTransform(seeds, cv2.DIST_L2, 5)
    rest = (mask & (dist > REACH_CM * px_per_cm)).astype(np.uint8)
    r = max(1, round(0.5 * CORE_CM * px_per_cm))
    k = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1, 2 * r + 1))
    rest = cv2.morphologyEx(rest, cv2.MORPH_OPEN, k)
    n, lab, stats, cents = cv2.connectedComponentsWithStats(rest, connectivity=8)
    out = []
    inside = None  # each pixel's distance to the blob's own outline (``_lobes``)
    for i in range(1, n):
        a = stats[i, cv2.CC_STAT_AREA]
        if a < CORE_AREA_CM2 * px_per_cm**2:
            continue
        if inside is None:
            inside = cv2.distanceTransform(mask.astype(np.uint8), cv2.DIST_L2, 5)
        # by its area, or by its cube-wide parts apart where the area undercounts them
        m = max(_by_area(lab == i, a / cube_area, px_per_cm), _lobes(lab == i, inside, px_per_cm))
        out += [cents[i]] if m == 1 else list(_kmeans(lab == i, m))
    return np.array(out, np.float64).reshape(-1, 2)


def _lobes(piece: np.ndarray, inside: np.ndarray, px_per_cm: float) -> int:
    """How many cubes' cores a piece beyond the top faces' reach holds: its parts at least a
    third of a cube inside the blob's own outline (``inside``: the distance to it), each holding
    as much of that as a bare 1 cm top does ((1 - 2/3)^2 = 1/9 cm^2).

    Why: the reach of the faces beside it takes a share of each cube whose top is not enclosed,
    so what is left of two such cubes side by side can hold less area than one cube (s000/drop08:
    a brown and a yellow at the near wall, 1.1 cubes' worth, counted one). But where the blob's
    own outline pinches between them (two cubes meet at a corner or an offset side) their
    cube-wide parts stay apart; the cuts made by the reach do not count as outline (a crescent
    one cube wide left by the reach is one cube), nor does one cube's silhouette pinch (a cube,
    its visible sides and its shadow are convex)."""
    core = (piece & (inside >= px_per_cm / 3.0)).astype(np.uint8)
    _, _, stats, _ = cv2.connectedComponentsWithStats(core, connectivity=8)
    return int(np.count_nonzero(stats[1:, cv2.CC_STAT_AREA] >= px_per_cm**2 / 9.0))


def _kmeans(mask: np.ndarray, m: int) -> np.ndarray:
    """``m`` centres (x, y) of a mask's pixels by k-means (on a subsample: speed)."""
    ys, xs = np.nonzero(mask)
    pts = np.stack([xs, ys], axis=1).astype(np.float32)
    crit = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 15, 0.5)
    cv2.setRNGSeed(0)
    _, _, c = cv2.kmeans(pts[:: max(1, len(pts) // 400)], m, None, crit, 2,
                         cv2.KMEANS_PP_CENTERS)
    return c


def _cropped(b, pad: int = 4):
    """(blob on its own box plus ``pad`` px, box x, box y)."""
    x, y, w, h = b.bbox
    H, W = b.mask.shape
    x0, y0 = max(0, x - pad), max(0, y - pad)
    x1, y1 = min(W, x + w + pad), min(H, y + h + pad)
    cx, cy = b.centroid
    return replace(b, mask=b.mask[y0:y1, x0:x1], centroid=(cx - x0, cy - y0),
                   bbox=(x - x0, y - y0, w, h)), x0, y0


def _frame_scale(ratios: list[float]) -> float:
    """How much larger than the geometry says a lone cube's blob is in this frame.

    Its shadow (a hard lamp throws a long one), blur and the camera's true lens all add to a
    cube's outline alike for every cube in the frame. Lone cubes are the commonest blobs: the
    blobs within a factor of about 1.5 of the current guess are taken as lone cubes, and their
    geometric mean (held towards 1 by a prior worth half a cube, so one odd blob cannot move it
    far) is the new guess; twice, so that the window follows.
    """
    r = np.array([x for x in ratios if x > 0.3], np.float64)
    scale = 1.0
    for _ in range(3):
        single = r[(r > scale / 1.55) & (r < scale * 1.55)]
        if len(single) == 0:
            break
        scale = float(np.exp(np.log(single).sum() / (len(single) + SCALE_PRIOR)))
    return float(np.clip(scale, *SCALE_RANGE))


def _compact(mask: np.ndarray) -> bool:
    """Whether a blob is shaped like one cube seen from above: nearly convex (area over hull
    above ``SOLID_MIN``) and not long (sides of its smallest box within ``ASPECT_MAX``)."""
    contours, _ = cv2.findContours(mask.astype(np.uint8), cv2.RETR_EXTERNAL,
                                   cv2.CHAIN_APPROX_SIMPLE)
    cnt = max(contours, key=cv2.contourArea)
    hull = cv2.contourArea(cv2.convexHull(cnt))
    (_, _), (rw, rh), _ = cv2.minAreaRect(cnt)
    solid = np.count_nonzero(mask) / max(hull, 1.0)
    return solid >= SOLID_MIN and max(rw, rh) <= ASPECT_MAX * max(min(rw, rh), 1.0)


def _cores(mask: np.ndarray, px_per_cm: float) -> int:
    """How many cube-wide cores a blob has: peaks of its distance to the outline at least a
    third of a cube from it, apart by more than half a cube (touching cubes meet at a waist;
    a shadow or a shaded side is thinner than a cube)."""
    ys, xs = np.nonzero(mask)
    y0, x0 = ys.min(), xs.min()
    crop = np.zeros((ys.max() - y0 + 3, xs.max() - x0 + 3), np.uint8)
    crop[ys - y0 + 1, xs - x0 + 1] = 1
    dt = cv2.distanceTransform(crop, cv2.DIST_L2, 5)
    k = max(3, round(0.5 * px_per_cm) | 1)
    peak = (dt >= cv2.dilate(dt, np.ones((k, k), np.uint8))) & (dt >= px_per_cm / 3.0)
    n, _ = cv2.connectedComponents(peak.astype(np.uint8), connectivity=8)
    return n - 1


def _interior(mask: np.ndarray, px_per_cm: float) -> np.ndarray:
    """A blob's pixels at least an eighth of a centimetre inside its outline."""
    r = max(1, round(0.125 * px_per_cm))
    k = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1, 2 * r + 1))
    return cv2.erode(mask.astype(np.uint8), k) > 0


def _beyond_mouth(view: TrayView) -> tuple[slice, slice] | None:
    """The rectified view's band beyond the tower's side (``TrayView.hidden``), or None."""
    if view.hidden is None:
        return None
    x0, y0, x1, y1 = view.floor_box
    w, h = view.size
    return [(slice(0, y0), slice(x0, x1)), (slice(y0, y1), slice(x1, w)),
            (slice(y1, h), slice(x0, x1)), (slice(y0, y1), slice(0, x0))][view.hidden]


def _side_bar(b, others: list, px_per_cm: float, box: tuple[int, int, int, int]) -> str | None:
    """Whether a sliver blob is a bar a cube long (``SIDE_BAR_CM``) on the floor proper (clear
    of the sides by ``EDGE_WALL_CM``): "lone" when further than a shadow's reach
    (``SHADOW_MAX_CM``) from every other blob, "near" when not, else None.

    Why: a cube whose top reads like the floor (a white cube on a pale print, a cube in a
    glare) shows only its shaded side and its shadow, a bar thinner than a cube, which the
    counter drops as a sliver; a lone one is such a cube (as ``segment._sides_widened`` takes
    it with the reference). Nearer a cube it may be that cube's shadow (a lamp's are
    hard-edged): not counted, but the reading says so. Along a side it is the crease or the
    wall's foot."""
    if b.weak:
        return None
    ys, xs = np.nonzero(b.mask)
    x0, y0, x1, y1 = box
    m = round(EDGE_WALL_CM * px_per_cm)
    if xs.min() < x0 + m or ys.min() < y0 + m or xs.max() >= x1 - m or ys.max() >= y1 - m:
        return None
    (_, _), (bw, bh), _ = cv2.minAreaRect(np.column_stack([xs, ys]).astype(np.float32))
    lo, hi = (v * px_per_cm for v in SIDE_BAR_CM)
    if not lo <= max(bw, bh) <= hi:
        return None
    r = round(SHADOW_MAX_CM * px_per_cm)
    x, y, w, h = b.bbox
    H, W = b.mask.shape
    sy, sx = slice(max(y - r, 0), min(y + h + r, H)), slice(max(x - r, 0), min(x + w + r, W))
    k = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1,) * 2)
    near = cv2.dilate(b.mask[sy, sx].astype(np.uint8), k) > 0
    return "near" if any(o is not b and np.any(o.mask[sy, sx] & near) for o in others) else "lone"


def _along_edge(b, box: tuple[int, int, int, int], near: int = 6) -> float:
    """How far a blob runs along the floor's outline (px), hugging it within ``near`` px."""
    x0, y0, x1, y1 = box
    m = b.mask
    best = 0.0
    for strip, axis in (
        (m[y0: y0 + near, x0:x1], 0), (m[y1 - near: y1, x0:x1], 0),
        (m[y0:y1, x0: x0 + near], 1), (m[y0:y1, x1 - near: x1], 1),
    ):
        best = max(best, float(np.count_nonzero(strip.any(axis=axis))))
    return best


def _side_frames(shape: tuple[int, int], box: tuple[int, int, int, int]):
    """Per side of the floor box (top, right, bottom, left): how to view an array so that the
    side runs along a row and inward is down (a function of the array), and that row."""
    h, w = shape
    x0, y0, x1, y1 = box
    return (
        (lambda a: a, y0),
        (lambda a: a.T[::-1], w - x1),
        (lambda a: a[::-1], h - y1),
        (lambda a: a.T, x0),
    )


def _line_unbroken(rows: np.ndarray, lo: int, hi: int, run: int) -> bool:
    """Whether edge ``rows`` (a few rows of edge pixels, along a side) hold a line over
    [lo, hi) and ``run`` px past both ends: at least half of each stretch on edge pixels."""
    hit = rows.any(axis=0)
    if lo - run < 0 or hi + run > hit.size:
        return False  # its run on past an end is out of the view: not shown
    return bool(hit[lo - run: lo].mean() >= 0.5 and hit[lo: hi].mean() >= 0.5
                and hit[hi: hi + run].mean() >= 0.5)


def _in_side_strip(b, edges: np.ndarray, box: tuple[int, int, int, int],
                   px_per_cm: float) -> bool:
    """Whether a blob lies in a strip along a side of the outline that no cube fits in: between
    the side and a straight line parallel to it less than a cube (1 cm) in from it, the line
    running on unbroken across the blob and ``STRIP_RUN_CM`` past both its ends.

    Why: the outline can stop on a rim's outer edge or on a wall shadow's edge beyond the
    crease; the wall's face, its rim or the shadow band between there and the line differ from
    the floor estimate in light or tint, and pieces of them passed as cubes (drawn trays without
    the reference: blacks on the rim; s002/drop05 once the tray finder moved a side out past a
    wall shadow's edge). A cube standing there would hide the
    line (the crease, the rim's or the shadow's edge) where it stands, and a strip thinner than
    a cube holds no cube wholly; so a piece lying (all but a fifth: blur, the line's own
    width) on the side's side of such a line, with the line showing through, is the strip.
    The line is looked for beyond ``EDGE_WALL_CM`` in (nearer, it is the side's own edge, as
    for the segmenter's edge test), and only for pieces mostly over the floor (one mostly beyond
    the side is judged as lying beyond it). Without the empty tray only: with it, the strip is
    in the reference too and does not differ; what differs there is a cube cut by the outline
    (renders with the reference: 0.5 or 2 cm of run-on took such a black or yellow for a strip).
    """
    cube = round(px_per_cm)
    run = round(STRIP_RUN_CM * px_per_cm)
    x0, y0, x1, y1 = b.bbox[0], b.bbox[1], b.bbox[0] + b.bbox[2], b.bbox[1] + b.bbox[3]
    bx0, by0, bx1, by1 = box
    if min(x0 - bx0, y0 - by0, bx1 - x1, by1 - y1) > cube:
        return False  # inside: deeper than a cube from every side (the common case, quick)
    for view, side in _side_frames(b.mask.shape, box):
        m = view(b.mask)
        rows = np.flatnonzero(m.any(axis=1))
        if rows.size == 0 or rows[-1] >= side + cube:
            continue  # reaches a cube's depth in from this side: not in a strip along it
        depth = m.sum(axis=1)
        if depth[side:].sum() < 0.5 * b.area:
            continue  # mostly beyond the side: a cube beyond it is judged as such
        cols = np.flatnonzero(m.any(axis=0))
        lo, hi = int(cols[0]), int(cols[-1]) + 1
        e = view(edges)
        for d in range(side + round(EDGE_WALL_CM * px_per_cm) + 1, side + cube):
            if depth[d + 2:].sum() > 0.2 * b.area:
                continue  # too much of the blob inward of this line
            if _line_unbroken(e[d - 1: d + 2], lo, hi, run):
                return True
    return False


def _thinnest(b) -> float:
    """A blob's mean thickness across its length (area over the long side of its box), px."""
    ys, xs = np.nonzero(_cropped(b)[0].mask)
    pts = np.stack([xs, ys], axis=1).astype(np.float32)
    (_, _), (rw, rh), _ = cv2.minAreaRect(pts)
    return float(b.area) / (max(rw, rh) + 1.0)


def _outlined(b, edges: np.ndarray) -> bool:
    """Whether sharp edges run along at least ``OUTLINED_SHARE`` of a blob's outline: a cube's
    outline is sharp all round, a faint change of light (a soft shadow's fringe) is not."""
    crop, bx, by = _cropped(b, 2)
    h, w = crop.mask.shape
    m = crop.mask.astype(np.uint8)
    rim = m - cv2.erode(m, np.ones((3, 3), np.uint8))
    near = cv2.dilate(edges[by: by + h, bx: bx + w], np.ones((5, 5), np.uint8))
    n = np.count_nonzero(rim)
    return n > 0 and np.count_nonzero(rim & near) >= OUTLINED_SHARE * n


def _cube_shaped(b, cube_area: float) -> bool:
    """A faint blob counts only if it is the size and shape of one or two cubes."""
    if not 0.5 * cube_area <= b.area <= 2.4 * cube_area:
        return False
    contours, _ = cv2.findContours(b.mask.astype(np.uint8), cv2.RETR_EXTERNAL,
                                   cv2.CHAIN_APPROX_SIMPLE)
    cnt = max(contours, key=cv2.contourArea)
    hull = cv2.contourArea(cv2.convexHull(cnt))
    (_, _), (rw, rh), _ = cv2.minAreaRect(cnt)
    return hull > 0 and b.area / hull > 0.8 and max(rw, rh) < 2.2 * max(min(rw, rh), 1.0)


def _apply_bounds(cubes: list[dict], bounds: dict[str, int], warnings: list[str]) -> None:
    """Re-name the least certain cubes of any colour that exceeds what the game allows."""
    for _ in range(len(cubes) * len(COLOURS)):
        counts = dict.fromkeys(COLOURS, 0)
        for c in cubes:
            counts[COLOURS[int(np.argmax(c["p"]))]] += 1
        over = [col for col in COLOURS if col in bounds and counts[col] > bounds[col]]
        if not over:
            return
        col = over[0]
        k = COLOURS.index(col)
        members = [c for c in cubes if int(np.argmax(c["p"])) == k]
        # the member most willing to be something else that still has room
        best, best_alt, best_score = None, None, -1.0
        for c in members:
            for j in np.argsort(c["p"])[::-1]:
                alt = COLOURS[int(j)]
                if alt == col or counts[alt] >= bounds.get(alt, 10**9):
                    continue
                score = float(c["p"][j] / max(c["p"][k], 1e-9))
                if score > best_score:
                    best, best_alt, best_score = c, int(j), score
                break
        if best is None:
            warnings.append(
                f"more {col} cubes seen ({counts[col]}) than can be there ({bounds[col]})"
            )
            return
        p = best["p"].copy()
        p[k] = 0.0
        best["p"] = p / max(p.sum(), 1e-9)
        best["p"][best_alt] = max(best["p"][best_alt], 1e-6)
