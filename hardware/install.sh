#!/usr/bin/env bash
# Install cubetower as a service on a Raspberry Pi (Raspberry Pi OS Bookworm, 64-bit).
#
#   cd ~/cubetower && sudo hardware/install.sh [--source picamera|webcam|webcam:N|demo] [--port N]
#   sudo hardware/install.sh --uninstall [--purge]
#
# Safe to run again, e.g. after `git pull`: every setting is kept (camera source and port from the
# last run, unless given again; /etc/cubetower/config.toml as you edited it; the game data).
# --uninstall removes the service and the program, keeping settings and game data; --purge
# removes those and the service's user too.
#
# What it does:
#   1. refuses a 32-bit system (armhf): cubetower needs Raspberry Pi OS (64-bit)
#   2. apt: python3-venv, python3-picamera2 (without the desktop extras), python3-lgpio, avahi
#   3. a system user `cubetower` (not your login user) in the video and gpio groups
#   4. /opt/cubetower/venv, with --system-site-packages so the OS's picamera2 is visible, and
#      cubetower installed into it from this clone (keeping the OS's numpy: see step 2 below)
#   5. /var/lib/cubetower (data, owned by cubetower), /etc/cubetower/config.toml (settings, kept
#      if present) and /etc/cubetower/install.env (the source and port, kept on rerun)
#   6. /etc/systemd/system/cubetower.service from hardware/cubetower.service; enable + (re)start;
#      the service answers to cubetower.local itself (firmware/mdns.py; an older avahi file goes)
#   7. prints the address to open on a phone
#
# CUBETOWER_ROOT (empty on a real install) puts every system path under another directory: the
# tests run the script there, with stand-ins for systemctl, apt-get, useradd and the like.
set -euo pipefail

say() { printf '\n==> %s\n' "$*"; }
warn() { printf 'WARNING: %s\n' "$*" >&2; }
die() { printf 'ERROR: %s\n' "$*" >&2; exit 1; }

usage() {
    sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
    exit "${1:-0}"
}

SOURCE=""
PORT=""
ACTION=install
PURGE=""
while [ $# -gt 0 ]; do
    case "$1" in
        --source) [ $# -ge 2 ] || die "--source needs a value"; SOURCE="$2"; shift 2 ;;
        --source=*) SOURCE="${1#*=}"; shift ;;
        --port) [ $# -ge 2 ] || die "--port needs a value"; PORT="$2"; shift 2 ;;
        --port=*) PORT="${1#*=}"; shift ;;
        --uninstall) ACTION=uninstall; shift ;;
        --purge) PURGE=1; shift ;;
        -h|--help) usage 0 ;;
        *) warn "unknown argument: $1"; usage 2 ;;
    esac
done
[ -z "$PURGE" ] || [ "$ACTION" = uninstall ] || die "--purge goes with --uninstall"

check_source() {
    case "$1" in
        picamera|webcam|webcam:[0-9]|webcam:[0-9][0-9]|demo) ;;
        *) die "--source must be picamera, webcam, webcam:N or demo (got '$1')" ;;
    esac
}
check_port() {
    case "$1" in
        ''|*[!0-9]*) die "--port must be a number (got '$1')" ;;
    esac
    if [ "${#1}" -gt 5 ] || [ "$((10#$1))" -lt 1 ] || [ "$((10#$1))" -gt 65535 ]; then
        die "--port must be 1-65535 (got $1)"
    fi
}
# "080" is port 80: the address printed and the one kept must not carry the zero
plain_port() { echo "$((10#$1))"; }
[ -z "$SOURCE" ] || check_source "$SOURCE"
[ -z "$PORT" ] || { check_port "$PORT"; PORT="$(plain_port "$PORT")"; }

[ "$(id -u)" -eq 0 ] || die "run me with sudo:  sudo $0 $*"

# 1. A 64-bit system -----------------------------------------------------------------------------
# The userland's architecture counts (a 32-bit OS on a Pi 4 still runs a 64-bit kernel).
arch="$(dpkg --print-architecture 2>/dev/null || uname -m)"
case "$arch" in
    arm64|aarch64|amd64|x86_64) ;;
    armhf|armel|armv6l|armv7l|i386|i686)
        die "this is a 32-bit system ($arch). cubetower needs Raspberry Pi OS (64-bit): its \
OpenCV and numpy have no 32-bit ARM builds to install. Write the card again with Raspberry Pi \
Imager choosing Raspberry Pi OS Lite (64-bit) (hardware/README.md, step 1), on a Pi 3, 4 or 5." ;;
    *) warn "untested architecture $arch; carrying on" ;;
esac

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ ! -f "$REPO/pyproject.toml" ] || [ ! -f "$REPO/hardware/cubetower.service" ]; then
    die "$REPO does not look like the cubetower repository"
