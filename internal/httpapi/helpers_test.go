package httpapi_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/client"
	"github.com/queen-go/queen/internal/broker"
	"github.com/queen-go/queen/internal/config"
	"github.com/queen-go/queen/internal/testenv"
)

// testBundle is what an HTTP test of the broker works with: the running broker, a raw JSON client for
// status codes, headers and exact bodies, and the public SDK for scenarios. Every test starts its
// broker through setup.
type testBundle struct {
	rb    *testenv.RunningBroker
	raw   *api
	sdk   *client.Client
	clock *testenv.Clock // set by setupClock: the clock the broker decides time by
}

// setup starts a broker on a fresh database (env overrides its environment) for this test.
func setup(t *testing.T, env map[string]string) *testBundle {
	t.Helper()
	return bundle(t, testenv.StartBroker(t, env))
}

// setupClock is setup with a broker that decides leases, delays and waits by the bundle's clock, which
// the test advances instead of waiting for time to pass. The clock is the whole broker's, so a test
// that advances it far enough to end a lease or a delay has the broker to itself: its own, or a
// shared one as a subtest without t.Parallel, which runs before the parallel subtests start.
func setupClock(t *testing.T, env map[string]string) *testBundle {
	t.Helper()
	clk := testenv.NewClock()
	b := bundle(t, testenv.StartBrokerWith(t, env, broker.Options{Clock: clk.Now}))
	b.clock = clk
	return b
}

func bundle(t *testing.T, rb *testenv.RunningBroker) *testBundle {
	t.Helper()
	sdk, err := client.New(client.Config{URLs: []string{rb.URL}})
	require.NoError(t, err)
	return &testBundle{rb: rb, raw: newAPI(t, rb.URL), sdk: sdk}
}

// waitParked waits until the broker holds more than before parked long-poll pops: the pop a test just
// sent is waiting, so what the test does next happens while it is parked.
func (b *testBundle) waitParked(t testing.TB, before int) {
	t.Helper()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Greater(c, b.rb.Broker.Parked(), before, "parked long-poll pops")
	}, hangGuard, 10*time.Millisecond, "the pop is not parked yet")
}

// heldFor600s checks that queue q holds back its one message until the broker's clock has moved 600 s
// (a retryDelay or delayedProcessing of the test): nothing at 500 s, in queue mode or for a group, then
// a long-poll parked meanwhile is answered by the re-check once the clock is past it. It returns the
// message.
func (b *testBundle) heldFor600s(t *testing.T, a *api, q string) message {
	t.Helper()
	a.popNone(popPath(q, ""))
	b.clock.Advance(500 * time.Second)
	a.popNone(popPath(q, ""))
	a.popNone(popPath(q, "Default"))
	got := a.popLater(popPath(q, "", "wait", "true", "timeout", "30000"))
	b.waitParked(t, 0)
	b.clock.Advance(101 * time.Second)
	res := <-got
	require.NotNil(t, res, "the parked pop was not answered once the delay passed")
	require.Len(t, res.Messages, 1)
	return res.Messages[0]
}

// api is a tiny JSON client for the broker under test.
type api struct {
	t    testing.TB
	base string
	hc   *http.Client
}

// newAPI's transport keeps enough idle connections for the parallel calls of one test; the timeout
// is a hang guard only, longer than any long-poll a test waits on.
func newAPI(t testing.TB, base string) *api {
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	t.Cleanup(tr.CloseIdleConnections)
	return &api{t: t, base: base, hc: &http.Client{Transport: tr, Timeout: 60 * time.Second}}
}

// do sends a request and returns status and body; body may be nil or any JSON-encodable value.
func (a *api) do(method, path string, body any) (int, []byte) {
	a.t.Helper()
	r, err := a.exchange(a.t.Context(), method, path, body)
	require.NoError(a.t, err)
	return r.status, r.body
}

