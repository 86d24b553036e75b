package proxy

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/http/httputil"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/queen-go/queen/internal/httpguard"
	"github.com/queen-go/queen/internal/proxy/proxystore"
)

// DefaultMaxBodyBytes is the per-instance request body cap (16 MiB).
const DefaultMaxBodyBytes = 16 << 20

// defaultLongPollMs is the broker's pop timeout when a waiting pop names none (DEFAULT_TIMEOUT).
const defaultLongPollMs = 30000

// sessionCookie carries a dashboard session token when there is no Authorization header.
const sessionCookie = "queen_session"

// Token prefixes tell API keys from session tokens.
const (
	keyPrefix     = "qk_"
	sessionPrefix = "qs_"
)

// Options configure [NewServer].
type Options struct {
	Store           *proxystore.Store
	Logger          *slog.Logger
	Registry        *prometheus.Registry // metrics are registered here and served on /_proxy/metrics
	JWTSecret       []byte
	JWTTTL          time.Duration // default 60 s
	Shadow          bool          // rate limits log and count but forward
	MaxBodyBytes    int64         // default DefaultMaxBodyBytes
	UpstreamTimeout time.Duration // default 30 s
	AdminToken      string
	// NowFunc is the clock of the rate limiters, sessions and usage months; default time.Now.
	NowFunc func() time.Time
	// CacheTTL is how long a resolved credential (its cluster's state, plan and storage included) is
	// reused; 0 reads the database on every request. Capped at half of JWTTTL.
	CacheTTL time.Duration
	// QuotaBlock is the most messages of a monthly quota reserved ahead per cluster; 0 reserves each
	// push's own. UsageFlush is the interval at which accepted usage is written; 0 writes each push's.
	// Both batch only under [Server.Serve], which flushes and gives back what it holds at Shutdown.
	QuotaBlock int64
	UsageFlush time.Duration
	// Transport reaches the brokers; default an upstreamTransport keeping up to MaxConnsPerCluster
	// idle connections per broker.
	Transport http.RoundTripper

	// Connection limits of [Server.Serve] (zero: the defaults of [EnvVars]).
	ReadHeaderTimeout  time.Duration
	ReadTimeout        time.Duration // the whole request, body included
	WriteTimeout       time.Duration // the answer once the request is read; a waiting pop adds its timeout
	IdleTimeout        time.Duration
	MaxPollWait        time.Duration // the longest waiting-pop timeout the deadlines are extended by
	MaxConns           int
	MaxConnsPerCluster int
}

// defaultDuration is the default of one of the millisecond variables of EnvVars.
func defaultDuration(name string) time.Duration {
	for _, e := range EnvVars {
		if e.Name == name {
			ms, _ := strconv.ParseInt(e.Default, 10, 64)
			return time.Duration(ms) * time.Millisecond
		}
	}
	panic("proxy: no variable " + name)
}

func defaultInt(name string) int {
	return int(defaultDuration(name) / time.Millisecond)
}

// Server is the proxy's http.Handler.
type Server struct {
	o       Options
	log     *slog.Logger
	metrics *Metrics
	limits  *limiter
	rp      *httputil.ReverseProxy
	ops     *http.ServeMux
	conns   *connTracker
	creds   *credCache
	known   *knownCache
	ledger  *ledger
	hs      *http.Server // Serve's
	// The ledger's flush loop runs from the first Serve until Shutdown.
	ledgerCtx  context.Context
	stopLedger context.CancelFunc
	ledgerOnce sync.Once
	ledgerDone chan struct{}
}

