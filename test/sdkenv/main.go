// Command sdkenv starts a throw-away Queen environment for the JavaScript and Python SDK test suites:
// a private PostgreSQL from the machine's binaries, two brokers and three proxy listeners, all on free
// loopback ports. It prints one JSON line on stdout once everything answers, then serves until its
// standard input closes or it receives SIGINT/SIGTERM, and removes everything it made.
//
// The JSON line:
//
//	{
//	  "broker":         "http://127.0.0.1:P1",  // JWT off: every route open; has an encryption key
//	  "authBroker":     "http://127.0.0.1:P2",  // JWT on (HS256, jwtSecret); the proxies forward here
//	  "jwtSecret":      "…",                    // HS256 secret of authBroker
//	  "adminToken":     "…",                    // a JWT with the admin role for authBroker (24 h)
//	  "proxy":          "http://127.0.0.1:P3",  // cluster with a generous plan
//	  "proxyThrottled": "http://127.0.0.2:P4",  // cluster whose plan allows `requestRate` requests/s
//	  "proxyExhausted": "http://127.0.0.3:P5",  // cluster whose monthly message quota is used up
//	  "keys": {
//	    "readWrite": "…",  // proxy key with the read-write role: pushes, pops, acks
//	    "readOnly":  "…",  // proxy key with the read-only role: a push answers 403 (the broker's, no code)
//	    "throttled": "…",  // read-write key of the throttled cluster: a burst answers 429 + Retry-After
//	    "exhausted": "…"   // read-write key of the exhausted cluster: every push answers the proxy's own
//	                       // 403 {"code":"quota_exceeded"}, every /api/v1/traces route 403 {"code":"feature_gated"};
//	                       // pops still work
//	  },
//	  "maxPayloadBytes": 65536,  // a larger body through "proxy" answers 413 payload_too_large
//	  "requestRate": 1, "requestBurst": 2
//	}
//
// Usage: `go run ./test/sdkenv` from the repository root (the SDK test scripts do this).
package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/queen-go/queen/internal/broker"
	"github.com/queen-go/queen/internal/config"
	"github.com/queen-go/queen/internal/pgcluster"
	"github.com/queen-go/queen/internal/proxy"
	"github.com/queen-go/queen/internal/proxy/proxystore"
)

const (
	maxPayloadBytes = 64 << 10
	requestRate     = 1
	requestBurst    = 2
)

type env struct {
	Broker          string            `json:"broker"`
	AuthBroker      string            `json:"authBroker"`
	JWTSecret       string            `json:"jwtSecret"`
	AdminToken      string            `json:"adminToken"`
	Proxy           string            `json:"proxy"`
	ProxyThrottled  string            `json:"proxyThrottled"`
	ProxyExhausted  string            `json:"proxyExhausted"`
	Keys            map[string]string `json:"keys"`
	MaxPayloadBytes int               `json:"maxPayloadBytes"`
	RequestRate     float64           `json:"requestRate"`
	RequestBurst    float64           `json:"requestBurst"`
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() { // the parent test runner closing our stdin is the normal way to end
		_, _ = io.Copy(io.Discard, bufio.NewReader(os.Stdin))
		stop()
	}()
	if err := run(ctx, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "sdkenv:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer) error {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	dir, err := os.MkdirTemp("", "queen-sdkenv-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	// As root the cluster runs as the postgres user, which must traverse into dir.
	if err := os.Chmod(dir, 0o711); err != nil {
		return err
	}
	startCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	pg, err := pgcluster.Start(startCtx, pgcluster.Options{DataDir: filepath.Join(dir, "data"), Logger: log})
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = pg.Stop(sctx)
	}()
	dbURL := pg.URL("postgres")
	secret := randomHex(24)

	// The open broker has an encryption key so that the SDKs can configure every queue option, and
	// sweeps maxWaitTimeSeconds every half second so that the suites can see an eviction.
	open, err := startBroker(startCtx, log, map[string]string{
		"DATABASE_URL": dbURL, "FILE_BUFFER_DIR": filepath.Join(dir, "spool-open"),
		"QUEEN_ENCRYPTION_KEY": randomHex(32), "EVICTION_INTERVAL": "500"}, "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer shutdown(open)
	authed, err := startBroker(startCtx, log, map[string]string{
		"DATABASE_URL": dbURL, "FILE_BUFFER_DIR": filepath.Join(dir, "spool-auth"),
		"JWT_ENABLED": "true", "JWT_ALGORITHM": "HS256", "JWT_SECRET": secret}, "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer shutdown(authed)
	authURL := "http://" + authed.Addr()

	st, err := proxystore.Open(startCtx, dbURL, "")
	if err != nil {
		return err
	}
	defer st.Close()
	srv, err := proxy.NewServer(proxy.Options{Store: st, Logger: log, Registry: prometheus.NewRegistry(),
		JWTSecret: []byte(secret), MaxBodyBytes: 1 << 20, UpstreamTimeout: 30 * time.Second})
	if err != nil {
		return err
	}
	// Clusters are chosen by the Host header without its port, so every cluster but the first gets an
	// address of its own in the loopback range.
	proxyURL, err := serve(ctx, srv, "127.0.0.1:0")
	if err != nil {
		return err
	}
	throttledURL, err := serve(ctx, srv, "127.0.0.2:0")
	if err != nil {
		return err
	}
	exhaustedURL, err := serve(ctx, srv, "127.0.0.3:0")
	if err != nil {
		return err
	}
	keys, err := provision(startCtx, st, authURL)
	if err != nil {
		return err
	}
	e := env{
		Broker: "http://" + open.Addr(), AuthBroker: authURL, JWTSecret: secret,
		AdminToken: adminToken(secret), Proxy: proxyURL, ProxyThrottled: throttledURL,
		ProxyExhausted: exhaustedURL, Keys: keys,
		MaxPayloadBytes: maxPayloadBytes, RequestRate: requestRate, RequestBurst: requestBurst,
	}
	if err := json.NewEncoder(out).Encode(e); err != nil {
		return err
	}
	<-ctx.Done()
	return nil
}

func startBroker(ctx context.Context, log *slog.Logger, vars map[string]string, addr string) (*broker.Broker, error) {
	cfg, err := config.Load(func(k string) string { return vars[k] })
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	return broker.Start(ctx, cfg, log, ln)
}

func shutdown(b *broker.Broker) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = b.Shutdown(ctx)
}

// serve runs h on a new listener at addr until ctx ends and returns its base URL.
func serve(ctx context.Context, h http.Handler, addr string) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("listen %s: %w", addr, err)
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	go func() {
		<-ctx.Done()
		_ = hs.Close()
	}()
	return "http://" + ln.Addr().String(), nil
}

