#!/usr/bin/env bash
# Runs the JavaScript SDK's tests (sdks/js). Idempotent: installs Node.js and npm from Debian only when
# missing, installs the one dev dependency (typescript, pinned by package-lock.json), compiles, refuses a
# committed dist/ that differs from the sources, builds test/sdkenv (PostgreSQL, brokers and proxies on
# loopback ports) and runs node's test runner: unit tests against scripted local servers, then integration
# tests against sdkenv.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
export GOTOOLCHAIN=local

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "test-js: installing nodejs and npm from Debian"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
fi
major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$major" -lt 20 ]; then
  echo "test-js: warning: node $(node --version) is older than the SDK's declared minimum (20)" >&2
fi

cd "$root/sdks/js"
npm ci --no-audit --no-fund --loglevel=error
npx --no-install tsc -p tsconfig.json
npx --no-install tsc -p test/tsconfig.json # the declarations type-check a consumer's code
if git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1 &&
  [ -n "$(git -C "$root" status --porcelain -- sdks/js/dist)" ]; then
  git -C "$root" status --short -- sdks/js/dist >&2
  echo "test-js: sdks/js/dist is stale: run 'npm run build' in sdks/js and commit the result" >&2
  exit 1
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && go build -o "$tmp/sdkenv" ./test/sdkenv)
QUEEN_SDKENV="$tmp/sdkenv" node --test test/unit.retry.test.js test/unit.sdk.test.js test/unit.streams.test.js test/integration.test.js test/integration.streams.test.js
