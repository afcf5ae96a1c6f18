"""Training batches re-shot on the training device itself (``--augment-on device``).

Why: on a GPU, re-shooting the pictures on the CPU (``vision.train.augment``) is the
bottleneck: on a lent H200 with 15 worker processes it fed ~15 steps of 32 pictures a second,
while the network could take many times that. Here the pictures are uploaded once and every
step moves, re-lights, re-saturates, blurs, noises and JPEG-compresses a whole batch with tensor
operations, and draws the target maps the same way. The random draws (the affine matrices, the
light, the saturation, which camera faults) are made by the CPU path's own functions
(``random_affine``, ``draw_light``, ``draw_saturation``, ``shaken``, ``draw_faults``), with
numpy per picture; only the pixel work moves. JPEG is
emulated as libjpeg does it (4:2:0 chroma, the standard quantisation tables scaled by the
quality, an 8 x 8 DCT); the tests hold it and the targets against OpenCV and
``augment.targets``.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch.nn import functional

from vision.train.augment import (
    CENTRE_SIGMA,
    CORNER_SIGMA,
    LUMA_BGR,
    REFERENCE_SHARE,
    STRIDE,
    Cached,
    draw_faults,
    draw_light,
    draw_saturation,
    drifted,
    random_affine,
    shaken,
    windowed,
)
from vision.train.batches import Draws, crowd_weights, draw

_LUMA_TABLE = [16, 11, 10, 16, 24, 40, 51, 61, 12, 12, 14, 19, 26, 58, 60, 55,
               14, 13, 16, 24, 40, 57, 69, 56, 14, 17, 22, 29, 51, 87, 80, 62,
               18, 22, 37, 56, 68, 109, 103, 77, 24, 35, 55, 64, 81, 104, 113, 92,
               49, 64, 78, 87, 103, 121, 120, 101, 72, 92, 95, 98, 112, 100, 103, 99]
_CHROMA_TABLE = [17, 18, 24, 47, 99, 99, 99, 99, 18, 21, 26, 66, 99, 99, 99, 99,
                 24, 26, 56, 99, 99, 99, 99, 99, 47, 66, 99, 99, 99, 99, 99, 99] + [99] * 32


def quant_tables(quality: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """libjpeg's luma and chroma tables (B, 8, 8) for each picture's quality (1-100)."""
    q = np.clip(np.asarray(quality, np.float64), 1, 100)
    scale = np.where(q < 50, 5000 / q, 200 - 2 * q)[:, None]
    out = []
    for base in (_LUMA_TABLE, _CHROMA_TABLE):
        t = np.floor((np.array(base)[None, :] * scale + 50) / 100)
        out.append(np.clip(t, 1, 255).reshape(-1, 8, 8))
    return out[0], out[1]


def _dct_matrix(device) -> torch.Tensor:
    k = torch.arange(8, dtype=torch.float32, device=device)
    m = torch.cos((2 * k[None, :] + 1) * k[:, None] * math.pi / 16) * math.sqrt(2 / 8)
    m[0] /= math.sqrt(2)
    return m  # orthonormal DCT-II: coefficients = m @ block @ m.T


def _quantise(planes: torch.Tensor, tables: torch.Tensor, dct: torch.Tensor) -> torch.Tensor:
    """Round each 8 x 8 block's DCT coefficients to the table's steps. planes (B, C, H, W)
    level-shifted, H and W multiples of 8; tables (B, 8, 8)."""
    b, c, h, w = planes.shape
    blocks = planes.reshape(b, c, h // 8, 8, w // 8, 8).permute(0, 1, 2, 4, 3, 5)
    coef = dct @ blocks @ dct.T
    t = tables[:, None, None, None]
    coef = torch.round(coef / t) * t
    blocks = dct.T @ coef @ dct
    return blocks.permute(0, 1, 2, 4, 3, 5).reshape(b, c, h, w)


def jpeg(images: torch.Tensor, quality: np.ndarray) -> torch.Tensor:
    """(B, 3, H, W) BGR 0-255 float as after a JPEG round trip at each picture's quality; H and
    W multiples of 16 (the network's inputs are multiples of 32)."""
    device = images.device
    luma_t, chroma_t = (torch.as_tensor(t, dtype=torch.float32, device=device)
                        for t in quant_tables(quality))
    dct = _dct_matrix(device)
    b, g, r = images[:, 0:1], images[:, 1:2], images[:, 2:3]
    y = 0.299 * r + 0.587 * g + 0.114 * b
    cb = -0.168736 * r - 0.331264 * g + 0.5 * b + 128
    cr = 0.5 * r - 0.418688 * g - 0.081312 * b + 128
    chroma = functional.avg_pool2d(torch.cat([cb, cr], 1), 2)  # 4:2:0, OpenCV's default
    y = _quantise(y - 128, luma_t, dct) + 128
    chroma = _quantise(chroma - 128, chroma_t, dct) + 128
    chroma = functional.interpolate(chroma, scale_factor=2.0, mode="bilinear",
                                    align_corners=False)
    cb, cr = chroma[:, 0:1] - 128, chroma[:, 1:2] - 128
    out = torch.cat([y + 1.772 * cb, y - 0.344136 * cb - 0.714136 * cr, y + 1.402 * cr], 1)
    return out.round().clamp(0, 255)


def gaussian_blur(image: torch.Tensor, sigma: float) -> torch.Tensor:
    """(1, C, H, W) blurred as OpenCV blurs uint8 pictures (its kernel size for a sigma, its
    mirrored border)."""
    radius = (round(sigma * 6 + 1) | 1) // 2
    x = torch.arange(-radius, radius + 1, dtype=torch.float32, device=image.device)
    k = torch.exp(-x * x / (2 * sigma * sigma))
    k = k / k.sum()
    c = image.shape[1]
    padded = functional.pad(image, (radius, radius, 0, 0), mode="reflect")
    image = functional.conv2d(padded, k.view(1, 1, 1, -1).repeat(c, 1, 1, 1), groups=c)
    padded = functional.pad(image, (0, 0, radius, radius), mode="reflect")
    return functional.conv2d(padded, k.view(1, 1, -1, 1).repeat(c, 1, 1, 1), groups=c)


def warp(images: torch.Tensor, matrices: np.ndarray, sizes: np.ndarray, out_w: int,
         out_h: int):
    """Each picture (B, C, H, W) through its 2 x 3 matrix (source px -> output px), bilinear,
    zeros outside, as ``cv2.warpAffine``; also the mask of output pixels whose nearest source
    pixel is in the picture (its own (width, height) in ``sizes``: the rest is padding)."""
    device = images.device
    b, _, h, w = images.shape
    full = np.concatenate([matrices, np.tile([[[0, 0, 1]]], (b, 1, 1))], 1)
    inverse = torch.as_tensor(np.linalg.inv(full)[:, :2], dtype=torch.float32, device=device)
    ys, xs = torch.meshgrid(torch.arange(out_h, device=device, dtype=torch.float32),
                            torch.arange(out_w, device=device, dtype=torch.float32),
                            indexing="ij")
    points = torch.stack([xs, ys, torch.ones_like(xs)], -1).view(1, -1, 3)
    src = points @ inverse.transpose(1, 2)  # (B, H*W, 2) source pixel coordinates
    grid = torch.stack([(2 * src[..., 0] + 1) / w - 1, (2 * src[..., 1] + 1) / h - 1], -1)
    out = functional.grid_sample(images, grid.view(b, out_h, out_w, 2), mode="bilinear",
                                 padding_mode="zeros", align_corners=False)
    near = torch.round(src)
    own = torch.as_tensor(sizes, dtype=torch.float32, device=device).view(b, 1, 2)
    valid = ((near >= 0) & (near < own)).all(-1).view(b, 1, out_h, out_w)
    return out, valid


def relight(images: torch.Tensor, gains: np.ndarray, exposure: np.ndarray,
            gamma: np.ndarray) -> torch.Tensor:
    """Per-channel gain, exposure and gamma, as ``augment.relight``; rounded like its table."""
    device = images.device
    f = torch.as_tensor(gains * exposure[:, None], dtype=torch.float32, device=device)
    g = torch.as_tensor(gamma, dtype=torch.float32, device=device).view(-1, 1, 1, 1)
    out = torch.pow(images.round().clamp(0, 255) / 255, g) * f.view(-1, 3, 1, 1) * 255
    return (out + 0.5).floor().clamp(0, 255)


def saturate(images: torch.Tensor, saturation: np.ndarray) -> torch.Tensor:
    """Each pixel moved towards its own grey, as ``augment.saturate``; rounded like it."""
    luma = torch.as_tensor(LUMA_BGR, device=images.device).view(1, 3, 1, 1)
    grey = (images * luma).sum(1, keepdim=True)
    s = torch.as_tensor(saturation, dtype=torch.float32, device=images.device).view(-1, 1, 1, 1)
    return (grey + s * (images - grey) + 0.5).floor().clamp(0, 255)


class CameraFaults:
    """Which camera faults each picture of a batch gets (``augment.draw_faults``)."""

    def __init__(self, rng: np.random.Generator, n: int, rate: float = 1.0):
        drawn = [draw_faults(rng, rate) for _ in range(n)]
        self.low_res = [f.low_res for f in drawn]
        self.blur = [f.blur for f in drawn]
        self.noise = np.array([f.noise for f in drawn])
        self.jpeg = np.array([f.jpeg for f in drawn])

    def apply(self, images: torch.Tensor) -> torch.Tensor:
        images = images.clone()
        h, w = images.shape[-2:]
        for i, f in enumerate(self.low_res):
            if f is not None:  # a lower-resolution camera, scaled up to the same input
                small = functional.interpolate(images[i:i + 1], size=(max(8, int(h * f)),
                                               max(8, int(w * f))), mode="area")
                images[i:i + 1] = functional.interpolate(
                    small, size=(h, w), mode="bilinear", align_corners=False).round()
        for i, sigma in enumerate(self.blur):
            if sigma is not None:
                images[i:i + 1] = gaussian_blur(images[i:i + 1], sigma).round()
        noisy = self.noise > 0
        if noisy.any():
            sd = torch.as_tensor(self.noise, dtype=torch.float32, device=images.device)
            images = images + torch.randn_like(images) * sd.view(-1, 1, 1, 1)
        images = images.round().clamp(0, 255)
        pick = np.nonzero(self.jpeg)[0]
        if len(pick):
            index = torch.as_tensor(pick, device=images.device)
            images[index] = jpeg(images[index], self.jpeg[pick])
        return images


def _window(gx, gy, ix, iy, r):
    return ((gx - ix[..., None, None]).abs() <= r) & ((gy - iy[..., None, None]).abs() <= r)


def _splat(gx, gy, cx, cy, ix, iy, sigma, use):
    """Max over the points of their Gaussians (window of 3 sigma, own cell 1): (B, gh, gw)."""
    d2 = (gx + 0.5 - cx[..., None, None]) ** 2 + (gy + 0.5 - cy[..., None, None]) ** 2
    g = torch.exp(-d2 / (2 * sigma * sigma))
    g = torch.where((gx == ix[..., None, None]) & (gy == iy[..., None, None]), 1.0, g)
    g = g * (_window(gx, gy, ix, iy, math.ceil(3 * sigma)) & use[..., None, None])
    return g.amax(1) if g.shape[1] else g.new_zeros(g.shape[0], *g.shape[2:])


def _last(mask: torch.Tensor) -> torch.Tensor:
    """Per cell, 1 + the index of the last point whose mask covers it (0: none), as the CPU
    path's later writes win."""
    n = mask.shape[1]
    order = torch.arange(1, n + 1, device=mask.device).view(1, n, 1, 1)
    return (mask * order).amax(1) if n else mask.new_zeros(mask.shape[0], *mask.shape[2:])


def target_maps(cubes: torch.Tensor, present: torch.Tensor, corners: torch.Tensor,
                has_corners: torch.Tensor, out_w: int, out_h: int):
    """``augment.targets`` for a whole batch: cubes (B, N, 5) in input px (x, y, colour,
    in_tray, keep), present (B, N) bool (padding is False), corners (B, 4, 2), has_corners (B,)."""
    device = cubes.device
    gw, gh = out_w // STRIDE, out_h // STRIDE
    b = cubes.shape[0]
    gy, gx = torch.meshgrid(torch.arange(gh, device=device), torch.arange(gw, device=device),
                            indexing="ij")
    gx, gy = gx.view(1, 1, gh, gw), gy.view(1, 1, gh, gw)
    cx, cy = cubes[..., 0] / STRIDE, cubes[..., 1] / STRIDE
    ix, iy = torch.floor(cx).long(), torch.floor(cy).long()
    near = present & (ix >= -1) & (ix <= gw) & (iy >= -1) & (iy <= gh)
    inside = (ix >= 0) & (ix < gw) & (iy >= 0) & (iy < gh)
    in_tray = cubes[..., 3] >= 0.5
    fair = near & ((cubes[..., 4] < 0.5) | ~inside)  # either answer is fair: no weight
    asked = near & (cubes[..., 4] >= 0.5) & inside

    heat = torch.zeros(b, 3, gh, gw, device=device)
    weight = torch.ones(b, 3, gh, gw, device=device)
    around = _window(gx, gy, ix, iy, 1)
    for channel, here in ((0, in_tray), (1, ~in_tray)):
        heat[:, channel] = _splat(gx, gy, cx, cy, ix, iy, CENTRE_SIGMA, asked & here)
        silent = (around & (fair & here)[..., None, None]).any(1)
        weight[:, channel] = torch.where(silent, 0.0, 1.0)

    classes = cubes[..., 2].long()
    owner = _last(around & asked[..., None, None])
    centre = (gx == ix[..., None, None]) & (gy == iy[..., None, None]) & asked[..., None, None]
    own = _last(centre)
    owner = torch.where(own > 0, own, owner)
    pick = (owner - 1).clamp(min=0).view(b, -1)
    colour = torch.where(owner > 0, torch.gather(classes, 1, pick).view(b, gh, gw)
                         if classes.shape[1] else owner, -1)
    at = (own - 1).clamp(min=0).view(b, -1)
    frac = torch.stack([cx - ix, cy - iy], 1)  # (B, 2, N)
    offset = torch.gather(frac, 2, at[:, None].expand(-1, 2, -1)).view(b, 2, gh, gw) \
        if classes.shape[1] else torch.zeros(b, 2, gh, gw, device=device)
    mask = (own > 0).float()
    offset = offset * mask[:, None]

    kx, ky = corners[..., 0] / STRIDE, corners[..., 1] / STRIDE
    heat[:, 2] = _splat(gx, gy, kx, ky, torch.floor(kx).long(), torch.floor(ky).long(),
                        CORNER_SIGMA, has_corners[:, None].expand(-1, 4))
    weight[:, 2] = weight[:, 2] * has_corners.float().view(-1, 1, 1)
    return heat, weight, colour.long(), offset, mask


class DeviceBatches:
    """Endless training batches made on ``device`` from pictures fitted to the input once.

    Each step draws the same kinds of re-shoot as ``augment.augment`` (its matrices and light
    from the same functions and ranges) and returns what ``batches`` returns: (x, heat, weight,
    colour, offset, mask) tensors, already on the device."""

    def __init__(self, items: list[Cached], batch: int, size: tuple[int, int], seed: int,
                 device: str = "cpu", draws: Draws = Draws()):
        if not items:
            raise ValueError("no training pictures")
        self.weights = crowd_weights(items, draws.crowd)
        self.draws = draws
        self.batch, self.size, self.device = batch, size, torch.device(device)
        self.rng = np.random.default_rng([seed, 99])
        h = max(it.image.shape[0] for it in items)
        w = max(it.image.shape[1] for it in items)
        self.sizes = np.array([it.image.shape[1::-1] for it in items])
        self.images = torch.zeros(len(items), 3, h, w, dtype=torch.uint8)
        refs: dict[int, int] = {}
        ref_list: list[np.ndarray] = []
        self.ref_index = np.full(len(items), -1)
        for i, it in enumerate(items):
            ih, iw = it.image.shape[:2]
            self.images[i, :, :ih, :iw] = torch.from_numpy(it.image.transpose(2, 0, 1))
            if it.reference is not None:  # one copy per set-up: the drops share it
                if id(it.reference) not in refs:
                    refs[id(it.reference)] = len(ref_list)
                    ref_list.append(it.reference)
                self.ref_index[i] = refs[id(it.reference)]
        self.references = torch.zeros(max(1, len(ref_list)), 3, h, w, dtype=torch.uint8)
        for j, ref in enumerate(ref_list):
            rh, rw = ref.shape[:2]
            self.references[j, :, :rh, :rw] = torch.from_numpy(ref.transpose(2, 0, 1))
        self.images = self.images.to(self.device)
        self.references = self.references.to(self.device)
        n = max(1, max(len(it.cubes) for it in items))
        self.cubes = np.zeros((len(items), n, 5), np.float32)
        self.present = np.zeros((len(items), n), bool)
        self.corners = np.zeros((len(items), 4, 2), np.float32)
        self.has_corners = np.zeros(len(items), bool)
        for i, it in enumerate(items):
            self.cubes[i, :len(it.cubes)] = it.cubes
            self.present[i, :len(it.cubes)] = True
            if it.corners is not None:
                self.corners[i] = it.corners
                self.has_corners[i] = True

    def __iter__(self):
        return self

    def __next__(self):
        rng, (out_w, out_h), b, draws = self.rng, self.size, self.batch, self.draws
        idx = draw(rng, len(self.sizes), b, self.weights)
        matrices = np.stack([random_affine(rng, *self.sizes[i], out_w, out_h, mirror=draws.mirror)
                             for i in idx])
        if draws.crop is not None:  # a random window of each (augment.windowed)
            matrices = np.stack([windowed(m, rng, (out_w, out_h), draws.crop) for m in matrices])
            out_w, out_h = draws.crop
        use_ref = (self.ref_index[idx] >= 0) & (rng.random(b) < REFERENCE_SHARE)
        ref_matrices = np.stack([shaken(m, rng, out_w, out_h) for m in matrices])
        gains, exposure, gamma = map(np.array, zip(*(draw_light(rng) for _ in range(b)),
                                                   strict=True))
        saturation = np.array([draw_saturation(rng) for _ in range(b)])
        ref_gains, ref_exposure = map(np.array, zip(
            *(drifted(rng, g, e) for g, e in zip(gains, exposure, strict=True)), strict=True))

        index = torch.as_tensor(idx, device=self.device)
        image, valid = warp(self.images[index].float(), matrices, self.sizes[idx], out_w,
                            out_h)
        image = CameraFaults(rng, b, draws.faults).apply(
            saturate(relight(image, gains, exposure, gamma), saturation))
        image = image * valid
        x = torch.zeros(b, 7, out_h, out_w, device=self.device)
        x[:, 0:3] = image / 255 - 0.5
        pick = np.nonzero(use_ref)[0]
        if len(pick):
            refs = self.references[torch.as_tensor(self.ref_index[idx[pick]],
                                                   device=self.device)].float()
            ref, _ = warp(refs, ref_matrices[pick], self.sizes[idx[pick]], out_w, out_h)
            ref = CameraFaults(rng, len(pick), draws.faults).apply(saturate(
                relight(ref, ref_gains[pick], ref_exposure[pick], gamma[pick]), saturation[pick]))
            at = torch.as_tensor(pick, device=self.device)
            x[at, 3:6] = ref * valid[at] / 255 - 0.5
            x[at, 6] = 0.5

        cubes = self.cubes[idx].copy()
        cubes[..., :2] = np.einsum("bnk,bjk->bnj", cubes[..., :2], matrices[:, :, :2]) \
            + matrices[:, None, :, 2]
        corners = np.einsum("bnk,bjk->bnj", self.corners[idx], matrices[:, :, :2]) \
            + matrices[:, None, :, 2]
        as_tensor = lambda a: torch.as_tensor(a, device=self.device)  # noqa: E731
        maps = target_maps(as_tensor(cubes), as_tensor(self.present[idx]),
                           as_tensor(corners.astype(np.float32)),
                           as_tensor(self.has_corners[idx]), out_w, out_h)
        return (x, *maps)
