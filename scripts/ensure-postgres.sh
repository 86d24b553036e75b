#!/usr/bin/env bash
# Installs the PostgreSQL server binaries with apt-get when none are on the machine. The broker's
# embedded mode and the test harness start their own private cluster from them.
set -euo pipefail
have_pg() {
  command -v initdb >/dev/null 2>&1 && return 0
  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1
}
if have_pg; then exit 0; fi
echo "PostgreSQL binaries not found: installing them with apt-get" >&2
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q postgresql
