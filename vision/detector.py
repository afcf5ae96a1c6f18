"""The learned cube detector behind a small seam: an ONNX network run by OpenCV's ``cv2.dnn``.

Why: the detector is the one part that is learned; everything the device needs to know about it
(input size, output maps, colour labels, thresholds, temperature) is in the ``model.json``
beside the ``.onnx`` file, so a retrained model drops in without a code change (the way Frigate
keeps its detector's input shape and labels in its config). ``decode`` is plain numpy and is
shared with the training code, which scores its validation set with exactly what the device
runs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from vision import tray
from vision.errors import VisionError
from vision.netinput import InputMaker

MODEL_DIR = Path(__file__).with_name("model")

# A candidate below the counting threshold but at least this share of it is a possible cube
# worth a word (``vision.counter``) and makes a single pass unsure (``more_views_below``).
DOUBT_SHARE = 0.6

# The views a picture can be read in, as (rows reversed, columns reversed): turned half round,
# mirrored (left and right swapped) and flipped (top and bottom swapped). Each is its own
# inverse, and exact on the network's grid because the input's size is a multiple of the stride.
VIEWS = {"plain": (False, False), "turned": (True, True), "mirrored": (False, True),
         "flipped": (True, False)}


def check_views(views) -> None:
    """Refuse a list of views that does not start with "plain" or names a view twice or one
    not in ``VIEWS`` (the decoder averages into the plain view's cells)."""
    views = tuple(views)
    if not views or views[0] != "plain" or len(set(views)) != len(views) or any(
            v not in VIEWS for v in views):
        raise VisionError(f"views must start with 'plain' and name each view once, of "
                          f"{sorted(VIEWS)}; got {list(views)}")


@dataclass(frozen=True)
class ModelConfig:
    """What ``model.json`` says about the network; unknown keys are refused."""

    input_width: int
    input_height: int
    stride: int
    labels: tuple[str, ...]
    heads: tuple[str, ...]
    cube_threshold: float = 0.5  # a centre at least this likely is counted
    candidate_threshold: float = 0.2  # below the count, a centre this likely makes a doubt
    corner_threshold: float = 0.25
    colour_temperature: float = 1.0  # divides the colour logits (calibrated on validation)
    cube_temperature: float = 1.0  # divides the centre logits (calibrated on validation)
    # added to the centre logits after the temperature (calibrated on validation): with the
    # temperature, a scale and an offset (Platt scaling), so that the strong peaks can be
    # surer without the faint ones
    cube_bias: float = 0.0
    # the views of the picture the network reads, their maps averaged (``VIEWS``; the first
    # is always "plain"): each view is one more pass of the network. Why more than one: the
    # network's mistakes in a view and in its mirror image are not the same mistakes, so the
    # average reads more trays right than either (measured on validation set-ups, even for
    # views the network never saw in training, as the mirrored ones)
    views: tuple[str, ...] = ("plain",)
    # with more than one view: keep the plain view's reading alone when it is sure of
    # everything (every cube it would count at least this confident, no candidate in the
    # doubt band just below the count, the tray's outline found); None: always read them all.
    # Why: most trays are read the same either way, and the other views cost a pass each
    more_views_below: float | None = None
    # a counted cube's confidence (P(a cube here) x P(its colour)) is a product of two
    # probabilities calibrated on all candidates, not on the counted cubes; these map its logit
    # to the share of counted validation cubes that were right (Platt scaling, fitted last)
    confidence_scale: float = 1.0
    confidence_shift: float = 0.0
    # a counted cube less confident than this makes the reading say it is unsure; chosen on
    # the validation set-ups for the model's own confidences, a level means nothing across
    # models (``vision.train.calibrate.unsure_level``; the default is for a model without one)
    unsure_below: float = 0.6
    trained_on: str = ""

    @classmethod
    def from_dict(cls, d: dict) -> ModelConfig:
        allowed = set(cls.__dataclass_fields__)
        unknown = set(d) - allowed
        if unknown:
            raise VisionError(f"model.json: unknown keys {sorted(unknown)}; "
                              f"allowed: {sorted(allowed)}")
        d = dict(d)
        d["labels"] = tuple(d["labels"])
        d["heads"] = tuple(d["heads"])
        if "views" in d:
            d["views"] = tuple(d["views"])
        return cls(**d)

    def __post_init__(self):
        check_views(self.views)

    def confidence(self, raw: float) -> float:
        """A counted cube's calibrated confidence from its raw product of probabilities."""
        p = min(max(raw, 1e-6), 1 - 1e-6)
        return float(_sigmoid(self.confidence_scale * np.log(p / (1 - p))
                              + self.confidence_shift))

    def to_dict(self) -> dict:
        return {k: (list(v) if isinstance(v, tuple) else v)
                for k, v in self.__dict__.items()}


@dataclass(frozen=True)
class Candidate:
    """A possible cube: where (input pixels of the picture), how likely, which colour."""

    x: float
    y: float
    score: float  # probability that a cube of the tray is centred here
    colour_probs: np.ndarray  # (7,) softmax over the labels
    outside: bool = False  # the network takes it for a cube lying outside the tray


@dataclass(frozen=True)
class Detections:
    candidates: tuple[Candidate, ...]
    corners: np.ndarray | None  # (4, 2) floor corners in picture pixels, or None


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _softmax(x: np.ndarray, axis: int = 0) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _peaks(heat: np.ndarray, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """Cells that are a 3 x 3 maximum and at least ``threshold``: (rows, cols)."""
    local_max = cv2.dilate(heat, np.ones((3, 3), np.uint8))
    return np.nonzero((heat >= local_max) & (heat >= threshold))


def decode(maps: np.ndarray, config: ModelConfig, scale: float,
           valid_size: tuple[int, int] | None = None) -> Detections:
    """Turn the network's output (C, gh, gw) into candidates and corners in picture pixels.

    ``scale`` maps picture pixels to input pixels; ``valid_size`` (input px) is the part of the
    input the picture covers (the rest is padding)."""
    heads = {name: i for i, name in enumerate(config.heads)}
    stride = config.stride
    cube = _sigmoid(maps[heads["cube"]] / config.cube_temperature
                    + config.cube_bias).astype(np.float32)
    outside = _sigmoid(maps[heads["outside"]]).astype(np.float32)
    if valid_size is not None:
        gw = int(np.ceil(valid_size[0] / stride))
        gh = int(np.ceil(valid_size[1] / stride))
        cube[gh:, :] = 0
        cube[:, gw:] = 0
        outside[gh:, :] = 0
        outside[:, gw:] = 0
    colour_idx = [heads[f"colour:{i}"] for i in range(len(config.labels))]
    colour_logits = maps[colour_idx] / config.colour_temperature
    dx, dy = _sigmoid(maps[heads["dx"]]), _sigmoid(maps[heads["dy"]])

    candidates = []
    for heat, is_outside in ((cube, False), (outside, True)):
        rows, cols = _peaks(heat, config.candidate_threshold)
        for r, c in zip(rows.tolist(), cols.tolist(), strict=True):
            if is_outside and cube[r, c] >= heat[r, c]:
                continue  # the same spot is more likely a tray cube: one candidate is enough
            x = (c + float(dx[r, c])) * stride / scale
            y = (r + float(dy[r, c])) * stride / scale
            probs = _softmax(colour_logits[:, r, c])
            candidates.append(Candidate(x, y, float(heat[r, c]), probs, is_outside))
    candidates.sort(key=lambda cand: -cand.score)
    corners = _corners(maps[heads["corner"]], config, scale, valid_size)
    return Detections(tuple(candidates), corners)


def _corners(logits: np.ndarray, config: ModelConfig, scale: float,
             valid_size: tuple[int, int] | None) -> np.ndarray | None:
    """The four strongest corner peaks, refined to the weighted centre of their 3 x 3 cells;
    None unless four stand out."""
    heat = _sigmoid(logits).astype(np.float32)
    if valid_size is not None:
        heat[int(np.ceil(valid_size[1] / config.stride)):, :] = 0
        heat[:, int(np.ceil(valid_size[0] / config.stride)):] = 0
    rows, cols = _peaks(heat, config.corner_threshold)
    if len(rows) < 4:
        return None
    order = np.argsort(-heat[rows, cols])[:4]
    points = []
    gh, gw = heat.shape
    for r, c in zip(rows[order].tolist(), cols[order].tolist(), strict=True):
        r0, r1, c0, c1 = max(0, r - 1), min(gh, r + 2), max(0, c - 1), min(gw, c + 2)
        w = heat[r0:r1, c0:c1]
        ys, xs = np.mgrid[r0:r1, c0:c1]
        cx = float((w * (xs + 0.5)).sum() / w.sum())
        cy = float((w * (ys + 0.5)).sum() / w.sum())
        points.append((cx * config.stride / scale, cy * config.stride / scale))
    return np.array(points, np.float32)


def _flip(array: np.ndarray, view: str) -> np.ndarray:
    """The last two axes (rows, columns) of ``array`` as seen in ``view``."""
    rows, cols = VIEWS[view]
    return array[..., ::-1 if rows else 1, ::-1 if cols else 1]


def in_view(blob: np.ndarray, view: str, out: np.ndarray | None = None) -> np.ndarray:
    """The network input (N, C, H, W) as seen in ``view`` (into ``out`` when given)."""
    if out is None:
        return np.ascontiguousarray(_flip(blob, view))
    np.copyto(out, _flip(blob, view))
    return out


def from_view(maps: np.ndarray, view: str, heads: tuple[str, ...]) -> np.ndarray:
    """Maps (C, gh, gw) read from the input in ``view``, in the plain picture's cells.

    Why an offset changes sign where its axis is reversed: a centre at ``offset`` into its cell
    sits at ``1 - offset`` into the reversed cell, and the offsets are logits of a sigmoid
    (sigmoid(-z) = 1 - sigmoid(z))."""
    back = _flip(maps, view).copy()
    rows, cols = VIEWS[view]
    for name, reversed_ in (("dy", rows), ("dx", cols)):
        if reversed_:
            i = heads.index(name)
            back[i] = -back[i]
    return back


def sure(found: Detections, config: ModelConfig, width: int, height: int) -> bool:
    """Whether one pass's reading of a width x height picture is sure enough to keep without
    the other views (``ModelConfig.more_views_below``; False when that is None)."""
    level = config.more_views_below
    if level is None or found.corners is None or not tray.plausible(found.corners, width,
                                                                      height):
        return False
    for c in found.candidates:
        if c.outside or c.score < DOUBT_SHARE * config.cube_threshold:
            continue
        if c.score < config.cube_threshold:
            return False
        if config.confidence(c.score * float(c.colour_probs.max())) < level:
            return False
    return True


class CubeDetector:
    """Loads ``model.onnx`` and ``model.json`` from a folder (the packaged model by default).

    One instance per process is enough; it is not thread-safe (cv2.dnn nets are not), so the
    device's single watch loop owns it."""

    def __init__(self, model_dir: str | Path | None = None):
        folder = Path(model_dir) if model_dir is not None else MODEL_DIR
        onnx_path, json_path = folder / "model.onnx", folder / "model.json"
        if not onnx_path.is_file() or not json_path.is_file():
            raise VisionError(f"no cube model in {folder} (model.onnx and model.json)")
        try:
            self.config = ModelConfig.from_dict(json.loads(json_path.read_text()))
        except (ValueError, TypeError, KeyError) as exc:
            raise VisionError(f"model.json in {folder} is not valid: {exc}") from exc
        try:
            self.net = cv2.dnn.readNetFromONNX(str(onnx_path))
        except cv2.error as exc:
            raise VisionError(f"OpenCV cannot load {onnx_path}: {exc}") from exc
        self._inputs = InputMaker(self.config.input_width, self.config.input_height)
        self._view: np.ndarray | None = None  # the input in another view
        self.last_passes = 0  # how many views the last ``detect`` read

    def maps(self, image: np.ndarray, reference: np.ndarray | None) -> tuple[np.ndarray, float]:
        """The network's raw output maps (C, gh, gw), always every view's averaged, and the
        picture -> input scale."""
        _, averaged, scale = self.view_maps(image, reference)
        return averaged, scale

    def view_maps(self, image: np.ndarray,
                  reference: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, float]:
        """The plain view's maps, every view's maps averaged (equal to the plain view's with
        one view) and the picture -> input scale: what calibrating the level below which the
        other views are read compares."""
        blob, scale = self._inputs(image, reference)
        plain = self._forward(blob)[0]
        return plain, self._averaged(blob, plain), scale

    def _averaged(self, blob: np.ndarray, plain: np.ndarray) -> np.ndarray:
        """The maps of every view of the input averaged, given the plain view's. Why one
        pass per view, not one batch: OpenCV 4.11 (the Pi's) cannot run this network on a
        batch of another size than the one before (its Expand layer keeps the old shape),
        and a batch saved only ~5 % in OpenCV 5.0."""
        views = self.config.views
        if self._view is None:
            self._view = np.empty_like(blob)
        total = plain.copy()
        for view in views[1:]:
            total += from_view(self._forward(in_view(blob, view, self._view))[0], view,
                               self.config.heads)
        return total / len(views)

    def _forward(self, blob: np.ndarray) -> np.ndarray:
        """(N, C, gh, gw) output maps for an (N, 7, H, W) batch."""
        self.net.setInput(blob)
        return np.asarray(self.net.forward())

    def detect(self, image: np.ndarray, reference: np.ndarray | None = None) -> Detections:
        cfg = self.config
        blob, scale = self._inputs(image, reference)
        h, w = image.shape[:2]
        valid = (w * scale, h * scale)
        plain = self._forward(blob)[0]
        if len(cfg.views) == 1 or cfg.more_views_below is not None:
            once = decode(plain, cfg, scale, valid)
            if len(cfg.views) == 1 or sure(once, cfg, w, h):
                self.last_passes = 1
                return once
        self.last_passes = len(cfg.views)
        return decode(self._averaged(blob, plain), cfg, scale, valid)
