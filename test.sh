#!/usr/bin/env bash
# Run ruff and the whole pytest suite twice: in .venv (the newest numpy and OpenCV pip finds, with
# the test and train extras) and in .venv-pi (the Raspberry Pi's package set from
# scripts/pi-packages.txt: numpy 1.24, OpenCV 4.11). Both venvs are made on first use. The
# browser tests (a headless Chromium, installed here when missing and run as root) run only in
# the first pass. Extra arguments go to both pytest runs.
#   PI_PYTHON=python3.11  the interpreter for .venv-pi (the Pi's numpy needs Python 3.11)
#   PI_SUITE=0            skip the second pass
set -euo pipefail
ROOT="$(cd "$(dirname "$0")" && pwd)"
cd "$ROOT"

source "$ROOT/scripts/venv.sh" "test,train"
DEV_VENV="$VENV"
bash "$ROOT/scripts/ensure-test-tools.sh"
"$DEV_VENV/bin/ruff" check .
echo "== pytest with $("$DEV_VENV/bin/python" -c 'import cv2, numpy; print(f"OpenCV {cv2.__version__}, numpy {numpy.__version__}")')"
"$DEV_VENV/bin/python" -m pytest "$@"

[ "${PI_SUITE:-1}" = 0 ] && exit 0
pi_python="${PI_PYTHON:-}"
if [ -z "$pi_python" ]; then
    for candidate in python3.11 python3; do
        if command -v "$candidate" >/dev/null \
            && "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
            pi_python="$candidate"
            break
        fi
    done
fi
if [ -z "$pi_python" ]; then
    echo "No Python 3.11 for the Raspberry Pi pass (numpy 1.24 has no wheels for newer ones):" \
        "install python3.11 or set PI_PYTHON; PI_SUITE=0 skips this pass." >&2
    exit 1
fi
VENV_DIR="$ROOT/.venv-pi" CONSTRAINTS="$ROOT/scripts/pi-packages.txt" PYTHON="$pi_python" \
    source "$ROOT/scripts/venv.sh" "test"
echo "== pytest with $("$VENV/bin/python" -c 'import cv2, numpy; print(f"OpenCV {cv2.__version__}, numpy {numpy.__version__}")') (the Raspberry Pi's package set)"
exec "$VENV/bin/python" -m pytest -m "not browser" "$@"
