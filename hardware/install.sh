#!/usr/bin/env bash
# Install cubetower as a service on a Raspberry Pi (Raspberry Pi OS Bookworm, 64-bit).
#
#   cd ~/cubetower && sudo hardware/install.sh [--source picamera|webcam|webcam:N] [--port N]
#
# Run it from your clone of the repository, with sudo, as the user who owns the clone (not from
# a root shell): the service runs as that user. Safe to run again, e.g. after `git pull`.
#
# What it does:
#   1. apt: python3-venv, python3-picamera2 (without the desktop extras), python3-lgpio
#   2. .venv in the repo, with --system-site-packages so the OS's picamera2 is visible,
#      and the project installed into it (keeping the OS's numpy: see step 2 below)
#   3. adds the user to the video and gpio groups
#   4. /var/lib/cubetower (data) and /etc/cubetower/config.toml (settings, kept if present)
#   5. /etc/systemd/system/cubetower.service from hardware/cubetower.service; enable + (re)start
#   6. prints the address to open on a phone
set -euo pipefail

say() { printf '\n==> %s\n' "$*"; }
warn() { printf 'WARNING: %s\n' "$*" >&2; }
die() { printf 'ERROR: %s\n' "$*" >&2; exit 1; }

usage() {
    sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'
    exit "${1:-0}"
}

SOURCE=picamera
PORT=8000
while [ $# -gt 0 ]; do
    case "$1" in
        --source) [ $# -ge 2 ] || die "--source needs a value"; SOURCE="$2"; shift 2 ;;
        --source=*) SOURCE="${1#*=}"; shift ;;
        --port) [ $# -ge 2 ] || die "--port needs a value"; PORT="$2"; shift 2 ;;
        --port=*) PORT="${1#*=}"; shift ;;
        -h|--help) usage 0 ;;
        *) warn "unknown argument: $1"; usage 2 ;;
    esac
done
case "$SOURCE" in
    picamera|webcam|webcam:[0-9]*|demo) ;;
    *) die "--source must be picamera, webcam, webcam:N or demo (got '$SOURCE')" ;;
esac
case "$PORT" in
    ''|*[!0-9]*) die "--port must be a number (got '$PORT')" ;;
esac
if [ "$PORT" -lt 1 ] || [ "$PORT" -gt 65535 ]; then
    die "--port must be 1-65535 (got $PORT)"
fi

[ "$(id -u)" -eq 0 ] || die "run me with sudo:  sudo $0 $*"

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ ! -f "$REPO/pyproject.toml" ] || [ ! -f "$REPO/hardware/cubetower.service" ]; then
    die "$REPO does not look like the cubetower repository"
fi

RUN_USER="${SUDO_USER:-}"
if [ -z "$RUN_USER" ] || [ "$RUN_USER" = root ]; then
    RUN_USER="$(stat -c %U "$REPO")"
fi
[ "$RUN_USER" != root ] \
    || die "the service should not run as root; clone the repo as your normal user and run: sudo $0"
id "$RUN_USER" >/dev/null 2>&1 || die "user '$RUN_USER' does not exist"
REPO_OWNER="$(stat -c %U "$REPO")"
[ "$REPO_OWNER" = "$RUN_USER" ] \
    || die "$REPO belongs to '$REPO_OWNER', not to '$RUN_USER'; run install.sh as its owner"

as_user() { sudo -u "$RUN_USER" -H -- "$@"; }

VENV="$REPO/.venv"
DATA_DIR=/var/lib/cubetower
CONF_DIR=/etc/cubetower
CONF_FILE="$CONF_DIR/config.toml"
UNIT_FILE=/etc/systemd/system/cubetower.service

echo "cubetower install: repo $REPO, user $RUN_USER, camera source $SOURCE, port $PORT"

# 1. System packages ---------------------------------------------------------------------------
say "Installing system packages (this can take a few minutes the first time)"
command -v apt-get >/dev/null || die "apt-get not found: this script is for Raspberry Pi OS"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
packages=(python3 python3-venv python3-pip)
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

# 2. Python environment ------------------------------------------------------------------------
say "Setting up $VENV"
if [ -e "$VENV" ] && [ "$(stat -c %U "$VENV")" != "$RUN_USER" ]; then
    die "$VENV belongs to $(stat -c %U "$VENV"), not $RUN_USER (was it made with sudo?); \
remove it (sudo rm -rf $VENV) and run this script again"
fi
# Re-running venv on an existing directory keeps the installed packages and only rewrites
# pyvenv.cfg, so this also fixes a .venv made earlier without --system-site-packages.
as_user python3 -m venv --system-site-packages "$VENV"
grep -q '^include-system-site-packages = true' "$VENV/pyvenv.cfg" \
    || die "$VENV does not see the system packages; delete it and run this script again"

