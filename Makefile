# Queen: a partitioned message queue on PostgreSQL.
export GOTOOLCHAIN := local
GO ?= go

.PHONY: build run test test-js test-python vet fmt-check clean gen bench fuzz fuzz-ci web dashboard-shots

build:
	$(GO) build -buildvcs=auto -o bin/queen ./cmd/queen
	$(GO) build -buildvcs=auto -o bin/queen-proxy ./cmd/queen-proxy
	$(GO) build -ldflags "-X github.com/queen-go/queen/internal/ctl.Version=$$(git describe --tags --always --dirty 2>/dev/null || echo dev)" -o bin/queenctl ./cmd/queenctl

# Serves the API on :6632. With no DATABASE_URL / PG_* set, it starts an embedded PostgreSQL from the
# machine's binaries (installing them with apt-get first when they are missing) in ./queen-data.
run: build
	@bash scripts/ensure-postgres.sh
	./bin/queen serve

SLOW_PACKAGES = ./test/faults ./internal/httpapi ./internal/engine ./internal/store ./client ./internal/webui
# Tests start a private PostgreSQL themselves (or use QUEEN_TEST_DATABASE_URL).
test: vet fmt-check
	@bash scripts/ensure-postgres.sh
	@bash scripts/ensure-chromium.sh
	@bash scripts/ensure-ha.sh
	@# The slowest packages first, so that the two slots end together rather than one running alone.
	$(GO) test -race -count=1 -short -timeout 20m $(SLOW_PACKAGES) ./...
	@# Rate-holding load tests measure wall-clock rates: they run alone, after the parallel suite.
	$(GO) test -race -count=1 -timeout 5m -run 'TestLoad' ./internal/proxy/
	@$(MAKE) --no-print-directory test-js test-python

# The JavaScript SDK (sdks/js): unit tests and integration tests against test/sdkenv.
test-js:
	@bash scripts/test-js.sh

# The Python SDK (sdks/python): unit tests and integration tests against test/sdkenv.
test-python:
	@bash scripts/test-python.sh

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l .); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

# Native Go fuzzing of every request decoder (push, ack, transaction, configure bodies, the pop query
# string, JWT parsing), the proxy's request path and the framing guard, against the real handlers and
# PostgreSQL: no input may panic or answer 5xx.
# Each target runs for FUZZTIME (default 10m: the documented local run); fuzz-ci runs each for 5 000
# inputs (10 000 take 13-22 s per body, query and proxy target on a 2-core machine, too long for CI's
# 15 minutes; new inputs differ per run). A count, not a duration: when a
# duration ends, Go's fuzz coordinator can report its own deadline as the failure "context deadline
# exceeded" (its deadline and its workers' context race), which failed one CI run with no failing input.
# Seeds live in testdata/fuzz/<target> and also run in `make test`.
FUZZTIME ?= 10m
FUZZTIMEOUT ?= 30m
FUZZ_TARGETS = ./internal/httpapi:FuzzPushBody ./internal/httpapi:FuzzAckBody ./internal/httpapi:FuzzTransactionBody \
	./internal/httpapi:FuzzConfigureBody ./internal/httpapi:FuzzPopQuery ./internal/auth:FuzzAuthorizeToken \
	./internal/proxy:FuzzRequestPath ./internal/httpguard:FuzzScannerFraming
# The ack paths' differential test (TestAckDifferential, 400 random histories in `make test`, new seeds each run) runs
# ACKDIFF_SEQUENCES histories here; fuzz-ci leaves it to make test.
ACKDIFF_SEQUENCES ?= 20000
fuzz:
	@bash scripts/ensure-postgres.sh
	@for t in $(FUZZ_TARGETS); do \
		echo "fuzz $$t for $(FUZZTIME)"; \
		$(GO) test -run '^$$' -fuzz "^$${t##*:}$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 10x -timeout $(FUZZTIMEOUT) $${t%%:*} || exit 1; \
	done
	@[ "$(ACKDIFF_SEQUENCES)" = 0 ] || QUEEN_ACKDIFF_SEQUENCES=$(ACKDIFF_SEQUENCES) \
		$(GO) test -count=1 -run '^TestAckDifferential$$' -timeout $(FUZZTIMEOUT) ./internal/engine/

fuzz-ci:
	@$(MAKE) --no-print-directory fuzz FUZZTIME=5000x FUZZTIMEOUT=4m ACKDIFF_SEQUENCES=0

# Regenerates generated files (docs/reference.md from the route table, docs/configuration.md from the
# variable table, docs/cli.md from queenctl's commands).
gen:
	$(GO) generate ./...

# Load test (bench/, docs/performance.md): builds ./cmd/queen, starts a private durable PostgreSQL and runs
# every scenario. BENCH_FLAGS passes options, e.g. BENCH_FLAGS='-scenarios push -duration 20s -json out.jsonl'.
bench:
	@bash scripts/ensure-postgres.sh
	$(GO) run ./bench $(BENCH_FLAGS)

# Rebuilds the dashboard (web/) into internal/webui/dist, which is committed and embedded in the binary.
web:
	cd web && npm ci --no-audit --no-fund && npm run build

# Rewrites the screenshots of docs/dashboard.md from the browser tests.
dashboard-shots:
	@bash scripts/ensure-postgres.sh
	@bash scripts/ensure-chromium.sh
	QUEEN_DASHBOARD_SHOTS=$(CURDIR)/docs/dashboard $(GO) test -count=1 -run 'TestDashboard' ./internal/webui/

clean:
	rm -rf bin
