"""Where each cube is seen: the centre of its own pixels in the renderer's object-index pass.

Why: the renderer labels a cube by its projected centre. For a cube lying partly under another
that point is on the cube above, of another colour (for one behind the front wall, on the
wall), so a network taught to put the cube's centre and colour there is asked for two cubes
at one place, and misses the lower one about half the time (vision/README.md, "What the misses
are"). The index pass says which pixels are the cube's own; their centre is where its centre
and colour can be read.

The renderer counts those pixels (``visible_px``) but keeps no more of the pass; the wrapper
``vision/train/render.py`` hands each pass to ``index_centres`` and its labels to
``add_visible_centres``, which adds ``visible_xy`` to every cube the picture shows.
"""

from __future__ import annotations

import numpy as np

#: the renderer's object indices: colour ``ci`` (in its colour order), cube ``k`` of 7
CUBES_PER_COLOUR = 7


def index_centres(index: np.ndarray) -> dict[int, tuple[int, float, float]]:
    """Per object index in the pass (0, the background, left out): its pixel count and the
    centre of its pixels, in the labels' continuous coordinates (pixel ``i`` spans i..i+1)."""
    idx = np.rint(index[..., 0] if index.ndim == 3 else index).astype(np.int64)
    h, w = idx.shape
    flat = idx.ravel()
    flat = np.where(flat < 0, 0, flat)
    counts = np.bincount(flat)
    xs = np.bincount(flat, weights=np.tile(np.arange(w, dtype=np.float64), h))
    ys = np.bincount(flat, weights=np.repeat(np.arange(h, dtype=np.float64), w))
    return {i: (int(counts[i]), xs[i] / counts[i] + 0.5, ys[i] / counts[i] + 0.5)
            for i in np.flatnonzero(counts) if i > 0}


def add_visible_centres(cubes: list[dict], centres: dict[int, tuple[int, float, float]],
                        colours: list[str]) -> None:
    """Give each cube of a picture's labels that has visible pixels its ``visible_xy``.

    A cube is matched to the index of its colour whose pixel count is its ``visible_px``
    (the renderer counted them in this pass), the nearest to its projected centre when two
    counts tie. Each index is used once; a cube with no such index is an error, as it means
    the renderer labels differently from what this module knows."""
    used: set[int] = set()
    for cube in cubes:
        seen = int(cube.get("visible_px", 0))
        if seen <= 0:
            continue
        first = colours.index(cube["colour"]) * CUBES_PER_COLOUR + 1
        fits = [i for i in range(first, first + CUBES_PER_COLOUR)
                if i not in used and i in centres and centres[i][0] == seen]
        if not fits:
            raise RuntimeError(
                f"no object of the index pass matches the {cube['colour']} cube at "
                f"{cube['xy']} ({seen} visible pixels): the renderer's labels have changed")
        x, y = cube["xy"]
        best = min(fits, key=lambda i: (centres[i][1] - x) ** 2 + (centres[i][2] - y) ** 2)
        used.add(best)
        cube["visible_xy"] = [round(centres[best][1], 1), round(centres[best][2], 1)]
