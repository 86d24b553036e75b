#!/usr/bin/env bash
# Installs what the high-availability tests in test/faults start next to the private PostgreSQL
# clusters (PgBouncer, Patroni, etcd) with apt-get when they are missing.
set -euo pipefail
missing=()
command -v pgbouncer >/dev/null 2>&1 || [ -x /usr/sbin/pgbouncer ] || missing+=(pgbouncer)
command -v patroni >/dev/null 2>&1 || missing+=(patroni)
command -v etcd >/dev/null 2>&1 || missing+=(etcd-server)
if [ ${#missing[@]} = 0 ]; then exit 0; fi
echo "installing ${missing[*]} with apt-get for the HA tests" >&2
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${missing[@]}"
