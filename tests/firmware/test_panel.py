"""firmware.panel against real gpiozero with its MockFactory (no hardware needed)."""

from __future__ import annotations

import dataclasses
import logging
import re
import threading
import time
from pathlib import Path

import pytest
from gpiozero import LED, Device
from gpiozero.exc import GPIOPinInUse
from gpiozero.pins.mock import MockFactory, MockPWMPin

from firmware.panel import (
    STATUS_PATTERNS,
    STATUSES,
    Blink,
    NullPanel,
    Panel,
    PanelConfig,
    PanelConfigError,
    open_panel,
)

ROOT = Path(__file__).resolve().parents[2]
CFG = PanelConfig()


@pytest.fixture
def factory():
    f = MockFactory(revision="c03111", pin_class=MockPWMPin)  # a Pi 4B; every pin can PWM
    yield f
    f.close()


class Recorder:
    def __init__(self) -> None:
        self.calls: list[str] = []
        self.event = threading.Event()

    def __call__(self, name: str):
        def cb() -> None:
            self.calls.append(name)
            self.event.set()

        return cb


@pytest.fixture
def rec():
    return Recorder()


def make_panel(factory, rec, config: PanelConfig = CFG, **kw) -> Panel:
    return Panel(
        config,
        on_read_now=rec("read_now"),
        on_undo=rec("undo"),
        on_next=rec("next"),
        pin_factory=factory,
        **kw,
    )


def press(factory, pin: int) -> None:
    factory.pin(pin).drive_low()
    factory.pin(pin).drive_high()


def wait_until(predicate, timeout: float = 0.8) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.005)
    return predicate()


def lit(factory, pin: int) -> bool:
    return bool(factory.pin(pin).state)


def toggles(factory, pin: int, timeout: float = 0.8) -> bool:
    """The pin has been seen both lit and dark (after clear_states) within ``timeout``."""
    p = factory.pin(pin)
    return wait_until(lambda: {bool(s.state) for s in p.states} >= {True, False}, timeout)


# Buttons -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "name"),
    [("read_now_pin", "read_now"), ("undo_pin", "undo"), ("next_pin", "next")],
)
def test_button_press_calls_its_callback(factory, rec, field, name):
    with make_panel(factory, rec):
        pin = factory.pin(getattr(CFG, field))
        assert pin.pull == "up"  # internal pull-up: the button goes to GND
        pin.drive_low()
        assert rec.calls == [name]
        pin.drive_high()  # release: nothing more
        assert rec.calls == [name]


def test_each_press_fires_once(factory, rec):
    with make_panel(factory, rec):
        for _ in range(3):
            press(factory, CFG.next_pin)
        press(factory, CFG.read_now_pin)
        assert rec.calls == ["next", "next", "next", "read_now"]


def test_callback_that_raises_is_logged_and_later_presses_work(factory, rec, caplog):
    calls = []

    def broken():
        calls.append(1)
        raise RuntimeError("boom")

    panel = Panel(CFG, on_read_now=broken, on_undo=rec("undo"), on_next=rec("next"),
                  pin_factory=factory)
    with panel, caplog.at_level(logging.ERROR, logger="firmware.panel"):
        press(factory, CFG.read_now_pin)
        press(factory, CFG.read_now_pin)
        press(factory, CFG.next_pin)
    assert len(calls) == 2
    assert rec.calls == ["next"]
    assert "read now callback failed" in caplog.text
    assert "boom" in caplog.text


def test_undo_without_redo_fires_on_press(factory, rec):
    with make_panel(factory, rec):
        factory.pin(CFG.undo_pin).drive_low()
        assert rec.calls == ["undo"]
        factory.pin(CFG.undo_pin).drive_high()
        assert rec.calls == ["undo"]


def test_undo_with_redo_short_press_undoes_on_release(factory, rec):
    cfg = dataclasses.replace(CFG, hold_time=0.3)
    with make_panel(factory, rec, cfg, on_redo=rec("redo")):
        pin = factory.pin(cfg.undo_pin)
        pin.drive_low()
        assert rec.calls == []
        pin.drive_high()
        assert rec.calls == ["undo"]


