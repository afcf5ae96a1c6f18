"""A stand-in for the ``picamera2`` module, for machines without a Pi camera.

It follows picamera2's real interface where the source touches it (``camera_controls`` as
name -> (min, max, default); ``set_controls`` refusing a control the camera does not advertise;
``sensor_modes`` with ``crop_limits``; ``capture_array``/``capture_metadata`` taking ``wait=`` and
raising TimeoutError when no frame comes; ``autofocus_cycle``) and records what the source asked
for, so tests can check focus, controls, sensor mode and timeouts. ``Rig.script`` says what each
capture does next: "ok", "stall" (no frame before the timeout) or "fail" (a driver error).
"""

from __future__ import annotations

import types
from dataclasses import dataclass, field

import numpy as np

CONTROLS_COMMON = {
    "AeEnable": (False, True, True),
    "AwbEnable": (False, True, True),
    "ExposureTime": (26, 220_417_486, 20_000),
    "AnalogueGain": (1.12, 16.0, 1.0),
    "ColourGains": (0.0, 32.0, None),
    "AeFlickerMode": (0, 1, 0),
    "AeFlickerPeriod": (100, 1_000_000, 10_000),
    "FrameDurationLimits": (33_333, 33_333, 33_333),
}
CONTROLS = {
    # Camera Module 3: a focus motor
    "imx708": CONTROLS_COMMON | {"AfMode": (0, 2, 0), "AfTrigger": (0, 1, 0),
                                 "LensPosition": (0.0, 15.0, 1.0)},
    # Camera Module 2: fixed focus
    "imx219": dict(CONTROLS_COMMON),
}
# (size, bit depth, crop_limits: the part of the sensor the mode reads), as rpicam-hello lists them
SENSOR_MODES = {
    "imx708": [
        ((1536, 864), 10, (768, 432, 3072, 1728)),
        ((2304, 1296), 10, (0, 0, 4608, 2592)),
        ((4608, 2592), 10, (0, 0, 4608, 2592)),
    ],
    "imx219": [
        ((640, 480), 8, (1000, 752, 1280, 960)),
        ((1640, 1232), 8, (0, 0, 3280, 2464)),
        ((1640, 1232), 10, (0, 0, 3280, 2464)),
        ((1920, 1080), 10, (680, 692, 1920, 1080)),
        ((3280, 2464), 10, (0, 0, 3280, 2464)),
    ],
}
SETTLED = {"ExposureTime": 12_345, "AnalogueGain": 2.5, "ColourGains": (1.9, 1.6)}


@dataclass
class Rig:
    """The camera's world: what is attached and what it will do; ``calls`` is what was asked."""

    model: str = "imx708"
    cameras: int = 1
    script: list[str] = field(default_factory=list)  # what the next captures do; then "ok"
    metadata_script: list[str] = field(default_factory=list)  # the same for capture_metadata
    start_failures: int = 0  # the next starts that raise (a camera gone from the bus)
    autofocus_position: float | None = 4.0  # where autofocus leaves the lens; None: fails
    calls: list[tuple] = field(default_factory=list)
    controls: dict = field(default_factory=dict)  # what the running camera was set to
    open: int = 0  # cameras opened and not closed

    def named(self, name: str) -> list[tuple]:
        return [c for c in self.calls if c[0] == name]

    def captures(self) -> list[tuple]:
        return self.named("capture_array")


def make_module(rig: Rig) -> types.SimpleNamespace:
    class Picamera2:
        @staticmethod
        def global_camera_info():
            return [{"Model": rig.model, "Id": f"/base/i2c@{n}"} for n in range(rig.cameras)]

        def __init__(self, camera_num=0):
            rig.calls.append(("init", camera_num))
            if rig.start_failures > 0:
                rig.start_failures -= 1
                raise RuntimeError("Camera __init__ sequence did not complete.")
            rig.open += 1
            rig.controls = {}
            self.started = False

        @property
        def camera_controls(self):
            return dict(CONTROLS[rig.model])

        @property
        def sensor_modes(self):
            rig.calls.append(("sensor_modes",))
            return [
                {"format": f"SRGGB{depth}_CSI2P", "unpacked": f"SRGGB{depth}", "bit_depth": depth,
                 "size": size, "crop_limits": crop, "fps": 30.0}
                for size, depth, crop in SENSOR_MODES[rig.model]
            ]

        def create_video_configuration(self, main=None, sensor=None, **other):
            main = main or {}
            if other:
                raise TypeError(f"unexpected {sorted(other)}")
            if sensor and set(sensor) - {"output_size", "bit_depth"}:
                raise RuntimeError(f"Unexpected keys {set(sensor)} in sensor configuration")
            rig.calls.append(("config", dict(main), dict(sensor or {})))
            return {"use_case": "video", "main": main, "sensor": sensor}

        def configure(self, config):
            rig.calls.append(("configure", config))

        def set_controls(self, controls):
            for name in controls:
                if name not in CONTROLS[rig.model]:
                    raise RuntimeError(f"Control {name} is not advertised by libcamera")
            rig.calls.append(("set_controls", dict(controls)))
            rig.controls.update(controls)

        def start(self):
            rig.calls.append(("start",))
            self.started = True

        def capture_array(self, name="main", wait=None):
            rig.calls.append(("capture_array", name, wait))
            what = rig.script.pop(0) if rig.script else "ok"
            if what == "stall":
                if wait is None or wait is True:
                    raise AssertionError("a stalled capture without a timeout hangs for ever")
                raise TimeoutError()  # what concurrent.futures gives after wait= seconds
            if what == "fail":
                raise RuntimeError("Device timeout detected, attempting a restart!!!")
            return np.full((648, 1152, 3), 90, np.uint8)

        def capture_metadata(self, wait=None):
            rig.calls.append(("capture_metadata", wait))
            if rig.metadata_script and rig.metadata_script.pop(0) == "stall":
                raise TimeoutError()
            if rig.controls.get("AeEnable") is False:
                exposure = {k: rig.controls[k] for k in SETTLED if k in rig.controls}
            else:
                exposure = dict(SETTLED)
            metadata = {**exposure, "AeLocked": True, "SensorTimestamp": 1}
            if "AfMode" in CONTROLS[rig.model]:
                metadata["LensPosition"] = rig.controls.get("LensPosition", 1.0)
            return metadata

        def autofocus_cycle(self, wait=None):
            rig.calls.append(("autofocus_cycle", wait))
            self.set_controls({"AfMode": 1, "AfTrigger": 0})
            if rig.autofocus_position is None:
                return False
            rig.controls["LensPosition"] = rig.autofocus_position
            return True

        def stop(self):
            rig.calls.append(("stop",))
            self.started = False

        def close(self):
            rig.calls.append(("close",))
            rig.open -= 1

    return types.SimpleNamespace(Picamera2=Picamera2)


def install(monkeypatch, **kwargs) -> Rig:
    """Put a fake picamera2 in sys.modules for this test; returns its rig."""
    rig = Rig(**kwargs)
    monkeypatch.setitem(__import__("sys").modules, "picamera2", make_module(rig))
    return rig
