"""The training batches: each picture fitted to the input once, then re-shot at random for
every batch, in worker processes when there are any.

Why worker processes, and why spawned: re-shooting a picture (``augment``) costs more CPU time
than a training step costs a GPU, so with a GPU several processes make batches at once. They
are started fresh (``spawn``), never forked: a process forked after PyTorch's or OpenCV's
thread pools have run can hang in its first parallel call. Each worker therefore reads and
fits the pictures itself (a few seconds) instead of receiving them, and draws from its own seed,
so no two workers make the same batch.
"""

from __future__ import annotations

import atexit
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
import torch
from torch.utils.data import DataLoader, IterableDataset, get_worker_info

from vision.counter import load_image
from vision.netinput import to_planes
from vision.train.augment import Cached, augment, targets
from vision.train.data import Sample
from vision.train.unseen import unshown

DEFAULT_INPUT = (512, 288)  # (width, height), the shipped model's; multiples of 32 (the stride)


@dataclass(frozen=True)
class Draws:
    """Which pictures a training run draws and how it re-shoots them, beyond the fixed ranges.

    Why one object: these choices travel together from the command line through every batch
    maker (in this process, in worker processes, on the device), and each new one would
    otherwise lengthen six signatures. The defaults are a plain run's."""

    crowd: float = 0.0  # draw crowded trays more often (``crowd_weights``)
    mirror: float = 0.0  # the share of pictures mirrored (``augment.random_affine``)
    crop: tuple[int, int] | None = None  # random windows of this (w, h) (``augment.windowed``)
    # cubes the picture does not show (``vision.train.unseen``) neither asked for nor punished
    unshown: bool = False
    # a cube taught at the centre of its own pixels where the labels have it (``--centres``)
    visible_centres: bool = False
    # every picture as rendered, with its empty tray: not re-shot (``--as-rendered``)
    as_rendered: bool = False
    # how often each camera fault comes, 1 as the shipped model was trained (``--faults``)
    faults: float = 1.0


def cache_samples(samples: list[Sample], size: tuple[int, int] = DEFAULT_INPUT,
                  unshown_either_way: bool = False,
                  visible_centres: bool = False) -> list[Cached]:
    """Each picture (and its session's empty tray) fitted to the input scale once.

    ``unshown_either_way``: a clearly visible in-tray cube that the picture does not show
    (``vision.train.unseen``: a cube in deep shadow, labelled visible by geometry) is kept
    like a barely visible one, neither asked for nor punished. Why: asked for, it teaches the
    network to put cubes where the picture shows none, which may be why dark shadows and gaps
    in piles are read as black cubes (run 27 trained with it and was not shipped:
    vision/README.md).

    ``visible_centres``: each cube's target is the centre of its own pixels where the labels
    have it (``LabelledCube.centre``), not its projected centre, which for a cube partly under
    another is on the cube above."""
    empties: dict[Path, np.ndarray] = {}
    # a set-up's pictures come together: its empty tray at full size is read once and kept
    # while they last (judging ``unshown`` needs it at the picture's own size)
    full_empty: tuple[Path | None, np.ndarray | None] = (None, None)
    out = []
    for s in samples:
        img = load_image(s.path)
        h, w = img.shape[:2]
        scale = min(size[0] / w, size[1] / h)
        nw, nh = round(w * scale), round(h * scale)
        small = cv2.resize(img, (nw, nh), interpolation=cv2.INTER_AREA)
        ref = None
        if s.empty_path is not None:
            if full_empty[0] != s.empty_path and (unshown_either_way
                                                  or s.empty_path not in empties):
                full_empty = (s.empty_path, load_image(s.empty_path))
            if s.empty_path not in empties:
                empties[s.empty_path] = cv2.resize(full_empty[1], (nw, nh),
                                                   interpolation=cv2.INTER_AREA)
            ref = empties[s.empty_path]
        low = s.low_visibility_px(w, h)
        hidden: set[int] = set()
        if unshown_either_way and s.empty_path is not None:
            # judged at the picture's own size, where the labels' pixels are counted
            in_tray = [i for i, c in enumerate(s.cubes) if c.in_tray]
            hidden = {in_tray[j] for j in unshown(s, img, full_empty[1]) or ()}
        cubes = np.array([[*(v * scale for v in c.centre(visible_centres)), c.colour,
                           c.in_tray, float(c.visible_px >= low and i not in hidden)]
                          for i, c in enumerate(s.cubes)], np.float32)
        cubes = cubes.reshape(-1, 5)
        corners = None if s.corners is None else np.array(s.corners, np.float32) * scale
        out.append(Cached(small, ref, scale, cubes, corners))
    return out


def crowd_weights(items: list[Cached], crowd: float) -> np.ndarray | None:
    """How often each picture is drawn: in proportion to 1 + ``crowd`` x its in-tray cubes over
    the mean (None, every picture alike, at 0).

    Why: a tray's cubes are misread more often the more of them there are (on validation
    set-ups, more often than independent per-cube errors explain), and the renders hold few
    crowded trays; drawing them more often shows the network more touching and stacked cubes.
    """
    if crowd <= 0:
        return None
    n = np.array([float(it.cubes[:, 3].sum()) for it in items])
    w = 1.0 + crowd * n / max(float(n.mean()), 1e-9)
    return w / w.sum()