type pushItem struct {
	Queue         string `json:"queue"`
	Partition     string `json:"partition,omitempty"`
	Payload       any    `json:"payload"`
	TransactionID string `json:"transactionId,omitempty"`
}

type pushResult struct {
	Index         int      `json:"index"`
	TransactionID string   `json:"transaction_id"`
	Status        string   `json:"status"`
	MessageID     string   `json:"message_id"`
	PartitionID   string   `json:"partition_id"`
	TraceID       *string  `json:"trace_id"`
	QueueName     string   `json:"queueName"`
	keys          []string // the member names of the JSON object, set by checkPush
}

func (a *api) push(items ...pushItem) []pushResult {
	a.t.Helper()
	st, body := a.do("POST", "/api/v1/push", map[string]any{"items": items})
	require.Equal(a.t, http.StatusCreated, st, string(body))
	var res []pushResult
	require.NoError(a.t, json.Unmarshal(body, &res))
	require.Len(a.t, res, len(items))
	return res
}

// message is a popped message as the wire carries it.
type message struct {
	ID            string          `json:"id"`
	TransactionID string          `json:"transactionId"`
	TraceID       *string         `json:"traceId"`
	Data          json.RawMessage `json:"data"`
	ProducerSub   *string         `json:"producerSub"`
	CreatedAt     string          `json:"createdAt"`
	PartitionID   string          `json:"partitionId"`
	Partition     string          `json:"partition"`
	LeaseID       string          `json:"leaseId"`
	ConsumerGroup string          `json:"consumerGroup"`
	Queue         string          `json:"queue"`
	RetryCount    int             `json:"retryCount"`
}

// popResult is the body of a 200 pop.
type popResult struct {
	Success           bool      `json:"success"`
	Queue             string    `json:"queue"`
	Partition         string    `json:"partition"`
	PartitionID       string    `json:"partitionId"`
	LeaseID           string    `json:"leaseId"`
	ConsumerGroup     string    `json:"consumerGroup"`
	PartitionsClaimed int       `json:"partitionsClaimed"`
	Messages          []message `json:"messages"`
}

// pop returns nil on 204.
func (a *api) pop(path string) *popResult {
	a.t.Helper()
	st, body := a.do("GET", path, nil)
	if st == http.StatusNoContent {
		require.Empty(a.t, body)
		return nil
	}
	require.Equal(a.t, http.StatusOK, st, "%s: %s", path, body)
	var res popResult
	require.NoError(a.t, json.Unmarshal(body, &res))
	require.NotEmpty(a.t, res.Messages, "%s", body)
	return &res
}

type ackResult struct {
	Index         int     `json:"index"`
	TransactionID string  `json:"transactionId"`
	Success       bool    `json:"success"`
	Error         *string `json:"error"`
	QueueName     *string `json:"queueName"`
	PartitionName *string `json:"partitionName"`
	LeaseReleased bool    `json:"leaseReleased"`
	DLQ           bool    `json:"dlq"`
	Noop          bool    `json:"noop"`
}

func (a *api) ackAll(group string, msgs []message, status string) []ackResult {
	a.t.Helper()
	acks := make([]map[string]any, len(msgs))
	for i, m := range msgs {
		acks[i] = map[string]any{"transactionId": m.TransactionID, "partitionId": m.PartitionID, "leaseId": m.LeaseID, "status": status}
	}
	st, body := a.do("POST", "/api/v1/ack/batch", map[string]any{"consumerGroup": group, "acknowledgments": acks})
	require.Equal(a.t, http.StatusOK, st, string(body))
	var res []ackResult
	require.NoError(a.t, json.Unmarshal(body, &res))
	require.Len(a.t, res, len(msgs))
	return res
}

