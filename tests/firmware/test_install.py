"""hardware/install.sh run for real, into a temporary root, with stand-ins for the system.

``CUBETOWER_ROOT`` puts every path the script writes under ``tmp_path/root``; stand-ins on PATH
play systemctl, apt-get, useradd/usermod/userdel, id, getent, chown, dpkg and python3's venv and
pip (each records its command line). What is checked is what a Pi would be left with: the unit,
the settings, the service user, and that a rerun keeps every setting.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
INSTALL = ROOT / "hardware" / "install.sh"

# Each stand-in logs "name args..." to $STUB_LOG; users and groups live in $CUBETOWER_ROOT/.users
STUBS = {
    "systemctl": 'case "$1" in is-active) exit 0 ;; esac',
    "apt-get": "",
    "apt-cache": "",
    "dpkg": 'echo "${FAKE_ARCH:-arm64}"',
    "chown": "",
    "hostname": 'case "${1:-}" in -I) echo "192.168.1.42 fe80::1" ;; *) echo cubetower ;; esac',
    "sleep": "",
    # the service's log since it started: what the test puts in $FAKE_JOURNAL
    "journalctl": 'printf "%s" "${FAKE_JOURNAL:-}"',
    "getent": "exit 0",
    "useradd": 'echo "${!#}:" >> "$CUBETOWER_ROOT/.users"',
    "userdel": 'sed -i "/^$1:/d" "$CUBETOWER_ROOT/.users"',
    "usermod": 'sed -i "s/^$3:\\(.*\\)/$3:\\1 $2/" "$CUBETOWER_ROOT/.users"',
    "id": """
case "$1" in
    -u) [ $# -eq 1 ] && { echo 0; exit 0; }
        grep -q "^$2:" "$CUBETOWER_ROOT/.users" 2>/dev/null ;;
    -nG) sed -n "s/^$2://p" "$CUBETOWER_ROOT/.users" ;;
esac""",
    # python3 -m venv DIR makes a venv whose python records pip and "installs" the command
    "python3": """
if [ "$1" = -m ] && [ "$2" = venv ]; then
    dir="${!#}"; mkdir -p "$dir/bin"
    echo "include-system-site-packages = true" > "$dir/pyvenv.cfg"
    cat > "$dir/bin/python" <<EOF
#!/bin/bash
echo "venv-python \\$*" >> "\\$STUB_LOG"
if [ "\\$1 \\$2" = "-m pip" ]; then touch "$dir/bin/cubetower"; chmod +x "$dir/bin/cubetower"; fi
EOF
    chmod +x "$dir/bin/python"
    exit 0
