"""A shipped model's ONNX file made trainable again: ``--init vision/model`` goes on from it.

Why: the PyTorch weights of a run live on the machine that trained it, and a development
machine or a lent GPU starts without them; the ONNX file ships in the package and is the one
copy of the weights that every machine has. Its batch norm is folded into the convolutions at
export (``do_constant_folding``): each convolution carries ``W`` and ``b`` where the network
had ``BN(W x)``. Unfolding gives every batch norm the identity (mean 0, variance 1 - eps,
scale 1, shift ``b``): the network then reads exactly as the ONNX file. But training normalises
each batch by its own statistics, which for ``W x`` are far from mean 0 and variance 1, so the
first training step would read something else entirely; ``measure_batch_norm`` therefore sets
each batch norm's statistics to those of real training batches and its scale and shift so
that the network still reads the same (``a z + c`` stays ``a z + c``).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np
import torch
from torch import nn

from vision.train.widen import LAYERS


def onnx_file(path: Path) -> Path | None:
    """The ONNX file ``--init`` names: the file itself, or ``model.onnx`` in a model folder."""
    path = Path(path)
    if path.is_dir() and (path / "model.onnx").is_file():
        return path / "model.onnx"
    if path.suffix == ".onnx" and path.is_file():
        return path
    return None


def folded_convolutions(path: Path) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each convolution's (weight, bias) in the order the network runs them."""
    import onnx  # the train extra's; the runtime never reads ONNX files this way
    from onnx import numpy_helper

    graph = onnx.load(str(path)).graph
    tensors = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    out = []
    for node in graph.node:
        if node.op_type != "Conv":
            continue
        if len(node.input) != 3 or not all(n in tensors for n in node.input[1:]):
            raise SystemExit(f"{path}: a convolution without constant weight and bias "
                             f"({node.name}); not a CubeNet exported by vision.train")
        out.append((tensors[node.input[1]], tensors[node.input[2]]))
    return out


def state_from_onnx(path: Path) -> dict[str, torch.Tensor]:
    """A CubeNet state dict that reads exactly as the ONNX file (batch norms the identity plus
    the folded bias), at the ONNX file's own widths."""
    convs = folded_convolutions(path)
    if len(convs) != len(LAYERS):
        raise SystemExit(f"{path} has {len(convs)} convolutions, a CubeNet {len(LAYERS)}: "
                         "not a CubeNet exported by vision.train")
    state: dict[str, torch.Tensor] = {}
    for (name, _, _), (weight, bias) in zip(LAYERS, convs, strict=True):
        w, b = torch.from_numpy(weight.copy()), torch.from_numpy(bias.copy())
        if name in ("context", "head"):  # plain convolutions with a bias of their own
            state[f"{name}.weight"], state[f"{name}.bias"] = w, b
            continue
        eps = nn.BatchNorm2d(1).eps
        state[f"{name}.0.weight"] = w
        state[f"{name}.1.weight"] = torch.ones_like(b)
        state[f"{name}.1.bias"] = b
        state[f"{name}.1.running_mean"] = torch.zeros_like(b)
        state[f"{name}.1.running_var"] = torch.full_like(b, 1 - eps)
        state[f"{name}.1.num_batches_tracked"] = torch.tensor(0)
    return state


@torch.no_grad()
def measure_batch_norm(model: nn.Module, inputs: Iterable[torch.Tensor]) -> int:
    """Set every batch norm's statistics to those of its input over ``inputs`` (training
    batches), changing its scale and shift so that the network's eval-mode output stays the
    same. Returns how many pictures were measured."""
    norms = [m for m in model.modules() if isinstance(m, nn.BatchNorm2d)]
    sums = {m: [0.0, 0.0, 0] for m in norms}  # per norm: sum, sum of squares, count

    def record(module, args, _output):
        z = args[0].double()
        acc = sums[module]
        acc[0] = acc[0] + z.sum(dim=(0, 2, 3))
        acc[1] = acc[1] + (z * z).sum(dim=(0, 2, 3))
        acc[2] += z.numel() // z.shape[1]

    hooks = [m.register_forward_hook(record) for m in norms]
    was_training = model.training
    model.eval()  # the outputs do not depend on the statistics being measured
    pictures = 0
    try:
        for x in inputs:
            model(x)
            pictures += len(x)
    finally:
        for h in hooks:
            h.remove()
        model.train(was_training)
    if not pictures:
        raise ValueError("no pictures to measure the batch norms on")
    for m in norms:
        total, squares, count = sums[m]
        mean = total / count
        var = (squares / count - mean * mean).clamp_min(0)
        # eval mode computes a z + c; keep a and c with the new statistics
        a = m.weight.double() / torch.sqrt(m.running_var.double() + m.eps)
        c = m.bias.double() - a * m.running_mean.double()
        m.running_mean.copy_(mean)
        m.running_var.copy_(var)
        m.weight.copy_(a * torch.sqrt(var + m.eps))
        m.bias.copy_(c + a * mean)
    return pictures
