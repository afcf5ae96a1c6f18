"""What a real camera does to a render, and the maps the network learns to output.

Why: the renders come from one renderer's idea of light and sensors; a device meets other
white balances, exposures, lenses, resolutions, JPEG settings and mounts. Each training picture
is therefore moved (rotated, scaled, shifted, sheared; sometimes turned half round), re-lit
(channel casts, exposure, gamma, saturation), blurred, noised, re-sampled and re-compressed at
random, and its empty-tray reference is moved and re-lit alike with small differences of its
own (a camera that shook, an exposure that drifted), or left out.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass

import cv2
import numpy as np

STRIDE = 4
CENTRE_SIGMA = 0.9  # cells
CORNER_SIGMA = 1.0
REFERENCE_SHARE = 0.6  # 40 % of the pictures are shown without the empty tray
LUMA_BGR = np.array([0.114, 0.587, 0.299], np.float32)  # a pixel's grey (BT.601)


@dataclass
class Cached:
    """A sample's picture and reference already fitted to the input scale (uint8 BGR)."""

    image: np.ndarray
    reference: np.ndarray | None
    scale: float  # picture pixels -> cached pixels
    cubes: np.ndarray  # (N, 5): x, y (cached px), colour, in_tray, keep (1 = clearly visible)
    corners: np.ndarray | None  # (4, 2) cached px


def input_size(text: str) -> tuple[int, int]:
    """``--input 512x288``: the network's input in pixels, both multiples of 32."""
    try:
        width, height = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not WIDTHxHEIGHT: {text!r}") from None
    if width < 64 or height < 64 or width % 32 or height % 32:
        raise argparse.ArgumentTypeError(
            f"{text}: width and height must be multiples of 32, at least 64")
    return width, height


def share(text: str) -> float:
    """``--mirror 0.5``, ``render.py --wider 0.5``: a share, from 0 to 1."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text}: a share is between 0 and 1")
    return value


def random_affine(rng: np.random.Generator, src_w: int, src_h: int, out_w: int, out_h: int,
                  strength: float = 1.0, mirror: float = 0.0) -> np.ndarray:
    """A 2x3 matrix from cached picture pixels to input pixels; mirrored (before the turn, so
    any mirror axis) in a ``mirror`` share of the pictures.

    Why mirror: a tower clipped on the other side of the tray, or a camera mounted the other
    way round, shows the scene mirrored; the device averages mirrored views of an unsure
    picture, and those help although the network never saw a mirrored picture. No random
    number is drawn for the mirror when ``mirror`` is 0, so earlier runs' draws are unchanged.
    """
    r = rng.random()
    if r < 0.6:
        angle = rng.normal(0, 4) * strength
    elif r < 0.9:
        angle = 180 + rng.normal(0, 4)
    else:
        angle = rng.uniform(0, 360)
    zoom = math.exp(rng.uniform(-0.3, 0.25) * strength)
    if r >= 0.9:
        zoom *= 0.75
    shear = rng.normal(0, 0.04) * strength
    a = math.radians(angle)
    rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]]) * zoom
    rot = rot @ np.array([[1, shear], [0, 1]])
    if mirror > 0 and rng.random() < mirror:
        rot = rot @ np.array([[-1.0, 0.0], [0.0, 1.0]])
    centre_src = np.array([src_w / 2, src_h / 2])
    # mostly where the device puts it (top-left aligned), sometimes anywhere
    if rng.random() < 0.5:
        centre_dst = np.array([src_w / 2, src_h / 2])
    else:
        centre_dst = np.array([out_w / 2, out_h / 2])
    centre_dst = centre_dst + rng.normal(0, 12, 2) * strength
    t = centre_dst - rot @ centre_src
    return np.hstack([rot, t[:, None]]).astype(np.float32)


def relight(img: np.ndarray, gains: np.ndarray, exposure: float, gamma: float) -> np.ndarray:
    """Per-channel gain, exposure and gamma, as one look-up table per channel."""
    levels = np.power(np.arange(256, dtype=np.float32) / 255, gamma)
    lut = np.clip(levels[:, None] * (gains * exposure)[None, :] * 255 + 0.5, 0, 255)
    return cv2.LUT(img, lut.astype(np.uint8).reshape(256, 1, 3))


def light_gains(rng: np.random.Generator) -> np.ndarray:
    """Per-channel (B, G, R) gains: a random cast, often along the warm-cool axis.

    Why the axis: lamps and daylight differ mostly in colour temperature (a tungsten lamp
    raises red and cuts blue together), and a camera's auto white balance corrects only part of
    it; independent channel noise alone rarely draws a cast that strong.
    """
    gains = np.exp(rng.normal(0, 0.12, 3)) if rng.random() < 0.8 else np.ones(3)
    if rng.random() < 0.5:
        t = rng.normal(0, 0.22)  # > 0 warm, < 0 cool
        gains = gains * np.exp(np.array([-t, 0.2 * t, t]))
    return gains


def draw_light(rng: np.random.Generator) -> tuple[np.ndarray, float, float]:
    """A picture's light: channel gains, exposure and gamma."""
    gains = light_gains(rng)
    return gains, math.exp(rng.uniform(-0.7, 0.55)), math.exp(rng.normal(0, 0.15))


