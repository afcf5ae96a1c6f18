"""Settle the decoder's numbers on validation set-ups: temperatures, then the counting threshold.

Why on validation set-ups: a threshold or temperature chosen on the pictures the network was
trained on would be as over-confident as the network is there. The colour temperature makes a
colour probability p right about p of the time, the centre temperature and bias do the same
for "a cube is here", and the threshold is the one that reads the most validation trays
exactly right (with and without the empty-tray reference alike). Last, the counted cubes'
confidence (the product of the two) is mapped to how often a counted cube of that confidence was
right, because two probabilities each calibrated over all candidates do not make a calibrated
product over the few candidates that are counted. Then the unsure level on that confidence: the
lowest that makes the reading's unsure flag catch ``UNSURE_CATCH`` of the wrongly read validation
trays, because a level means something only for the confidences of the model it was chosen for.
For a model that reads more views than the plain one, last the level below which the plain view's
reading is not sure enough to keep alone (``views_level``): the lowest that loses no validation
tray, within a time budget (``MAX_MORE_VIEWS``).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from vision.detector import DOUBT_SHARE, ModelConfig, decode, sure
from vision.reading import COLOURS
from vision.train.data import MATCH_RADIUS_FRAC, fair_counts, is_exact, match

TEMPERATURES = (0.5, 0.7, 0.85, 1.0, 1.2, 1.5, 2.0, 2.5, 3.0)
CUBE_TEMPERATURES = (1.0, 1.2, 1.5, 2.0, 2.5)
CUBE_BIASES = (-0.5, 0.0, 0.5, 1.0)
THRESHOLDS = tuple(round(t, 2) for t in np.arange(0.25, 0.76, 0.05))
# below this many counted validation cubes the confidence is left as the product
MIN_FOR_CONFIDENCE = 50
# The share of wrongly read trays the unsure flag should catch. A setting, not a measurement:
# a wrong reading the device does not doubt costs a game a wrong action, a right one it doubts
# costs the players a glance at the tray; four in five caught is the balance chosen here.
UNSURE_CATCH = 0.8
UNSURE_LEVELS = (0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.93, 0.95, 0.97, 0.99)
# below this many wrongly read validation trays the unsure level stays the default
MIN_WRONG_FOR_LEVEL = 10
# the levels tried for ``more_views_below``, lowest (fewest readings of more views) first
VIEW_LEVELS = (0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.97, 0.98, 0.99, 0.995)
# The most of the validation readings a level may send to more views. A setting, from the speed
# target: it is on the median time per picture, which stays a plain-view reading only while
# fewer than half the pictures need more views (each costs as much again per view); 40 % leaves
# a margin for tables harder than the validation set-ups. Run 27's level, chosen without it,
# sent 45 % of its validation readings and 34 of the 65 shared renders to four views: a median
# of 87 ms against 40 (vision/README.md).
MAX_MORE_VIEWS = 0.4


def _decoded(config, samples, items, maps_list):
    for sample, item, maps in zip(samples, items, maps_list, strict=True):
        h, w = item.image.shape[:2]
        width, height = w / item.scale, h / item.scale
        det = decode(maps, config, item.scale, (w, h))
        yield sample, det, width, height


def _matched(samples, items, maps_list, config, in_tray_only):
    """(candidate, true colour or None) for every in-tray candidate."""
    out = []
    for sample, det, width, _height in _decoded(config, samples, items, maps_list):
        cands = [c for c in det.candidates if not c.outside]
        truth = [c for c in sample.cubes if c.in_tray or not in_tray_only]
        pairs = match([(c.x, c.y) for c in cands], [(t.x, t.y) for t in truth],
                      MATCH_RADIUS_FRAC * width)
        hit = {i: truth[j].colour for i, j in pairs}
        out += [(c, hit.get(i)) for i, c in enumerate(cands)]
    return out


def _nll_colour(config, samples, items, per_mode):
    total, n = 0.0, 0
    for maps_list in per_mode.values():
        for cand, colour in _matched(samples, items, maps_list, config, False):
            if colour is not None and cand.score >= 0.5:
                total -= float(np.log(max(cand.colour_probs[colour], 1e-6)))
                n += 1
    return total / max(n, 1)


def _nll_cube(config, samples, items, per_mode):
    total, n = 0.0, 0
    for maps_list in per_mode.values():
        for cand, colour in _matched(samples, items, maps_list, config, True):
            p = min(max(cand.score, 1e-6), 1 - 1e-6)
            total -= float(np.log(p if colour is not None else 1 - p))
            n += 1
    return total / max(n, 1)


def _counted(config, samples, items, per_mode) -> tuple[np.ndarray, np.ndarray]:
    """(raw confidence, right) of every counted in-tray candidate: right when it lies on a
    labelled in-tray cube of the colour it is read as."""
    raw, right = [], []
    for maps_list in per_mode.values():
        for cand, colour in _matched(samples, items, maps_list, config, True):
            if cand.score < config.cube_threshold:
                continue
            k = int(np.argmax(cand.colour_probs))
            raw.append(min(1.0, cand.score) * cand.colour_probs[k])
            right.append(colour == k)
    return np.array(raw, float), np.array(right, bool)


def platt(raw: np.ndarray, right: np.ndarray, iterations: int = 100) -> tuple[float, float]:
    """Scale and shift of the logit that make ``raw`` right as often as it says (logistic
    regression by Newton's method). The targets are Platt's (n + 1) / (n + 2) and 1 / (n + 2)
    rather than 1 and 0, so that a set with no wrong cube gives a finite, sure map. A fit that
    would not keep the order (a surer product less often right) or does not converge is no
    evidence to re-map by: the identity (1, 0) then."""
    p = np.clip(raw, 1e-6, 1 - 1e-6)
    z = np.log(p / (1 - p))
    n_right, n_wrong = int(right.sum()), int((~right).sum())
    target = np.where(right, (n_right + 1) / (n_right + 2), 1 / (n_wrong + 2))
    scale, shift = 1.0, 0.0
    for _ in range(iterations):
        q = 1 / (1 + np.exp(-(scale * z + shift)))
        grad = np.array([((q - target) * z).sum(), (q - target).sum()])
        w = q * (1 - q)
        hess = np.array([[(w * z * z).sum(), (w * z).sum()], [(w * z).sum(), w.sum()]])
        step = np.linalg.solve(hess + 1e-9 * np.eye(2), grad)
        scale, shift = scale - step[0], shift - step[1]
        if np.abs(step).max() < 1e-9:
            break
    if not (np.isfinite([scale, shift]).all() and scale > 0):
        return 1.0, 0.0
    return float(scale), float(shift)


def _trays(config, samples, items, maps_list):
    """(exact, lowest confidence of a counted cube, a near-miss candidate doubted) per tray."""
    for sample, det, width, height in _decoded(config, samples, items, maps_list):
        counts = dict.fromkeys(COLOURS, 0)
        lowest, near_miss = 1.0, False
        for c in det.candidates:
            if c.outside:
                continue
            if c.score >= config.cube_threshold:
                k = int(np.argmax(c.colour_probs))
                counts[COLOURS[k]] += 1
                lowest = min(lowest, config.confidence(min(1.0, c.score) * c.colour_probs[k]))
            elif c.score >= DOUBT_SHARE * config.cube_threshold:
                near_miss = True
        yield (is_exact(counts, fair_counts(sample, int(width), int(height))), lowest,
               near_miss)


def exact_share(config, samples, items, maps_list) -> float:
    right = sum(exact for exact, _, _ in _trays(config, samples, items, maps_list))
    return right / max(len(samples), 1)


def unsure_level(trays, catch: float = UNSURE_CATCH,
                 levels=UNSURE_LEVELS) -> tuple[float | None, dict]:
    """The lowest level at which the unsure flag (a near miss doubted, or a counted cube below
    the level) catches ``catch`` of the wrong trays; the highest level when none does. None
    when there are too few wrong trays to say. Also (caught wrong, wrong, flagged right, right)
    at every level, for the log."""
    trays = list(trays)
    wrong = [(low, near) for exact, low, near in trays if not exact]
    right = [(low, near) for exact, low, near in trays if exact]
    table = {level: (sum(near or low < level for low, near in wrong), len(wrong),
                     sum(near or low < level for low, near in right), len(right))
             for level in levels}
    if len(wrong) < MIN_WRONG_FOR_LEVEL:
        return None, table
    enough = [level for level in levels if table[level][0] >= catch * len(wrong)]
    return (min(enough) if enough else max(levels)), table


def threshold_warning(threshold: float, sessions: int) -> str | None:
    """A warning when the counting threshold came out at an end of the range tried: the
    validation share likely too small to choose it. Why: run 28's 7 validation set-ups chose
    0.75, the top; recalibrated on 27 set-ups it chose 0.35 and read five or six more of 160
    fresh drops exactly (vision/README.md)."""
    if threshold not in (THRESHOLDS[0], THRESHOLDS[-1]):
        return None
    return (f"warning: the counting threshold {threshold} is at an end of the range tried "
            f"({THRESHOLDS[0]}-{THRESHOLDS[-1]}), chosen on {sessions} validation set-ups: "
            "choose it again on more (python -m vision.train.recalibrate MODEL FOLDERS...)")


def fit(config: ModelConfig, samples, items, per_mode: dict, log=print) -> ModelConfig:
    best = min(TEMPERATURES, key=lambda t: _nll_colour(
        dataclasses.replace(config, colour_temperature=t), samples, items, per_mode))
    config = dataclasses.replace(config, colour_temperature=best)
    low = dataclasses.replace(config, candidate_threshold=0.02)
    best_t, best_b = min(
        ((t, b) for t in CUBE_TEMPERATURES for b in CUBE_BIASES),
        key=lambda tb: _nll_cube(dataclasses.replace(low, cube_temperature=tb[0], cube_bias=tb[1]),
                                 samples, items, per_mode))
    config = dataclasses.replace(config, cube_temperature=best_t, cube_bias=best_b)
    scores = {}
    for t in THRESHOLDS:
        c = dataclasses.replace(config, cube_threshold=t, candidate_threshold=min(0.2, t))
        scores[t] = np.mean([exact_share(c, samples, items, m) for m in per_mode.values()])
    top = max(scores.values())
    threshold = min((t for t, s in scores.items() if s == top), key=lambda t: abs(t - 0.5))
    config = dataclasses.replace(config, cube_threshold=float(threshold),
                                 candidate_threshold=float(min(0.2, threshold / 2)))
    raw, right = _counted(config, samples, items, per_mode)
    if len(raw) >= MIN_FOR_CONFIDENCE:
        scale, shift = platt(raw, right)
        config = dataclasses.replace(config, confidence_scale=round(scale, 4),
                                     confidence_shift=round(shift, 4))
    level, table = unsure_level(t for m in per_mode.values()
                                for t in _trays(config, samples, items, m))
    if level is not None:
        config = dataclasses.replace(config, unsure_below=level)
    log(f"validation: colour temperature {config.colour_temperature}, cube temperature "
        f"{config.cube_temperature}, cube bias {config.cube_bias}, threshold {threshold} "
        f"(exact trays {top:.3f}; by threshold "
        + " ".join(f"{t}:{s:.2f}" for t, s in scores.items()) + "); confidence scale "
        f"{config.confidence_scale} shift {config.confidence_shift} ({len(raw)} counted cubes, "
        f"{int(len(raw) - right.sum())} wrong); unsure below {config.unsure_below} (wrong trays "
        "caught, right trays flagged, by level: " + " ".join(
            f"{lv}:{c}/{w},{f}/{r}" for lv, (c, w, f, r) in table.items()) + ")")
    if warning := threshold_warning(threshold, len({s.session for s in samples})):
        log(warning)
    return config


def views_level(config: ModelConfig, samples, items, averaged: dict, once: dict,
                log=print, max_more: float | None = MAX_MORE_VIEWS) -> ModelConfig:
    """``config`` with the lowest ``more_views_below`` at which keeping a sure plain view's
    reading alone reads as many validation trays exactly as always averaging every view
    (``averaged``: those maps, per mode; ``once``: the plain view's), or None (always every
    view) when no level does. Why "loses none": the other views are there for accuracy; time
    is only saved where it costs nothing that the validation set-ups can show.

    ``max_more`` (None: no budget) bounds the share of validation readings a level may send to
    more views: when the level that loses none (or always every view) sends more, the level
    within the budget that reads the most validation trays exactly (the lowest of equals), or
    the lowest level tried when none is within it. Why: a level that loses no tray may still
    put most readings over the speed target, which accuracy alone never sees."""
    def exact(maps_by_mode):
        return sum(ok for m in maps_by_mode.values()
                   for ok, _, _ in _trays(config, samples, items, m))

    every = exact(averaged)
    # decoded once: the level changes which readings are sure, not what they found
    found = {mode: [(det, width, height) for _, det, width, height in
                    _decoded(config, samples, items, maps_list)]
             for mode, maps_list in once.items()}
    chosen, table = None, {}
    for level in VIEW_LEVELS:
        c = dataclasses.replace(config, more_views_below=level)
        mixed, more = {}, 0
        for mode, maps_list in once.items():
            mixed[mode] = []
            for (det, width, height), first, all_views in zip(found[mode], maps_list,
                                                              averaged[mode], strict=True):
                keep = sure(det, c, width, height)
                mixed[mode].append(first if keep else all_views)
                more += not keep
        table[level] = (exact(mixed), more)
        if chosen is None and table[level][0] >= every:
            chosen = level
    n = sum(len(m) for m in once.values())
    budget = ""
    if max_more is not None and (n if chosen is None else table[chosen][1]) > max_more * n:
        within = [lv for lv, (_, more) in table.items() if more <= max_more * n]
        was = chosen
        chosen = (max(within, key=lambda lv: (table[lv][0], -lv)) if within
                  else VIEW_LEVELS[0])
        budget = (f"; {was} would read more views for over {max_more:.0%} of them, "
                  f"so {chosen}, {'the most exact within that' if within else 'the fewest tried'}")
    log(f"validation: views {'+'.join(config.views[1:])} read when the plain view is below "
        f"{chosen} (exact trays always averaged {every} of {n}; by level, exact and readings "
        "of more views: " + " ".join(f"{lv}:{e},{k}" for lv, (e, k) in table.items())
        + f"){budget}")
    return dataclasses.replace(config, more_views_below=chosen)
