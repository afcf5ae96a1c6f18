"""Drawn tray scenes for the vision tests: small, deterministic, and with known answers.

A scene is drawn top-down on a table canvas at ``S`` px/cm (tray floor 16 x 10 cm inside a rim,
cubes as 1 cm squares with a visible darker side and a soft shadow), lit by a light field
(gradient, colour cast, optional wall shadow and glare), then warped into a camera frame by a
homography (straight down or oblique), with sensor noise and JPEG. The cube colours are
plausible painted-wood sRGB values chosen by eye, *not* derived from the counter's references,
so naming them is a genuine test.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np

S = 12  # px per cm on the drawing canvas
TABLE_CM = (30.0, 20.0)
TRAY_ORIGIN_CM = (7.0, 5.0)  # floor's top-left corner on the table
RIM_CM = 0.7

PAINT_RGB = {
    "blue": (45, 75, 170),
    "black": (38, 38, 42),
    "red": (195, 40, 40),
    "brown": (115, 70, 42),
    "green": (50, 135, 65),
    "yellow": (235, 195, 40),
    "white": (238, 238, 232),
}
PRINTS_RGB = {
    "cream": (228, 208, 172),
    "grey": (170, 170, 168),
    "dark": (70, 55, 45),
    "pale": (245, 240, 230),
}


@dataclass
class Scene:
    cubes: list[tuple[str, float, float, float]] = field(default_factory=list)  # colour, x, y, deg
    on_table: list[tuple[str, float, float, float]] = field(default_factory=list)
    print_rgb: tuple[int, int, int] = PRINTS_RGB["cream"]
    table_rgb: tuple[int, int, int] = (95, 70, 60)
    cast: tuple[float, float, float] = (1.0, 1.0, 1.0)  # light colour, RGB gains
    exposure: float = 1.0
    wall_shadow: float = 0.0  # darkening of a band along the top wall, 0..1
    glare: bool = False
    oblique: bool = False
    noise: float = 2.0
    jpeg: int = 85
    size: tuple[int, int] = (960, 540)
    seed: int = 0


def _bgr(rgb) -> np.ndarray:
    return np.array(rgb[::-1], np.float32)


def _square(x: float, y: float, deg: float, half: float) -> np.ndarray:
    a = np.radians(deg)
    c, s = np.cos(a), np.sin(a)
    corners = np.array([[-half, -half], [half, -half], [half, half], [-half, half]])
    rot = corners @ np.array([[c, s], [-s, c]])
    return rot + np.array([x, y])


def _draw_cube(canvas, x_cm, y_cm, deg, rgb, floor_shadow=True):
    paint = _bgr(rgb)
    top = _square(x_cm * S, y_cm * S, deg, 0.5 * S)
    side_shift = np.array([0.18, 0.28]) * S  # the camera sees a little of one side
    if floor_shadow:
        sh = (top + np.array([0.35, 0.3]) * S).astype(np.int32)
        overlay = canvas.copy()
        cv2.fillConvexPoly(overlay, cv2.convexHull(sh), (0, 0, 0), lineType=cv2.LINE_AA)
        canvas[:] = cv2.addWeighted(overlay, 0.25, canvas, 0.75, 0)
    hull = cv2.convexHull(np.vstack([top, top + side_shift]).astype(np.float32)).astype(np.int32)
    cv2.fillConvexPoly(canvas, hull, tuple(float(v) for v in paint * 0.62), lineType=cv2.LINE_AA)
    cv2.fillConvexPoly(canvas, top.astype(np.int32), tuple(float(v) for v in paint),
                       lineType=cv2.LINE_AA)


def floor_corners_cm() -> np.ndarray:
    x0, y0 = TRAY_ORIGIN_CM
    return np.array([[x0, y0], [x0 + 16, y0], [x0 + 16, y0 + 10], [x0, y0 + 10]], np.float32)


def _camera(scene: Scene) -> np.ndarray:
    """Homography from canvas px to frame px."""
    w, h = scene.size
    src = np.float32([[0, 0], [TABLE_CM[0] * S, 0], [TABLE_CM[0] * S, TABLE_CM[1] * S],
                      [0, TABLE_CM[1] * S]])
    k = min(w / (TABLE_CM[0] * S), h / (TABLE_CM[1] * S))  # square pixels
    cw, ch = TABLE_CM[0] * S * k, TABLE_CM[1] * S * k
    ox, oy = (w - cw) / 2, (h - ch) / 2
    if scene.oblique:
        # a camera low in front of the tray: the far side shrinks
        dst = np.float32([[ox + 0.2 * cw, oy], [ox + 0.8 * cw, oy], [ox + 1.1 * cw, oy + ch],
                          [ox - 0.1 * cw, oy + ch]])
    else:
        dst = np.float32([[ox, oy], [ox + cw, oy], [ox + cw, oy + ch], [ox, oy + ch]])
    return cv2.getPerspectiveTransform(src, dst)


def render(scene: Scene, *, with_cubes: bool = True) -> tuple[np.ndarray, list[dict]]:
    """The frame (BGR uint8) and the truth: [{"colour", "x", "y"}] in frame pixels."""
    rng = np.random.default_rng(scene.seed)
    W, H = round(TABLE_CM[0] * S), round(TABLE_CM[1] * S)
    canvas = np.empty((H, W, 3), np.float32)
    canvas[:] = _bgr(scene.table_rgb)
    x0, y0 = TRAY_ORIGIN_CM
    rim = np.array([[x0 - RIM_CM, y0 - RIM_CM], [x0 + 16 + RIM_CM, y0 + 10 + RIM_CM]]) * S
    # the tray's shadow on the table, its rim, the crease, the floor
    shade = rim + 0.3 * S
    cv2.rectangle(canvas, tuple(shade[0].astype(int)), tuple(shade[1].astype(int)),
                  tuple(float(v) for v in _bgr(scene.table_rgb) * 0.6), -1)
    cv2.rectangle(canvas, tuple(rim[0].astype(int)), tuple(rim[1].astype(int)),
                  tuple(float(v) for v in _bgr(scene.print_rgb) * 1.05), -1)
    floor = (floor_corners_cm() * S).astype(np.int32)
    cv2.rectangle(canvas, tuple(floor[0] - 2), tuple(floor[2] + 2),
                  tuple(float(v) for v in _bgr(scene.print_rgb) * 0.7), -1)
    cv2.rectangle(canvas, tuple(floor[0]), tuple(floor[2]),
                  tuple(float(v) for v in _bgr(scene.print_rgb)), -1)
    truth = []
    if with_cubes:
        for colour, x, y, deg in scene.cubes:
            _draw_cube(canvas, x0 + x, y0 + y, deg, PAINT_RGB[colour])
            truth.append({"colour": colour, "x_cm": x0 + x, "y_cm": y0 + y})
        for colour, x, y, deg in scene.on_table:
            _draw_cube(canvas, x, y, deg, PAINT_RGB[colour])
    # light: gentle gradient, colour cast, exposure, a wall's shadow, glare
    yy, xx = np.mgrid[0:H, 0:W].astype(np.float32)
    light = 0.85 + 0.25 * (xx / W)
    if scene.wall_shadow:
        band = (yy > y0 * S) & (yy < (y0 + 2.2) * S) & (xx > x0 * S) & (xx < (x0 + 16) * S)
        light = np.where(band, light * (1 - scene.wall_shadow), light)
        light = cv2.GaussianBlur(light, (0, 0), 2)
    lin = (canvas / 255.0) ** 2.2 * light[..., None] * scene.exposure
    lin = lin * np.array(scene.cast[::-1], np.float32)
    if scene.glare:
        gx, gy = (x0 + 11.5) * S, (y0 + 6.5) * S
        spot = np.exp(-((xx - gx) ** 2 + (yy - gy) ** 2) / (2 * (0.9 * S) ** 2))
        lin = lin + 0.6 * spot[..., None]
    img = np.clip(lin, 0, 1) ** (1 / 2.2) * 255
    M = _camera(scene)
    frame = cv2.warpPerspective(img, M, scene.size, flags=cv2.INTER_AREA,
                                borderMode=cv2.BORDER_REPLICATE)
    frame = frame + rng.normal(0, scene.noise, frame.shape)
    frame = np.clip(frame, 0, 255).astype(np.uint8)
    _, buf = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, scene.jpeg])
    frame = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    for t in truth:
        p = cv2.perspectiveTransform(np.float32([[[t["x_cm"] * S, t["y_cm"] * S]]]), M)[0, 0]
        t["x"], t["y"] = float(p[0]), float(p[1])
    return frame, truth


def floor_corners_px(scene: Scene) -> np.ndarray:
    pts = (floor_corners_cm() * S).reshape(-1, 1, 2)
    return cv2.perspectiveTransform(pts, _camera(scene)).reshape(-1, 2)


def counts(truth: list[dict]) -> dict[str, int]:
    out = dict.fromkeys(PAINT_RGB, 0)
    for t in truth:
        out[t["colour"]] += 1
    return out


def scatter(colours: list[str], seed: int = 0) -> list[tuple[str, float, float, float]]:
    """Cubes placed apart from each other on the floor (centres in floor cm)."""
    rng = np.random.default_rng(seed)
    placed: list[tuple[str, float, float, float]] = []
    for colour in colours:
        for _ in range(500):
            x, y = rng.uniform(1.2, 14.8), rng.uniform(1.2, 8.8)
            if all(np.hypot(x - px, y - py) > 2.0 for _, px, py, _ in placed):
                placed.append((colour, float(x), float(y), float(rng.uniform(0, 90))))
                break
    return placed


def frame_to_table_cm(scene: Scene, pts) -> np.ndarray:
    """Frame pixels back to table cm (the drawing's plane): where a found outline's corners
    truly lie, to tell how far they are from the floor's (``floor_corners_cm``)."""
    pts = np.asarray(pts, np.float64).reshape(-1, 1, 2)
    back = np.linalg.inv(_camera(scene))
    return cv2.perspectiveTransform(pts, back).reshape(-1, 2) / S