def draw_saturation(rng: np.random.Generator) -> float:
    """How strongly a camera renders colour: 1 as rendered, < 1 washed out, > 1 vivid.

    Why: a camera's colour processing (its tuning's colour matrix and saturation setting, a
    sensor near full well) makes the same cube more or less colourful; a cast, exposure or
    gamma change never does that, so without it the network meets a pale green cube only as
    rendered.
    """
    return math.exp(rng.uniform(-0.7, 0.4)) if rng.random() < 0.5 else 1.0


def saturate(img: np.ndarray, saturation: float) -> np.ndarray:
    """Each pixel moved towards (or away from) its own grey by ``saturation``."""
    if saturation == 1.0:
        return img
    f = img.astype(np.float32)
    grey = f @ LUMA_BGR
    out = grey[..., None] + saturation * (f - grey[..., None])
    return np.clip(out + 0.5, 0, 255).astype(np.uint8)


def drifted(rng: np.random.Generator, gains: np.ndarray,
            exposure: float) -> tuple[np.ndarray, float]:
    """The empty tray's light: the drop's, drifted a little since it was taken."""
    return gains * np.exp(rng.normal(0, 0.03, 3)), exposure * math.exp(rng.normal(0, 0.08))


def windowed(m: np.ndarray, rng: np.random.Generator, full: tuple[int, int],
             crop: tuple[int, int]) -> np.ndarray:
    """``m`` (to the full input's pixels) moved so that a random ``crop``-sized window of the
    full input lands at the origin: the picture is then warped straight to the window.

    Why: a training step costs in proportion to the pixels the network sees, and most of a
    picture is table; a window 3/4 of the input's width and height holds the tray, its walls
    and some table at ~56 % of the time, so the same CPU hour trains on ~1.8 times the
    pictures. The network is fully convolutional, so the device still reads whole pictures.
    """
    mw = m.copy()
    mw[0, 2] -= rng.uniform(0, full[0] - crop[0])
    mw[1, 2] -= rng.uniform(0, full[1] - crop[1])
    return mw


def shaken(m: np.ndarray, rng: np.random.Generator, out_w: int, out_h: int) -> np.ndarray:
    """The empty tray's matrix: the drop's, with the small turn and shift of a camera that
    shook since."""
    jitter = cv2.getRotationMatrix2D((out_w / 2, out_h / 2), rng.normal(0, 0.3), 1.0)
    mr = (np.vstack([jitter, [0, 0, 1]]) @ np.vstack([m, [0, 0, 1]]))[:2].astype(np.float32)
    mr[:, 2] += rng.normal(0, 0.7, 2)
    return mr


