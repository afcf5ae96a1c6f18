"""A trained CubeNet's weights carried into a wider CubeNet that reads exactly the same (Net2Net).

Why: the small network's fit is what limits the counter now, and a wider one trained from
scratch needs more steps than a lent GPU's minutes give. Widening instead starts the wider
network where the trained one is (Chen, Goodfellow and Shlens 2016, "Net2Net"): every new
channel copies an old one of its layer group (with its batch-norm statistics), and the layers
that read the group share each old channel's weight among its copies. The shares are drawn at
random (they sum to one), so the output is unchanged and the copies still learn apart: with
equal shares their gradients would stay equal for ever.

Channels that are added together (a skip connection and the upsampled path) belong to one
group and get one mapping, so the additions still add copies of the same channels.
"""

from __future__ import annotations

import numpy as np
import torch

# (layer, group it reads, group it writes); groups are CubeNet's channel widths c[0]..c[4],
# None for the fixed input and output
LAYERS = (
    ("stem.0", None, 0), ("stem.1", 0, 1), ("stem.2", 1, 1),
    ("down8.0", 1, 2), ("down8.1", 2, 2),
    ("down16.0", 2, 3), ("down16.1", 3, 3), ("down16.2", 3, 3),
    ("down32.0", 3, 4), ("down32.1", 4, 4),
    ("lat32", 4, 3), ("context", 4, 3), ("fuse16", 3, 2), ("lat8", 2, 2), ("fuse8", 2, 1),
    ("lat4", 1, 1), ("fuse4", 1, 1), ("head", 1, None),
)


def group_widths(state: dict[str, torch.Tensor]) -> list[int]:
    """c[0]..c[4] of the network these weights belong to."""
    return [int(state[f"{name}.0.weight"].shape[0])
            for name in ("stem.0", "stem.1", "down8.0", "down16.0", "down32.0")]


def _mapping(old: int, new: int, rng: np.random.Generator):
    """Which old channel each new one copies (the old ones first, then random ones), and the
    share of the old channel's outgoing weight each copy carries."""
    if new < old:
        raise ValueError(f"cannot narrow a layer group from {old} to {new} channels")
    copy_of = np.concatenate([np.arange(old), rng.integers(0, old, new - old)])
    share = rng.uniform(0.5, 1.5, new)
    totals = np.zeros(old)
    np.add.at(totals, copy_of, share)
    return torch.as_tensor(copy_of), torch.as_tensor(share / totals[copy_of], dtype=torch.float32)


def widen(old: dict[str, torch.Tensor], new: dict[str, torch.Tensor],
          seed: int = 0) -> dict[str, torch.Tensor]:
    """``old``'s weights in the shapes of ``new`` (a wider CubeNet's state dict), reading the
    same. Raises ValueError when the two are not CubeNets of the same design."""
    rng = np.random.default_rng(seed)
    maps = [_mapping(a, b, rng) for a, b in zip(group_widths(old), group_widths(new),
                                                strict=True)]
    out: dict[str, torch.Tensor] = {}
    for layer, reads, writes in LAYERS:
        for key in [k for k in old if k.startswith(f"{layer}.")]:
            t = old[key]
            if t.ndim == 0:  # batch norm's step counter
                out[key] = t.clone()
                continue
            if writes is not None:
                t = t[maps[writes][0]]  # every output-sized tensor follows its channel's copy
            if t.ndim == 4 and reads is not None:
                copy_of, share = maps[reads]
                t = t[:, copy_of] * share.view(1, -1, 1, 1)
            out[key] = t.clone()
    missing = set(new) - set(out)
    unused = set(old) - set(out)
    if missing or unused:
        raise ValueError(f"not the same design: missing {sorted(missing)}, "
                         f"unused {sorted(unused)}")
    for key, t in out.items():
        if t.shape != new[key].shape:
            raise ValueError(f"{key}: {tuple(t.shape)} does not widen to "
                             f"{tuple(new[key].shape)}")
    return out
