"""Counting Amerigo's cubes in a picture of the tower's tray. Knows cubes and colours, not rules."""

from vision.errors import VisionError
from vision.reading import COLOURS, Cube, TrayReading

__all__ = ["COLOURS", "Cube", "TrayReading", "VisionError", "count_cubes", "load_image"]


def __getattr__(name):
    # The pipeline pulls in OpenCV; load it on first use so `vision.reading` stays light.
    if name in ("count_cubes", "load_image"):
        from vision import counter

        return getattr(counter, name)
    raise AttributeError(name)