@dataclass(frozen=True)
class Faults:
    """Which camera faults one picture gets (None / 0: not this one)."""

    low_res: float | None  # a lower-resolution camera's scale, scaled up again
    blur: float | None  # Gaussian sigma
    noise: float  # standard deviation in levels
    jpeg: int  # quality


def draw_faults(rng: np.random.Generator, rate: float = 1.0) -> Faults:
    """``rate`` scales how often each fault comes (``--faults``; 1: as the shipped model was
    trained, 0: never). Why a rate, not milder faults: the diagnostic fits of vision/README
    ("Why not 98 %") ask whether re-shooting hides from the network what it must learn, and a
    rate keeps each fault's range, which the benchmark's perturbations bound, as it was."""
    return Faults(rng.uniform(0.45, 0.9) if rng.random() < 0.25 * rate else None,
                  rng.uniform(0.3, 1.1) if rng.random() < 0.3 * rate else None,
                  rng.uniform(1, 5) if rng.random() < 0.5 * rate else 0.0,
                  int(rng.uniform(25, 96)) if rng.random() < 0.5 * rate else 0)


def camera_noise(img: np.ndarray, rng: np.random.Generator, rate: float = 1.0) -> np.ndarray:
    faults = draw_faults(rng, rate)
    if faults.low_res is not None:  # a lower-resolution camera, scaled up to the same input
        h, w = img.shape[:2]
        f = faults.low_res
        img = cv2.resize(cv2.resize(img, (max(8, int(w * f)), max(8, int(h * f))),
                                    interpolation=cv2.INTER_AREA), (w, h),
                         interpolation=cv2.INTER_LINEAR)
    if faults.blur is not None:
        img = cv2.GaussianBlur(img, (0, 0), faults.blur)
    if faults.noise:
        noise = rng.standard_normal(img.shape, dtype=np.float32) * faults.noise
        img = cv2.add(img, noise, dtype=cv2.CV_8U)
    if faults.jpeg:
        _ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, faults.jpeg])
        img = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    return img


def augment(item: Cached, rng: np.random.Generator, out_w: int, out_h: int,
            plain: bool = False, reference_share: float = REFERENCE_SHARE, mirror: float = 0.0,
            crop: tuple[int, int] | None = None, faults: float = 1.0):
    """(image, reference or None, cubes (N, 5) in output px, corners (4, 2) or None);
    ``mirror`` as in ``random_affine``; with ``crop`` (w, h) a random window of that size out
    of the ``out_w`` x ``out_h`` input (``windowed``), else the whole input; ``faults`` as in
    ``draw_faults``."""
    h, w = item.image.shape[:2]
    if plain:
        m = np.array([[1, 0, 0], [0, 1, 0]], np.float32)
    else:
        m = random_affine(rng, w, h, out_w, out_h, mirror=mirror)
        if crop is not None:
            m = windowed(m, rng, (out_w, out_h), crop)
            out_w, out_h = crop
    image = cv2.warpAffine(item.image, m, (out_w, out_h), flags=cv2.INTER_LINEAR,
                           borderMode=cv2.BORDER_CONSTANT)
    valid = cv2.warpAffine(np.full((h, w), 255, np.uint8), m, (out_w, out_h),
                           flags=cv2.INTER_NEAREST)
    reference = None
    use_ref = item.reference is not None and (plain or rng.random() < reference_share)
    if use_ref:
        mr = m.copy()
        if not plain:
            mr = shaken(m, rng, out_w, out_h)
        reference = cv2.warpAffine(item.reference, mr, (out_w, out_h), flags=cv2.INTER_LINEAR,
                                   borderMode=cv2.BORDER_CONSTANT)
    if not plain:
        gains, exposure, gamma = draw_light(rng)
        saturation = draw_saturation(rng)
        image = camera_noise(saturate(relight(image, gains, exposure, gamma), saturation), rng,
                             faults)
        if reference is not None:
            reference = camera_noise(saturate(
                relight(reference, *drifted(rng, gains, exposure), gamma), saturation), rng,
                faults)
    image[valid == 0] = 0
    if reference is not None:
        reference[valid == 0] = 0
    cubes = item.cubes.copy()
    if len(cubes):
        xy = cubes[:, :2] @ m[:, :2].T + m[:, 2]
        cubes[:, :2] = xy
    corners = None
    if item.corners is not None:
        corners = item.corners @ m[:, :2].T + m[:, 2]
    return image, reference, cubes, corners


