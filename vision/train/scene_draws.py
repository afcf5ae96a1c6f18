"""Tables the shared renderer does not draw by itself: any tray print, and dim light.

Why: the renderer draws each set-up's tray print from six named palettes and its light from five
moods, so a detector trained on its pictures has seen six prints. A real table has any print,
and the renderer defines one more mood, "dim" (a single far, warm, small lamp: hard shadows, and
little light, which the camera's exposure turns into noise), that its own draw never picks. In a
share of the set-ups, ``render.py --wider`` gives every palette one random print's colours for
that set-up and answers the renderer's mood draw with the dim mood among the others. Every draw
of the renderer's own random stream is still made, in its order, so what is drawn before the
light (the print's pattern, the table, the cube paints, the camera's pose) is what the plain
render of that seed would have drawn; the light's own draws, and so the later ones, differ where
the mood does.

Pure Python, no Blender: the tests check it without the renderer.
"""

from __future__ import annotations

import colorsys
import random

RANDOM_PRINT = "random"  # what the labels' session_meta["tray"] says for a random print
DIM = "dim"
# the moods the renderer draws from (render_tray.build_session); the wrapper refuses to go on
# when a set-up was built without this draw, so a renderer that changes it is noticed
RENDERER_MOODS = ("ceiling", "window", "lamp", "ring", "mixed")

SRGB = tuple[int, int, int]


def _srgb(h: float, s: float, v: float) -> SRGB:
    return tuple(round(c * 255) for c in colorsys.hsv_to_rgb(h % 1.0, s, v))


def random_print(rng: random.Random) -> tuple[SRGB, SRGB]:
    """A tray print's base and accent colours (sRGB): any hue, from grey to strong, from dark to
    pale; the accent of a nearby hue, most often darker (as the named palettes' are), else
    lighter."""
    hue = rng.random()
    sat = rng.uniform(0.0, 0.85)
    val = rng.uniform(0.12, 0.95)
    if rng.random() < 0.7:
        accent_val = val * rng.uniform(0.35, 0.7)
    else:
        accent_val = min(1.0, val * rng.uniform(1.2, 1.6) + 0.1)
    accent = _srgb(hue + rng.uniform(-0.08, 0.08), min(1.0, sat * rng.uniform(0.6, 1.3)),
                   accent_val)
    return _srgb(hue, sat, val), accent


def side_stream(rng: random.Random) -> random.Random:
    """A second random stream fixed by the set-up's own stream's state, without drawing from it
    (so the set-up's own draws stay those of the plain render)."""
    return random.Random(repr(rng.getstate()))


class DimAmongMoods:
    """The set-up's random stream as the renderer sees it, but for the mood draw, which picks
    among the renderer's moods and the dim one (from ``side``). The renderer's own draw is made
    all the same, so the stream goes on as it would have."""

    def __init__(self, rng: random.Random, side: random.Random):
        self._rng = rng
        self._side = side
        self.mood: str | None = None  # the mood answered, once drawn

    def choice(self, seq):
        plain = self._rng.choice(seq)
        if tuple(seq) == RENDERER_MOODS:
            self.mood = self._side.choice([*RENDERER_MOODS, DIM])
            return self.mood
        return plain

    def __getattr__(self, name):
        return getattr(self._rng, name)