// NewServer builds the handler.
func NewServer(o Options) (*Server, error) {
	if o.Store == nil || o.Logger == nil || o.Registry == nil {
		return nil, errors.New("proxy: Store, Logger and Registry are required")
	}
	if len(o.JWTSecret) == 0 {
		return nil, errors.New("proxy: a JWT secret is required (QUEEN_PROXY_JWT_SECRET)")
	}
	if o.JWTTTL <= 0 {
		o.JWTTTL = 60 * time.Second
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.UpstreamTimeout <= 0 {
		o.UpstreamTimeout = 30 * time.Second
	}
	if o.NowFunc == nil {
		o.NowFunc = time.Now
	}
	for _, d := range []struct {
		to   *time.Duration
		name string
	}{
		{&o.ReadHeaderTimeout, "QUEEN_PROXY_READ_HEADER_TIMEOUT_MS"}, {&o.ReadTimeout, "QUEEN_PROXY_READ_TIMEOUT_MS"},
		{&o.WriteTimeout, "QUEEN_PROXY_WRITE_TIMEOUT_MS"}, {&o.IdleTimeout, "QUEEN_PROXY_IDLE_TIMEOUT_MS"},
		{&o.MaxPollWait, "QUEEN_PROXY_MAX_POLL_MS"},
	} {
		if *d.to <= 0 {
			*d.to = defaultDuration(d.name)
		}
	}
	if o.WriteTimeout <= o.UpstreamTimeout {
		o.WriteTimeout = o.UpstreamTimeout + 15*time.Second
	}
	if o.MaxConns <= 0 {
		o.MaxConns = defaultInt("QUEEN_PROXY_MAX_CONNS")
	}
	if o.MaxConnsPerCluster <= 0 {
		o.MaxConnsPerCluster = defaultInt("QUEEN_PROXY_MAX_CONNS_PER_CLUSTER")
	}
	if o.Transport == nil {
		// https upstreams: a clone of the default keeping MaxConnsPerCluster idle connections per broker
		// (the default's 2 made every request beyond 2 concurrent ones dial anew: push b10 through the
		// proxy spent most of its 568 µs of CPU per request there).
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConns, tr.MaxIdleConnsPerHost = o.MaxConns, o.MaxConnsPerCluster
		o.Transport = newUpstreamTransport(tr, o.MaxConnsPerCluster, upstreamIdleTimeout)
	}
	m, err := NewMetrics(o.Registry)
	if err != nil {
		return nil, fmt.Errorf("proxy: register metrics: %w", err)
	}
	o.CacheTTL = min(o.CacheTTL, o.JWTTTL/2)
	s := &Server{o: o, log: o.Logger, metrics: m, limits: newLimiter(o.NowFunc),
		conns: newConnTracker(o.MaxConns, o.MaxConnsPerCluster, m), creds: newCredCache(o.CacheTTL), known: newKnownCache(o.CacheTTL),
		ledger: newLedger(o.Store, o.Logger, max(o.QuotaBlock, 0), max(o.UsageFlush, 0)), ledgerDone: make(chan struct{})}
	s.ledgerCtx, s.stopLedger = context.WithCancel(context.Background())
	s.rp = &httputil.ReverseProxy{
		Rewrite:        s.rewrite,
		Transport:      o.Transport,
		ErrorHandler:   s.upstreamError,
		ModifyResponse: s.modifyResponse,
		ErrorLog:       slog.NewLogLogger(o.Logger.Handler(), slog.LevelWarn),
		BufferPool:     &copyBuffers{},
	}
	s.hs = &http.Server{Handler: s, ReadHeaderTimeout: o.ReadHeaderTimeout, ReadTimeout: o.ReadTimeout,
		WriteTimeout: o.WriteTimeout, IdleTimeout: o.IdleTimeout, ConnContext: connContext,
		ErrorLog: slog.NewLogLogger(o.Logger.Handler(), slog.LevelWarn)}
	s.ops = http.NewServeMux()
	s.ops.Handle("GET /_proxy/metrics", promhttp.HandlerFor(o.Registry, promhttp.HandlerOpts{}))
	s.ops.HandleFunc("GET /_proxy/health", s.health)
	s.registerAdmin(s.ops)
	s.ops.HandleFunc("/_proxy/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, newError(CodeNotFound, "no such proxy route"))
	})
	return s, nil
}

// Serve answers HTTP on ln until [Server.Shutdown], once: with the configured timeouts, the
// open-connection caps and the framing guard. Handlers see ctx (its end cancels them).
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	s.hs.BaseContext = func(net.Listener) context.Context { return ctx }
	s.ledgerOnce.Do(func() {
		go func() {
			defer close(s.ledgerDone)
			s.ledger.run(s.ledgerCtx, s.o.NowFunc)
		}()
	})
	guarded := httpguard.InstallFunc(s.hs, ln, func(w http.ResponseWriter, r *http.Request) {
		s.metrics.Decisions.WithLabelValues("unknown", string(CodeBadRequest)).Inc()
		writeError(w, newError(CodeBadRequest, httpguard.Message))
	})
	return s.hs.Serve(newLimitListener(guarded, s.conns))
}

