"""What the device has learned about this table: tapped tray corners and the cubes' colours.

Why: the counter's model is made for any table; a session can do better. Four corners tapped
on the camera's picture fix the tray when the network's outline is fooled (a patterned table, a
camera at an odd angle), and every drop the players confirm tells the counter which colour each
cube it found really was (``vision.calibration.calibrate_from_drop``: the confirmed cubes are
kept as samples, and a small per-colour bias on the network's colour scores is fitted to them).
Both survive a restart in ``DATA_DIR/calibration.json``, written so that a pulled plug leaves the
old file or the new one. A new game starts the colours afresh (another evening, another light)
but keeps the corners (the camera has not moved). The camera's exposure and white balance, held
when the empty tray was calibrated, are kept here too, so a restart sees the tray lit the same.
A file written before the learned detector (its colours as a ``"colours"`` model) still loads:
its corners are kept, its colours are not.
"""

from __future__ import annotations

import json
import logging
import math
import threading
from pathlib import Path

import cv2
import numpy as np

from companion.durable import write_durably
from vision import VisionError, count_cubes
from vision.calibration import Calibration, calibrate_from_drop

log = logging.getLogger(__name__)

# Tray events whose counts the players confirmed for the picture in the tray right now.
CONFIRMED_DROPS = ("setup_drop_read", "tray_read", "bump_read")
TAUGHT_KEPT = 64  # the latest drops whose taught colours a correction can still take back


class CornersError(ValueError):
    """Tapped corners that cannot be a tray; the message says why."""


def parse_corners(value, frame_size: tuple[int, int]) -> list[tuple[float, float]]:
    """Four (x, y) points inside the frame, enclosing a real area, or CornersError."""
    width, height = frame_size
    if not isinstance(value, list) or len(value) != 4:
        raise CornersError("corners must be a list of four [x, y] points")
    points = []
    for point in value:
        if (not isinstance(point, list | tuple) or len(point) != 2
                or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in point)):
            raise CornersError("each corner must be [x, y] with two numbers")
        x, y = float(point[0]), float(point[1])
        if not (math.isfinite(x) and math.isfinite(y)):
            raise CornersError("corner coordinates must be finite numbers")
        if not (0 <= x <= width and 0 <= y <= height):
            raise CornersError(
                f"corner ({x:.0f}, {y:.0f}) lies outside the {width}x{height} picture"
            )
        points.append((x, y))
    hull = _hull_area(points)
    if hull < 0.01 * width * height:
        raise CornersError("the four corners enclose almost nothing: tap the tray floor's corners")
    return points


def _hull_area(points: list[tuple[float, float]]) -> float:
    return float(cv2.contourArea(cv2.convexHull(np.array(points, np.float32))))


