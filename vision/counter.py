"""The seam the rest of the project calls: ``load_image`` and ``count_cubes``.

Pipeline: the learned detector (``vision.detector``) turns the picture, and the empty tray's
picture when there is one, into candidate cube centres with a colour distribution each and the
tray floor's corners; this module counts the candidates the model is sure enough of, adjusts
colours by what this table has taught (``Calibration.bias``), drops cubes outside tapped
corners, keeps the game's per-colour upper bounds, and says what it doubts (in words and as
data, ``vision.reading.Doubt``).
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from vision import tray
from vision.calibration import Calibration
from vision.cube_colour import cube_edge_px, lab_colours
from vision.detector import DOUBT_SHARE, Candidate, CubeDetector
from vision.errors import VisionError
from vision.reading import COLOURS, Cube, Doubt, TrayReading, merged

MIN_SIDE = 64

# the doubts a counted cube raises when its confidence is below the model's ``unsure_below``
# (every other doubt is raised whatever the level)
LOW_CONFIDENCE_DOUBTS = ("colour", "not_a_cube")


@functools.lru_cache(maxsize=1)
def packaged_detector() -> CubeDetector:
    """The model that ships in the package, loaded once per process."""
    return CubeDetector()


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
    if _truncated_jpeg(data):
        raise VisionError(f"truncated JPEG (cut off, or still being written): {p}")
    size = _header_size(data)
    if size is not None and size[0] * size[1] > MAX_PIXELS:
        raise VisionError(
            f"picture too large: {size[0]} x {size[1]} pixels (at most "
            f"{MAX_PIXELS // 1_000_000} megapixels; a tray needs far fewer): {p}")
    img = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    if img is None or img.size == 0:
        raise VisionError(f"not an image file (cannot decode): {p}")
    return img


# Why a limit before decoding: a 14 MB JPEG of 30000 x 30000 pixels took 5.5 GB to read, more
# than a Pi has. 64 megapixels is a phone's largest photo mode, at about 200 MB decoded.
MAX_PIXELS = 64_000_000
_JPEG_SIZE_MARKERS = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}  # SOF0..SOF15


def _header_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) from a PNG's or a JPEG's header, without decoding; None otherwise."""
    if data.startswith(b"\x89PNG\r\n\x1a\n") and data[12:16] == b"IHDR":
        return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    if not data.startswith(b"\xff\xd8"):
        return None
    i = 2
    while i + 9 <= len(data):
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        if marker == 0xFF:  # a fill byte before the marker
            i += 1
            continue
        if marker in _JPEG_SIZE_MARKERS:
            height, width = data[i + 5:i + 7], data[i + 7:i + 9]
            return int.from_bytes(width, "big"), int.from_bytes(height, "big")
        if marker == 0xDA:  # the scan begins: no frame header before it
            return None
        i += 2 + int.from_bytes(data[i + 2:i + 4], "big")
    return None


def _truncated_jpeg(data: bytes) -> bool:
    """A JPEG whose last scan has no end marker after it.

    Why: OpenCV decodes a cut-off JPEG without an error, filling the missing rows with grey, so
    a picture caught while a camera program was still writing it would be counted as a tray
    with half its cubes gone. Neither marker can occur inside the coded data (a 0xFF byte there
    is always followed by 0x00), so a whole picture never trips it.
    """
    if not data.startswith(b"\xff\xd8"):
        return False
    last_scan = data.rfind(b"\xff\xda")
    return last_scan >= 0 and data.rfind(b"\xff\xd9") < last_scan


def check_frame(image, what: str = "image") -> np.ndarray:
    """A BGR uint8 picture, converted from grey or BGRA; VisionError for anything else."""
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
    if h < MIN_SIDE or w < MIN_SIDE:
        raise VisionError(f"{what} is too small ({w}x{h}); at least {MIN_SIDE}x{MIN_SIDE}")
    return image


