#!/usr/bin/env bash
# Programs some tests drive, from Debian's packages: Chromium for the browser tests (Playwright
# cannot download its own here) and OpenSCAD for the camera mount's tests (its parts render to
# solids that print). Each is installed when we are root and it is missing; otherwise this says
# what to do, and those tests are skipped (CI fails them instead: tests/conftest.py for Chromium,
# tests/firmware/test_hardware_files.py for OpenSCAD).
set -uo pipefail

ensure() {  # PACKAGE WHAT-FOR COMMAND...
    local package=$1 what=$2 exe
    shift 2
    for exe in "$@"; do
        if command -v "$exe" >/dev/null 2>&1; then return 0; fi
    done
    if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
        echo "Installing $package for $what (apt-get install $package) ..."
        [ -n "${APT_UPDATED:-}" ] || { apt-get update -qq >/dev/null 2>&1 || true; APT_UPDATED=1; }
        if DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$package" >/dev/null 2>&1; then
            return 0
        fi
    fi
    echo "No $package found: $what will be skipped (install it: sudo apt-get install $package)." >&2
}

ensure chromium "the browser tests" chromium chromium-browser google-chrome
ensure openscad "the camera mount's tests" openscad
exit 0