def _splat(target: np.ndarray, cx: float, cy: float, sigma: float) -> None:
    gh, gw = target.shape
    r = math.ceil(3 * sigma)
    ix, iy = math.floor(cx), math.floor(cy)
    x0, x1 = max(0, ix - r), min(gw, ix + r + 1)
    y0, y1 = max(0, iy - r), min(gh, iy + r + 1)
    if x0 >= x1 or y0 >= y1:
        return
    xs = np.arange(x0, x1) + 0.5
    ys = np.arange(y0, y1) + 0.5
    g = np.exp(-((xs[None, :] - cx) ** 2 + (ys[:, None] - cy) ** 2) / (2 * sigma * sigma))
    if 0 <= ix < gw and 0 <= iy < gh:
        g[iy - y0, ix - x0] = 1.0  # the centre's own cell is the one positive
    np.maximum(target[y0:y1, x0:x1], g, out=target[y0:y1, x0:x1])


def targets(cubes: np.ndarray, corners: np.ndarray | None, out_w: int, out_h: int):
    """The maps the network is trained to output, at stride 4.

    Returns heat (3, gh, gw) for in-tray centres, out-of-tray centres and floor corners;
    heat_weight (3, gh, gw), zero where either answer is fair (a barely visible cube) or unknown
    (no corner labels); colour (gh, gw) int64 class per cell (-1: no cube); offset (2, gh, gw)
    and offset_mask (gh, gw).
    """
    gw, gh = out_w // STRIDE, out_h // STRIDE
    heat = np.zeros((3, gh, gw), np.float32)
    weight = np.ones((3, gh, gw), np.float32)
    colour = np.full((gh, gw), -1, np.int64)
    offset = np.zeros((2, gh, gw), np.float32)
    offset_mask = np.zeros((gh, gw), np.float32)
    centres = []
    for x, y, cls, in_tray, keep in cubes:
        cx, cy = x / STRIDE, y / STRIDE
        ix, iy = math.floor(cx), math.floor(cy)
        if not (-1 <= ix <= gw and -1 <= iy <= gh):
            continue
        channel = 0 if in_tray else 1
        if keep < 0.5:  # barely visible: either answer is fair
            weight[channel, max(0, iy - 1):iy + 2, max(0, ix - 1):ix + 2] = 0
            continue
        if not (0 <= ix < gw and 0 <= iy < gh):
            # a cube cut by the picture's edge: do not ask for it either way
            weight[channel, max(0, iy - 1):iy + 2, max(0, ix - 1):ix + 2] = 0
            continue
        _splat(heat[channel], cx, cy, CENTRE_SIGMA)
        colour[max(0, iy - 1):iy + 2, max(0, ix - 1):ix + 2] = int(cls)
        offset[0, iy, ix] = cx - ix
        offset[1, iy, ix] = cy - iy
        offset_mask[iy, ix] = 1
        centres.append((iy, ix, int(cls)))
    for iy, ix, cls in centres:  # a cube's own centre keeps its colour beside a neighbour's
        colour[iy, ix] = cls
    if corners is None:
        weight[2] = 0
    else:
        for cx, cy in corners / STRIDE:
            _splat(heat[2], cx, cy, CORNER_SIGMA)
    return heat, weight, colour, offset, offset_mask