// Shutdown stops Serve: no new connections, idle ones closed, in-flight requests finished until ctx
// ends, then the rest are closed.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.hs.Shutdown(ctx)
	if err != nil {
		_ = s.hs.Close()
	}
	if ci, ok := s.o.Transport.(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
	s.stopLedger()
	started := true
	s.ledgerOnce.Do(func() { started = false })
	if started {
		<-s.ledgerDone
		// The requests are done: write what they counted and give back the unspent quota, even when
		// ctx has ended (a few statements, bounded on their own).
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		s.ledger.flush(fctx, proxystore.Month(s.o.NowFunc()), true)
	}
	return err
}

// ServeHTTP runs the request path: host → credential → cluster state → blocked routes → plan features →
// size caps → quotas → rate limits → forward.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/_proxy/") {
		s.serveOps(w, r)
		return
	}
	cluster, err := s.serveTenant(w, r)
	if err == nil {
		return
	}
	e := asError(err)
	label := cluster
	if label == "" {
		label = "unknown"
	}
	s.metrics.Decisions.WithLabelValues(label, string(e.Code)).Inc()
	if e.Code == CodeClientClosed {
		return // nobody to answer, nothing wrong to report
	}
	attrs := []any{slog.String("cluster", cluster), slog.String("code", string(e.Code)),
		slog.Int("status", e.Status()), slog.String("method", r.Method), slog.String("path", r.URL.Path)}
	if e.RetryAfter > 0 {
		attrs = append(attrs, slog.Int("retry_after", e.RetryAfter))
	}
	if e.cause != nil {
		attrs = append(attrs, slog.Any("error", e.cause))
	}
	if e.Code == CodeInternalError {
		s.log.ErrorContext(r.Context(), "proxy request failed", attrs...)
	} else {
		s.log.WarnContext(r.Context(), "proxy denied request", attrs...)
	}
	writeError(w, e)
}

// request is what the checks learn about one tenant request.
type request struct {
	cluster  proxystore.Cluster
	cred     proxystore.Credential
	token    string // the JWT forwarded in place of the credential
	path     string // cleaned
	body     []byte
	push     *pushBody // non-nil for a parseable POST /api/v1/push
	park     bool      // a waiting pop
	timeout  time.Duration
	upstream string
	month    string // usage month of this request (YYYY-MM), fixed at admission
	reserved int64  // messages taken from the monthly quota and not yet settled
	// Under a plan with ceilings: the pushed partitions, and whether all were known at admission (a
	// push of them then creates nothing and needs no record).
	parts      []proxystore.QueuePartition
	partsKnown bool
}

func (s *Server) serveTenant(w http.ResponseWriter, r *http.Request) (string, error) {
	ctx := r.Context()
	e, err := s.resolve(ctx, r)
	c := e.cluster
	if err != nil {
		return c.Name, err
	}
	req := &request{cluster: c, cred: e.cred, token: e.token}
	if err := s.conns.attach(r, c.ID, c.Name); err != nil {
		return c.Name, err
	}
	if c.State != proxystore.StateActive {
		return c.Name, newError(CodeClusterSuspended, "cluster is "+c.State)
	}
	req.path = cleanPath(r.URL.Path)
	if blocked(req.path, c.Plan) {
		return c.Name, newError(CodeRouteBlocked, "")
	}
	if f := gatedFeature(req.path, c.Plan); f != "" {
		return c.Name, newError(CodeFeatureGated, "plan feature "+f+" is off")
	}
	if err := s.readBody(r, req); err != nil {
		return c.Name, err
	}
	// The request is read: the read deadline has done its job and, left in place, would cancel a long
	// answer's context; the answer gets the write timeout, plus a waiting pop's own (bounded) timeout.
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Now().Add(s.o.WriteTimeout + req.timeout))
	req.month = proxystore.Month(s.o.NowFunc())
	if err := s.checkQuotas(ctx, r, req); err != nil {
		return c.Name, err
	}
	defer s.releaseReserved(context.WithoutCancel(ctx), req)
	release, err := s.rateLimit(r, req)
	if err != nil {
		return c.Name, err
	}
	defer release()
	return c.Name, s.forward(w, r, req)
}

