#!/usr/bin/env bash
# Measures `queenctl push -f` of N JSON lines against the broker's batch-100 push rate from the load test
# (bench/, scenario push-b100), back to back on the same broker and PostgreSQL (docs/cli.md, Performance).
# Usage: bash scripts/bench-queenctl.sh [lines=1000000] [extra queenctl push flags...]
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-1000000}
shift || true
work=$(mktemp -d)
trap 'kill -INT "$bench_pid" 2>/dev/null || true; wait "$bench_pid" 2>/dev/null || true; rm -rf "$work"' EXIT

bash scripts/ensure-postgres.sh
go build -o "$work/bench" ./bench
go build -o "$work/queenctl" ./cmd/queenctl
# 28-byte JSON string payloads, the load test's default message size.
awk -v n="$N" 'BEGIN { for (i = 0; i < n; i++) printf "\"m%027d\"\n", i }' > "$work/lines.jsonl"

"$work/bench" -scenarios push-b100 -baseline=false -keep -json "$work/bench.json" > "$work/bench.log" 2>&1 &
bench_pid=$!
for _ in $(seq 1 600); do
  grep -q -- '-keep: broker' "$work/bench.log" && break
  kill -0 "$bench_pid" 2>/dev/null || { cat "$work/bench.log"; exit 1; }
  sleep 1
done
url=$(sed -n 's/^-keep: broker \([^,]*\),.*/\1/p' "$work/bench.log")
rate=$(sed -n 's/.*"push_msgs_per_s": *\([0-9.]*\).*/\1/p' "$work/bench.json" | head -1)
echo "broker push-b100 (bench): $rate msg/s"
"$work/queenctl" push "qctl-bench-$$" -f "$work/lines.jsonl" --server "$url" --progress always -o json "$@" > "$work/push.json"
cat "$work/push.json"
cli=$(sed -n 's/.*"messagesPerSecond": *\([0-9.]*\).*/\1/p' "$work/push.json")
awk -v c="$cli" -v b="$rate" 'BEGIN { printf "queenctl push -f: %.0f msg/s = %.0f%% of the broker batch-100 rate (%.0f msg/s)\n", c, 100*c/b, b }'