def test_undo_held_means_redo_and_no_undo(factory, rec):
    cfg = dataclasses.replace(CFG, hold_time=0.05)
    with make_panel(factory, rec, cfg, on_redo=rec("redo")):
        pin = factory.pin(cfg.undo_pin)
        pin.drive_low()
        assert rec.event.wait(0.8)
        pin.drive_high()
        assert rec.calls == ["redo"]
        rec.event.clear()
        pin.drive_low()  # a later short press is an undo again
        pin.drive_high()
        assert rec.calls == ["redo", "undo"]


# LEDs ----------------------------------------------------------------------------------------


def test_patterns_are_distinct_and_cover_every_status():
    assert set(STATUSES) == {
        "starting", "waiting", "settling", "read", "uncertain", "refused", "error", "stopped",
    }
    assert len(set(STATUS_PATTERNS.values())) == len(STATUS_PATTERNS)


@pytest.mark.parametrize(
    ("status", "green", "red"),
    [
        ("starting", True, True),
        ("read", True, False),
        ("error", False, True),
        ("stopped", False, False),
    ],
)
def test_solid_patterns(factory, rec, status, green, red):
    with make_panel(factory, rec) as panel:
        panel.show("settling")  # from a blinking state, so the solid one must stop the blink
        panel.show(status)
        assert panel.status == status
        for pin in (CFG.status_led_pin, CFG.error_led_pin):
            factory.pin(pin).clear_states()
        time.sleep(0.25)  # longer than any blink half-period of "settling"
        assert lit(factory, CFG.status_led_pin) is green
        assert lit(factory, CFG.error_led_pin) is red
        assert len(factory.pin(CFG.status_led_pin).states) == 1  # no toggling
        assert len(factory.pin(CFG.error_led_pin).states) == 1


def test_settling_blinks_green_fast(factory, rec):
    with make_panel(factory, rec) as panel:
        panel.show("stopped")
        factory.pin(CFG.status_led_pin).clear_states()
        panel.show("settling")
        assert toggles(factory, CFG.status_led_pin, timeout=0.6)
        assert not lit(factory, CFG.error_led_pin)


def test_waiting_flashes_green_briefly(factory, rec):
    with make_panel(factory, rec) as panel:
        panel.show("stopped")
        factory.pin(CFG.status_led_pin).clear_states()
        panel.show("waiting")
        assert toggles(factory, CFG.status_led_pin, timeout=0.5)  # 0.1 s on, then off
        assert STATUS_PATTERNS["waiting"].green == Blink(0.1, 1.9)
        assert not lit(factory, CFG.error_led_pin)


def test_uncertain_green_solid_red_blinks(factory, rec):
    with make_panel(factory, rec) as panel:
        panel.show("read")
        factory.pin(CFG.error_led_pin).clear_states()
        panel.show("uncertain")
        assert toggles(factory, CFG.error_led_pin, timeout=0.8)
        assert lit(factory, CFG.status_led_pin)


def test_showing_the_same_status_again_keeps_the_blink_running(factory, rec):
    with make_panel(factory, rec) as panel:
        panel.show("settling")
        green = factory.pin(CFG.status_led_pin)
        green.clear_states()
        for _ in range(20):
            panel.show("settling")
        # a restarted blink would write "on" each time; a running one is left alone
        assert len(green.states) <= 2


def test_unknown_status_is_rejected(factory, rec):
    with make_panel(factory, rec) as panel, pytest.raises(ValueError, match="unknown panel status"):
        panel.show("happy")


# Light ---------------------------------------------------------------------------------------


def test_light_full_brightness_is_plain_on_off_without_pwm(factory, rec):
    with make_panel(factory, rec) as panel:
        pin = factory.pin(CFG.light_pin)
        assert pin.state == 0
        panel.set_light(True)
        assert pin.state == 1
        assert pin.frequency is None  # no PWM, so no flicker bands in the camera image
        assert panel.light_on
        panel.set_light(False)
        assert pin.state == 0
        assert not panel.light_on


def test_light_dimmed_uses_pwm_at_the_set_brightness(factory, rec):
    cfg = dataclasses.replace(CFG, light_brightness=0.6, light_pwm_hz=2000)
    with make_panel(factory, rec, cfg) as panel:
        pin = factory.pin(cfg.light_pin)
        panel.set_light(True)
        assert pin.state == pytest.approx(0.6)
        assert pin.frequency == 2000
        panel.set_light(False)
        assert pin.state == 0


def test_light_disabled_leaves_the_pin_alone(factory, rec):
    cfg = dataclasses.replace(CFG, light_enabled=False)
    with make_panel(factory, rec, cfg) as panel:
        panel.set_light(True)
        assert not panel.light_on
        assert factory.pin(cfg.light_pin).function == "input"
        LED(cfg.light_pin, pin_factory=factory).close()  # free for someone else