// credentialToken returns the bearer token, or the session cookie when there is no Authorization header.
func credentialToken(r *http.Request) string {
	if h := r.Header.Get("Authorization"); h != "" {
		if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
			return strings.TrimSpace(h[7:])
		}
		return ""
	}
	if ck, err := r.Cookie(sessionCookie); err == nil {
		return ck.Value
	}
	return ""
}

// resolve maps the Host to a cluster (421 cluster_unknown) and then authenticates the API key or
// session against it (401 unauthorized). An API key costs one database round trip in all, and none
// while its resolution is cached; the entry carries the token forwarded for it.
func (s *Server) resolve(ctx context.Context, r *http.Request) (credEntry, error) {
	tok := credentialToken(r)
	k := credKey{host: r.Host, sum: sha256.Sum256([]byte(tok))}
	now := s.o.NowFunc()
	if e := s.creds.get(k, now); e != nil {
		return *e, nil
	}
	var (
		e   credEntry
		ok  bool
		err error
	)
	if strings.HasPrefix(tok, keyPrefix) {
		e.cluster, e.cred, ok, err = s.o.Store.ClusterAndKey(ctx, r.Host, k.sum[:])
	} else {
		e.cluster, err = s.o.Store.ClusterByHost(ctx, r.Host)
	}
	if errors.Is(err, proxystore.ErrNotFound) {
		return e, newError(CodeClusterUnknown, fmt.Sprintf("host %q does not resolve to a cluster", proxystore.NormalizeHost(r.Host)))
	}
	if err != nil {
		return e, err
	}
	if tok == "" {
		return e, newError(CodeUnauthorized, "missing bearer credential")
	}
	if strings.HasPrefix(tok, sessionPrefix) {
		e.cred, err = s.o.Store.ActiveSession(ctx, e.cluster.ID, k.sum[:], now)
		if err != nil && !errors.Is(err, proxystore.ErrNotFound) {
			return e, err
		}
		ok = err == nil
	}
	if !ok {
		return e, newError(CodeUnauthorized, "unknown, revoked or expired credential")
	}
	if e.token, err = s.mintToken(e.cluster.Name, e.cred); err != nil {
		return e, fmt.Errorf("proxy: sign token: %w", err)
	}
	s.creds.put(k, &e, now)
	return e, nil
}

