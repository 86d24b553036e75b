package httpapi_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
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
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/jackc/pgx/v5"
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
	rb  *testenv.RunningBroker
	raw *api
	sdk *client.Client
}

// setup starts a broker on a fresh database (env overrides its environment) for this test.
func setup(t *testing.T, env map[string]string) *testBundle {
	t.Helper()
	rb := testenv.StartBroker(t, env)
	sdk, err := client.New(client.Config{URLs: []string{rb.URL}})
	require.NoError(t, err)
	return &testBundle{rb: rb, raw: newAPI(t, rb.URL), sdk: sdk}
}

// api is a tiny JSON client for the broker under test.
type api struct {
	t    testing.TB
	base string
	hc   *http.Client
}

func newAPI(t testing.TB, base string) *api {
	return &api{t: t, base: base, hc: &http.Client{Timeout: 60 * time.Second}}
}

// do sends a request and returns status and body; body may be nil or any JSON-encodable value.
func (a *api) do(method, path string, body any) (int, []byte) {
	a.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(a.t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(a.t.Context(), method, a.base+path, rd)
	require.NoError(a.t, err)
	resp, err := a.hc.Do(req)
	require.NoError(a.t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(a.t, err)
	return resp.StatusCode, out
}

type pushItem struct {
	Queue         string `json:"queue"`
	Partition     string `json:"partition,omitempty"`
	Payload       any    `json:"payload"`
	TransactionID string `json:"transactionId,omitempty"`
}

type pushResult struct {
	Index         int    `json:"index"`
	TransactionID string `json:"transaction_id"`
	Status        string `json:"status"`
	MessageID     string `json:"message_id"`
	PartitionID   string `json:"partition_id"`
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

type message struct {
	ID            string          `json:"id"`
	TransactionID string          `json:"transactionId"`
	Data          json.RawMessage `json:"data"`
	PartitionID   string          `json:"partitionId"`
	Partition     string          `json:"partition"`
	LeaseID       string          `json:"leaseId"`
	ConsumerGroup string          `json:"consumerGroup"`
	RetryCount    int             `json:"retryCount"`
}

type popResult struct {
	LeaseID  string    `json:"leaseId"`
	Messages []message `json:"messages"`
}

// pop returns nil on 204.
func (a *api) pop(path string) *popResult {
	a.t.Helper()
	st, body := a.do("GET", path, nil)
	if st == http.StatusNoContent {
		require.Empty(a.t, body)
		return nil
	}
	require.Equal(a.t, http.StatusOK, st, string(body))
	var res popResult
	require.NoError(a.t, json.Unmarshal(body, &res))
	require.NotEmpty(a.t, res.Messages)
	return &res
}

type ackResult struct {
	Index         int     `json:"index"`
	TransactionID string  `json:"transactionId"`
	Success       bool    `json:"success"`
	Error         *string `json:"error"`
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

// eventually is the tests' one way to wait: it polls f until it returns nil or the timeout passes.
func eventually(t testing.TB, timeout time.Duration, f func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %s: %v", timeout, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// smEnv is the environment every broker of this file gets: a fast safety re-check of parked
// long-polls, so that waits ended by time (delays, retryDelay, windowBuffer) are answered promptly.
func smEnv(extra map[string]string) map[string]string {
	env := map[string]string{"POP_WAIT_MAX_INTERVAL_MS": "100"}
	for k, v := range extra {
		env[k] = v
	}
	return env
}

func smStart(t *testing.T, extra map[string]string) string {
	t.Helper()
	return setup(t, smEnv(extra)).rb.URL
}

// smMessage is a popped message with the fields this file reads.
type smMessage struct {
	ID            string          `json:"id"`
	TransactionID string          `json:"transactionId"`
	Data          json.RawMessage `json:"data"`
	PartitionID   string          `json:"partitionId"`
	Partition     string          `json:"partition"`
	LeaseID       string          `json:"leaseId"`
	ConsumerGroup string          `json:"consumerGroup"`
	Queue         string          `json:"queue"`
	CreatedAt     string          `json:"createdAt"`
	RetryCount    int             `json:"retryCount"`
}

type smPopResult struct {
	Queue             string      `json:"queue"`
	LeaseID           string      `json:"leaseId"`
	PartitionsClaimed int         `json:"partitionsClaimed"`
	Messages          []smMessage `json:"messages"`
}

// smQuery builds a query string from key/value pairs.
func smQuery(kv ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	if len(v) == 0 {
		return ""
	}
	return "?" + v.Encode()
}

// smPopPath is the wildcard (partition "") or specific-partition pop route of queue q.
func smPopPath(q, partition string, kv ...string) string {
	p := "/api/v1/pop/queue/" + url.PathEscape(q)
	if partition != "" {
		p += "/partition/" + url.PathEscape(partition)
	}
	return p + smQuery(kv...)
}

// smPop pops; nil on 204.
func smPop(t testing.TB, a *api, path string) *smPopResult {
	t.Helper()
	st, body := a.do("GET", path, nil)
	if st == http.StatusNoContent {
		require.Empty(t, body)
		return nil
	}
	require.Equal(t, http.StatusOK, st, "%s: %s", path, body)
	var res smPopResult
	require.NoError(t, json.Unmarshal(body, &res))
	require.NotEmpty(t, res.Messages, "%s", body)
	return &res
}

func smNoMessage(t testing.TB, a *api, path string) {
	t.Helper()
	res := smPop(t, a, path)
	require.Nil(t, res, "expected 204 from %s, got %+v", path, res)
}

func smOne(t testing.TB, a *api, path string) smMessage {
	t.Helper()
	res := smPop(t, a, path)
	require.NotNil(t, res, "expected a message from %s", path)
	require.Len(t, res.Messages, 1)
	return res.Messages[0]
}

// smAck acknowledges one message through /api/v1/ack and returns its single result.
func smAck(t testing.TB, a *api, m smMessage, status, errText string) ackResult {
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

func smAckOK(t testing.TB, a *api, m smMessage, status, errText string) ackResult {
	t.Helper()
	r := smAck(t, a, m, status, errText)
	require.True(t, r.Success, "%+v", r)
	require.Nil(t, r.Error)
	return r
}

// smDrain pops (batch 10) and acks every message of queue q for group ("" = queue mode) until a 204,
// returning the transaction ids in delivery order. extra are more pop parameters.
func smDrain(t testing.TB, a *api, q, group string, extra ...string) []string {
	t.Helper()
	kv := append([]string{"batch", "10"}, extra...)
	if group != "" {
		kv = append(kv, "consumerGroup", group)
	}
	var got []string
	for range 100 {
		res := smPop(t, a, smPopPath(q, "", kv...))
		if res == nil {
			return got
		}
		for _, m := range res.Messages {
			got = append(got, m.TransactionID)
			smAckOK(t, a, m, "completed", "")
		}
	}
	t.Fatalf("queue %s never drained for group %q", q, group)
	return nil
}

func smSorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

func smConfigure(t testing.TB, a *api, q, namespace string, opts map[string]any) {
	t.Helper()
	body := map[string]any{"queue": q, "options": opts}
	if namespace != "" {
		body["namespace"] = namespace
	}
	st, out := a.do("POST", "/api/v1/configure", body)
	require.Equal(t, http.StatusOK, st, "%s", out)
}

func smPush(t testing.TB, a *api, q, partition string, txs ...string) {
	t.Helper()
	items := make([]pushItem, len(txs))
	for i, tx := range txs {
		items[i] = pushItem{Queue: q, Partition: partition, Payload: map[string]any{"tx": tx}, TransactionID: tx}
	}
	for _, r := range a.push(items...) {
		require.Equal(t, "queued", r.Status, "%+v", r)
	}
}

// smJSON sends a request, requires the status and decodes the body into out (when not nil).
func smJSON(t testing.TB, a *api, method, path string, body any, status int, out any) []byte {
	t.Helper()
	st, raw := a.do(method, path, body)
	require.Equal(t, status, st, "%s %s: %s", method, path, raw)
	if out != nil {
		require.NoError(t, json.Unmarshal(raw, out), "%s", raw)
	}
	return raw
}

// smError requires an error envelope with the status and returns its text.
func smError(t testing.TB, a *api, method, path string, body any, status int) string {
	t.Helper()
	var env struct {
		Error string `json:"error"`
	}
	smJSON(t, a, method, path, body, status, &env)
	require.NotEmpty(t, env.Error)
	return env.Error
}

// smInstant returns a timestamp strictly between what was pushed before and what is pushed after the
// call (a scenario pause on both sides keeps the database's and our clock readings apart).
func smInstant() string {
	time.Sleep(50 * time.Millisecond)
	ts := time.Now().UTC().Format(time.RFC3339Nano)
	time.Sleep(50 * time.Millisecond)
	return ts
}

func smParseTime(t testing.TB, s string) time.Time {
	t.Helper()
	ts, err := time.Parse(time.RFC3339Nano, s)
	require.NoError(t, err, "%q", s)
	return ts
}

func smName(prefix string) string { return ctName("sm-" + prefix) }

// smRawGet is a GET that reports failures instead of failing the test, for use off the test goroutine.
func smRawGet(t testing.TB, u string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(t.Context(), "GET", u, nil)
	if err != nil {
		return 0, nil, err
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}

type wireCounts struct {
	Total      int64 `json:"total"`
	Pending    int64 `json:"pending"`
	Processing int64 `json:"processing"`
	Completed  int64 `json:"completed"`
	DeadLetter int64 `json:"deadLetter"`
}

func getJSON(t *testing.T, a *api, path string, want int, v any) {
	t.Helper()
	st, body := a.do("GET", path, nil)
	require.Equal(t, want, st, "%s: %s", path, body)
	if v != nil {
		require.NoError(t, json.Unmarshal(body, v), string(body))
	}
}

func configureQueue(t *testing.T, a *api, queue string, opts map[string]any) {
	t.Helper()
	st, body := a.do("POST", "/api/v1/configure", map[string]any{"queue": queue, "namespace": "billing", "task": "invoice", "options": opts})
	require.Equal(t, http.StatusOK, st, string(body))
}

func mustMarshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
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
	url    string
	rsaKey *rsa.PrivateKey // published in the JWKS as kid "k1"
	hc     *http.Client
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
	rb := setup(t, vars).rb
	return &jwtBundle{url: rb.URL, rsaKey: key, hc: &http.Client{Timeout: 30 * time.Second}}
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

// do sends body (raw JSON, may be empty) with the token, if any, and returns status and body.
func (b *jwtBundle) do(t *testing.T, method, path, token, body string) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, b.url+path, rd)
	require.NoError(t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := b.hc.Do(req)
	require.NoError(t, err, "%s %s", method, path)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, out
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
