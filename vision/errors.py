"""The one exception the vision library raises for input it cannot read."""


class VisionError(ValueError):
    """A frame or file that cannot be counted; the message says why, for a person."""