// provision creates the clusters, their plans and the keys the SDK suites use.
func provision(ctx context.Context, st *proxystore.Store, upstream string) (map[string]string, error) {
	plans := []proxystore.Plan{
		{Name: "generous", MaxPayloadBytes: maxPayloadBytes, MaxBatchItems: 10000, FeatureStreams: true, FeatureTraces: true},
		{Name: "throttled", MaxPayloadBytes: maxPayloadBytes, MaxBatchItems: 10000, RequestRate: requestRate,
			RequestBurst: requestBurst, FeatureStreams: true, FeatureTraces: true},
		{Name: "exhausted", MaxPayloadBytes: maxPayloadBytes, MaxBatchItems: 10000, MonthlyMessageQuota: 1,
			FeatureStreams: true, FeatureTraces: false},
	}
	for _, p := range plans {
		if _, err := proxy.CreatePlan(ctx, st, p); err != nil {
			return nil, fmt.Errorf("plan %s: %w", p.Name, err)
		}
	}
	clusters := []proxystore.CreateClusterParams{
		{Name: "sdk", Hosts: []string{"127.0.0.1"}, UpstreamURL: upstream, Plan: "generous"},
		{Name: "sdk-throttled", Hosts: []string{"127.0.0.2"}, UpstreamURL: upstream, Plan: "throttled"},
		{Name: "sdk-exhausted", Hosts: []string{"127.0.0.3"}, UpstreamURL: upstream, Plan: "exhausted"},
	}
	for _, c := range clusters {
		id, err := proxy.CreateCluster(ctx, st, c)
		if err != nil {
			return nil, fmt.Errorf("cluster %s: %w", c.Name, err)
		}
		if c.Plan != "exhausted" {
			continue
		}
		// The quota is used up from the start (this month and the next, should a run cross midnight at
		// a month's end), so no push of the suites can spend it first.
		now := time.Now()
		for _, m := range []time.Time{now, now.AddDate(0, 1, -now.Day()+1)} {
			if err := st.AddUsage(ctx, id, proxystore.Month(m), 1, 0); err != nil {
				return nil, fmt.Errorf("cluster %s: %w", c.Name, err)
			}
		}
	}
	keys := map[string]string{}
	for _, k := range []struct{ name, cluster, role string }{
		{"readWrite", "sdk", "read-write"}, {"readOnly", "sdk", "read-only"}, {"throttled", "sdk-throttled", "read-write"},
		{"exhausted", "sdk-exhausted", "read-write"},
	} {
		_, token, err := proxy.CreateKey(ctx, st, k.cluster, k.name, []string{k.role})
		if err != nil {
			return nil, fmt.Errorf("key %s: %w", k.name, err)
		}
		keys[k.name] = token
	}
	return keys, nil
}

func adminToken(secret string) string {
	claims := jwt.MapClaims{"sub": "sdk-tests", "roles": []string{"admin"},
		"exp": time.Now().Add(24 * time.Hour).Unix(), "iat": time.Now().Unix()}
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString([]byte(secret))
	if err != nil {
		panic(err) // HS256 with a byte key cannot fail
	}
	return s
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