# Keep numpy at the version the OS's picamera2 was compiled against (see the script).
CONSTRAINTS="$(mktemp)"
trap 'rm -f "$CONSTRAINTS"' EXIT
chmod 644 "$CONSTRAINTS"
bash "$REPO/scripts/pi-constraints.sh" > "$CONSTRAINTS"
[ -s "$CONSTRAINTS" ] && echo "keeping the system's $(head -n 1 "$CONSTRAINTS")"
as_user "$VENV/bin/python" -m pip install --quiet --upgrade pip
as_user "$VENV/bin/python" -m pip install --quiet --constraint "$CONSTRAINTS" -e "$REPO"
[ -x "$VENV/bin/cubetower" ] || die "pip did not install the cubetower command into $VENV/bin"
if [ "$SOURCE" = picamera ]; then
    as_user "$VENV/bin/python" -c 'import picamera2' 2>/dev/null \
        || warn "the venv cannot import picamera2; is python3-picamera2 installed?"
fi

# 3. Groups ------------------------------------------------------------------------------------
say "Giving $RUN_USER access to the camera and GPIO"
groups_present=()
for group in video gpio; do
    if getent group "$group" >/dev/null; then
        groups_present+=("$group")
        if ! id -nG "$RUN_USER" | tr ' ' '\n' | grep -qx "$group"; then
            usermod -aG "$group" "$RUN_USER"
            echo "added $RUN_USER to group $group (applies to new logins; the service has it now)"
        fi
    else
        warn "no '$group' group on this system; skipping it"
    fi
done

# 4. Data and config -----------------------------------------------------------------------------
say "Data in $DATA_DIR, settings in $CONF_FILE"
install -d -m 755 -o "$RUN_USER" -g "$(id -gn "$RUN_USER")" "$DATA_DIR"
install -d -m 755 "$CONF_DIR"
if [ ! -f "$CONF_FILE" ]; then
    cat > "$CONF_FILE" <<'EOF'
# cubetower settings. After editing: sudo systemctl restart cubetower
# The service passes --source, --host, --port and --data-dir on its command line; those win
# over this file (re-run hardware/install.sh with --source / --port to change them).

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
    chmod 644 "$CONF_FILE"
    echo "wrote $CONF_FILE"
else
    echo "keeping your $CONF_FILE"
fi

# 5. systemd unit ------------------------------------------------------------------------------
say "Installing and starting the cubetower service"
escape() { printf '%s' "$1" | sed -e 's/[\/&|\\]/\\&/g'; }
case "$REPO" in
    *[[:space:]]*) die "the repository path '$REPO' contains spaces; clone it somewhere without" ;;
esac
unit_tmp="$(mktemp)"
sed -e "s|@USER@|$(escape "$RUN_USER")|g" \
    -e "s|@REPO@|$(escape "$REPO")|g" \
    -e "s|@GROUPS@|${groups_present[*]:-}|g" \
    -e "s|@SOURCE@|$(escape "$SOURCE")|g" \
    -e "s|@PORT@|$PORT|g" \
    "$REPO/hardware/cubetower.service" > "$unit_tmp"
if grep -q '@[A-Z]*@' "$unit_tmp"; then
    rm -f "$unit_tmp"
    die "the unit template has a placeholder this script does not know"
fi
install -m 644 "$unit_tmp" "$UNIT_FILE"
rm -f "$unit_tmp"
if command -v systemd-analyze >/dev/null; then
    systemd-analyze verify "$UNIT_FILE" || warn "systemd-analyze found problems in $UNIT_FILE"
fi
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

systemctl start cubetower.service

# 6. The address ----------------------------------------------------------------------
sleep 2
if systemctl is-active --quiet cubetower.service; then
    state="running"
else
    state="NOT running; see: journalctl -u cubetower -n 50"
fi

ip_addr="$(hostname -I 2>/dev/null | tr ' ' '\n' | grep -E '^[0-9]+(\.[0-9]+){3}$' | head -n 1 || true)"
url="http://${ip_addr:-$(hostname).local}:$PORT/"
# the service makes the table code at its first start: phones need it to play, not to watch
for _ in 1 2 3 4 5 6 7 8 9 10; do [ -s "$DATA_DIR/table-code" ] && break; sleep 1; done
code="$(cat "$DATA_DIR/table-code" 2>/dev/null || true)"
say "Done. The cubetower service is $state."
cat <<EOF

Open this on a phone on the same Wi-Fi:

    $url
    (or http://$(hostname).local:$PORT/ where .local names work)

join code: ${code:-(see: journalctl -u cubetower | grep 'join code')}
Scan the QR code below to join the table (the code is in its link).

Logs:     journalctl -u cubetower -f
Restart:  sudo systemctl restart cubetower
Settings: $CONF_FILE
EOF
as_user "$VENV/bin/python" - "$url${code:+?code=$code}" <<'EOF' 2>/dev/null || true
import sys

import qrcode

qr = qrcode.QRCode(border=1)
qr.add_data(sys.argv[1])
qr.print_ascii(invert=True)
EOF