def without_colour(image: np.ndarray) -> bool:
    """Whether the picture carries no colour: its three channels the same almost everywhere.

    Why: a black-and-white camera (or a colour one switched to its night mode) still shows
    where the cubes are, and the network still names a colour for each, as surely as ever;
    a reading of it must say that its colours are guesses. A colour camera's noise alone
    makes its channels differ by more than a few levels in far more than 1 % of its pixels;
    a grey picture saved as JPEG keeps them within one or two.
    """
    step = max(1, int(np.sqrt(image.shape[0] * image.shape[1] / 40_000)))
    sample = image[::step, ::step].astype(np.int16)
    spread = sample.max(axis=2) - sample.min(axis=2)
    return float(np.mean(spread > GREY_SPREAD)) < GREY_SHARE


# a pixel whose channels differ by more than this has colour; a picture with fewer than this
# share of such pixels has none (``without_colour``)
GREY_SPREAD = 4
GREY_SHARE = 0.01


def reference_for(image: np.ndarray, reference) -> np.ndarray | None:
    """The reference checked and scaled to the picture's size (None stays None)."""
    if reference is None:
        return None
    ref = check_frame(reference, "reference")
    h, w = image.shape[:2]
    rh, rw = ref.shape[:2]
    if abs(rw / rh - w / h) > 0.02:
        raise VisionError(
            f"the empty-tray reference ({rw}x{rh}) has another shape than the picture ({w}x{h})"
            ": take it again with the same camera")
    if (rh, rw) != (h, w):
        ref = cv2.resize(ref, (w, h), interpolation=cv2.INTER_AREA)
    return ref


def _bounds(bounds) -> dict[str, int] | None:
    if bounds is None:
        return None
    out = {}
    for c, v in dict(bounds).items():
        if c not in COLOURS:
            raise VisionError(f"unknown colour in bounds: {c!r}")
        out[c] = max(0, int(v))
    return out


def _taught_colours(image: np.ndarray, cands: list[Candidate], corners,
                    calibration: Calibration | None) -> tuple[np.ndarray, np.ndarray]:
    """The candidates' colour probabilities as this table taught (unchanged without), to name
    their colours and to say how sure each is: one call for all of a picture's candidates,
    since the bias is fitted anew on each."""
    raw = np.array([c.colour_probs for c in cands], np.float64).reshape(-1, len(COLOURS))
    if calibration is None or not calibration.samples or not cands:
        return raw, raw
    labs = None
    if calibration.knows_looks():
        labs = lab_colours(image, [(c.x, c.y) for c in cands],
                           cube_edge_px(image.shape[1], corners))
    return calibration.named_and_sure(raw, labs)


def _apply_bounds(names: list[int], probs: list[np.ndarray], bounds: dict[str, int],
                  doubts: list[Doubt]) -> None:
    """Re-name the least certain cubes of any colour beyond what the game allows: each goes to
    its next most likely colour that still has room."""
    for _ in range(len(names) * len(COLOURS)):
        counts = np.bincount(names, minlength=len(COLOURS)) if names else np.zeros(7, int)
        over = [k for k, c in enumerate(COLOURS) if c in bounds and counts[k] > bounds[c]]
        if not over:
            return
        k = over[0]
        members = [i for i, n in enumerate(names) if n == k]
        weakest = min(members, key=lambda i: probs[i][k])
        room = [j for j, c in enumerate(COLOURS)
                if j != k and (c not in bounds or counts[j] < bounds[c])]
        if not room:
            doubts.append(Doubt("too_many", COLOURS[k]))
            return
        best = max(room, key=lambda j: probs[weakest][j])
        doubts.append(Doubt("too_many_read_as", COLOURS[k], COLOURS[best]))
        names[weakest] = best
        probs[weakest] = probs[weakest].copy()
        probs[weakest][k] = 0.0


@dataclass(frozen=True)
class Found:
    """The candidates on the tray: ``counted`` (at least the model's threshold) and ``doubts``
    (close below it); ``corners`` the outline used (tapped, or the model's when plausible)."""

    counted: list[Candidate]
    doubts: list[Candidate]
    corners: np.ndarray | None
    outline_missing: bool


