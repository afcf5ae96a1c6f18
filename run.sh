#!/usr/bin/env bash
# Set up .venv if needed and start the device. Without a camera it replays the bundled demo pictures.
# Any arguments go to `cubetower serve`, e.g. ./run.sh --source webcam --port 8080
set -euo pipefail
ROOT="$(cd "$(dirname "$0")" && pwd)"
source "$ROOT/scripts/venv.sh" ""
# two malloc arenas, as the Pi's service runs it (hardware/cubetower.service says why)
export MALLOC_ARENA_MAX="${MALLOC_ARENA_MAX:-2}"
exec "$ROOT/.venv/bin/cubetower" serve "$@"
