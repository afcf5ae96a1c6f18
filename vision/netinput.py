"""The picture as the network sees it: letterboxed, scaled to [-0.5, 0.5], reference beside it.

Why one module: training and the device must feed the network exactly the same thing. The
input is the frame fitted into the model's fixed size (aspect kept, the rest zero), then the
empty tray's picture fitted the same way (zeros when there is none), then one plane that says
whether a reference is there. Any camera resolution becomes the same input, so a 1920 x 1080
webcam and a 1152 x 648 Pi camera read alike.
"""

from __future__ import annotations

import cv2
import numpy as np

IMAGE_CHANNELS = 3
INPUT_CHANNELS = 7  # frame (3), empty-tray reference (3), reference-present flag (1)


def fit_scale(width: int, height: int, input_width: int, input_height: int) -> float:
    """The factor that fits a width x height picture into the network's input."""
    return min(input_width / width, input_height / height)


def fitted(image: np.ndarray, input_width: int, input_height: int) -> np.ndarray:
    """The picture scaled into the input's size (area averaging: no aliasing), top-left
    aligned on a black canvas, uint8."""
    h, w = image.shape[:2]
    s = fit_scale(w, h, input_width, input_height)
    nw, nh = max(1, round(w * s)), max(1, round(h * s))
    small = cv2.resize(image, (nw, nh), interpolation=cv2.INTER_AREA)
    canvas = np.zeros((input_height, input_width, 3), np.uint8)
    canvas[:nh, :nw] = small
    return canvas


def to_planes(image_u8: np.ndarray, reference_u8: np.ndarray | None) -> np.ndarray:
    """(7, H, W) float32 network input from two fitted uint8 BGR pictures."""
    h, w = image_u8.shape[:2]
    planes = np.zeros((INPUT_CHANNELS, h, w), np.float32)
    planes[0:3] = image_u8.transpose(2, 0, 1) * np.float32(1 / 255) - np.float32(0.5)
    if reference_u8 is not None:
        planes[3:6] = reference_u8.transpose(2, 0, 1) * np.float32(1 / 255) - np.float32(0.5)
        planes[6] = 0.5
    return planes


def network_input(image: np.ndarray, reference: np.ndarray | None, input_width: int,
                  input_height: int) -> tuple[np.ndarray, float]:
    """(1, 7, H, W) blob and the scale from picture pixels to input pixels."""
    h, w = image.shape[:2]
    scale = fit_scale(w, h, input_width, input_height)
    ref = None
    if reference is not None:
        ref = fitted(reference, input_width, input_height)
    return to_planes(fitted(image, input_width, input_height), ref)[None], scale