def find_cubes(image, reference=None, *, calibration: Calibration | None = None,
               detector: CubeDetector | None = None) -> Found:
    """The detector's candidates sorted into counted and doubted ones on the tray: what
    ``count_cubes`` names and ``calibrate_from_drop`` learns from alike."""
    image = check_frame(image)
    ref = reference_for(image, reference)
    detector = detector or packaged_detector()
    threshold = detector.config.cube_threshold
    found = detector.detect(image, ref)
    h, w = image.shape[:2]
    tapped = calibration.corners if calibration is not None else None
    corners = None
    if tapped is not None:
        corners = tray.order_corners(tapped)
    elif found.corners is not None and tray.plausible(found.corners, w, h):
        corners = tray.order_corners(found.corners)

    def on_tray(c: Candidate) -> bool:
        return not c.outside and (tapped is None or tray.inside(corners, c.x, c.y))

    counted = [c for c in found.candidates if on_tray(c) and c.score >= threshold]
    doubts = [c for c in found.candidates
              if on_tray(c) and DOUBT_SHARE * threshold <= c.score < threshold]
    return Found(counted, doubts, corners, tapped is None and corners is None)


def count_cubes(image, reference=None, *, bounds=None, calibration: Calibration | None = None,
                detector: CubeDetector | None = None) -> TrayReading:
    """Count the cubes in the tray, by colour.

    ``reference``: the same camera's picture of the empty tray (helps, never needed).
    ``bounds``: colour -> the most cubes of it the game allows in the tray now.
    ``calibration``: tapped corners and the colours this table taught (``vision.calibration``).
    ``detector``: the model to use (default: the packaged one).
    """
    bounds = _bounds(bounds)
    image = check_frame(image)
    h, w = image.shape[:2]
    detector = detector or packaged_detector()
    found = find_cubes(image, reference, calibration=calibration, detector=detector)
    counted, doubts, corners = found.counted, found.doubts, found.corners
    taught, sure = _taught_colours(image, counted + doubts, corners, calibration)
    probs = list(taught[:len(counted)])
    names = [int(np.argmax(p)) for p in probs]
    said: list[Doubt] = []
    if bounds:
        _apply_bounds(names, probs, bounds, said)

    config = detector.config
    cubes = []
    for c, named, k, p in zip(counted, probs, names, sure[:len(counted)], strict=True):
        # how sure: the colour scores with the pixels weighed as a confidence weighs them
        # (``vision.calibration.LOOK_CONFIDENCE_WEIGHT``); a colour the game's bounds took
        # away (zeroed) is not the likeliest other either
        p = np.where(named == 0.0, 0.0, p)
        conf = config.confidence(min(1.0, c.score) * p[k])
        # below the model's ``unsure_below`` (its confidence, calibrated on the counted cubes
        # of the validation set-ups, is right about that often: ``python -m vision.bench``
        # prints the reliability table that says how true that is)
        unsure = conf < config.unsure_below
        if unsure:
            # the likeliest other colour; on a tie the first in COLOURS (argsort's order of
            # equal values differs between numpy 1.x and 2.x)
            second = max((j for j in range(len(p)) if j != k), key=lambda j: p[j])
            place = tray.place(c.x, c.y, w, h)
            if p[k] < 0.75:
                said.append(Doubt("colour", COLOURS[k], COLOURS[second], place))
            else:
                said.append(Doubt("not_a_cube", COLOURS[k], place=place))
        cubes.append(Cube(COLOURS[k], c.x, c.y, round(conf, 3), unsure))
    for c, p in zip(doubts, taught[len(counted):], strict=True):
        colour = COLOURS[int(np.argmax(p))]
        said.append(Doubt("one_more", colour, place=tray.place(c.x, c.y, w, h)))
    if found.outline_missing:
        said.append(Doubt("no_outline"))
    if (counted or doubts) and without_colour(image):
        # first: it makes every colour doubt after it moot, and a phone shows only the first few
        said.insert(0, Doubt("no_colour"))
        cubes = [Cube(c.colour, c.x, c.y, c.confidence, True) for c in cubes]
    corner_tuple = None if corners is None else tuple((float(x), float(y)) for x, y in corners)
    # the same doubt once, with how often ("twice", "3 times")
    return TrayReading.of(cubes, merged(said), corner_tuple)