fi
case "$REPO" in
    *[[:space:]]*) die "the repository path '$REPO' contains spaces; clone it somewhere without" ;;
esac

R="${CUBETOWER_ROOT:-}"
SERVICE_USER=cubetower
APP=/opt/cubetower
VENV="$APP/venv"
DATA_DIR=/var/lib/cubetower
CONF_DIR=/etc/cubetower
CONF_FILE="$CONF_DIR/config.toml"
ENV_FILE="$CONF_DIR/install.env"
UNIT_FILE=/etc/systemd/system/cubetower.service
AVAHI_DIR=/etc/avahi/services
AVAHI_FILE="$AVAHI_DIR/cubetower.service"

# Uninstall ----------------------------------------------------------------------------------------
if [ "$ACTION" = uninstall ]; then
    say "Removing the cubetower service"
    systemctl disable --now cubetower.service 2>/dev/null || true
    rm -f "$R$UNIT_FILE" "$R$AVAHI_FILE"
    systemctl daemon-reload
    rm -rf "$R$APP"
    if [ -n "$PURGE" ]; then
        rm -rf "$R$DATA_DIR" "$R$CONF_DIR"
        if id -u "$SERVICE_USER" >/dev/null 2>&1; then
            userdel "$SERVICE_USER"
        fi
        echo "Removed cubetower, its settings ($CONF_DIR), its games ($DATA_DIR) and its user."
    else
        echo "Removed the service and $APP. Kept your settings in $CONF_DIR and the games in"
        echo "$DATA_DIR (sudo hardware/install.sh brings them back; --uninstall --purge removes them)."
    fi
    echo "The system packages (picamera2, avahi, ...) stay: other programs may use them."
    exit 0
fi

# The settings of the last run, which a rerun keeps unless given again: install.env, or, from an
# install made before it existed, the command line of its unit.
previous() {  # previous VAR FLAG
    local value=""
    if [ -f "$R$ENV_FILE" ]; then
        value="$(sed -n "s/^$1=//p" "$R$ENV_FILE" | tail -n 1)"
    elif [ -f "$R$UNIT_FILE" ]; then
        value="$(sed -n "s/^ExecStart=.* $2 \([^ ]*\).*/\1/p" "$R$UNIT_FILE" | tail -n 1)"
    fi
    printf '%s' "$value"
}
if [ -z "$SOURCE" ]; then
    SOURCE="$(previous CUBETOWER_SOURCE --source)"
    if [ -n "$SOURCE" ]; then
        check_source "$SOURCE"
        echo "keeping the camera source of the last install: $SOURCE"
    fi
fi
if [ -z "$PORT" ]; then
    PORT="$(previous CUBETOWER_PORT --port)"
    if [ -n "$PORT" ]; then
        check_port "$PORT"
        PORT="$(plain_port "$PORT")"
        echo "keeping the port of the last install: $PORT"
    fi
fi
SOURCE="${SOURCE:-picamera}"
PORT="${PORT:-80}"

echo "cubetower install: from $REPO into $APP, user $SERVICE_USER, camera $SOURCE, port $PORT"

# 2. System packages -------------------------------------------------------------------------------
say "Installing system packages (this can take a few minutes the first time)"
command -v apt-get >/dev/null || die "apt-get not found: this script is for Raspberry Pi OS"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
packages=(python3 python3-venv python3-pip avahi-daemon)
# picamera2 must come from the OS (it is tied to the OS's libcamera); the recommended extras
# are desktop preview windows that a Lite system does not need.
optional=(python3-picamera2 python3-lgpio rpicam-apps-lite)
for pkg in "${optional[@]}"; do
    if apt-cache show "$pkg" >/dev/null 2>&1; then
        packages+=("$pkg")
    else
        warn "package $pkg is not available here; skipping it"
    fi
done
apt-get install -y -q --no-install-recommends "${packages[@]}"

python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
    || die "cubetower needs Python 3.11 or newer; this system has $(python3 --version)"

# 3. The service's own user ------------------------------------------------------------------------
# Not the login user: on Raspberry Pi OS that one has password-less sudo, so a flaw in a web app
# running as it would own the whole Pi.
say "The service runs as the system user $SERVICE_USER"
if ! id -u "$SERVICE_USER" >/dev/null 2>&1; then
    useradd --system --user-group --home-dir "$DATA_DIR" --no-create-home \
        --shell /usr/sbin/nologin --comment "cubetower service" "$SERVICE_USER"
    echo "created the user $SERVICE_USER"