# Close ---------------------------------------------------------------------------------------


ALL_PINS = [getattr(CFG, name) for name in CFG.pin_fields()]


def test_close_switches_off_and_releases_every_pin(factory, rec):
    panel = make_panel(factory, rec)
    panel.show("uncertain")
    panel.set_light(True)
    panel.close()
    panel.close()  # twice is fine
    for pin in ALL_PINS:
        assert factory.pin(pin).state in (0, 1)
        assert factory.pin(pin).function == "input"  # gpiozero puts released pins back
        LED(pin, pin_factory=factory).close()  # would raise GPIOPinInUse if still reserved
    panel.show("error")  # after close: ignored, no exception
    panel.set_light(True)
    assert not panel.light_on


def test_context_manager_closes(factory, rec):
    with make_panel(factory, rec) as panel:
        panel.show("read")
    for pin in ALL_PINS:
        LED(pin, pin_factory=factory).close()


def test_failed_construction_releases_the_pins_it_took(factory, rec):
    blocker = LED(CFG.status_led_pin, pin_factory=factory)  # green LED pin already taken
    with pytest.raises(GPIOPinInUse):
        make_panel(factory, rec)
    blocker.close()
    for pin in (CFG.read_now_pin, CFG.undo_pin, CFG.next_pin):
        LED(pin, pin_factory=factory).close()


# Config --------------------------------------------------------------------------------------


def test_from_dict_defaults_and_values():
    assert PanelConfig.from_dict({}) == PanelConfig()
    cfg = PanelConfig.from_dict({"next_pin": 23, "hold_time": 3, "light_brightness": 0.5})
    assert cfg.next_pin == 23
    assert cfg.hold_time == 3.0 and isinstance(cfg.hold_time, float)
    assert cfg.light_brightness == 0.5


def test_from_dict_rejects_unknown_key_naming_it_and_the_allowed_ones():
    with pytest.raises(PanelConfigError) as e:
        PanelConfig.from_dict({"read_pin": 17})
    msg = str(e.value)
    assert "'read_pin'" in msg
    for key in PanelConfig.allowed_keys():
        assert key in msg
    assert isinstance(e.value, ValueError)


@pytest.mark.parametrize(
    ("d", "fragment"),
    [
        ({"undo_pin": 17}, "undo_pin and read_now_pin both use GPIO17"),
        ({"next_pin": 40}, "next_pin = 40 is not a header GPIO"),
        ({"next_pin": "22"}, "next_pin must be a whole number"),
        ({"enabled": "yes"}, "enabled must be true or false"),
        ({"light_brightness": 0}, "light_brightness must be above 0"),
        ({"light_brightness": 1.5}, "light_brightness must be above 0"),
        ({"hold_time": -1}, "hold_time must be above 0"),
        ({"hold_time": float("inf")}, "at most 60"),
        ({"light_pwm_hz": 0}, "light_pwm_hz"),
    ],
)
def test_from_dict_rejects_bad_values(d, fragment):
    with pytest.raises(PanelConfigError, match=re.escape(fragment)):
        PanelConfig.from_dict(d)


def test_light_pin_may_reuse_a_pin_when_the_light_is_disabled():
    cfg = PanelConfig.from_dict({"light_enabled": False, "light_pin": 17})
    assert "light_pin" not in cfg.pin_fields()


def test_config_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        CFG.next_pin = 4  # type: ignore[misc]


# open_panel / NullPanel ----------------------------------------------------------------------


def open_with(config, rec, **kw):
    return open_panel(config, on_read_now=rec("read_now"), on_undo=rec("undo"),
                      on_next=rec("next"), **kw)


def test_open_panel_with_a_factory_gives_a_real_panel(factory, rec):
    with open_with(CFG, rec, pin_factory=factory) as panel:
        assert isinstance(panel, Panel) and panel.available
        press(factory, CFG.read_now_pin)
    assert rec.calls == ["read_now"]


def test_open_panel_disabled_gives_null_panel(factory, rec, caplog):
    with caplog.at_level(logging.INFO, logger="firmware.panel"):
        panel = open_with(dataclasses.replace(CFG, enabled=False), rec, pin_factory=factory)
    assert isinstance(panel, NullPanel) and not panel.available
    assert "disabled" in caplog.text
    assert factory.pin(CFG.status_led_pin).function == "input"  # never touched