// getJSON GETs path and decodes the answer, which must be 200, into out. It asserts on c, not on the
// test, so that it serves in the condition of require.EventuallyWithT, which runs off the test
// goroutine; it says whether out was decoded.
func (a *api) getJSON(c *assert.CollectT, path string, out any) bool {
	r, err := a.exchange(a.t.Context(), "GET", path, nil)
	return assert.NoError(c, err, "GET %s", path) &&
		assert.Equal(c, http.StatusOK, r.status, "GET %s: %s", path, r.body) &&
		assert.NoError(c, json.Unmarshal(r.body, out), "GET %s: %s", path, r.body)
}

// pollEnv is the environment of brokers whose tests wait on time: a fast safety re-check of parked
// long-polls, so that waits ended by time (delays, retryDelay, windowBuffer) are answered promptly.
func pollEnv(extra map[string]string) map[string]string {
	env := map[string]string{"POP_WAIT_MAX_INTERVAL_MS": "100"}
	for k, v := range extra {
		env[k] = v
	}
	return env
}

// rawFor is a raw client of the bundle's broker bound to t, for subtests sharing one broker.
func (b *testBundle) rawFor(t testing.TB) *api { return newAPI(t, b.rb.URL) }

// query builds a query string from key/value pairs.
func query(kv ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	if len(v) == 0 {
		return ""
	}
	return "?" + v.Encode()
}

// popPath is the wildcard (partition "") or specific-partition pop route of queue q.
func popPath(q, partition string, kv ...string) string {
	p := "/api/v1/pop/queue/" + url.PathEscape(q)
	if partition != "" {
		p += "/partition/" + url.PathEscape(partition)
	}
	return p + query(kv...)
}

// popLater sends a pop (a long-poll, typically) in the background; its answer arrives on the channel,
// nil for a 204 or a failed request.
func (a *api) popLater(path string) <-chan *popResult {
	got := make(chan *popResult, 1)
	go func() {
		var res *popResult
		r, err := a.exchange(a.t.Context(), "GET", path, nil)
		if err == nil && r.status == http.StatusOK && json.Unmarshal(r.body, &res) != nil {
			res = nil
		}
		got <- res
	}()
	return got
}

func (a *api) popNone(path string) {
	t := a.t
	t.Helper()
	res := a.pop(path)
	require.Nil(t, res, "expected 204 from %s, got %+v", path, res)
}

func (a *api) popOne(path string) message {
	t := a.t
	t.Helper()
	res := a.pop(path)
	require.NotNil(t, res, "expected a message from %s", path)
	require.Len(t, res.Messages, 1)
	return res.Messages[0]
}

// ack acknowledges one message through /api/v1/ack and returns its single result.
func (a *api) ack(m message, status, errText string) ackResult {
	t := a.t
	t.Helper()
	body := map[string]any{"transactionId": m.TransactionID, "partitionId": m.PartitionID, "leaseId": m.LeaseID,
		"status": status, "consumerGroup": m.ConsumerGroup}
	if errText != "" {
		body["error"] = errText
	}
	st, out := a.do("POST", "/api/v1/ack", body)
	require.Equal(t, http.StatusOK, st, "%s", out)
	var res []ackResult
	require.NoError(t, json.Unmarshal(out, &res))
	require.Len(t, res, 1)
	return res[0]
}

func (a *api) ackOK(m message, status, errText string) ackResult {
	t := a.t
	t.Helper()
	r := a.ack(m, status, errText)
	require.True(t, r.Success, "%+v", r)
	require.Nil(t, r.Error)
	return r
}