class SessionCalibration:
    """The table's calibration for ``count_cubes``, kept on disk and safe to use from threads.

    ``detector``: the cube model to read frames with (``vision.detector.CubeDetector`` or
    anything with its ``config`` and ``detect``); None means the packaged one."""

    def __init__(self, path: Path, detector=None):
        self.path = path
        self.detector = detector
        self._lock = threading.Lock()
        self._calibration = Calibration()
        self.learned_from = 0  # confirmed drops the colours were learned from
        # a drop's tag (its game and event number) -> the samples it taught, kept in the file
        # too: a correction or undo of that drop, even after a restart, takes them back
        # (``unlearn``)
        self._taught: dict[tuple, list[tuple]] = {}
        self._camera_lock: dict | None = None  # the source's lock_exposure() at calibration
        self._load()

    @property
    def calibration(self) -> Calibration:
        with self._lock:
            return self._calibration

    def status(self) -> dict:
        with self._lock:
            corners = self._calibration.corners
            status = {
                "corners": None if corners is None else [list(p) for p in corners],
                "colours_learned_from": self.learned_from,
            }
            if self._camera_lock:
                status["exposure_held"] = self._camera_lock.get("controls")
            return status

    @property
    def camera_lock(self) -> dict | None:
        with self._lock:
            return self._camera_lock

    def set_camera_lock(self, lock: dict | None) -> None:
        """Keep the exposure the camera held at the empty-tray calibration (None: none held)."""
        with self._lock:
            self._camera_lock = dict(lock) if lock else None
            self._save()

    def set_corners(self, corners: list[tuple[float, float]] | None, frame: np.ndarray) -> dict:
        """Use these corners (None: the model's outline again), if the frame reads with them."""
        with self._lock:
            trial = Calibration(corners, list(self._calibration.samples))
        try:
            reading = count_cubes(frame, calibration=trial, detector=self.detector)
        except VisionError as exc:
            raise CornersError(f"the tray cannot be read with those corners: {exc}") from exc
        with self._lock:
            self._calibration = Calibration(corners, list(self._calibration.samples))
            self._save()
        log.info("tray corners %s", "set by hand" if corners else "found automatically again")
        return {**self.status(), "cubes_seen": reading.total}

    def learn(self, frame: np.ndarray, counts: dict[str, int], reference, tag=None) -> bool:
        """Learn the colours from a drop the players confirmed; False when it is no good for it
        (too few colours, or the counter finds another number of cubes than confirmed).
        ``tag`` names the drop, so that ``unlearn(tag)`` can take back what it taught."""
        with self._lock:
            current = self._calibration
        try:
            learned = calibrate_from_drop(
                frame, counts, reference, calibration=current, detector=self.detector
            )
        except VisionError as exc:
            log.info("confirmed drop not used for colours: %s", exc)
            return False
        with self._lock:
            # the corners as they are now (a player may have tapped them meanwhile)
            self._calibration = Calibration(self._calibration.corners, learned.samples)
            self.learned_from += 1
            if tag is not None:
                cubes = sum(int(n) for n in counts.values())
                self._taught[tag] = learned.samples[-cubes:] if cubes else []
                while len(self._taught) > TAUGHT_KEPT:
                    del self._taught[next(iter(self._taught))]
            self._save()
        log.info("colours learned from a confirmed drop (%d so far)", self.learned_from)
        return True

    def unlearn(self, tag) -> bool:
        """Take back the colours the drop ``tag`` taught: the players corrected or undid it, so
        its cubes were named wrongly (a cube read as yellow and confirmed so, then corrected to
        white, would go on teaching yellow). False when it taught nothing in this run."""
        with self._lock:
            taught = self._taught.pop(tag, None)
            if taught is None:
                return False
            left = list(self._calibration.samples)
            for sample in taught:
                if sample in left:  # not when pushed out since by newer drops' cubes
                    left.remove(sample)
            self._calibration = Calibration(self._calibration.corners, left)
            self.learned_from = max(0, self.learned_from - 1)
            self._save()
        log.info("colours taught by a drop the players corrected or undid taken back")
        return True

    def forget_colours(self) -> None:
        """Back to the model's own colours (a new game: perhaps another evening's light)."""
        with self._lock:
            if self.learned_from == 0 and not self._calibration.samples:
                return
            self._calibration = Calibration(self._calibration.corners, [])
            self.learned_from = 0
            self._taught.clear()
            self._save()

    def _load(self) -> None:
        if not self.path.is_file():
            return
        try:
            body = json.loads(self.path.read_text())
            self._calibration = Calibration.from_dict(body.get("calibration", {}))
            # a file of the rule-based counter kept its colours as a model, not as samples:
            # its corners load, its colours do not, so nothing counts as learned any more
            learned = int(body.get("colours_learned_from", 0))
            self.learned_from = learned if self._calibration.samples else 0
            lock = body.get("camera_lock")
            self._camera_lock = lock if isinstance(lock, dict) else None
        except (OSError, ValueError, TypeError, AttributeError, KeyError, VisionError) as exc:
            log.warning("ignoring calibration file %s (%s): using the defaults", self.path, exc)
            self._calibration = Calibration()
            self.learned_from = 0
            return
        try:  # what each drop taught: without it the colours stay, only not taken back
            self._taught = {tuple(tag): Calibration.from_dict({"samples": samples}).samples
                            for tag, samples in body.get("taught", [])}
        except (ValueError, TypeError, AttributeError, KeyError, VisionError) as exc:
            log.warning("ignoring what each drop taught in %s (%s)", self.path, exc)
            self._taught = {}

    def _save(self) -> None:
        """Write the whole file anew next to the old one, then swap it in (power-cut safe)."""
        body = {"calibration": self._calibration.to_dict(),
                "colours_learned_from": self.learned_from}
        if self._camera_lock:
            body["camera_lock"] = self._camera_lock
        if self._taught:  # written as the samples are, so that they compare equal once read
            body["taught"] = [[list(tag), Calibration(None, samples).to_dict()["samples"]]
                              for tag, samples in self._taught.items()]
        write_durably(self.path, json.dumps(body).encode("utf-8"))