fi
groups_present=()
for group in video gpio; do
    if getent group "$group" >/dev/null; then
        groups_present+=("$group")
        if ! id -nG "$SERVICE_USER" | tr ' ' '\n' | grep -qx "$group"; then
            usermod -aG "$group" "$SERVICE_USER"
            echo "added $SERVICE_USER to the group $group"
        fi
    else
        warn "no '$group' group on this system; the service will not have it"
    fi
done

# 4. Python environment ----------------------------------------------------------------------------
say "Installing cubetower into $VENV"
install -d -m 755 "$R$APP"
# Re-running venv on an existing directory keeps the installed packages and only rewrites
# pyvenv.cfg, so this also fixes a venv made earlier without --system-site-packages.
python3 -m venv --system-site-packages "$R$VENV"
grep -q '^include-system-site-packages = true' "$R$VENV/pyvenv.cfg" \
    || die "$VENV does not see the system packages; delete it and run this script again"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# Keep numpy at the version the OS's picamera2 was compiled against (see the script).
bash "$REPO/scripts/pi-constraints.sh" > "$work/constraints.txt"
[ -s "$work/constraints.txt" ] && echo "keeping the system's $(head -n 1 "$work/constraints.txt")"
# Build from a copy, so that pip, running as root, leaves no root-owned build files in the clone.
mkdir "$work/src"
tar -C "$REPO" --exclude=./.git --exclude=./.venv --exclude=./.venv-pi --exclude=./build \
    -cf - . | tar -C "$work/src" -xf -
"$R$VENV/bin/python" -m pip install --quiet --upgrade pip
"$R$VENV/bin/python" -m pip install --quiet --constraint "$work/constraints.txt" \
    --force-reinstall --no-deps "$work/src"
"$R$VENV/bin/python" -m pip install --quiet --constraint "$work/constraints.txt" "$work/src"
[ -x "$R$VENV/bin/cubetower" ] || die "pip did not install the cubetower command into $VENV/bin"
if [ "$SOURCE" = picamera ]; then
    "$R$VENV/bin/python" -c 'import picamera2' 2>/dev/null \
        || warn "the venv cannot import picamera2; is python3-picamera2 installed?"
fi

# 5. Data and settings -----------------------------------------------------------------------------
say "Data in $DATA_DIR, settings in $CONF_DIR"
install -d -m 750 "$R$DATA_DIR"
# also what an earlier install made as the login user: the service must be able to write it
chown -R "$SERVICE_USER:$SERVICE_USER" "$R$DATA_DIR"
install -d -m 755 "$R$CONF_DIR"
if [ ! -f "$R$CONF_FILE" ]; then
    cat > "$R$CONF_FILE" <<'EOF'
# cubetower settings. After editing: sudo systemctl restart cubetower
# The camera source and the port are in /etc/cubetower/install.env (the service passes them on
# its command line, where they win over this file): re-run hardware/install.sh with --source /
# --port to change them. The command line also sets data_dir (/var/lib/cubetower, the only
# folder the service may write) and [server] host (0.0.0.0), so those keys do nothing here.

# The front panel (buttons, LEDs, tray light); pins are BCM numbers, see hardware/wiring.md.
# Uncomment a line to change it; the values shown are the defaults.
[panel]
# enabled = true
# read_now_pin = 17
# undo_pin = 27
# next_pin = 22
# status_led_pin = 5
# error_led_pin = 6
# light_enabled = true
# light_pin = 18
# light_brightness = 1.0
# hold_time = 2.0
EOF
    chmod 644 "$R$CONF_FILE"
    echo "wrote $CONF_FILE"
else
    echo "keeping your $CONF_FILE"
fi
cat > "$R$ENV_FILE" <<EOF
# Written by hardware/install.sh, which keeps these on a rerun: run it again with --source /
# --port to change them (or edit here, then: sudo systemctl restart cubetower).
CUBETOWER_SOURCE=$SOURCE
CUBETOWER_PORT=$PORT
EOF
chmod 644 "$R$ENV_FILE"

# 6. systemd unit and mDNS ------------------------------------------------------------------------
say "Installing and starting the cubetower service"
escape() { printf '%s' "$1" | sed -e 's/[\/&|\\]/\\&/g'; }
unit_tmp="$work/cubetower.service"
sed -e "s|@USER@|$SERVICE_USER|g" \
    -e "s|@APP@|$(escape "$APP")|g" \
    -e "s|@REPO@|$(escape "$REPO")|g" \
    -e "s|@GROUPS@|${groups_present[*]:-}|g" \
    "$REPO/hardware/cubetower.service" > "$unit_tmp"
if grep -q '@[A-Z]*@' "$unit_tmp"; then
    die "the unit template has a placeholder this script does not know"
fi
install -D -m 644 "$unit_tmp" "$R$UNIT_FILE"
if command -v systemd-analyze >/dev/null && [ -z "$R" ]; then
    systemd-analyze verify "$UNIT_FILE" || warn "systemd-analyze found problems in $UNIT_FILE"