// drain pops (batch 10) and acks every message of queue q for group ("" = queue mode) until a 204,
// returning the transaction ids in delivery order. extra are more pop parameters.
func (a *api) drain(q, group string, extra ...string) []string {
	t := a.t
	t.Helper()
	kv := append([]string{"batch", "10"}, extra...)
	if group != "" {
		kv = append(kv, "consumerGroup", group)
	}
	var got []string
	for range 100 {
		res := a.pop(popPath(q, "", kv...))
		if res == nil {
			return got
		}
		for _, m := range res.Messages {
			got = append(got, m.TransactionID)
			a.ackOK(m, "completed", "")
		}
	}
	t.Fatalf("queue %s never drained for group %q", q, group)
	return nil
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

func (a *api) pushTxs(q, partition string, txs ...string) {
	t := a.t
	t.Helper()
	items := make([]pushItem, len(txs))
	for i, tx := range txs {
		items[i] = pushItem{Queue: q, Partition: partition, Payload: map[string]any{"tx": tx}, TransactionID: tx}
	}
	for _, r := range a.push(items...) {
		require.Equal(t, "queued", r.Status, "%+v", r)
	}
}

// json sends a request, requires the status and decodes the body into out (when not nil).
func (a *api) json(method, path string, body any, status int, out any) []byte {
	t := a.t
	t.Helper()
	st, raw := a.do(method, path, body)
	require.Equal(t, status, st, "%s %s: %s", method, path, raw)
	if out != nil {
		require.NoError(t, json.Unmarshal(raw, out), "%s", raw)
	}
	return raw
}

// errorText requires an error envelope with the status and returns its text.
func (a *api) errorText(method, path string, body any, status int) string {
	t := a.t
	t.Helper()
	var env struct {
		Error string `json:"error"`
	}
	a.json(method, path, body, status, &env)
	require.NotEmpty(t, env.Error)
	return env.Error
}

// instant returns a timestamp strictly between what was stored before and what is stored after the
// call, on the clock of a bundle from setupClock: a millisecond's advance on each side keeps the
// readings apart (too little to end any lease or delay of the tests sharing the broker).
func (b *testBundle) instant() string {
	b.clock.Advance(time.Millisecond)
	ts := b.clock.Now().UTC().Format(time.RFC3339Nano)
	b.clock.Advance(time.Millisecond)
	return ts
}

func parseTime(t testing.TB, s string) time.Time {
	t.Helper()
	ts, err := time.Parse(time.RFC3339Nano, s)
	require.NoError(t, err, "%q", s)
	return ts
}

// uniqueName is prefix plus a random suffix, so tests sharing a broker never share a queue or group.
func uniqueName(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + "-" + hex.EncodeToString(b[:])
}

type wireCounts struct {
	Total      int64 `json:"total"`
	Pending    int64 `json:"pending"`
	Processing int64 `json:"processing"`
	Completed  int64 `json:"completed"`
	DeadLetter int64 `json:"deadLetter"`
}

func openDB(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

// startBrokerErr starts a broker on an existing database and returns its start error (nil: running).
func startBrokerErr(t *testing.T, dbURL string) (*broker.Broker, error) {
	t.Helper()
	cfg, err := config.Load(func(k string) string {
		if k == "DATABASE_URL" {
			return dbURL
		}
		return ""
	})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	b, err := broker.Start(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), ln)
	if err != nil {
		_ = ln.Close()
		return nil, err
	}
	t.Cleanup(func() { _ = b.Shutdown(context.Background()) })
	return b, nil
}

// JWT brokers: the auth tests' bundle, tokens and route paths.

const jwtSecret = "matrix-secret"

// jwtBundle is a broker with JWT on (JWT_ALGORITHM=auto: HS256 secret plus an RS256 JWKS) and the
// keys to mint tokens for it.
type jwtBundle struct {
	*testBundle
	rsaKey *rsa.PrivateKey // published in the JWKS as kid "k1"
}

func setupJWT(t *testing.T, env map[string]string) *jwtBundle {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	b64 := base64.RawURLEncoding.EncodeToString
	jwks, err := json.Marshal(map[string]any{"keys": []map[string]string{{
		"kty": "RSA", "kid": "k1", "use": "sig", "alg": "RS256",
		"n": b64(key.N.Bytes()), "e": b64(big.NewInt(int64(key.E)).Bytes()),
	}}})
	require.NoError(t, err)
	idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(jwks)
	}))
	t.Cleanup(idp.Close)
	vars := map[string]string{"JWT_ENABLED": "true", "JWT_ALGORITHM": "auto", "JWT_SECRET": jwtSecret, "JWT_JWKS_URL": idp.URL}
	for k, v := range env {
		vars[k] = v
	}
	return &jwtBundle{testBundle: setup(t, vars), rsaKey: key}
}

