"""The annotated tray picture for the phone page.

A player checks the count at arm's length on a phone, where a 1152 px frame shrinks to about a
third; so every size here (ring, line, font) is a fraction of the image, not a pixel constant, and
every mark has a dark halo so it reads on a cream tray and a black table alike. Labels are the
two-letter tags below rather than initials, because blue/black and brown/blue share initials.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

import cv2
import numpy as np

from vision.errors import VisionError
from vision.reading import COLOURS, TrayReading

TAGS: dict[str, str] = {
    "blue": "bu",
    "black": "bk",
    "red": "rd",
    "brown": "br",
    "green": "gn",
    "yellow": "ye",
    "white": "wh",
}

# What the cubes look like (BGR), for the label chips and legend.
SWATCH: dict[str, tuple[int, int, int]] = {
    "blue": (200, 90, 30),
    "black": (25, 25, 25),
    "red": (40, 40, 210),
    "brown": (35, 75, 125),
    "green": (60, 150, 40),
    "yellow": (40, 210, 240),
    "white": (245, 245, 245),
}

RING = (255, 255, 255)  # a certain cube: white ring on a black halo
DOUBT = (0, 140, 255)  # an uncertain cube: dashed orange ring, "?" label
TRAY_LINE = (255, 220, 0)  # cyan-ish, unlike any cube colour
HALO = (0, 0, 0)
FONT = cv2.FONT_HERSHEY_SIMPLEX
TRAY_LONG_CM = 16.0
TRAY_AREA_CM2 = 16.0 * 10.0
DEFAULT_TRAY_WIDTH_FRACTION = 0.55  # without corners, guess the tray spans this much of the width


def _as_bgr(image: np.ndarray) -> np.ndarray:
    if not isinstance(image, np.ndarray) or image.size == 0:
        raise VisionError("no picture to draw on")
    if image.dtype != np.uint8:
        raise VisionError(f"picture must be 8-bit, got {image.dtype}")
    if image.ndim == 2 or (image.ndim == 3 and image.shape[2] == 1):
        return cv2.cvtColor(image.reshape(image.shape[:2]), cv2.COLOR_GRAY2BGR)
    if image.ndim == 3 and image.shape[2] == 4:
        return cv2.cvtColor(image, cv2.COLOR_BGRA2BGR)
    if image.ndim == 3 and image.shape[2] == 3:
        return image.copy()
    raise VisionError(f"picture must be grey or BGR, got shape {image.shape}")


def _text_colour(bg: tuple[int, int, int]) -> tuple[int, int, int]:
    b, g, r = bg
    return (0, 0, 0) if 0.114 * b + 0.587 * g + 0.299 * r > 140 else (255, 255, 255)


def _dashed_circle(img, centre, radius, colour, thickness, dash_deg=24, gap_deg=16) -> None:
    start = 0
    while start < 360:
        cv2.ellipse(img, centre, (radius, radius), 0, start, min(start + dash_deg, 360), colour,
                    thickness, cv2.LINE_AA)
        start += dash_deg + gap_deg


def _chip(img, text, org, scale, thick, fill, border=None) -> tuple[int, int]:
    """A filled label box with text, its top-left at ``org``; returns its (width, height)."""
    (tw, th), base = cv2.getTextSize(text, FONT, scale, thick)
    pad = max(2, round(th * 0.3))
    w, h = tw + 2 * pad, th + base + 2 * pad
    x, y = org
    x = min(max(x, 0), img.shape[1] - w)
    y = min(max(y, 0), img.shape[0] - h)
    cv2.rectangle(img, (x, y), (x + w - 1, y + h - 1), fill, -1)
    cv2.rectangle(img, (x, y), (x + w - 1, y + h - 1), border or HALO, max(1, thick // 2 + 1))
    cv2.putText(img, text, (x + pad, y + pad + th), FONT, scale, _text_colour(fill), thick,
                cv2.LINE_AA)
    return w, h


def _cube_side(width: int, tray_corners: np.ndarray | None, cube_px: float | None) -> float:
    if cube_px is not None:
        return float(cube_px)
    if tray_corners is not None:
        # The floor is 16 x 10 cm: one cube's footprint is its area / 160, perspective averaged.
        area = abs(cv2.contourArea(tray_corners.astype(np.float32)))
        if area > 0:
            return math.sqrt(area / TRAY_AREA_CM2)
    return width * DEFAULT_TRAY_WIDTH_FRACTION / TRAY_LONG_CM


def _summary(reading: TrayReading) -> list[tuple[str, tuple[int, int, int], tuple | None]]:
    """Legend pieces, left to right: (text, fill, border)."""
    # Counted here rather than via ``reading.counts``, which has no slot for an unknown colour.
    counts = Counter(c.colour for c in reading.cubes)
    total = reading.total
    parts: list[tuple[str, tuple[int, int, int], tuple | None]] = [
        (f"{total} cube{'' if total == 1 else 's'}" if total else "empty tray", (40, 40, 40), None)
    ]
    for colour in COLOURS:
        if counts.get(colour):
            parts.append((f"{TAGS[colour]} {counts[colour]}", SWATCH[colour], None))
    for colour in sorted(set(counts) - set(COLOURS)):
        parts.append((f"{colour[:2]} {counts[colour]}", (128, 128, 128), None))
    if reading.uncertain:
        parts.append(("check!", DOUBT, (255, 255, 255)))
    return parts


def draw_overlay(
    image: np.ndarray,
    reading: TrayReading,
    *,
    tray_corners: Sequence[Sequence[float]] | np.ndarray | None = None,
    cube_px: float | None = None,
) -> np.ndarray:
    """Return a BGR copy of ``image`` (same height and width) with the reading drawn on it.

    ``cube_px`` is one cube's side in pixels; without it the tray floor's corners (16 x 10 cm) or
    the image width give it. Grey or BGRA input is drawn on as BGR; the input is never modified.
    """
    out = _as_bgr(image)
    h, w = out.shape[:2]
    corners = None
    if tray_corners is not None:
        corners = np.asarray(tray_corners, dtype=np.float64).reshape(-1, 2)
        if len(corners) < 3 or not np.isfinite(corners).all():
            raise VisionError("tray outline needs at least three finite corners")
    side = _cube_side(w, corners, cube_px)
    unit = max(min(w, h * 16 / 9) / 1152.0, 0.25)  # 1.0 on a 1152 x 648 frame
    line = max(1, round(2.5 * unit))
    halo = line + max(2, round(2 * unit))

    if corners is not None:
        pts = [np.round(corners).astype(np.int32)]
        cv2.polylines(out, pts, True, HALO, halo, cv2.LINE_AA)
        cv2.polylines(out, pts, True, TRAY_LINE, line, cv2.LINE_AA)

    label_scale = max(0.35, 0.75 * unit)
    label_thick = max(1, round(1.6 * unit))
    radius = max(4, round(0.8 * side))
    # Rings first, then labels, so no ring cuts through a neighbour's label; certain cubes before
    # doubtful ones, so a doubtful mark is never hidden under a certain one.
    cubes = [
        c for c in sorted(reading.cubes, key=lambda c: c.uncertain)
        if math.isfinite(c.x) and math.isfinite(c.y) and -w < c.x < 2 * w and -h < c.y < 2 * h
    ]  # (far off the picture: nothing to draw, and cv2 wants int32 coordinates)
    for cube in cubes:
        centre = (round(cube.x), round(cube.y))
        cv2.circle(out, centre, radius, HALO, halo, cv2.LINE_AA)
        if cube.uncertain:
            _dashed_circle(out, centre, radius, DOUBT, line + 1)
        else:
            cv2.circle(out, centre, radius, RING, line, cv2.LINE_AA)
    off = round(radius * 0.72)
    for cube in cubes:
        tag = TAGS.get(cube.colour, cube.colour[:2])
        text, border = (f"{tag}?", DOUBT) if cube.uncertain else (tag, None)
        org = (round(cube.x) + off, round(cube.y) - off - round(22 * label_scale))
        fill = SWATCH.get(cube.colour, (128, 128, 128))
        _chip(out, text, org, label_scale, label_thick, fill, border)

    _draw_summary(out, reading, unit)
    return out


def tray_picture(image: np.ndarray, reading: TrayReading, *, margin: float = 0.12) -> np.ndarray:
    """The overlay cropped to the tray (plus ``margin`` of its size on each side).

    On a phone the whole frame shrinks the tray to half the screen's width; cropped, each cube
    is twice as large. Without known tray corners the whole frame is drawn.
    """
    if not reading.tray_corners:
        return draw_overlay(image, reading)
    corners = np.asarray(reading.tray_corners, dtype=np.float64).reshape(-1, 2)
    h, w = image.shape[:2]
    (x0, y0), (x1, y1) = corners.min(axis=0), corners.max(axis=0)
    pad_x, pad_y = margin * (x1 - x0), margin * (y1 - y0)
    left, top = max(0, int(x0 - pad_x)), max(0, int(y0 - pad_y))
    right, bottom = min(w, math.ceil(x1 + pad_x)), min(h, math.ceil(y1 + pad_y))
    if right - left < 32 or bottom - top < 32:
        return draw_overlay(image, reading)
    shifted = replace(
        reading,
        cubes=tuple(replace(c, x=c.x - left, y=c.y - top) for c in reading.cubes),
        tray_corners=tuple((x - left, y - top) for x, y in reading.tray_corners),
    )
    side = _cube_side(w, corners, None)
    crop = image[top:bottom, left:right]
    return draw_overlay(crop, shifted, tray_corners=shifted.tray_corners, cube_px=side)


def _draw_summary(out: np.ndarray, reading: TrayReading, unit: float) -> None:
    h, w = out.shape[:2]
    parts = _summary(reading)
    scale = max(0.4, 0.9 * unit)
    thick = max(1, round(2 * unit))
    gap = max(3, round(8 * unit))
    while True:  # shrink until the line fits the width
        sizes = [cv2.getTextSize(t, FONT, scale, thick) for t, _, _ in parts]
        pads = [max(2, round(s[0][1] * 0.3)) for s in sizes]
        total = sum(s[0][0] + 2 * p for s, p in zip(sizes, pads, strict=True))
        total += gap * (len(parts) + 1)
        if total <= w or scale <= 0.3:
            break
        scale *= 0.85
        thick = max(1, round(thick * 0.85))
    band = max(s[0][1] + s[1] + 2 * p for s, p in zip(sizes, pads, strict=True)) + 2 * gap
    band = min(band, h)
    top = out[:band]
    top[:] = (top.astype(np.uint16) * 2 // 5).astype(np.uint8)  # darken, keep the scene visible
    x = gap
    for text, fill, border in parts:
        cw, _ = _chip(out, text, (x, gap), scale, thick, fill, border)
        x += cw + gap


def encode_jpeg(image: np.ndarray, quality: int = 80, max_width: int | None = None) -> bytes:
    """JPEG bytes for serving; shrunk (aspect kept) to ``max_width`` so phones load it fast."""
    plain = (
        isinstance(image, np.ndarray) and image.dtype == np.uint8 and image.size > 0
        and image.ndim == 3 and image.shape[2] == 3
    )
    img = image if plain else _as_bgr(image)  # BGR frames are encoded without a copy
    if not 1 <= int(quality) <= 100:
        raise ValueError("quality must be 1..100")
    if max_width is not None:
        if max_width < 1:
            raise ValueError("max_width must be >= 1")
        h, w = img.shape[:2]
        if w > max_width:
            new_h = max(1, round(h * max_width / w))
            img = cv2.resize(img, (max_width, new_h), interpolation=cv2.INTER_AREA)
    ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    if not ok:
        raise VisionError("could not encode the picture as JPEG")
    return buf.tobytes()
