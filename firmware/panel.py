"""The front panel: three buttons, two status LEDs and the tray light, through gpiozero.

Wiring (BCM numbers, all defaults of :class:`PanelConfig`; the drawing is hardware/wiring.svg
and the table hardware/wiring.md, which a test keeps in step with the defaults):

==================  ====================  ======  ==========  ==================================
Part                PanelConfig field     BCM     header pin  connection
==================  ====================  ======  ==========  ==================================
Read now button     ``read_now_pin``      GPIO17  11          button to GND (pin 9), pull-up on
Undo button         ``undo_pin``          GPIO27  13          button to GND (pin 9), pull-up on
Next button         ``next_pin``          GPIO22  15          button to GND (pin 9), pull-up on
green status LED    ``status_led_pin``    GPIO5   29          330 ohm, LED, cathode to GND (25)
red error LED       ``error_led_pin``     GPIO6   31          330 ohm, LED, cathode to GND (25)
tray light MOSFET   ``light_pin``         GPIO18  12          100 ohm to gate, 100k gate to GND
==================  ====================  ======  ==========  ==================================

None of these touch I2C1 (GPIO2/3), SPI0 (GPIO7-11), the UART (GPIO14/15) or the ID EEPROM
pins (GPIO0/1); the camera uses its own ribbon connector, not the 40-pin header.

LED patterns of :meth:`Panel.show` (``on/off`` are seconds; a blink starts with "on"):

===========  ========================  ==========================  ============================
status       green (status) LED        red (error) LED             meaning
===========  ========================  ==========================  ============================
starting     solid                     solid                       lamp test while booting
waiting      flash 0.1 on / 1.9 off    off                         alive, tray empty / idle
settling     blink 0.2 on / 0.2 off    off                         cubes moving, wait
read         solid                     off                         fresh reading on the phones
uncertain    solid                     blink 0.5 on / 0.5 off      check the reading on a phone
refused      solid                     blink 0.1 on / 0.1 off      a button was refused: why is
                                                                   on the phones (5 s)
error        off                       solid                       camera lost or similar
stopped      off                       off                         service stopped
===========  ========================  ==========================  ============================

Buttons: a press calls its callback on gpiozero's event thread, so callbacks should be quick
(post to a queue, set an event). Exceptions raised by a callback are logged and swallowed, so a
broken handler never kills that thread and later presses still work.

Undo and redo: with no ``on_redo`` callback, Undo acts the moment it is pressed, like the other
buttons, and ``hold_time`` is not used. With ``on_redo`` given, Undo acts when it is *released*
after a short press, and holding it for ``hold_time`` seconds calls ``on_redo`` instead (once
per hold; letting go after that does not also undo).

The tray light: ``light_brightness`` 1.0 (the default) drives GPIO18 as a plain on/off output,
with no PWM at all, because a rolling-shutter camera turns PWM flicker into dark bands across
the picture. Below 1.0 the pin is PWM-dimmed at ``light_pwm_hz`` (gpiozero's default lgpio
factory does this in software; GPIO18 is a hardware-PWM-capable pin should you switch to one).

No GPIO (a laptop): :func:`open_panel` returns a :class:`NullPanel` instead, which has the same
methods and only logs status changes. gpiozero 2 signals "no pin library could be loaded" by
raising :class:`gpiozero.exc.BadPinFactory` (an ``ImportError``) from the first device created
without an explicit pin factory, after warning a ``PinFactoryFallback`` for every library it
tried; :func:`open_panel` folds those reasons into its own warning.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

from gpiozero import LED, PWMLED, Button
from gpiozero.exc import BadPinFactory, PinWarning

log = logging.getLogger(__name__)

__all__ = [
    "STATUSES",
    "STATUS_PATTERNS",
    "Blink",
    "NullPanel",
    "Panel",
    "PanelConfig",
    "PanelConfigError",
    "open_panel",
]

Callback = Callable[[], object]

Status = Literal["starting", "waiting", "settling", "read", "uncertain", "refused", "error",
                 "stopped"]


class Blink(NamedTuple):
    """A blinking LED: ``on_time`` seconds lit, then ``off_time`` seconds dark, repeating."""

    on_time: float
    off_time: float


LedMode = bool | Blink
"""True: solid on, False: off, Blink: blinking."""


class Pattern(NamedTuple):
    green: LedMode
    red: LedMode


STATUS_PATTERNS: dict[str, Pattern] = {
    "starting": Pattern(green=True, red=True),
    "waiting": Pattern(green=Blink(0.1, 1.9), red=False),
    "settling": Pattern(green=Blink(0.2, 0.2), red=False),
    "read": Pattern(green=True, red=False),
    "uncertain": Pattern(green=True, red=Blink(0.5, 0.5)),
    "refused": Pattern(green=True, red=Blink(0.1, 0.1)),
    "error": Pattern(green=False, red=True),
    "stopped": Pattern(green=False, red=False),
}
STATUSES: tuple[str, ...] = tuple(STATUS_PATTERNS)

# BCM numbers brought out on the 40-pin header.
_HEADER_GPIOS = range(2, 28)


class PanelConfigError(ValueError):
    """A ``[panel]`` table that cannot be used; the message names the offending key."""


@dataclass(frozen=True)
class PanelConfig:
    """Settings of the front panel; the ``[panel]`` table of the TOML config file.

    Pins are BCM GPIO numbers (not header pin numbers).
    """

    enabled: bool = True
    read_now_pin: int = 17
    undo_pin: int = 27
    next_pin: int = 22
    status_led_pin: int = 5
    error_led_pin: int = 6
    light_enabled: bool = True
    light_pin: int = 18
    light_brightness: float = 1.0
    light_pwm_hz: int = 1000
    hold_time: float = 2.0
    bounce_time: float = 0.05

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            default = f.default
            if isinstance(default, bool):
                ok = isinstance(value, bool)
                want = "true or false"
            elif isinstance(default, int):
                ok = isinstance(value, int) and not isinstance(value, bool)
                want = "a whole number"
            else:
                ok = isinstance(value, int | float) and not isinstance(value, bool)
                want = "a number"
            if not ok:
                raise PanelConfigError(f"[panel] {f.name} must be {want}, not {value!r}")
        pins = {name: getattr(self, name) for name in self.pin_fields()}
        for name, pin in pins.items():
            if pin not in _HEADER_GPIOS:
                raise PanelConfigError(
                    f"[panel] {name} = {pin} is not a header GPIO; use a BCM number "
                    f"from {_HEADER_GPIOS.start} to {_HEADER_GPIOS.stop - 1}"
                )
        seen: dict[int, str] = {}
        for name, pin in pins.items():
            if pin in seen:
                raise PanelConfigError(
                    f"[panel] {name} and {seen[pin]} both use GPIO{pin}; each needs its own pin"
                )
            seen[pin] = name
        if not 0.0 < self.light_brightness <= 1.0:
            raise PanelConfigError(
                f"[panel] light_brightness must be above 0 and at most 1, "
                f"not {self.light_brightness!r}"
            )
        if not 1 <= self.light_pwm_hz <= 10_000:
            raise PanelConfigError(
                f"[panel] light_pwm_hz must be from 1 to 10000, not {self.light_pwm_hz!r}"
            )
        if not 0 < self.hold_time <= 60:  # gpiozero's hold timer cannot wait for ever (inf)
            raise PanelConfigError(
                f"[panel] hold_time must be above 0 and at most 60 (seconds), not "
                f"{self.hold_time!r}")
        if not 0 <= self.bounce_time <= 1:
            raise PanelConfigError(
                f"[panel] bounce_time must be from 0 to 1 (seconds), not {self.bounce_time!r}"
            )

    def pin_fields(self) -> tuple[str, ...]:
        """Names of the pin fields in use (``light_pin`` only when the light is enabled)."""
        names = ["read_now_pin", "undo_pin", "next_pin", "status_led_pin", "error_led_pin"]
        if self.light_enabled:
            names.append("light_pin")
        return tuple(names)

    @classmethod
    def allowed_keys(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> PanelConfig:
        """Build from a parsed ``[panel]`` table; missing keys keep their defaults.

        Raises :class:`PanelConfigError` (a ``ValueError``) for an unknown key, naming it and
        listing the allowed ones, and for a value of the wrong type or out of range.
        """
        if not isinstance(d, Mapping):
            raise PanelConfigError(f"[panel] must be a table, not {type(d).__name__}")
        allowed = cls.allowed_keys()
        unknown = [k for k in d if k not in allowed]
        if unknown:
            raise PanelConfigError(
                f"unknown key {unknown[0]!r} in [panel]; allowed keys: {', '.join(allowed)}"
            )
        values = dict(d)
        # TOML has no separate float syntax for whole numbers: accept hold_time = 2 etc.
        for f in dataclasses.fields(cls):
            if (
                f.name in values
                and isinstance(f.default, float)
                and isinstance(values[f.name], int)
                and not isinstance(values[f.name], bool)
            ):
                values[f.name] = float(values[f.name])
        return cls(**values)


def _check_status(status: str) -> None:
    if status not in STATUS_PATTERNS:
        raise ValueError(f"unknown panel status {status!r}; expected one of {', '.join(STATUSES)}")


class _ShownState:
    """What a panel, real or not, was last told to show: the service reads it back."""

    _status: str | None
    _light_on: bool

    @property
    def status(self) -> str | None:
        """The last status given to ``show`` (None before the first)."""
        return self._status

    @property
    def light_on(self) -> bool:
        return self._light_on


class Panel(_ShownState):
    """The real front panel. All gpiozero devices get ``pin_factory`` (None: gpiozero's default).

    Usable as a context manager; :meth:`close` releases every pin and is safe to call twice.
    """

    available = True

    def __init__(
        self,
        config: PanelConfig,
        *,
        on_read_now: Callback,
        on_undo: Callback,
        on_next: Callback,
        on_redo: Callback | None = None,
        pin_factory: Any = None,
    ) -> None:
        self.config = config
        self._lock = threading.RLock()
        self._status: str | None = None
        self._light_on = False
        self._closed = False
        self._undo_was_held = False
        self._devices: list[Any] = []
        self._on_undo = on_undo
        self._on_redo = on_redo
        try:
            self._read_now_button = self._add(
                Button(config.read_now_pin, pull_up=True, bounce_time=config.bounce_time or None,
                       pin_factory=pin_factory)
            )
            self._undo_button = self._add(
                Button(config.undo_pin, pull_up=True, bounce_time=config.bounce_time or None,
                       hold_time=config.hold_time, pin_factory=pin_factory)
            )
            self._next_button = self._add(
                Button(config.next_pin, pull_up=True, bounce_time=config.bounce_time or None,
                       pin_factory=pin_factory)
            )
            self._green = self._add(LED(config.status_led_pin, pin_factory=pin_factory))
            self._red = self._add(LED(config.error_led_pin, pin_factory=pin_factory))
            self._light: LED | PWMLED | None = None
            if config.light_enabled:
                if config.light_brightness >= 1.0:
                    self._light = self._add(LED(config.light_pin, pin_factory=pin_factory))
                else:
                    self._light = self._add(
                        PWMLED(config.light_pin, frequency=config.light_pwm_hz,
                               pin_factory=pin_factory)
                    )
        except BaseException:
            self._close_devices()
            raise
        self._read_now_button.when_pressed = _guarded("read now", on_read_now)
        self._next_button.when_pressed = _guarded("next", on_next)
        if on_redo is None:
            self._undo_button.when_pressed = _guarded("undo", on_undo)
        else:
            self._undo_button.when_pressed = self._undo_pressed
            self._undo_button.when_held = self._undo_held
            self._undo_button.when_released = self._undo_released

    def _add(self, device: Any) -> Any:
        self._devices.append(device)
        return device

    # Undo with redo on hold -------------------------------------------------------------

    def _undo_pressed(self) -> None:
        with self._lock:
            self._undo_was_held = False

    def _undo_held(self) -> None:
        with self._lock:
            self._undo_was_held = True
        _guarded("redo", self._on_redo)()

    def _undo_released(self) -> None:
        with self._lock:
            held = self._undo_was_held
            self._undo_was_held = False
        if not held:
            _guarded("undo", self._on_undo)()

    # Public API ---------------------------------------------------------------------------

    def show(self, status: Status | str) -> None:
        """Show ``status`` on the LEDs (see the table in the module docstring).

        Showing the status that is already shown changes nothing (a blink keeps its rhythm).
        """
        _check_status(status)
        with self._lock:
            if self._closed or status == self._status:
                return
            pattern = STATUS_PATTERNS[status]
            _drive(self._green, pattern.green)
            _drive(self._red, pattern.red)
            self._status = status

    def set_light(self, on: bool) -> None:
        """Switch the tray light on (at ``light_brightness``) or off. No-op if not enabled."""
        with self._lock:
            if self._closed:
                return
            if self._light is None:
                self._light_on = False
                return
            if not on:
                self._light.off()
            elif isinstance(self._light, PWMLED):
                self._light.value = self.config.light_brightness
            else:
                self._light.on()
            self._light_on = bool(on)

    def close(self) -> None:
        """Turn everything off and release all pins. The pin factory itself is left open."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            for device in (getattr(self, "_light", None), getattr(self, "_green", None),
                           getattr(self, "_red", None)):
                if device is not None:
                    try:
                        device.off()
                    except Exception:
                        log.debug("panel: could not switch %r off", device, exc_info=True)
            self._close_devices()
            self._light_on = False

    def _close_devices(self) -> None:
        while self._devices:
            device = self._devices.pop()
            try:
                device.close()
            except Exception:
                log.warning("panel: could not close %r", device, exc_info=True)

    def __enter__(self) -> Panel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"status={self._status!r}"
        return f"<Panel {state}>"