// withExp gives a token an hour of life unless it names its own exp: JWT_REQUIRE_EXP is on by default.
func withExp(claims jwt.MapClaims) jwt.MapClaims {
	if _, ok := claims["exp"]; !ok {
		claims["exp"] = time.Now().Add(time.Hour).Unix()
	}
	return claims
}

func (b *jwtBundle) hs256(t *testing.T, secret string, claims jwt.MapClaims) string {
	t.Helper()
	claims = withExp(claims)
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString([]byte(secret))
	require.NoError(t, err)
	return s
}

func (b *jwtBundle) rs256(t *testing.T, key *rsa.PrivateKey, kid string, claims jwt.MapClaims) string {
	t.Helper()
	claims = withExp(claims)
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	require.NoError(t, err)
	return s
}

// do sends body (raw JSON, may be empty) with the bearer token, if any, and returns status and body.
func (b *testBundle) do(t testing.TB, method, path, token, body string) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, b.rb.URL+path, rd)
	require.NoError(t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	r := b.send(t, req)
	return r.status, r.body
}

var routeParam = regexp.MustCompile(`\{([^}]*)\}`)

// routePath substitutes a route pattern's wildcards with plausible values, so the request reaches the
// route (and maybe fails validation there, which is fine).
func routePath(pattern string) string {
	values := map[string]string{
		"queue": "authq", "partition": "Default", "group": "g1", "traceName": "trace-a",
		"leaseId": "5f0e7c1a-0000-4000-8000-000000000001", "partitionId": "5f0e7c1a-0000-4000-8000-000000000002",
		"transactionId": "tx-1",
	}
	return routeParam.ReplaceAllStringFunc(pattern, func(m string) string {
		name := strings.TrimSuffix(m[1:len(m)-1], "...")
		if v, ok := values[name]; ok {
			return v
		}
		return "x"
	})
}

// Raw exchanges and the wire contract: exact status, headers, key sets and envelopes.

// queueMode is the consumerGroup a pop without a group reports.
const queueMode = "__QUEUE_MODE__"

// hangGuard bounds operations that must answer at once, so that a broker that hangs fails the test
// instead of stalling the run. It is not a performance threshold.
const hangGuard = 15 * time.Second

