#!/usr/bin/env bash
# Set up .venv with the test and train extras, make sure a headless Chromium is there for the browser tests,
# then run ruff and the whole pytest suite. Extra arguments go to pytest.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")" && pwd)"
source "$ROOT/scripts/venv.sh" "test,train"
bash "$ROOT/scripts/ensure-chromium.sh"
cd "$ROOT"
"$VENV/bin/ruff" check .
exec "$VENV/bin/python" -m pytest "$@"
