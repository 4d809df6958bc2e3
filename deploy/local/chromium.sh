#!/usr/bin/env bash
# Debian's Chromium for the console's browser tests (console/test, run headless through
# playwright-core against all-in-one). Installs the `chromium` package when the browser the
# tests use (CHROMIUM_PATH, default /usr/bin/chromium) is missing. Safe to repeat.
#   bash deploy/local/chromium.sh
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$HERE/lib.sh"

browser="${CHROMIUM_PATH:-/usr/bin/chromium}"
if [ ! -x "$browser" ]; then
  need_apt_package chromium
  apt_install_missing
fi
[ -x "$browser" ] || die chromium "no browser at $browser after installing Debian's chromium package"
log chromium "$("$browser" --version 2>/dev/null || echo "$browser")"
