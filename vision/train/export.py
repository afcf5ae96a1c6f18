"""Write the trained network as ONNX that OpenCV's ``cv2.dnn`` runs, and check that it does.

Why the check: an export can succeed and still load differently (an operator OpenCV reads
otherwise, a shape it cannot infer). The same random input goes through PyTorch and through
``cv2.dnn``; a difference beyond float noise stops the export.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import torch

from vision.netinput import INPUT_CHANNELS

OPSET = 13


def export_onnx(model: torch.nn.Module, path: Path, width: int, height: int) -> float:
    """Export ``model`` for a (1, 7, height, width) input; returns the largest difference
    between PyTorch's and OpenCV's outputs on a random input."""
    model.eval()
    x = torch.rand(1, INPUT_CHANNELS, height, width) - 0.5
    kwargs = {"dynamo": False} if "dynamo" in torch.onnx.export.__code__.co_varnames else {}
    torch.onnx.export(model, (x,), str(path), input_names=["input"], output_names=["maps"],
                      opset_version=OPSET, do_constant_folding=True, **kwargs)
    with torch.no_grad():
        want = model(x).numpy()
    net = cv2.dnn.readNetFromONNX(str(path))
    net.setInput(x.numpy())
    got = net.forward()
    diff = float(np.abs(np.asarray(got) - want).max())
    if diff > 1e-3 * max(1.0, float(np.abs(want).max())):
        raise RuntimeError(f"cv2.dnn reads {path} differently from PyTorch (max diff {diff})")
    return diff