def test_open_panel_without_any_pin_library_falls_back(monkeypatch, rec, caplog):
    """What a laptop sees: gpiozero raises BadPinFactory from the first device."""
    monkeypatch.setattr(Device, "pin_factory", None)
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "no-such-pin-library")
    with caplog.at_level(logging.WARNING, logger="firmware.panel"):
        panel = open_with(CFG, rec)
    assert isinstance(panel, NullPanel)
    assert "no GPIO available" in caplog.text
    assert "no-such-pin-library" in caplog.text
    assert Device.pin_factory is None  # the module did not install a factory globally


def test_open_panel_default_factory_fallbacks_are_reported(monkeypatch, rec, caplog):
    """gpiozero's own search: every library fails, the reasons end up in one warning."""
    from gpiozero.exc import BadPinFactory, PinFactoryFallback

    def no_factory():
        import warnings

        warnings.warn(PinFactoryFallback("Falling back from lgpio: No module named 'lgpio'"),
                      stacklevel=1)
        raise BadPinFactory("Unable to load any default pin factory!")

    monkeypatch.setattr(Device, "pin_factory", None)
    monkeypatch.setattr(Device, "_default_pin_factory", staticmethod(no_factory))
    with caplog.at_level(logging.WARNING, logger="firmware.panel"):
        panel = open_with(CFG, rec)
    assert isinstance(panel, NullPanel)
    assert "Unable to load any default pin factory" in caplog.text
    assert "No module named 'lgpio'" in caplog.text


def test_open_panel_pin_busy_falls_back_and_frees_what_it_took(factory, rec, caplog):
    blocker = LED(CFG.light_pin, pin_factory=factory)
    with caplog.at_level(logging.ERROR, logger="firmware.panel"):
        panel = open_with(CFG, rec, pin_factory=factory)
    assert isinstance(panel, NullPanel)
    assert "could not open the front panel" in caplog.text
    blocker.close()
    for pin in ALL_PINS:
        LED(pin, pin_factory=factory).close()


def test_null_panel_has_the_same_methods_and_logs_each_status_once(caplog):
    public = {n for n in dir(Panel) if not n.startswith("_")} - {"config"}
    assert public <= {n for n in dir(NullPanel) if not n.startswith("_")} | {"reason"}
    with caplog.at_level(logging.DEBUG, logger="firmware.panel"), NullPanel("test") as panel:
        panel.show("waiting")
        panel.show("waiting")
        panel.show("read")
        panel.set_light(True)
        assert panel.light_on
    assert caplog.text.count("status waiting") == 1
    assert caplog.text.count("status read") == 1
    with pytest.raises(ValueError):
        NullPanel().show("nope")


# Documentation matches the defaults ----------------------------------------------------------


def parse_pin_table(text: str) -> dict[str, tuple[int, int]]:
    """Rows of a markdown table naming a ``*_pin`` field: field -> (BCM, header pin)."""
    rows = {}
    for line in text.splitlines():
        if not line.lstrip().startswith("|"):
            continue
        m_field = re.search(r"`(\w+_pin)`", line)
        m_gpio = re.search(r"\bGPIO(\d+)\b", line)
        if not (m_field and m_gpio):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        header = next(int(c) for c in cells if c.isdigit())
        rows[m_field.group(1)] = (int(m_gpio.group(1)), header)
    return rows


def test_wiring_md_table_matches_panel_config_defaults():
    rows = parse_pin_table((ROOT / "hardware" / "wiring.md").read_text(encoding="utf-8"))
    assert set(rows) == set(CFG.pin_fields())
    board = MockFactory(revision="c03111").board_info  # Raspberry Pi 4B
    for field, (bcm, header) in rows.items():
        assert bcm == getattr(CFG, field), f"wiring.md says GPIO{bcm} for {field}"
        found = [(h.name, p.number) for h, p in board.find_pin(f"GPIO{bcm}")]
        assert found == [("J8", header)], f"header pin of {field}"


def test_module_docstring_table_matches_defaults():
    import firmware.panel as mod

    rows = dict(re.findall(r"``(\w+_pin)``\s+GPIO(\d+)\s", mod.__doc__))
    assert {k: int(v) for k, v in rows.items()} == {f: getattr(CFG, f) for f in CFG.pin_fields()}