// cleanPath resolves dot segments so "/api/v1/../../internal/x" cannot dodge the route checks; the cleaned
// path is also the one forwarded.
func cleanPath(p string) string {
	c := path.Clean("/" + p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c
}

func hasPrefixSegment(p, prefix string) bool {
	return p == prefix || strings.HasPrefix(p, prefix+"/")
}

// blocked reports routes never exposed to a tenant, and operator routes when the plan lacks them.
func blocked(p string, plan proxystore.Plan) bool {
	switch {
	case hasPrefixSegment(p, "/internal"),
		hasPrefixSegment(p, "/api/v1/migration"),
		hasPrefixSegment(p, "/api/v1/system/shared-state"):
		return true
	case hasPrefixSegment(p, "/api/v1/system/maintenance"), p == "/api/v1/stats/refresh":
		return !plan.FeatureOperator
	}
	return false
}

// gatedFeature names the plan feature a route needs when it is off.
func gatedFeature(p string, plan proxystore.Plan) string {
	switch {
	case hasPrefixSegment(p, "/streams") && !plan.FeatureStreams:
		return "streams"
	case strings.HasPrefix(p, "/api/v1/traces") && !plan.FeatureTraces:
		return "traces"
	}
	return ""
}

// pushItem is the part of a pushed item the proxy inspects.
type pushItem struct {
	Queue     string          `json:"queue"`
	Partition string          `json:"partition"`
	Payload   json.RawMessage `json:"payload"`
	Data      json.RawMessage `json:"data"` // a transaction's single push op may say data instead of payload
}

// pushBody is the pushed items of a push or of a transaction's push operations.
type pushBody struct {
	Items []pushItem `json:"items"`
	txn   bool       // from a transaction or a stream cycle (always 200): counted only when the answer says success
	bytes int64      // sum of payload sizes
}

// partitions names the (queue, partition) of every item, the broker's default partition where none is given.
func (b *pushBody) partitions() []proxystore.QueuePartition {
	ps := make([]proxystore.QueuePartition, len(b.Items))
	for i, it := range b.Items {
		ps[i] = proxystore.QueuePartition{Queue: it.Queue, Partition: cmp.Or(it.Partition, "Default")}
	}
	return ps
}

// Routes whose bodies push messages.
const (
	pushPath  = "/api/v1/push"
	txnPath   = "/api/v1/transaction"
	cyclePath = "/streams/v1/cycle" // a stream cycle's push_items are sink pushes
)

// parsePush extracts the pushed items of a push, transaction or stream cycle body; ok is false when the
// body does not parse (the broker answers 400 for it).
func parsePush(body []byte, path string) (*pushBody, bool) {
	switch path {
	case pushPath:
		if pb, ok := scanPush(body); ok {
			return pb, true
		}
		var pb pushBody
		if json.Unmarshal(body, &pb) != nil {
			return nil, false
		}
		return &pb, true
	case cyclePath:
		var cb struct {
			PushItems []pushItem `json:"push_items"`
		}
		if json.Unmarshal(body, &cb) != nil {
			return nil, false
		}
		if len(cb.PushItems) == 0 {
			return nil, true // state and ack only: nothing to cap, count or gate
		}
		return &pushBody{Items: cb.PushItems, txn: true}, true
	}
	var tb struct {
		Operations []struct {
			Type  string     `json:"type"`
			Items []pushItem `json:"items"`
			pushItem
		} `json:"operations"`
	}
	if json.Unmarshal(body, &tb) != nil {
		return nil, false
	}
	pb := &pushBody{txn: true}
	for _, op := range tb.Operations {
		if op.Type != "push" {
			continue
		}
		if op.Items != nil {
			pb.Items = append(pb.Items, op.Items...)
		} else {
			pb.Items = append(pb.Items, op.pushItem)
		}
	}
	if len(pb.Items) == 0 {
		return nil, true // acks only: nothing to cap, count or gate
	}
	return pb, true
}

// readBody applies the three size limits: the instance body cap, the plan's batch item cap and the plan's
// per-item payload cap (checked per item, so many small messages are not refused by the single-item cap).
func (s *Server) readBody(r *http.Request, req *request) error {
	limit := s.o.MaxBodyBytes
	if r.ContentLength > limit {
		return newError(CodePayloadTooLarge, "request body exceeds cap")
	}
	if r.Body != nil && r.Body != http.NoBody {
		// A declared length is read into a buffer of that size, as the broker's readBody does:
		// io.ReadAll grows from 512 bytes by copies.
		var buf bytes.Buffer
		if r.ContentLength > 0 {
			buf.Grow(int(r.ContentLength) + bytes.MinRead)
		}
		_, err := buf.ReadFrom(io.LimitReader(r.Body, limit+1))
		b := buf.Bytes()
		if err != nil {
			return wrapError(CodeBadRequest, "could not read request body", err)
		}
		if int64(len(b)) > limit {
			return newError(CodePayloadTooLarge, "request body exceeds cap")
		}
		req.body = b
	}
	switch {
	case r.Method == http.MethodPost && (req.path == pushPath || req.path == txnPath || req.path == cyclePath):
		pb, ok := parsePush(req.body, req.path)
		if !ok || pb == nil {
			return nil // unparseable: the broker answers 400 bad body
		}
		plan := req.cluster.Plan
		if n := len(pb.Items); plan.MaxBatchItems > 0 && n > plan.MaxBatchItems {
			return newError(CodePayloadTooLarge, fmt.Sprintf("batch of %d items exceeds max_batch_items (%d)", n, plan.MaxBatchItems))
		}
		for i, it := range pb.Items {
			size := int64(len(it.Payload))
			if size == 0 {
				size = int64(len(it.Data))
			}
			if plan.MaxPayloadBytes > 0 && size > plan.MaxPayloadBytes {
				return newError(CodePayloadTooLarge, fmt.Sprintf("item %d: payload %d bytes exceeds max_payload_bytes (%d)", i, size, plan.MaxPayloadBytes))
			}
			pb.bytes += size
		}
		req.push = pb
	case r.Method == http.MethodGet && strings.HasPrefix(req.path, "/api/v1/pop"):
		qv := r.URL.Query()
		req.park = qv.Get("wait") == "true"
		if req.park {
			ms := int64(defaultLongPollMs)
			if v, err := strconv.ParseInt(qv.Get("timeout"), 10, 64); err == nil && v >= 0 {
				ms = v
			}
			req.timeout = min(time.Duration(min(ms, math.MaxInt64/int64(time.Millisecond)))*time.Millisecond, s.o.MaxPollWait)
		}
	}
	return nil
}

// checkQuotas applies the hard gates. They ignore the rate mode: shadow mode never lets them through.
func (s *Server) checkQuotas(ctx context.Context, r *http.Request, req *request) error {
	c, plan := req.cluster, req.cluster.Plan
	if r.Method == http.MethodPost && req.path == "/api/v1/configure" {
		return s.checkConfigure(ctx, req)
	}
	if req.push == nil {
		return nil
	}
	if c.BillingHold {
		return newError(CodePushBlocked, "")
	}
	if plan.StorageQuotaBytes > 0 && c.StorageBytesUsed >= plan.StorageQuotaBytes {
		return newError(CodeStorageQuotaExceeded, fmt.Sprintf("storage quota reached (%d of %d bytes)", c.StorageBytesUsed, plan.StorageQuotaBytes))
	}
	if plan.MaxQueues > 0 || plan.MaxPartitionsPerQueue > 0 {
		req.parts = req.push.partitions()
		req.partsKnown = s.known.all(c.ID, req.parts, s.o.NowFunc())
		if !req.partsKnown {
			if err := s.checkCeilings(ctx, req, req.parts); err != nil {
				return err
			}
		}
	}
	if plan.MonthlyMessageQuota > 0 {
		// Reserved, not merely read: a read followed by a count after the answer let concurrent pushes
		// all see room (60 pushes stored 11 messages on a quota of 5). The reservation is atomic in the
		// database, so it holds across every proxy instance sharing it.
		n := int64(len(req.push.Items))
		ok, used, err := s.ledger.reserve(ctx, c, req.month, n, plan.MonthlyMessageQuota)
		if err != nil {
			return err
		}
		if !ok {
			return newError(CodeQuotaExceeded, fmt.Sprintf("monthly message quota exhausted (%d used of %d)", used, plan.MonthlyMessageQuota))
		}
		req.reserved = n
	}
	return nil
}

// releaseReserved gives back the quota a request reserved and did not settle: it was refused before the
// broker saw it, or the broker answered without storing it.
func (s *Server) releaseReserved(ctx context.Context, req *request) {
	if req.reserved == 0 {
		return
	}
	if err := s.ledger.release(ctx, req.cluster, req.month, req.reserved); err != nil {
		s.log.ErrorContext(ctx, "proxy quota release failed", slog.String("cluster", req.cluster.Name), slog.Any("error", err))
	}
	req.reserved = 0
}

// checkCeilings refuses a request that would create queues or partitions beyond the plan's ceilings.
func (s *Server) checkCeilings(ctx context.Context, req *request, ps []proxystore.QueuePartition) error {
	plan := req.cluster.Plan
	var queues []string
	seenQ := map[string]bool{}
	for _, p := range ps {
		if !seenQ[p.Queue] {
			seenQ[p.Queue] = true
			queues = append(queues, p.Queue)
		}
	}
	count, known, err := s.o.Store.PartitionUsage(ctx, req.cluster.ID, queues)
	if err != nil {
		return err
	}
	perQueue := map[string]int{}
	queueKnown := map[string]bool{}
	for qp := range known {
		perQueue[qp.Queue]++
		queueKnown[qp.Queue] = true
	}
	newQueues := 0
	for _, q := range queues {
		if !queueKnown[q] {
			newQueues++
		}
	}
	var have []proxystore.QueuePartition
	for _, p := range ps {
		if known[p] {
			have = append(have, p)
		}
	}
	s.known.add(req.cluster.ID, have, s.o.NowFunc())
	if plan.MaxQueues > 0 && count+newQueues > plan.MaxQueues {
		return newError(CodeQuotaExceeded, fmt.Sprintf("queue ceiling reached (max_queues %d)", plan.MaxQueues))
	}
	if plan.MaxPartitionsPerQueue > 0 {
		seen := map[proxystore.QueuePartition]bool{}
		for _, p := range ps {
			if p.Partition == "" || known[p] || seen[p] {
				continue
			}
			seen[p] = true
			perQueue[p.Queue]++
			if perQueue[p.Queue] > plan.MaxPartitionsPerQueue {
				return newError(CodeQuotaExceeded, fmt.Sprintf("partition ceiling reached for queue %q (max_partitions_per_queue %d)", p.Queue, plan.MaxPartitionsPerQueue))
			}
		}
	}
	return nil
}

// checkConfigure applies the retention and queue ceilings to POST /api/v1/configure.
func (s *Server) checkConfigure(ctx context.Context, req *request) error {
	var body struct {
		Queue     string `json:"queue"`
		Partition string `json:"partition"`
		Options   struct {
			RetentionSeconds          int64 `json:"retentionSeconds"`
			CompletedRetentionSeconds int64 `json:"completedRetentionSeconds"`
		} `json:"options"`
	}
	if json.Unmarshal(req.body, &body) != nil {
		return nil // the broker answers 400
	}
	plan := req.cluster.Plan
	if max := plan.MaxRetentionSeconds; max > 0 {
		for _, v := range []int64{body.Options.RetentionSeconds, body.Options.CompletedRetentionSeconds} {
			if v > max {
				return newError(CodeQuotaExceeded, fmt.Sprintf("retention %d s exceeds the plan ceiling (%d s)", v, max))
			}
		}
	}
	if body.Queue != "" && (plan.MaxQueues > 0 || plan.MaxPartitionsPerQueue > 0) {
		return s.checkCeilings(ctx, req, []proxystore.QueuePartition{{Queue: body.Queue, Partition: body.Partition}})
	}
	return nil
}

// rateLimit applies the request and message buckets and the parked-consumer slots. In shadow mode a
// denial is logged and counted, and the request is forwarded without taking anything.
func (s *Server) rateLimit(r *http.Request, req *request) (func(), error) {
	messages := 0
	if req.push != nil {
		messages = len(req.push.Items)
	}
	cl := s.limits.forCluster(req.cluster)
	release, d := cl.admit(s.o.NowFunc(), messages, req.park)
	if d == nil {
		return release, nil
	}
	mode := "enforce"
	if s.o.Shadow {
		mode = "shadow"
	}
	s.metrics.RateLimited.WithLabelValues(req.cluster.Name, d.limiter, mode).Inc()
	e := &Error{Code: CodeRateLimited, Message: "request rate limit exceeded", RetryAfter: d.retryAfter}
	switch {
	case d.tooLarge:
		// No wait would admit it: a 429 would be retried forever.
		e = newError(CodePayloadTooLarge, fmt.Sprintf("batch of %d items exceeds the plan's message burst (%s)",
			messages, strconv.FormatFloat(d.burst, 'f', -1, 64)))
	case d.limiter == limiterMessages:
		e.Message = "message rate limit exceeded"
	case d.limiter == limiterParked:
		e.Message = "too many parked consumers"
	}
	if s.o.Shadow {
		s.log.WarnContext(r.Context(), "proxy shadow denial forwarded", slog.String("cluster", req.cluster.Name),
			slog.String("code", string(e.Code)), slog.String("limiter", d.limiter), slog.Int("retry_after", d.retryAfter))
		return release, nil
	}
	return nil, e
}

// health is the load balancer's check: 200 while this instance serves and its database answers (a
// credential not yet cached needs it), else 503; no credential needed.
func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.o.Store.Ping(ctx); err != nil {
		s.log.WarnContext(ctx, "proxy health: database unreachable", slog.Any("error", err))
		_ = writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "database": "unreachable"})
		return
	}
	_ = writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// serveOps serves /_proxy/*: metrics and the admin API. Its errors carry codes too.
func (s *Server) serveOps(w http.ResponseWriter, r *http.Request) {
	s.ops.ServeHTTP(w, r)
}

// body replays the buffered request body.
func (req *request) bodyReader() io.ReadCloser {
	if req.body == nil {
		return http.NoBody
	}
	return io.NopCloser(bytes.NewReader(req.body))
}