class NullPanel(_ShownState):
    """Stands in for :class:`Panel` without GPIO: same methods, only logs status changes."""

    available = False

    def __init__(self, reason: str = "no GPIO") -> None:
        self.reason = reason
        self._status: str | None = None
        self._light_on = False

    def show(self, status: Status | str) -> None:
        _check_status(status)
        if status != self._status:
            log.debug("panel (%s): status %s", self.reason, status)
            self._status = status

    def set_light(self, on: bool) -> None:
        self._light_on = bool(on)

    def close(self) -> None:
        pass

    def __enter__(self) -> NullPanel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<NullPanel {self.reason!r}>"


def open_panel(
    config: PanelConfig,
    *,
    on_read_now: Callback,
    on_undo: Callback,
    on_next: Callback,
    on_redo: Callback | None = None,
    pin_factory: Any = None,
) -> Panel | NullPanel:
    """A :class:`Panel`, or a :class:`NullPanel` when the panel is disabled or cannot be opened.

    - ``enabled = false``: NullPanel, logged at INFO (it was asked for).
    - No GPIO library could be loaded (gpiozero raises ``BadPinFactory``; a laptop, or lgpio
      failing on the Pi): NullPanel, with a WARNING that lists why each library was skipped.
    - Any other failure opening the pins (pin busy, no permission): NullPanel, logged at ERROR
      with the traceback. The buttons are a convenience; the service must keep running.
    """
    if not config.enabled:
        log.info("front panel disabled in the config ([panel] enabled = false)")
        return NullPanel("disabled")
    # Collect gpiozero's PinFactoryFallback warnings to put their reasons into one log line.
    # (catch_warnings is process-wide: call open_panel once, at start-up, not from threads.)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            panel: Panel | NullPanel = Panel(
                config, on_read_now=on_read_now, on_undo=on_undo, on_next=on_next,
                on_redo=on_redo, pin_factory=pin_factory,
            )
        except BadPinFactory as e:
            reasons = [str(w.message) for w in caught if issubclass(w.category, PinWarning)]
            detail = f" ({'; '.join(reasons)})" if reasons else ""
            log.warning(
                "no GPIO available: %s%s; running without the front panel (buttons, LEDs, "
                "tray light)", e, detail,
            )
            panel = NullPanel("no GPIO")
        except Exception:
            log.error("could not open the front panel; running without it", exc_info=True)
            panel = NullPanel("panel failed")
    for w in caught:
        if issubclass(w.category, PinWarning):
            if isinstance(panel, Panel):
                log.warning("gpiozero: %s", w.message)
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return panel


def _guarded(name: str, callback: Callback | None) -> Callable[[], None]:
    """Wrap a button callback so an exception is logged instead of reaching gpiozero."""

    def run() -> None:
        if callback is None:
            return
        try:
            callback()
        except Exception:
            log.exception("panel: the %s callback failed", name)

    run.__name__ = f"on_{name.replace(' ', '_')}"
    return run


def _drive(led: LED, mode: LedMode) -> None:
    if isinstance(mode, Blink):
        led.blink(on_time=mode.on_time, off_time=mode.off_time, background=True)
    elif mode:
        led.on()
    else:
        led.off()
