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

# Levelling the exposure (``levelled``): the share of the picture's pixels at or below the
# level, as the renderer's auto exposure meters (a mid percentile of the luminance), and the
# most a picture is brightened or darkened (a covered or blown-out camera is not stretched
# into noise; the training pictures sit within x0.8-1.3 of their median level).
EXPOSURE_PERCENTILE = 0.6
EXPOSURE_GAIN_RANGE = (0.5, 2.0)


def fit_scale(width: int, height: int, input_width: int, input_height: int) -> float:
    """The factor that fits a width x height picture into the network's input."""
    return min(input_width / width, input_height / height)


def fitted_size(width: int, height: int, input_width: int, input_height: int) -> tuple[int, int]:
    """The (width, height) a width x height picture covers of the input once fitted."""
    s = fit_scale(width, height, input_width, input_height)
    return max(1, round(width * s)), max(1, round(height * s))


def fitted(image: np.ndarray, input_width: int, input_height: int) -> np.ndarray:
    """The picture scaled into the input's size (area averaging: no aliasing), top-left
    aligned on a black canvas, uint8."""
    h, w = image.shape[:2]
    nw, nh = fitted_size(w, h, input_width, input_height)
    small = cv2.resize(image, (nw, nh), interpolation=cv2.INTER_AREA)
    canvas = np.zeros((input_height, input_width, 3), np.uint8)
    canvas[:nh, :nw] = small
    return canvas


def exposure_gain(fitted_u8: np.ndarray, covered: tuple[int, int], level: float) -> float:
    """The gain that brings the fitted picture's metered luminance (``EXPOSURE_PERCENTILE``
    of the part it covers, ``covered`` = (width, height), interpolated between grey levels)
    to ``level``, within ``EXPOSURE_GAIN_RANGE``."""
    w, h = covered
    grey = cv2.cvtColor(np.ascontiguousarray(fitted_u8[:h, :w]), cv2.COLOR_BGR2GRAY)
    cumulative = np.bincount(grey.ravel(), minlength=256).cumsum()
    want = EXPOSURE_PERCENTILE * cumulative[-1]
    k = int(np.searchsorted(cumulative, want))
    below = cumulative[k - 1] if k else 0
    metered = k - 0.5 + (want - below) / max(cumulative[k] - below, 1)
    low, high = EXPOSURE_GAIN_RANGE
    return float(np.clip(level / max(metered, 0.5), low, high))


def with_gain(image_u8: np.ndarray, gain: float) -> np.ndarray:
    """The uint8 picture times ``gain``, rounded and clipped as a camera's gain clips."""
    return image_u8 if gain == 1.0 else cv2.convertScaleAbs(image_u8, alpha=gain)


def levelled(image_u8: np.ndarray, reference_u8: np.ndarray | None,
             covered: tuple[tuple[int, int], tuple[int, int] | None],
             level: float | None) -> tuple[np.ndarray, np.ndarray | None]:
    """The fitted picture and reference with their exposure levelled (``level`` None: as
    they are); ``covered``: the part of the input each covers (``fitted_size``).

    Why: a camera's exposure and a lamp's brightness scale every pixel alike, and the network
    read the same tray differently at x0.6 and x1.4 of its brightness. Metered as an auto
    exposure meters and brought to one level, a picture darkened or brightened reads as the
    original, except where brightening clipped it. Both pictures take the reference's gain
    when there is one: the device's camera holds its exposure once the empty tray is set,
    so the difference between them is the cubes, not a gain that the cubes' own brightness
    would move; without it, the picture meters itself."""
    if level is None:
        return image_u8, reference_u8
    if reference_u8 is not None:
        gain = exposure_gain(reference_u8, covered[1], level)
    else:
        gain = exposure_gain(image_u8, covered[0], level)
    return with_gain(image_u8, gain), (None if reference_u8 is None
                                       else with_gain(reference_u8, gain))


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
                  input_height: int,
                  exposure_level: float | None = None) -> tuple[np.ndarray, float]:
    """(1, 7, H, W) blob and the scale from picture pixels to input pixels; the exposure
    levelled to ``exposure_level`` when given (``levelled``)."""
    h, w = image.shape[:2]
    scale = fit_scale(w, h, input_width, input_height)
    ref = ref_covered = None
    if reference is not None:
        ref = fitted(reference, input_width, input_height)
        ref_covered = fitted_size(reference.shape[1], reference.shape[0], input_width,
                                  input_height)
    frame, ref = levelled(fitted(image, input_width, input_height), ref,
                          (fitted_size(w, h, input_width, input_height), ref_covered),
                          exposure_level)
    return to_planes(frame, ref)[None], scale


class InputMaker:
    """``network_input`` for a stream of frames, reusing its buffer and the fitted reference.

    Why: the device reads frame after frame against the same empty-tray picture. Fitting that
    picture again for every frame (a non-integer area resize of a 1152 x 648 picture, ~5 ms on
    one core here) and allocating a fresh 4 MB input (page faults on every frame) was a quarter
    of a reading's time. The reference is recognised by its content (a CRC of its bytes, ~1 ms),
    not by identity, so a picture changed in place is fitted again. The input is the same,
    value for value, as ``network_input``'s. Not thread-safe: one per detector, as the net.
    """

    def __init__(self, input_width: int, input_height: int,
                 exposure_level: float | None = None):
        self.input_width, self.input_height = input_width, input_height
        self.exposure_level = exposure_level
        self._blob = np.zeros((1, INPUT_CHANNELS, input_height, input_width), np.float32)
        self._reference_key: tuple | None = None
        self._reference_fitted: np.ndarray | None = None

    def __call__(self, image: np.ndarray,
                 reference: np.ndarray | None) -> tuple[np.ndarray, float]:
        """The (1, 7, H, W) blob (the same buffer each call) and the picture -> input scale."""
        h, w = image.shape[:2]
        scale = fit_scale(w, h, self.input_width, self.input_height)
        ref = self._fitted_reference(reference)
        covered = (fitted_size(w, h, self.input_width, self.input_height),
                   None if reference is None else fitted_size(
                       reference.shape[1], reference.shape[0], self.input_width,
                       self.input_height))
        frame, ref = levelled(fitted(image, self.input_width, self.input_height), ref, covered,
                              self.exposure_level)
        to_planes(frame, ref, out=self._blob[0])
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