var microTime = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$`)

// reply is one HTTP exchange, fully read.
type reply struct {
	status        int
	header        http.Header
	contentLength int64
	body          []byte
}

func (r reply) String() string {
	return fmt.Sprintf("HTTP %d %v %s", r.status, r.header, r.body)
}

func (b *testBundle) addr() string { return strings.TrimPrefix(b.rb.URL, "http://") }

// call sends one request over the bundle's raw client and requires that it was answered.
func (b *testBundle) call(t testing.TB, ctx context.Context, method, path string, body any) reply {
	t.Helper()
	r, err := b.raw.exchange(ctx, method, path, body)
	require.NoError(t, err)
	return r
}

// send is call for a request built by the test.
func (b *testBundle) send(t testing.TB, req *http.Request) reply {
	t.Helper()
	r, err := b.raw.roundTrip(req)
	require.NoError(t, err)
	return r
}

// exchange sends one request and reads the whole answer, without assertions, so it also serves off the
// test goroutine. body: nil = no body, string or []byte = sent verbatim, anything else = JSON.
func (a *api) exchange(ctx context.Context, method, path string, body any) (reply, error) {
	var rd io.Reader
	switch v := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(v)
	case []byte:
		rd = bytes.NewReader(v)
	default:
		raw, err := json.Marshal(v)
		if err != nil {
			return reply{}, err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, rd)
	if err != nil {
		return reply{}, err
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return a.roundTrip(req)
}

func (a *api) roundTrip(req *http.Request) (reply, error) {
	resp, err := a.hc.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return reply{}, err
	}
	return reply{status: resp.StatusCode, header: resp.Header, contentLength: resp.ContentLength, body: raw}, nil
}

// parallel runs n calls concurrently (off the test goroutine, so without assertions) and returns
// their replies in call order.
func parallel(t testing.TB, n int, call func(i int) (reply, error)) []reply {
	t.Helper()
	out := make([]reply, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { out[i], errs[i] = call(i) })
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	return out
}

// requireCORS asserts the CORS headers every response carries.
func requireCORS(t testing.TB, h http.Header) {
	t.Helper()
	require.Equal(t, "*", h.Get("Access-Control-Allow-Origin"))
	require.Equal(t, "GET, POST, PUT, DELETE, OPTIONS", h.Get("Access-Control-Allow-Methods"))
	require.Equal(t, "Content-Type, Authorization", h.Get("Access-Control-Allow-Headers"))
}

// requireJSON asserts the status, a JSON content type and CORS, and decodes the body into v.
func requireJSON(t testing.TB, r reply, status int, v any) {
	t.Helper()
	require.Equal(t, status, r.status, "%s", r)
	require.Equal(t, "application/json", r.header.Get("Content-Type"), "%s", r)
	requireCORS(t, r.header)
	require.NotEmpty(t, r.header.Get("Content-Length"), "a JSON answer declares its length: %s", r)
	require.Equal(t, strconv.Itoa(len(r.body)), r.header.Get("Content-Length"))
	if v != nil {
		dec := json.NewDecoder(bytes.NewReader(r.body))
		dec.UseNumber()
		require.NoError(t, dec.Decode(v), "%s", r)
	}
}

// requireError asserts the error envelope: the status, a JSON object whose `error` is a string and
// whose only other possible member is a string `code`. It returns the error text.
func requireError(t testing.TB, r reply, status int) string {
	t.Helper()
	var env map[string]any
	requireJSON(t, r, status, &env)
	msg, ok := env["error"].(string)
	require.True(t, ok, "error envelope needs a string error field: %s", r)
	for k, v := range env {
		switch k {
		case "error":
		case "code":
			_, ok := v.(string)
			require.True(t, ok, "code must be a string: %s", r)
		default:
			require.Failf(t, "unexpected member of the error envelope", "%q in %s", k, r)
		}
	}
	return msg
}

// requireErrorText asserts the envelope and the exact error text (and no code).
func requireErrorText(t testing.TB, r reply, status int, want string) {
	t.Helper()
	require.Equal(t, want, requireError(t, r, status), "%s", r)
	require.JSONEq(t, mustJSON(t, map[string]string{"error": want}), string(r.body))
}

// requireBadBody asserts a 400 whose error starts with "bad body: " and carries the parser's detail.
func requireBadBody(t testing.TB, r reply) {
	t.Helper()
	msg := requireError(t, r, http.StatusBadRequest)
	require.True(t, strings.HasPrefix(msg, "bad body: "), "got %q", msg)
	require.Greater(t, len(msg), len("bad body: "), "the parser detail follows the prefix")
}

// require204 asserts a 204 with nothing at all: no body, no Content-Length, no Transfer-Encoding.
func require204(t testing.TB, r reply) {
	t.Helper()
	require.Equal(t, http.StatusNoContent, r.status, "%s", r)
	require.Empty(t, r.body)
	require.Zero(t, r.contentLength)
	_, hasLen := r.header["Content-Length"]
	require.False(t, hasLen, "a 204 declares no length: %v", r.header)
	_, hasTE := r.header["Transfer-Encoding"]
	require.False(t, hasTE, "a 204 has no transfer encoding: %v", r.header)
	require.Empty(t, r.header.Get("Content-Type"))
	requireCORS(t, r.header)
}

// rawExchange sends one raw HTTP/1.1 request with Connection: close and returns the header block and
// whatever followed it, exactly as they came off the wire.
func rawExchange(t testing.TB, addr, method, path string) (string, []byte) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(hangGuard)))
	_, err = fmt.Fprintf(conn, "%s %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", method, path, addr)
	require.NoError(t, err)
	raw, err := io.ReadAll(conn)
	require.NoError(t, err)
	head, rest, ok := bytes.Cut(raw, []byte("\r\n\r\n"))
	require.True(t, ok, "incomplete response: %q", raw)
	return string(head), rest
}

func requireRaw204(t testing.TB, addr, method, path string) {
	t.Helper()
	head, rest := rawExchange(t, addr, method, path)
	require.True(t, strings.HasPrefix(head, "HTTP/1.1 204 "), "%q", head)
	lower := strings.ToLower(head)
	require.NotContains(t, lower, "\r\ncontent-length:", "%q", head)
	require.NotContains(t, lower, "\r\ntransfer-encoding:", "%q", head)
	require.Empty(t, rest, "bytes after a 204 header block")
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func requireUUID(t testing.TB, s string) {
	t.Helper()
	require.Len(t, s, 36, "%q", s)
	_, err := uuid.Parse(s)
	require.NoError(t, err, "%q", s)
}

// --- push ---

var (
	queuedKeys    = []string{"index", "message_id", "partition_id", "queueName", "status", "trace_id", "transaction_id"}
	duplicateKeys = []string{"index", "message_id", "queueName", "status", "transaction_id"}
)

// push posts the items and requires 201 with one result per item, index 0..n-1, in request order.
func (b *testBundle) push(t testing.TB, items ...map[string]any) []pushResult {
	t.Helper()
	return checkPush(t, b.call(t, t.Context(), "POST", "/api/v1/push", map[string]any{"items": items}), items)
}

func checkPush(t testing.TB, r reply, items []map[string]any) []pushResult {
	t.Helper()
	var raw []map[string]any
	requireJSON(t, r, http.StatusCreated, &raw)
	var res []pushResult
	require.NoError(t, json.Unmarshal(r.body, &res))
	require.Len(t, res, len(items), "%s", r)
	for i := range res {
		res[i].keys = sortedKeys(raw[i])
		require.Equal(t, i, res[i].Index, "%s", r)
		if tx, ok := items[i]["transactionId"].(string); ok && tx != "" {
			require.Equal(t, tx, res[i].TransactionID, "%s", r)
		}
		switch res[i].Status {
		case "queued":
			require.Equal(t, queuedKeys, res[i].keys, "%s", r)
			requireUUID(t, res[i].PartitionID)
		case "duplicate":
			require.Equal(t, duplicateKeys, res[i].keys, "%s", r)
		default:
			require.Failf(t, "unexpected push status", "%s", r)
		}
		requireUUID(t, res[i].MessageID)
		require.Equal(t, items[i]["queue"], res[i].QueueName)
	}
	return res
}

func newItem(queue, partition, tx string, payload any) map[string]any {
	it := map[string]any{"queue": queue, "payload": payload}
	if partition != "" {
		it["partition"] = partition
	}
	if tx != "" {
		it["transactionId"] = tx
	}
	return it
}

// --- pop ---

var (
	popKeys     = []string{"consumerGroup", "leaseId", "messages", "partition", "partitionId", "partitionsClaimed", "queue", "success"}
	messageKeys = []string{"consumerGroup", "createdAt", "data", "id", "leaseId", "partition", "partitionId", "producerSub", "queue", "retryCount", "traceId", "transactionId"}
)

// pop returns nil on 204 (after checking the 204 contract) and the checked body on 200.
func (b *testBundle) pop(t testing.TB, queue, partition string, kv ...string) *popResult {
	t.Helper()
	r := b.call(t, t.Context(), "GET", popPath(queue, partition, kv...), nil)
	if r.status == http.StatusNoContent {
		require204(t, r)
		return nil
	}
	var raw map[string]any
	requireJSON(t, r, http.StatusOK, &raw)
	require.Equal(t, popKeys, sortedKeys(raw), "%s", r)
	var res popResult
	require.NoError(t, json.Unmarshal(r.body, &res))
	require.True(t, res.Success)
	require.Equal(t, queue, res.Queue)
	require.NotEmpty(t, res.Messages, "a 200 pop carries messages: %s", r)
	for i, m := range raw["messages"].([]any) {
		require.Equal(t, messageKeys, sortedKeys(m.(map[string]any)), "%s", r)
		msg := res.Messages[i]
		requireUUID(t, msg.ID)
		requireUUID(t, msg.PartitionID)
		require.Regexp(t, microTime, msg.CreatedAt)
		_, err := time.Parse(time.RFC3339Nano, msg.CreatedAt)
		require.NoError(t, err)
		require.Equal(t, res.LeaseID, msg.LeaseID, "every message of a pop carries the pop's lease")
		require.Equal(t, res.ConsumerGroup, msg.ConsumerGroup)
		require.Equal(t, queue, msg.Queue)
		if partition != "" {
			require.Equal(t, partition, msg.Partition)
		}
	}
	require.Equal(t, res.Messages[0].Partition, res.Partition, "top-level partition is the first claimed one")
	require.Equal(t, res.Messages[0].PartitionID, res.PartitionID)
	return &res
}

func txIDs(msgs []message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.TransactionID
	}
	return out
}

// --- ack ---

var ackKeys = []string{"dlq", "error", "index", "leaseReleased", "noop", "partitionName", "queueName", "success", "transactionId"}

func checkAcks(t testing.TB, r reply, txs []string) []ackResult {
	t.Helper()
	var raw []map[string]any
	requireJSON(t, r, http.StatusOK, &raw)
	var res []ackResult
	require.NoError(t, json.Unmarshal(r.body, &res))
	require.Len(t, res, len(txs), "%s", r)
	for i := range res {
		require.Equal(t, ackKeys, sortedKeys(raw[i]), "%s", r)
		require.Equal(t, i, res[i].Index, "%s", r)
		require.Equal(t, txs[i], res[i].TransactionID, "%s", r)
		if res[i].Success {
			require.Nil(t, res[i].Error, "%s", r)
		} else {
			require.NotNil(t, res[i].Error, "%s", r)
			require.False(t, res[i].LeaseReleased || res[i].DLQ || res[i].Noop, "a rejection changes nothing: %s", r)
		}
	}
	return res
}

// ack posts one acknowledgement to /api/v1/ack.
func (b *testBundle) ack(t testing.TB, a map[string]any) ackResult {
	t.Helper()
	r := b.call(t, t.Context(), "POST", "/api/v1/ack", a)
	return checkAcks(t, r, []string{a["transactionId"].(string)})[0]
}

// --- configure ---

// configure posts body to /api/v1/configure, the one way tests configure a queue, and checks the
// answer's shape.
func configure(t testing.TB, a *api, body map[string]any) map[string]any {
	t.Helper()
	r, err := a.exchange(t.Context(), "POST", "/api/v1/configure", body)
	require.NoError(t, err)
	var res map[string]any
	requireJSON(t, r, http.StatusOK, &res)
	require.Equal(t, []string{"configured", "namespace", "options", "partitionId", "queue", "queueId", "task"}, sortedKeys(res), "%s", r)
	require.Equal(t, true, res["configured"])
	require.Equal(t, body["queue"], res["queue"])
	requireUUID(t, res["queueId"].(string))
	requireUUID(t, res["partitionId"].(string))
	return res
}
