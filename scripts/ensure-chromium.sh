#!/usr/bin/env bash
# Installs Debian's Chromium when no Chromium is on the machine: the dashboard's browser tests
# (internal/webui) drive it headless.
set -euo pipefail
for b in chromium chromium-browser google-chrome; do
  if command -v "$b" >/dev/null 2>&1; then exit 0; fi
done
echo "Chromium not found: installing Debian's chromium package with apt-get" >&2
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends chromium fonts-dejavu-core