fi
# The service itself answers to cubetower.local and announces its page (firmware/mdns.py,
# [server] mdns_name), whatever the Pi is called; an avahi service file of an older install would
# list the page twice.
rm -f "$R$AVAHI_FILE"

systemctl daemon-reload
systemctl enable cubetower.service >/dev/null
# Stop a running copy first so the camera check below finds the camera free.
systemctl stop cubetower.service 2>/dev/null || true

if [ "$SOURCE" = picamera ]; then
    say "Checking the camera"
    lister=""
    for cmd in rpicam-hello libcamera-hello; do
        if command -v "$cmd" >/dev/null; then lister="$cmd"; break; fi
    done
    if [ -z "$lister" ]; then
        warn "rpicam-hello is not installed; cannot check the camera"
    else
        cams="$("$lister" --list-cameras 2>&1 || true)"
        if printf '%s' "$cams" | grep -qi 'no cameras available'; then
            warn "no camera found. Check the ribbon cable (see hardware/README.md, troubleshooting)"
        else
            printf '%s\n' "$cams" | grep -E '^[0-9]+ :' || true
        fi
    fi
fi

started_at="$(date +%s)"
systemctl start cubetower.service

# 7. The address -------------------------------------------------------------------------------------
sleep 2
if systemctl is-active --quiet cubetower.service; then
    state="running"
    # running is not yet serving the game: the fault page (a mistake in the settings) and a
    # camera that will not open both answer /api/health with what is wrong
    for _ in 1 2 3 4 5 6 7 8 9 10; do
        problem="$(python3 - "$PORT" <<'PYEOF' 2>/dev/null
import json, sys, urllib.error, urllib.request
try:
    urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/api/health", timeout=2)
except urllib.error.HTTPError as answer:
    try:
        body = json.load(answer)
    except ValueError:
        body = {}
    camera = body.get("camera") if isinstance(body.get("camera"), dict) else {}
    print(body.get("error") or camera.get("problem") or f"health answers {answer.code}")
    sys.exit(3)
except OSError:
    sys.exit(1)
PYEOF
)" && break
        [ $? -eq 3 ] && { state="running, but: $problem"; break; }
        sleep 1
    done
else
    state="NOT running; see: journalctl -u cubetower -n 50"
fi

suffix=""
[ "$PORT" = 80 ] || suffix=":$PORT"
ip_addr="$(hostname -I 2>/dev/null | tr ' ' '\n' | grep -E '^[0-9]+(\.[0-9]+){3}$' | head -n 1 || true)"
# the name the service answers to by mDNS ([server] mdns_name); "" there: the Pi's own name
name="$(python3 -c 'import sys, tomllib
print(tomllib.load(open(sys.argv[1], "rb")).get("server", {}).get("mdns_name", "cubetower"))' \
    "$R$CONF_FILE" 2>/dev/null || echo cubetower)"
# another table on this network may answer to that name already: the service then takes
# <name>-2, ... and logs the name it took ("announced <name>.local at ..."; firmware/mdns.py)
if [ -n "$name" ]; then
    for _ in 1 2 3 4 5; do
        taken="$(journalctl -u cubetower.service -o cat --since "@$started_at" 2>/dev/null \
            | sed -n 's/.* announced \([A-Za-z0-9-]*\)\.local at .*/\1/p' | tail -n 1 || true)"
        [ -n "$taken" ] && { name="$taken"; break; }
        sleep 1
    done
else
    name="$(hostname 2>/dev/null || echo cubetower)"
fi
url="http://${ip_addr:-$name.local}$suffix/"
# the service makes the table code at its first start: phones need it to play, not to watch
for _ in 1 2 3 4 5 6 7 8 9 10; do [ -s "$R$DATA_DIR/table-code" ] && break; sleep 1; done
code="$(cat "$R$DATA_DIR/table-code" 2>/dev/null || true)"
say "Done. The cubetower service is $state."
cat <<EOF

Open this on a phone on the same Wi-Fi:

    $url
    (or http://$name.local$suffix/ where .local names work)

join code: ${code:-(see: journalctl -u cubetower | grep 'join code')}
Scan the QR code below to join the table (the code is in its link).

Logs:     journalctl -u cubetower -f
Restart:  sudo systemctl restart cubetower
Settings: $CONF_FILE (camera and port: $ENV_FILE)
Remove:   sudo hardware/install.sh --uninstall
EOF
"$R$VENV/bin/python" - "$url${code:+?code=$code}" <<'EOF' 2>/dev/null || true
import sys

import qrcode

qr = qrcode.QRCode(border=1)
qr.add_data(sys.argv[1])
qr.print_ascii(invert=True)
EOF