def draw(rng: np.random.Generator, count: int, batch: int, weights: np.ndarray | None):
    """``batch`` picture indices out of ``count``, alike or by ``weights``."""
    if weights is None:
        return rng.integers(0, count, batch)
    return rng.choice(count, batch, p=weights)


def make_batch(items: list[Cached], rng: np.random.Generator, plain: bool = False,
               size: tuple[int, int] = DEFAULT_INPUT, draws: Draws = Draws()):
    """One batch of re-shot pictures of ``size``, or random windows of them when ``draws``
    asks for a crop (plain pictures are always whole)."""
    xs, heats, weights, colours, offsets, masks = [], [], [], [], [], []
    for item in items:
        image, ref, cubes, corners = augment(item, rng, *size, plain=plain or draws.as_rendered,
                                             mirror=draws.mirror, crop=draws.crop,
                                             faults=draws.faults)
        xs.append(to_planes(image, ref))
        h, w, c, o, m = targets(cubes, corners, image.shape[1], image.shape[0])
        heats.append(h)
        weights.append(w)
        colours.append(c)
        offsets.append(o)
        masks.append(m)
    return tuple(torch.from_numpy(np.stack(a)) for a in
                 (xs, heats, weights, colours, offsets, masks))


class BatchStream(IterableDataset):
    """Endless augmented batches of the given pictures, drawn with the given seed."""

    def __init__(self, samples: list[Sample], batch: int, size: tuple[int, int], seed: int,
                 items: list[Cached] | None = None, draws: Draws = Draws()):
        self.samples, self.batch, self.size, self.seed = samples, batch, size, seed
        self.draws = draws
        self.items = items  # already fitted (the training process's own copy), or None

    def __getstate__(self):  # a worker fits the pictures itself: paths travel, not pixels
        return {**self.__dict__, "items": None}

    def __iter__(self):
        worker = get_worker_info()
        if worker is not None:
            cv2.setNumThreads(0)  # no OpenCV thread pool in a worker: workers are the parallelism
        items = self.items if self.items is not None else cache_samples(
            self.samples, self.size, self.draws.unshown, self.draws.visible_centres)
        rng = np.random.default_rng([self.seed, 0 if worker is None else worker.id + 1])
        weights = crowd_weights(items, self.draws.crowd)
        while True:
            idx = draw(rng, len(items), self.batch, weights)
            yield make_batch([items[i] for i in idx], rng, size=self.size, draws=self.draws)


FEEDER_WAIT_S = 2.0  # under the 5 s the DataLoader waits for a worker before it kills it


def _wait_for_feeders() -> None:
    """Wait (a while) for this process's multiprocessing queue feeder threads to finish.

    Why: a DataLoader worker hands each batch to its queue's feeder thread, a daemon thread
    that pickles it (copying the tensors to shared memory) and then frees it, and at shutdown
    the worker returns without waiting for it. A spawned process then exits through Python's
    finalization, which ends a daemon thread as soon as it next takes the interpreter lock; a
    feeder still freeing the batch's tensors takes it inside PyTorch's C++ code, and the
    thread's unwinding there calls std::terminate ("terminate called without an active
    exception"): the worker dies of SIGABRT. It happened when the training stream was
    dropped while a worker was making a batch (end of training, a new training set): in about
    one test run in five here. Waiting before finalization lets the feeder finish; the
    queue's ``close()`` at the worker's shutdown has already asked it to stop. The wait is
    bounded: a feeder blocked on a full pipe (nobody reading) is left as before."""
    deadline = time.monotonic() + FEEDER_WAIT_S
    for t in threading.enumerate():
        # the thread name CPython's multiprocessing.Queue gives its feeder (3.8 and later)
        if t.name == "QueueFeederThread" and t is not threading.current_thread():
            t.join(max(0.0, deadline - time.monotonic()))


def _worker_started(worker_id: int) -> None:
    """A batch worker's start: its feeder threads are waited for at its exit (before Python's
    finalization, which atexit callbacks precede)."""
    atexit.register(_wait_for_feeders)


def batches(samples: list[Sample], items: list[Cached] | None, batch: int, size: tuple[int, int],
            seed: int, workers: int = 0, pin_memory: bool = False, draws: Draws = Draws()):
    """An endless iterator over training batches (x, heat, weight, colour, offset, mask), made
    by ``workers`` spawned processes, or in this process when ``workers`` is 0 (from ``items``,
    the pictures already fitted, when given), drawn and re-shot as ``draws`` says."""
    stream = BatchStream(samples, batch, size, seed, items, draws)
    if workers <= 0:
        return iter(stream)
    return iter(DataLoader(stream, batch_size=None, num_workers=workers, prefetch_factor=4,
                           pin_memory=pin_memory, multiprocessing_context="spawn",
                           worker_init_fn=_worker_started))
