"""Run the shared renderer with the tray's projected corners added to each session's labels.

Why: the renderer's labels give every cube but not where the tray is, and the camera's roll is
drawn at random and not recorded, so the tray outline cannot be recomputed afterwards. This
wrapper imports the renderer (it is a developer tool in ``../shared/tools/render``, never copied
here), lets it build each session as usual and, once the camera is placed, projects the tray
floor's four corners into the picture; they land in ``session_meta["tray_corners_px"]`` of the
session's ``empty.jpg`` record (floor corners at z = 0, in the renderer's order: (-x,-y),
(-x,+y), (+x,-y), (+x,+y)). Each cube the picture shows also gets ``visible_xy``, the centre
of its own pixels in the renderer's object-index pass (``vision/train/visible_centres.py``):
for a cube partly under another or behind the front wall, the projected centre ``xy`` is
on what covers it.

    ~/render-venv/bin/python vision/train/render.py --renderer ../shared/tools/render \
        --out ~/trays --sessions 20 --drops 8 --seed 101 --res 384x216

``--wider SHARE`` draws that share of the set-ups from a wider distribution than the renderer's
own: a random tray print instead of one of its six, and the dim light it defines but never
picks among its moods (``vision/train/scene_draws.py``; the labels' ``session_meta`` says
``"tray": "random"`` with the print's ``tray_srgb``, and ``"mood": "dim"``).

Every other argument goes to the renderer unchanged. Needs the renderer's own set-up (bpy 4.5,
pybullet): see its README.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

if not __package__:  # run as a script, by the renderer's own Python: find the project's package
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from vision.train.augment import share
from vision.train.scene_draws import (
    RANDOM_PRINT,
    DimAmongMoods,
    random_print,
    side_stream,
)
from vision.train.visible_centres import add_visible_centres, index_centres


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--renderer", required=True, help="folder holding render_tray.py")
    parser.add_argument("--wider", type=share, default=0.0,
                        help="share of set-ups with a random tray print and the dim mood "
                             "among the moods (default 0: the renderer's own draws)")
    ours, rest = parser.parse_known_args(argv)
    sys.path.insert(0, str(Path(ours.renderer).resolve()))
    import render_tray  # the shared tool, imported from its own folder

    build = render_tray.build_session
    palettes = render_tray.TRAY_PALETTES

    def build_wider(rng, profile, res, samples):
        """The renderer's set-up, in ``--wider``'s share with every palette one random print's
        colours for this set-up (whichever the renderer draws) and the dim mood possible."""
        side = side_stream(rng)
        if side.random() >= ours.wider:
            return build(rng, profile, res, samples)
        colours = random_print(side)
        named = dict(palettes)
        palettes.update({name: colours for name in named})
        draws = DimAmongMoods(rng, side)
        try:
            sc, cam, cubes, fo, meta = build(draws, profile, res, samples)
        finally:
            palettes.update(named)
        if draws.mood is None:
            raise RuntimeError("the renderer built a set-up without drawing its mood from "
                               "scene_draws.RENDERER_MOODS: --wider needs updating")
        meta.update(tray=RANDOM_PRINT, tray_srgb=[list(c) for c in colours])
        return sc, cam, cubes, fo, meta

    def build_with_corners(rng, profile, res, samples):
        sc, cam, cubes, fo, meta = build_wider(rng, profile, res, samples)
        w, h = res
        corners = []
        for sx in (-1, 1):
            for sy in (-1, 1):
                p = render_tray.Vector((sx * render_tray.TRAY_X, sy * render_tray.TRAY_Y, 0.0))
                v = render_tray.world_to_camera_view(sc, cam, p)
                corners.append([round(v.x * w, 1), round((1 - v.y) * h, 1)])
        meta["tray_corners_px"] = corners
        return sc, cam, cubes, fo, meta

    render_tray.build_session = build_with_corners
    render_tray.cv2 = _IndexKeepingCv2(render_tray.cv2)
    render_tray.json = _CentreAddingJson(render_tray.json, render_tray.cv2, render_tray.COLOURS)
    sys.argv = ["render_tray.py", *rest]
    return render_tray.main()


class _IndexKeepingCv2:
    """The renderer's ``cv2``, keeping the centres of the last object-index pass it read.

    Why a stand-in: the renderer reads the pass, counts each cube's pixels and drops it; this
    is the one place the pass can be seen without changing the shared tool."""

    def __init__(self, cv2_module):
        self._cv2 = cv2_module
        self.centres: dict[int, tuple[int, float, float]] | None = None

    def imread(self, path, *args):
        image = self._cv2.imread(path, *args)
        if Path(path).name.startswith("index_") and image is not None:
            self.centres = index_centres(image)
        return image

    def __getattr__(self, name):
        return getattr(self._cv2, name)


class _CentreAddingJson:
    """The renderer's ``json``: before the labels are written after a picture, that picture's
    cubes get their ``visible_xy`` from the index pass read for it."""

    def __init__(self, json_module, reader: _IndexKeepingCv2, colours: list[str]):
        self._json, self._reader, self._colours = json_module, reader, colours

    def dump(self, obj, *args, **kwargs):
        images = obj.get("images") if isinstance(obj, dict) else None
        if images and self._reader.centres is not None:
            add_visible_centres(images[-1].get("cubes", []), self._reader.centres,
                                self._colours)
            self._reader.centres = None
        return self._json.dump(obj, *args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._json, name)


if __name__ == "__main__":
    sys.exit(main())
