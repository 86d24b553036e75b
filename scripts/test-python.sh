#!/usr/bin/env bash
# Runs the Python SDK's tests (sdks/python): unit tests against scripted local servers, and
# integration tests against the real broker and proxy that test/sdkenv starts. Uses Debian's
# python3 and installs python3-httpx / python3-pytest (and, for the checks before the tests, python3-mypy and
# pyflakes3) with apt when they are missing (idempotent).
set -euo pipefail
cd "$(dirname "$0")/.."

PY=/usr/bin/python3
need=()
if [ ! -x "$PY" ]; then
	need+=(python3)
fi
if [ -x "$PY" ] && ! "$PY" -c 'import httpx' 2>/dev/null; then need+=(python3-httpx); fi
if [ -x "$PY" ] && ! "$PY" -c 'import pytest' 2>/dev/null; then need+=(python3-pytest); fi
if [ -x "$PY" ] && ! "$PY" -c 'import mypy' 2>/dev/null; then need+=(python3-mypy); fi
if [ -x "$PY" ] && ! "$PY" -c 'import pyflakes' 2>/dev/null; then need+=(pyflakes3); fi
if [ ! -x "$PY" ]; then need+=(python3-httpx python3-pytest python3-mypy pyflakes3); fi
if [ ${#need[@]} -gt 0 ]; then
	echo "test-python: installing ${need[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# Build the environment binary once instead of `go run` inside the test session.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/sdkenv" ./test/sdkenv
export QUEEN_SDKENV_BIN="$tmp/sdkenv"
export PYTHONDONTWRITEBYTECODE=1

cd sdks/python
# The package ships py.typed: its annotations are checked strictly, and the tests are linted.
"$PY" -m mypy --strict --no-incremental queen_client
"$PY" -m pyflakes queen_client tests
set +e
"$PY" -m pytest -q -p no:cacheprovider tests
rc=$?
set -e
if [ "$rc" -eq 5 ]; then
	echo "test-python: pytest collected no tests" >&2
	exit 1
fi
exit "$rc"
