#!/usr/bin/env bash
# The browser tests drive the system's Chromium (Playwright cannot download its own here).
# Install Debian's package when we are root and it is missing; otherwise say what to do.
set -uo pipefail
for exe in chromium chromium-browser google-chrome; do
    if command -v "$exe" >/dev/null 2>&1; then exit 0; fi
done
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "Installing Chromium for the browser tests (apt-get install chromium) ..."
    apt-get update -qq >/dev/null 2>&1 || true
    if DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null 2>&1; then
        exit 0
    fi
fi
echo "No Chromium found: the browser tests will be skipped (install it: sudo apt-get install chromium)." >&2
exit 0
