# shellcheck shell=bash
# Sourced by run.sh and test.sh: make sure a venv exists and holds the project with the given extra.
# Re-installs only when pyproject.toml or the constraints changed, so the second start is quick.
#   VENV_DIR     the venv to make (default .venv)
#   CONSTRAINTS  a pip constraints file to install under (test.sh: scripts/pi-packages.txt for
#                .venv-pi, the Raspberry Pi's numpy and OpenCV)
#   PYTHON       the interpreter to make it with (default python3)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${VENV_DIR:-$ROOT/.venv}"
EXTRA="${1:-}"
PY="${PYTHON:-python3}"

if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    echo "cubetower needs Python 3.11 or newer; '$PY' is $("$PY" --version 2>&1)." >&2
    exit 1
fi

# On a Raspberry Pi, picamera2 comes from the OS (python3-picamera2), not from PyPI.
ON_PI=""
[ -d /usr/lib/python3/dist-packages/picamera2 ] && ON_PI=1
if [ ! -x "$VENV/bin/python" ]; then
    venv_flags=()
    [ -n "$ON_PI" ] && venv_flags+=(--system-site-packages)
    echo "Creating $VENV ..."
    "$PY" -m venv "${venv_flags[@]}" "$VENV"
fi

spec="$ROOT"
[ -n "$EXTRA" ] && spec="${ROOT}[$EXTRA]"
constraints="$(mktemp)"
[ -n "$ON_PI" ] && bash "$ROOT/scripts/pi-constraints.sh" > "$constraints"
[ -n "${CONSTRAINTS:-}" ] && cat "$CONSTRAINTS" >> "$constraints"
stamp="$VENV/.cubetower-installed-$EXTRA"
want="$(cat "$ROOT/pyproject.toml" "$constraints" | sha256sum | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    echo "Installing cubetower${EXTRA:+ with [$EXTRA]} into $VENV ..."
    "$VENV/bin/python" -m pip install --quiet --upgrade pip >/dev/null 2>&1 || true
    "$VENV/bin/python" -m pip install --quiet --constraint "$constraints" -e "$spec"
    echo "$want" > "$stamp"
fi
rm -f "$constraints"