fi
exec "$REAL_PYTHON" "$@"
""",
}


@pytest.fixture
def pi(tmp_path):
    """Run install.sh as on a Pi whose system is tmp_path/root; returns a runner."""
    stubs = tmp_path / "stubs"
    stubs.mkdir()
    for name, body in STUBS.items():
        script = stubs / name
        log_line = f'echo "{name} $*" >> "$STUB_LOG"' if name != "python3" else ""
        script.write_text(f"#!/bin/bash\n{log_line}\n{body}\n")
        script.chmod(0o755)
    root = tmp_path / "root"
    root.mkdir()
    log = tmp_path / "calls.log"

    def run(*args, arch="arm64", check=True, journal=""):
        log.write_text("")
        env = {
            **os.environ,
            "PATH": f"{stubs}:/usr/bin:/bin",
            "CUBETOWER_ROOT": str(root),
            "STUB_LOG": str(log),
            "REAL_PYTHON": sys.executable,
            "FAKE_ARCH": arch,
            "FAKE_JOURNAL": journal,
            "SUDO_USER": "pi",
        }
        done = subprocess.run(["bash", str(INSTALL), *args], env=env, capture_output=True,
                              text=True, timeout=60)
        if check:
            assert done.returncode == 0, done.stdout + done.stderr
        done.calls = log.read_text().splitlines()
        return done

    run.root = root
    return run


def env_file(root: Path) -> dict[str, str]:
    text = (root / "etc/cubetower/install.env").read_text()
    return dict(re.findall(r"^(\w+)=(.*)$", text, re.M))


def unit(root: Path) -> str:
    return (root / "etc/systemd/system/cubetower.service").read_text()


def test_a_fresh_install_sets_up_the_service_user_unit_settings_and_mdns(pi):
    done = pi("--source", "webcam")
    root = pi.root
    assert env_file(root) == {"CUBETOWER_SOURCE": "webcam", "CUBETOWER_PORT": "80"}
    text = unit(root)
    assert "User=cubetower\n" in text and "User=pi" not in text
    assert "SupplementaryGroups=video gpio\n" in text
    assert "AmbientCapabilities=CAP_NET_BIND_SERVICE\n" in text
    for hardening in ("NoNewPrivileges=yes", "ProtectSystem=strict",
                      "ReadWritePaths=/var/lib/cubetower", "PrivateTmp=yes"):
        assert hardening + "\n" in text
    assert "ExecStart=/opt/cubetower/venv/bin/cubetower serve" in text
    assert not re.search(r"@[A-Z]+@", text)
    assert (root / "etc/cubetower/config.toml").is_file()
    # the service answers to cubetower.local itself (firmware/mdns.py): no avahi service file
    assert not (root / "etc/avahi/services/cubetower.service").exists()
    assert "http://cubetower.local/" in done.stdout
    assert (root / "opt/cubetower/venv/bin/cubetower").exists()
    calls = done.calls
    [useradd] = [c for c in calls if c.startswith("useradd ")]
    assert "--system" in useradd and useradd.endswith(" cubetower")
    assert "usermod -aG video cubetower" in calls and "usermod -aG gpio cubetower" in calls
    assert f"chown -R cubetower:cubetower {root}/var/lib/cubetower" in calls
    assert [c for c in calls if c.startswith("systemctl ")][:3] == [
        "systemctl daemon-reload", "systemctl enable cubetower.service",
        "systemctl stop cubetower.service"]
    assert "systemctl start cubetower.service" in calls
    # pip builds from a copy of the clone, never inside it as root
    pip = [c for c in calls if "-m pip install" in c and "--constraint" in c]
    assert pip and all(str(ROOT) not in c for c in pip)
    assert "http://192.168.1.42/" in done.stdout  # port 80: no port in the address


def test_the_address_printed_is_the_mdns_name_the_service_took(pi):
    """Another table on the network answers to cubetower.local: the service takes cubetower-2
    (firmware/mdns.py) and the installer prints that, not the name it asked for."""
    done = pi(journal=(
        "2026-12-07 10:00:01 INFO firmware.mdns: cubetower.local answers at 192.168.1.7: "
        "not this device\n"
        "2026-12-07 10:00:02 INFO firmware.mdns: announced cubetower-2.local at 192.168.1.42\n"))
    assert "http://cubetower-2.local/" in done.stdout
    assert "http://cubetower.local/" not in done.stdout
    assert any(c.startswith("journalctl -u cubetower.service -o cat --since @")
               for c in done.calls)


def test_a_rerun_keeps_every_setting(pi):
    pi("--source", "webcam:1", "--port", "8080")
    settings = pi.root / "etc/cubetower/config.toml"
    settings.write_text(settings.read_text() + "\n[server]\nthreads = 12\n")
    edited = settings.read_text()

    done = pi()  # the update recipe: git pull && sudo hardware/install.sh
    assert env_file(pi.root) == {"CUBETOWER_SOURCE": "webcam:1", "CUBETOWER_PORT": "8080"}
    assert settings.read_text() == edited
    assert "keeping the camera source of the last install: webcam:1" in done.stdout
    assert not [c for c in done.calls if c.startswith("useradd")]  # the user exists already
    assert not [c for c in done.calls if c.startswith("usermod")]  # and is in its groups

    done = pi("--port", "81")  # one setting given again: only that one changes
    assert env_file(pi.root) == {"CUBETOWER_SOURCE": "webcam:1", "CUBETOWER_PORT": "81"}
    assert "http://cubetower.local:81/" in done.stdout


def test_a_port_written_with_a_leading_zero_is_that_port(pi):
    done = pi("--port", "080")
    assert env_file(pi.root)["CUBETOWER_PORT"] == "80"
    assert "http://192.168.1.42/" in done.stdout and ":080" not in done.stdout
    env = pi.root / "etc/cubetower/install.env"  # as an install before this fix kept it
    env.write_text(env.read_text().replace("CUBETOWER_PORT=80", "CUBETOWER_PORT=080"))
    done = pi()
    assert env_file(pi.root)["CUBETOWER_PORT"] == "80" and ":080" not in done.stdout


def test_a_service_that_runs_but_does_not_serve_the_game_is_said(pi, tmp_path):
    """systemd's "active" is not the game: the fault page and a camera that will not open both
    answer /api/health with what is wrong, and the last lines say it."""
    import json
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    class Health(BaseHTTPRequestHandler):
        def do_GET(self):
            body = json.dumps({"ok": False, "camera": {
                "problem": "the Pi camera would not start: busy"}}).encode()
            self.send_response(503)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Health)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        done = pi("--port", str(server.server_port))
    finally:
        server.shutdown()
    assert ("The cubetower service is running, but: the Pi camera would not start: busy"
            in done.stdout)


def test_a_rerun_names_the_mdns_name_of_the_settings_and_drops_the_old_avahi_file(pi):
    pi()
    old_avahi = pi.root / "etc/avahi/services/cubetower.service"
    old_avahi.parent.mkdir(parents=True)
    old_avahi.write_text("<service-group>an older install's announcement</service-group>")
    settings = pi.root / "etc/cubetower/config.toml"
    settings.write_text(settings.read_text() + '\n[server]\nmdns_name = "table2"\n')
    done = pi()
    assert "http://table2.local/" in done.stdout
    assert not old_avahi.exists()


def test_a_rerun_over_an_install_from_before_install_env_keeps_its_source_and_port(pi):
    old_unit = pi.root / "etc/systemd/system/cubetower.service"
    old_unit.parent.mkdir(parents=True)
    old_unit.write_text(
        "[Service]\nUser=pi\nExecStart=/home/pi/cubetower/.venv/bin/cubetower serve --source "
        "webcam --data-dir /var/lib/cubetower --host 0.0.0.0 --port 8000 --config "
        "/etc/cubetower/config.toml\n"
    )
    pi()
    assert env_file(pi.root) == {"CUBETOWER_SOURCE": "webcam", "CUBETOWER_PORT": "8000"}


def test_a_32_bit_system_is_refused_before_anything_changes(pi):
    done = pi(arch="armhf", check=False)
    assert done.returncode != 0
    assert "32-bit" in done.stderr and "Raspberry Pi OS Lite (64-bit)" in done.stderr
    assert not any(c.startswith(("apt-get", "useradd", "systemctl")) for c in done.calls)
    assert not any(pi.root.iterdir())


def test_uninstall_keeps_settings_and_games_and_purge_removes_them(pi):
    pi()
    games = pi.root / "var/lib/cubetower/cubetower.sqlite"
    games.write_text("the games")
    done = pi("--uninstall")
    assert "systemctl disable --now cubetower.service" in done.calls
    assert not (pi.root / "etc/systemd/system/cubetower.service").exists()
    assert not (pi.root / "etc/avahi/services/cubetower.service").exists()
    assert not (pi.root / "opt/cubetower").exists()
    assert games.read_text() == "the games"
    assert (pi.root / "etc/cubetower/install.env").exists()

    pi()  # installing again brings the kept settings back
    done = pi("--uninstall", "--purge")
    assert not (pi.root / "var/lib/cubetower").exists()
    assert not (pi.root / "etc/cubetower").exists()
    assert "userdel cubetower" in done.calls


def test_purge_without_uninstall_is_refused(pi):
    done = pi("--purge", check=False)
    assert done.returncode != 0 and "--purge goes with --uninstall" in done.stderr


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="no systemd-analyze here")
def test_the_installed_unit_passes_systemd_analyze_verify(pi, tmp_path):
    pi("--port", "80")
    text = unit(pi.root)
    # verify wants ExecStart's program and the EnvironmentFile to exist on this machine: point
    # them at the installed copies in the temporary root
    text = text.replace("/opt/cubetower/", f"{pi.root}/opt/cubetower/")
    text = text.replace("/etc/cubetower/install.env", f"{pi.root}/etc/cubetower/install.env")
    checked = tmp_path / "cubetower.service"
    checked.write_text(text)
    result = subprocess.run(["systemd-analyze", "verify", str(checked)], capture_output=True,
                            text=True, timeout=60)
    problems = [line for line in (result.stdout + result.stderr).splitlines()
                if "cubetower.service" in line]
    assert result.returncode == 0 and not problems, result.stdout + result.stderr
