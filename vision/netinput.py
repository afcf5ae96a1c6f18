"""The picture as the network sees it: letterboxed, scaled to [-0.5, 0.5], reference beside it.

Why one module: training and the device must feed the network exactly the same thing. The
input is the frame fitted into the model's fixed size (aspect kept, the rest zero), then the
empty tray's picture fitted the same way (zeros when there is none), then one plane that says
whether a reference is there. Any camera resolution becomes the same input, so a 1920 x 1080
webcam and a 1152 x 648 Pi camera read alike.
"""

from __future__ import annotations

import zlib

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


def to_planes(image_u8: np.ndarray, reference_u8: np.ndarray | None,
              out: np.ndarray | None = None) -> np.ndarray:
    """(7, H, W) float32 network input from two fitted uint8 BGR pictures, written into ``out``
    when given (see ``InputMaker`` for why)."""
    h, w = image_u8.shape[:2]
    planes = np.empty((INPUT_CHANNELS, h, w), np.float32) if out is None else out
    for first, picture in ((0, image_u8), (3, reference_u8)):
        if picture is None:
            planes[first:first + 3] = 0
            continue
        np.multiply(picture.transpose(2, 0, 1), np.float32(1 / 255), out=planes[first:first + 3])
        planes[first:first + 3] -= np.float32(0.5)
    planes[6] = 0.5 if reference_u8 is not None else 0
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


class InputMaker:
    """``network_input`` for a stream of frames, reusing its buffer and the fitted reference.

    Why: the device reads frame after frame against the same empty-tray picture. Fitting that
    picture again for every frame (a non-integer area resize of a 1152 x 648 picture, ~5 ms on
    one core here) and allocating a fresh 4 MB input (page faults on every frame) was a quarter
    of a reading's time. The reference is recognised by its content (a CRC of its bytes, ~1 ms),
    not by identity, so a picture changed in place is fitted again. The input is the same,
    value for value, as ``network_input``'s. Not thread-safe: one per detector, as the net.
    """

    def __init__(self, input_width: int, input_height: int):
        self.input_width, self.input_height = input_width, input_height
        self._blob = np.zeros((1, INPUT_CHANNELS, input_height, input_width), np.float32)
        self._reference_key: tuple | None = None
        self._reference_fitted: np.ndarray | None = None

    def __call__(self, image: np.ndarray,
                 reference: np.ndarray | None) -> tuple[np.ndarray, float]:
        """The (1, 7, H, W) blob (the same buffer each call) and the picture -> input scale."""
        h, w = image.shape[:2]
        scale = fit_scale(w, h, self.input_width, self.input_height)
        to_planes(fitted(image, self.input_width, self.input_height),
                  self._fitted_reference(reference), out=self._blob[0])
        return self._blob, scale

    def _fitted_reference(self, reference: np.ndarray | None) -> np.ndarray | None:
        if reference is None:
            return None
        reference = np.ascontiguousarray(reference)
        key = (reference.shape, reference.dtype.str, zlib.crc32(reference))
        if key != self._reference_key:
            self._reference_fitted = fitted(reference, self.input_width, self.input_height)
            self._reference_key = key
        return self._reference_fitted
