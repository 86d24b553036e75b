package httpapi_test

// Contract tests of the HTTP surface: every route of routes.go, the error envelope, the unknown-route
// guard, CORS, 204-without-a-body and the body limit, each checked with exact status codes, headers
// and bodies through real HTTP against a real broker (docs: errors-backpressure-retries.md,
// decisions.md, api.md §2 and §4.1–4.4).
//
// Identifiers of this file carry a `ct` prefix so they cannot collide with the helpers of other test
// files of the package.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/testenv"
)

// ---------------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------------

const (
	ctQueueMode = "__QUEUE_MODE__"

	ctRejectLease        = "invalid or expired lease"
	ctRejectCommitted    = "already committed: the cursor moved past this message before this ack"
	ctRejectUnresolvable = "unresolvable: transaction not in the ack window (hash purged or never pushed); if leased, the message redelivers"
)

// ctHangGuard bounds operations that must answer at once, so that a broker that hangs fails the test
// instead of stalling the run. It is not a performance threshold.
const ctHangGuard = 15 * time.Second

var ctMicroTime = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$`)

// ctReply is one HTTP exchange, fully read.
type ctReply struct {
	status        int
	header        http.Header
	contentLength int64
	body          []byte
}

func (r ctReply) String() string {
	return fmt.Sprintf("HTTP %d %v %s", r.status, r.header, r.body)
}

// ctBroker is a running broker plus the client that talks to it.
type ctBroker struct {
	rb     *testenv.RunningBroker
	client *http.Client
}

func ctStart(t *testing.T, env map[string]string) *ctBroker {
	t.Helper()
	rb := testenv.StartBroker(t, env)
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	t.Cleanup(tr.CloseIdleConnections)
	return &ctBroker{rb: rb, client: &http.Client{Transport: tr}}
}

func (b *ctBroker) addr() string { return strings.TrimPrefix(b.rb.URL, "http://") }

// call sends one request. body: nil = no body, string or []byte = sent verbatim, anything else = JSON.
func (b *ctBroker) call(t testing.TB, ctx context.Context, method, path string, body any) ctReply {
	t.Helper()
	r, err := b.rawCall(ctx, method, path, body)
	require.NoError(t, err)
	return r
}

// rawCall is call without assertions, for use off the test goroutine.
func (b *ctBroker) rawCall(ctx context.Context, method, path string, body any) (ctReply, error) {
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
			return ctReply{}, err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, b.rb.URL+path, rd)
	if err != nil {
		return ctReply{}, err
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return b.rawSend(req)
}

func (b *ctBroker) send(t testing.TB, req *http.Request) ctReply {
	t.Helper()
	r, err := b.rawSend(req)
	require.NoError(t, err)
	return r
}

func (b *ctBroker) rawSend(req *http.Request) (ctReply, error) {
	resp, err := b.client.Do(req)
	if err != nil {
		return ctReply{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return ctReply{}, err
	}
	return ctReply{status: resp.StatusCode, header: resp.Header, contentLength: resp.ContentLength, body: raw}, nil
}

// ctParallel runs n calls concurrently (off the test goroutine, so without assertions) and returns
// their replies in call order.
func ctParallel(t testing.TB, n int, call func(i int) (ctReply, error)) []ctReply {
	t.Helper()
	out := make([]ctReply, n)
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

// ctRequireCORS asserts the CORS headers every response carries.
func ctRequireCORS(t testing.TB, h http.Header) {
	t.Helper()
	require.Equal(t, "*", h.Get("Access-Control-Allow-Origin"))
	require.Equal(t, "GET, POST, PUT, DELETE, OPTIONS", h.Get("Access-Control-Allow-Methods"))
	require.Equal(t, "Content-Type, Authorization", h.Get("Access-Control-Allow-Headers"))
}

// ctRequireJSON asserts the status, a JSON content type and CORS, and decodes the body into v.
func ctRequireJSON(t testing.TB, r ctReply, status int, v any) {
	t.Helper()
	require.Equal(t, status, r.status, "%s", r)
	require.Equal(t, "application/json", r.header.Get("Content-Type"), "%s", r)
	ctRequireCORS(t, r.header)
	require.NotEmpty(t, r.header.Get("Content-Length"), "a JSON answer declares its length: %s", r)
	require.Equal(t, strconv.Itoa(len(r.body)), r.header.Get("Content-Length"))
	if v != nil {
		dec := json.NewDecoder(bytes.NewReader(r.body))
		dec.UseNumber()
		require.NoError(t, dec.Decode(v), "%s", r)
	}
}

// ctRequireError asserts the error envelope: the status, a JSON object whose `error` is a string and
// whose only other possible member is a string `code`. It returns the error text.
func ctRequireError(t testing.TB, r ctReply, status int) string {
	t.Helper()
	var env map[string]any
	ctRequireJSON(t, r, status, &env)
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

// ctRequireErrorText asserts the envelope and the exact error text (and no code).
func ctRequireErrorText(t testing.TB, r ctReply, status int, want string) {
	t.Helper()
	require.Equal(t, want, ctRequireError(t, r, status), "%s", r)
	require.JSONEq(t, mustJSON(t, map[string]string{"error": want}), string(r.body))
}

// ctRequireBadBody asserts a 400 whose error starts with "bad body: " and carries the parser's detail.
func ctRequireBadBody(t testing.TB, r ctReply) {
	t.Helper()
	msg := ctRequireError(t, r, http.StatusBadRequest)
	require.True(t, strings.HasPrefix(msg, "bad body: "), "got %q", msg)
	require.Greater(t, len(msg), len("bad body: "), "the parser detail follows the prefix")
}

// ctRequire204 asserts a 204 with nothing at all: no body, no Content-Length, no Transfer-Encoding.
func ctRequire204(t testing.TB, r ctReply) {
	t.Helper()
	require.Equal(t, http.StatusNoContent, r.status, "%s", r)
	require.Empty(t, r.body)
	require.Zero(t, r.contentLength)
	_, hasLen := r.header["Content-Length"]
	require.False(t, hasLen, "a 204 declares no length: %v", r.header)
	_, hasTE := r.header["Transfer-Encoding"]
	require.False(t, hasTE, "a 204 has no transfer encoding: %v", r.header)
	require.Empty(t, r.header.Get("Content-Type"))
	ctRequireCORS(t, r.header)
}

// ctRawExchange sends one raw HTTP/1.1 request with Connection: close and returns the header block and
// whatever followed it, exactly as they came off the wire.
func ctRawExchange(t testing.TB, addr, method, path string) (string, []byte) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(ctHangGuard)))
	_, err = fmt.Fprintf(conn, "%s %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", method, path, addr)
	require.NoError(t, err)
	raw, err := io.ReadAll(conn)
	require.NoError(t, err)
	head, rest, ok := bytes.Cut(raw, []byte("\r\n\r\n"))
	require.True(t, ok, "incomplete response: %q", raw)
	return string(head), rest
}

func ctRequireRaw204(t testing.TB, addr, method, path string) {
	t.Helper()
	head, rest := ctRawExchange(t, addr, method, path)
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

func ctName(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + "-" + hex.EncodeToString(b[:])
}

func ctKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func ctRequireUUID(t testing.TB, s string) {
	t.Helper()
	require.Len(t, s, 36, "%q", s)
	_, err := uuid.Parse(s)
	require.NoError(t, err, "%q", s)
}

// ctWaitFor polls cond until it holds, failing after the hang guard.
func ctWaitFor(t testing.TB, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(ctHangGuard)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		require.True(t, time.Now().Before(deadline), "condition not reached")
		<-tick.C
	}
}

// --- push ---

type ctPushResult struct {
	Index         int     `json:"index"`
	TransactionID string  `json:"transaction_id"`
	Status        string  `json:"status"`
	MessageID     string  `json:"message_id"`
	PartitionID   string  `json:"partition_id"`
	TraceID       *string `json:"trace_id"`
	QueueName     string  `json:"queueName"`
	keys          []string
}

var (
	ctQueuedKeys    = []string{"index", "message_id", "partition_id", "queueName", "status", "trace_id", "transaction_id"}
	ctDuplicateKeys = []string{"index", "message_id", "queueName", "status", "transaction_id"}
)

// push posts the items and requires 201 with one result per item, index 0..n-1, in request order.
func (b *ctBroker) push(t testing.TB, items ...map[string]any) []ctPushResult {
	t.Helper()
	return ctCheckPush(t, b.call(t, t.Context(), "POST", "/api/v1/push", map[string]any{"items": items}), items)
}

func ctCheckPush(t testing.TB, r ctReply, items []map[string]any) []ctPushResult {
	t.Helper()
	var raw []map[string]any
	ctRequireJSON(t, r, http.StatusCreated, &raw)
	var res []ctPushResult
	require.NoError(t, json.Unmarshal(r.body, &res))
	require.Len(t, res, len(items), "%s", r)
	for i := range res {
		res[i].keys = ctKeys(raw[i])
		require.Equal(t, i, res[i].Index, "%s", r)
		if tx, ok := items[i]["transactionId"].(string); ok && tx != "" {
			require.Equal(t, tx, res[i].TransactionID, "%s", r)
		}
		switch res[i].Status {
		case "queued":
			require.Equal(t, ctQueuedKeys, res[i].keys, "%s", r)
			ctRequireUUID(t, res[i].PartitionID)
		case "duplicate":
			require.Equal(t, ctDuplicateKeys, res[i].keys, "%s", r)
		default:
			require.Failf(t, "unexpected push status", "%s", r)
		}
		ctRequireUUID(t, res[i].MessageID)
		require.Equal(t, items[i]["queue"], res[i].QueueName)
	}
	return res
}

func ctItem(queue, partition, tx string, payload any) map[string]any {
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

type ctMessage struct {
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

type ctPop struct {
	Success           bool        `json:"success"`
	Queue             string      `json:"queue"`
	Partition         string      `json:"partition"`
	PartitionID       string      `json:"partitionId"`
	LeaseID           string      `json:"leaseId"`
	ConsumerGroup     string      `json:"consumerGroup"`
	PartitionsClaimed int         `json:"partitionsClaimed"`
	Messages          []ctMessage `json:"messages"`
}

var (
	ctPopKeys     = []string{"consumerGroup", "leaseId", "messages", "partition", "partitionId", "partitionsClaimed", "queue", "success"}
	ctMessageKeys = []string{"consumerGroup", "createdAt", "data", "id", "leaseId", "partition", "partitionId", "producerSub", "queue", "retryCount", "traceId", "transactionId"}
)

func ctPopPath(queue, partition string, q url.Values) string {
	p := "/api/v1/pop/queue/" + url.PathEscape(queue)
	if partition != "" {
		p += "/partition/" + url.PathEscape(partition)
	}
	if len(q) > 0 {
		p += "?" + q.Encode()
	}
	return p
}

// pop returns nil on 204 (after checking the 204 contract) and the checked body on 200.
func (b *ctBroker) pop(t testing.TB, queue, partition string, q url.Values) *ctPop {
	t.Helper()
	r := b.call(t, t.Context(), "GET", ctPopPath(queue, partition, q), nil)
	if r.status == http.StatusNoContent {
		ctRequire204(t, r)
		return nil
	}
	var raw map[string]any
	ctRequireJSON(t, r, http.StatusOK, &raw)
	require.Equal(t, ctPopKeys, ctKeys(raw), "%s", r)
	var res ctPop
	require.NoError(t, json.Unmarshal(r.body, &res))
	require.True(t, res.Success)
	require.Equal(t, queue, res.Queue)
	require.NotEmpty(t, res.Messages, "a 200 pop carries messages: %s", r)
	for i, m := range raw["messages"].([]any) {
		require.Equal(t, ctMessageKeys, ctKeys(m.(map[string]any)), "%s", r)
		msg := res.Messages[i]
		ctRequireUUID(t, msg.ID)
		ctRequireUUID(t, msg.PartitionID)
		require.Regexp(t, ctMicroTime, msg.CreatedAt)
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

func ctQ(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return v
}

func ctTxIDs(msgs []ctMessage) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.TransactionID
	}
	return out
}

// --- ack ---

type ctAck struct {
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

var ctAckKeys = []string{"dlq", "error", "index", "leaseReleased", "noop", "partitionName", "queueName", "success", "transactionId"}

func ctCheckAcks(t testing.TB, r ctReply, txs []string) []ctAck {
	t.Helper()
	var raw []map[string]any
	ctRequireJSON(t, r, http.StatusOK, &raw)
	var res []ctAck
	require.NoError(t, json.Unmarshal(r.body, &res))
	require.Len(t, res, len(txs), "%s", r)
	for i := range res {
		require.Equal(t, ctAckKeys, ctKeys(raw[i]), "%s", r)
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
func (b *ctBroker) ack(t testing.TB, a map[string]any) ctAck {
	t.Helper()
	r := b.call(t, t.Context(), "POST", "/api/v1/ack", a)
	return ctCheckAcks(t, r, []string{a["transactionId"].(string)})[0]
}

// ackBatch posts to /api/v1/ack/batch.
func (b *ctBroker) ackBatch(t testing.TB, group string, acks ...map[string]any) []ctAck {
	t.Helper()
	body := map[string]any{"acknowledgments": acks}
	if group != "" {
		body["consumerGroup"] = group
	}
	r := b.call(t, t.Context(), "POST", "/api/v1/ack/batch", body)
	txs := make([]string, len(acks))
	for i, a := range acks {
		txs[i] = a["transactionId"].(string)
	}
	return ctCheckAcks(t, r, txs)
}

// ctAckOf builds an acknowledgement of m; lease "" leaves it out.
func ctAckOf(m ctMessage, status, lease string) map[string]any {
	a := map[string]any{"transactionId": m.TransactionID, "partitionId": m.PartitionID, "status": status}
	if lease != "" {
		a["leaseId"] = lease
	}
	if m.ConsumerGroup != "" && m.ConsumerGroup != ctQueueMode {
		a["consumerGroup"] = m.ConsumerGroup
	}
	return a
}

func ctRequireAckOK(t testing.TB, a ctAck, queue, partition string) {
	t.Helper()
	require.True(t, a.Success, "%+v", a)
	require.Nil(t, a.Error)
	require.NotNil(t, a.QueueName)
	require.Equal(t, queue, *a.QueueName)
	require.NotNil(t, a.PartitionName)
	require.Equal(t, partition, *a.PartitionName)
}

func ctRequireRejected(t testing.TB, a ctAck, text string) {
	t.Helper()
	require.False(t, a.Success, "%+v", a)
	require.NotNil(t, a.Error, "%+v", a)
	require.Equal(t, text, *a.Error)
	require.False(t, a.LeaseReleased)
	require.False(t, a.DLQ)
	require.False(t, a.Noop)
}

// --- configure ---

var ctDefaultOptions = map[string]any{
	"priority": json.Number("0"), "leaseTime": json.Number("300"), "retryLimit": json.Number("3"),
	"retryDelay": json.Number("1000"), "maxSize": json.Number("0"), "ttl": json.Number("3600"),
	"deadLetterQueue": false, "dlqAfterMaxRetries": false, "delayedProcessing": json.Number("0"),
	"windowBuffer": json.Number("0"), "retentionSeconds": json.Number("0"),
	"completedRetentionSeconds": json.Number("0"), "retentionEnabled": false, "encryptionEnabled": false,
	"maxWaitTimeSeconds": json.Number("0"),
}

func (b *ctBroker) configure(t testing.TB, body map[string]any) map[string]any {
	t.Helper()
	r := b.call(t, t.Context(), "POST", "/api/v1/configure", body)
	var res map[string]any
	ctRequireJSON(t, r, http.StatusOK, &res)
	require.Equal(t, []string{"configured", "namespace", "options", "partitionId", "queue", "queueId", "task"}, ctKeys(res), "%s", r)
	require.Equal(t, true, res["configured"])
	require.Equal(t, body["queue"], res["queue"])
	ctRequireUUID(t, res["queueId"].(string))
	ctRequireUUID(t, res["partitionId"].(string))
	return res
}

// ctFreshQueue configures a queue with retryDelay 0 (so failed acks are redelivered at once) plus opts.
func (b *ctBroker) ctFreshQueue(t testing.TB, prefix string, opts map[string]any) (string, string) {
	t.Helper()
	q := ctName(prefix)
	o := map[string]any{"retryDelay": 0}
	for k, v := range opts {
		o[k] = v
	}
	res := b.configure(t, map[string]any{"queue": q, "options": o})
	return q, res["partitionId"].(string)
}

// ---------------------------------------------------------------------------------------------------
// System routes, unknown routes, CORS
// ---------------------------------------------------------------------------------------------------

func TestContractSystemAndUnknownRoutes(t *testing.T) {
	t.Parallel()
	b := ctStart(t, nil)

	t.Run("health", func(t *testing.T) {
		t.Parallel()
		var body map[string]any
		ctRequireJSON(t, b.call(t, t.Context(), "GET", "/health", nil), http.StatusOK, &body)
		require.Equal(t, "healthy", body["status"])
		require.Equal(t, "connected", body["database"])
	})

	t.Run("livez", func(t *testing.T) {
		t.Parallel()
		var body map[string]any
		ctRequireJSON(t, b.call(t, t.Context(), "GET", "/livez", nil), http.StatusOK, &body)
		require.NotEmpty(t, body)
	})

	t.Run("unknown routes are a JSON 404", func(t *testing.T) {
		t.Parallel()
		for _, c := range []struct{ method, path string }{
			{"GET", "/api/v1/nope"},
			{"POST", "/anything"},
			{"DELETE", "/api/v1/push"},
			{"GET", "/api"},
			{"GET", "/api/v1/ack"},          // exists for POST only
			{"PUT", "/api/v1/configure"},    // exists for POST only
			{"POST", "/api/v1/pop/queue/x"}, // exists for GET only
			{"DELETE", "/some/page"},
			{"PATCH", "/health"},
		} {
			r := b.call(t, t.Context(), c.method, c.path, nil)
			require.Equal(t, "Not Found", ctRequireError(t, r, http.StatusNotFound), "%s %s", c.method, c.path)
			require.JSONEq(t, `{"error":"Not Found","code":"no_such_route"}`, string(r.body), "%s %s", c.method, c.path)
		}
	})

	t.Run("other GETs serve the dashboard", func(t *testing.T) {
		t.Parallel()
		for _, p := range []string{"/some/page", "/", "/queues/orders"} {
			r := b.call(t, t.Context(), "GET", p, nil)
			require.Equal(t, http.StatusOK, r.status, "%s", r)
			require.True(t, strings.HasPrefix(r.header.Get("Content-Type"), "text/html"), "%s", r)
			require.Contains(t, strings.ToLower(string(r.body)), "<html")
			ctRequireCORS(t, r.header)
		}
	})

	t.Run("OPTIONS is a CORS 204 on any path", func(t *testing.T) {
		t.Parallel()
		for _, p := range []string{"/api/v1/push", "/api/v1/nope", "/health", "/some/page"} {
			r := b.call(t, t.Context(), "OPTIONS", p, nil)
			ctRequire204(t, r)
			ctRequireRaw204(t, b.addr(), "OPTIONS", p)
		}
	})

	t.Run("CORS on JSON answers of every kind", func(t *testing.T) {
		t.Parallel()
		q := ctName("cors")
		ctRequireJSON(t, b.call(t, t.Context(), "POST", "/api/v1/push", map[string]any{"items": []any{ctItem(q, "", "", 1)}}), http.StatusCreated, nil)
		ctRequireJSON(t, b.call(t, t.Context(), "GET", ctPopPath(q, "", nil), nil), http.StatusOK, nil)
		ctRequireError(t, b.call(t, t.Context(), "POST", "/api/v1/push", "{"), http.StatusBadRequest)
		ctRequireError(t, b.call(t, t.Context(), "GET", "/api/v1/nope", nil), http.StatusNotFound)
		ctRequireJSON(t, b.call(t, t.Context(), "POST", "/api/v1/ack/batch", `{"acknowledgments":[]}`), http.StatusOK, nil)
	})
}

// ---------------------------------------------------------------------------------------------------
// Configure
// ---------------------------------------------------------------------------------------------------

func TestContractConfigure(t *testing.T) {
	t.Parallel()
	b := ctStart(t, nil)

	t.Run("defaults and full replace", func(t *testing.T) {
		t.Parallel()
		q := ctName("cfg")
		first := b.configure(t, map[string]any{"queue": q})
		require.Equal(t, "", first["namespace"])
		require.Equal(t, "", first["task"])
		require.Equal(t, ctDefaultOptions, first["options"])

		set := map[string]any{
			"priority": 7, "leaseTime": 12, "retryLimit": 5, "retryDelay": 250, "maxSize": 100, "ttl": 60,
			"deadLetterQueue": true, "dlqAfterMaxRetries": true, "delayedProcessing": 0, "windowBuffer": 0,
			"retentionSeconds": 30, "completedRetentionSeconds": 20, "retentionEnabled": true,
			"encryptionEnabled": false, "maxWaitTimeSeconds": 600,
		}
		withUnknown := map[string]any{"bogusOption": 1}
		for k, v := range set {
			withUnknown[k] = v
		}
		second := b.configure(t, map[string]any{"queue": q, "namespace": "billing", "task": "invoice", "options": withUnknown})
		require.Equal(t, "billing", second["namespace"])
		require.Equal(t, "invoice", second["task"])
		require.Equal(t, first["queueId"], second["queueId"], "configure is an upsert")
		require.Equal(t, first["partitionId"], second["partitionId"], "the Default partition is kept")
		var want map[string]any
		dec := json.NewDecoder(strings.NewReader(mustJSON(t, set)))
		dec.UseNumber()
		require.NoError(t, dec.Decode(&want))
		require.Equal(t, want, second["options"], "every given option is echoed, unknown keys are dropped")

		// Full replace: a configure without options resets every option and namespace/task.
		third := b.configure(t, map[string]any{"queue": q})
		require.Equal(t, ctDefaultOptions, third["options"])
		require.Equal(t, "", third["namespace"])
		require.Equal(t, "", third["task"])
		require.Equal(t, first["queueId"], third["queueId"])

		// Only one option given: every other one is back to its default.
		fourth := b.configure(t, map[string]any{"queue": q, "options": map[string]any{"retryLimit": 9}})
		want = map[string]any{}
		for k, v := range ctDefaultOptions {
			want[k] = v
		}
		want["retryLimit"] = json.Number("9")
		require.Equal(t, want, fourth["options"])
	})

	t.Run("configure creates the queue and its Default partition", func(t *testing.T) {
		t.Parallel()
		q := ctName("cfgpush")
		res := b.configure(t, map[string]any{"queue": q})
		pushed := b.push(t, ctItem(q, "", "a", 1))
		require.Equal(t, res["partitionId"], pushed[0].PartitionID, "an item without partition goes to Default")
	})

	t.Run("errors", func(t *testing.T) {
		t.Parallel()
		for _, body := range []string{`{}`, `{"queue":5}`, `{"queue":null}`, `{"queue":""}`, `{"queue":["q"]}`, `{"options":{}}`} {
			ctRequireErrorText(t, b.call(t, t.Context(), "POST", "/api/v1/configure", body), http.StatusBadRequest, "queue is required")
		}
		for _, body := range []string{`{"queue":`, `not json`, `{"queue":"q"} trailing`, ``, `   `, `[1,2]`, `{"queue":"q","options":{"leaseTime":"long"}}`} {
			ctRequireBadBody(t, b.call(t, t.Context(), "POST", "/api/v1/configure", body))
		}
		// No body at all is an empty body.
		ctRequireBadBody(t, b.call(t, t.Context(), "POST", "/api/v1/configure", nil))
	})
}

// ---------------------------------------------------------------------------------------------------
// Push
// ---------------------------------------------------------------------------------------------------

func TestContractPush(t *testing.T) {
	t.Parallel()
	b := ctStart(t, nil)

	t.Run("queued item, trace id echoed, auto-created queue", func(t *testing.T) {
		t.Parallel()
		q := ctName("push")
		trace := uuid.NewString()
		res := b.push(t, map[string]any{"queue": q, "partition": "p1", "payload": map[string]any{"k": "v"}, "transactionId": "t1", "traceId": trace})
		require.Equal(t, "queued", res[0].Status)
		require.NotNil(t, res[0].TraceID)
		require.Equal(t, trace, *res[0].TraceID)
		require.Equal(t, q, res[0].QueueName)

		p := b.pop(t, q, "p1", nil)
		require.NotNil(t, p, "the auto-created queue serves the message")
		require.Equal(t, res[0].MessageID, p.Messages[0].ID)
		require.Equal(t, res[0].PartitionID, p.Messages[0].PartitionID)
		require.NotNil(t, p.Messages[0].TraceID)
		require.Equal(t, trace, *p.Messages[0].TraceID)
		require.JSONEq(t, `{"k":"v"}`, string(p.Messages[0].Data))
	})

	t.Run("trace id null when not given, default partition, generated transaction id", func(t *testing.T) {
		t.Parallel()
		q := ctName("push")
		r := b.call(t, t.Context(), "POST", "/api/v1/push", `{"items":[{"queue":"`+q+`","payload":{"n":1}},{"queue":"`+q+`","traceId":"","transactionId":""}]}`)
		var raw []map[string]any
		ctRequireJSON(t, r, http.StatusCreated, &raw)
		require.Len(t, raw, 2)
		for i, it := range raw {
			require.Equal(t, ctQueuedKeys, ctKeys(it))
			v, present := it["trace_id"]
			require.True(t, present, "trace_id is present")
			require.Nil(t, v, "trace_id is null when none was given")
			require.Equal(t, json.Number(strconv.Itoa(i)), it["index"])
			require.NotEmpty(t, it["transaction_id"], "a transaction id is generated")
		}
		require.NotEqual(t, raw[0]["transaction_id"], raw[1]["transaction_id"])

		p := b.pop(t, q, "Default", ctQ("batch", "10"))
		require.NotNil(t, p)
		require.Equal(t, "Default", p.Partition)
		require.Len(t, p.Messages, 2)
		require.Nil(t, p.Messages[0].TraceID)
		require.Equal(t, raw[0]["transaction_id"], p.Messages[0].TransactionID)
		require.Equal(t, "null", string(p.Messages[1].Data), "a missing payload is stored as null")
	})

	t.Run("duplicates within a request and across requests", func(t *testing.T) {
		t.Parallel()
		q := ctName("dup")
		res := b.push(t,
			ctItem(q, "p", "a", 1),
			ctItem(q, "p", "a", 2),
			ctItem(q, "other", "a", 3), // uniqueness is per partition
			ctItem(q, "p", "b", 4),
		)
		require.Equal(t, []string{"queued", "duplicate", "queued", "queued"}, []string{res[0].Status, res[1].Status, res[2].Status, res[3].Status})
		require.Equal(t, res[0].MessageID, res[1].MessageID, "a duplicate names the original message")
		require.Equal(t, ctDuplicateKeys, res[1].keys, "no partition_id / trace_id on duplicates")
		require.NotEqual(t, res[0].MessageID, res[2].MessageID)

		again := b.push(t, map[string]any{"queue": q, "partition": "p", "transactionId": "a", "payload": 9, "traceId": uuid.NewString()})
		require.Equal(t, "duplicate", again[0].Status)
		require.Equal(t, res[0].MessageID, again[0].MessageID)
		require.Equal(t, ctDuplicateKeys, again[0].keys)

		// Nothing was stored by the duplicates: partition p holds a then b, with a's first payload.
		p := b.pop(t, q, "p", ctQ("batch", "10"))
		require.NotNil(t, p)
		require.Equal(t, []string{"a", "b"}, ctTxIDs(p.Messages))
		require.JSONEq(t, `1`, string(p.Messages[0].Data))
	})

	t.Run("empty items", func(t *testing.T) {
		t.Parallel()
		r := b.call(t, t.Context(), "POST", "/api/v1/push", `{"items":[]}`)
		ctRequireJSON(t, r, http.StatusCreated, nil)
		require.Equal(t, "[]", string(r.body))
	})

	t.Run("per-request indices under concurrency", func(t *testing.T) {
		t.Parallel()
		q := ctName("idx")
		reqs := make([][]map[string]any, 8)
		for g := range reqs {
			for i := range 1 + g%3 {
				reqs[g] = append(reqs[g], ctItem(q, fmt.Sprintf("p%d", g%2), fmt.Sprintf("g%d-i%d", g, i), i))
			}
		}
		replies := ctParallel(t, len(reqs), func(g int) (ctReply, error) {
			return b.rawCall(t.Context(), "POST", "/api/v1/push", map[string]any{"items": reqs[g]})
		})
		for g, r := range replies {
			for _, res := range ctCheckPush(t, r, reqs[g]) { // checks index 0..n-1 and the transaction ids in order
				require.Equal(t, "queued", res.Status)
			}
		}
	})

	t.Run("validation errors", func(t *testing.T) {
		t.Parallel()
		q := ctName("bad")
		for _, c := range []struct{ body, want string }{
			{`{}`, "items array is required"},
			{`{"items":null}`, "items array is required"},
			{`{"items":"x"}`, "items array is required"},
			{`{"items":{"queue":"q"}}`, "items array is required"},
			{`{"items":[{"payload":1}]}`, "Queue must be a string"},
			{`{"items":[{"queue":5}]}`, "Queue must be a string"},
			{`{"items":[{"queue":null}]}`, "Queue must be a string"},
			{`{"items":[{"queue":"` + q + `","partition":5}]}`, "Partition must be a string"},
			{`{"items":[{"queue":"` + q + `","partition":{}}]}`, "Partition must be a string"},
			{`{"items":[{"queue":"` + q + `","transactionId":5}]}`, "TransactionId must be a string"},
			{`{"items":[{"queue":"` + q + `","transactionId":true}]}`, "TransactionId must be a string"},
			{`{"items":[{"queue":"` + q + `","traceId":5}]}`, "TraceId must be a string"},
			{`{"items":[{"queue":"` + q + `","traceId":["x"]}]}`, "TraceId must be a string"},
			// Checked item by item: the first failure wins, and nothing of the request is stored.
			{`{"items":[{"queue":"` + q + `","transactionId":"ok"},{"queue":"` + q + `","partition":1}]}`, "Partition must be a string"},
			{`{"items":[{"queue":"` + q + `","transactionId":1},{"queue":7}]}`, "TransactionId must be a string"},
		} {
			ctRequireErrorText(t, b.call(t, t.Context(), "POST", "/api/v1/push", c.body), http.StatusBadRequest, c.want)
		}
		// A non-UUID traceId is a 400 for this request.
		for _, tr := range []string{"not-a-uuid", "019dc9b7cb4f7c1a9b217e8a5c3a40e1x", "{019dc9b7-cb4f-7c1a-9b21-7e8a5c3a40e1}"} {
			ctRequireError(t, b.call(t, t.Context(), "POST", "/api/v1/push",
				map[string]any{"items": []any{map[string]any{"queue": q, "transactionId": "ok", "traceId": tr}}}), http.StatusBadRequest)
		}
		// Unparseable or empty bodies.
		for _, body := range []string{`{"items":[`, `{"items":[]}}`, `nope`, ``, "\n\t "} {
			ctRequireBadBody(t, b.call(t, t.Context(), "POST", "/api/v1/push", body))
		}
		ctRequireBadBody(t, b.call(t, t.Context(), "POST", "/api/v1/push", nil))
		// Nothing of any refused request was stored.
		require.Nil(t, b.pop(t, q, "", ctQ("batch", "10")))
	})

	t.Run("a bad request never fails a concurrent good one", func(t *testing.T) {
		t.Parallel()
		q := ctName("iso")
		item := func(i int) map[string]any {
			if i%2 == 0 {
				return map[string]any{"queue": q, "transactionId": fmt.Sprintf("bad-%d", i), "traceId": "bad-trace"}
			}
			return ctItem(q, "", fmt.Sprintf("good-%d", i), i)
		}
		replies := ctParallel(t, 10, func(i int) (ctReply, error) {
			return b.rawCall(t.Context(), "POST", "/api/v1/push", map[string]any{"items": []any{item(i)}})
		})
		for i, r := range replies {
			if i%2 == 0 {
				ctRequireError(t, r, http.StatusBadRequest)
				continue
			}
			res := ctCheckPush(t, r, []map[string]any{item(i)})
			require.Equal(t, "queued", res[0].Status)
		}
		p := b.pop(t, q, "", ctQ("batch", "100"))
		require.NotNil(t, p)
		require.Len(t, p.Messages, 5)
	})
}

// ---------------------------------------------------------------------------------------------------
// Pop
// ---------------------------------------------------------------------------------------------------

func TestContractPop(t *testing.T) {
	t.Parallel()
	b := ctStart(t, nil)

	t.Run("200 shape with every message field", func(t *testing.T) {
		t.Parallel()
		q := ctName("pop")
		trace := uuid.NewString()
		pushed := b.push(t, map[string]any{"queue": q, "partition": "P", "payload": map[string]any{"a": []any{1, "x"}}, "transactionId": "tx-1", "traceId": trace})
		p := b.pop(t, q, "", nil)
		require.NotNil(t, p)
		require.Equal(t, "P", p.Partition)
		require.Equal(t, pushed[0].PartitionID, p.PartitionID)
		ctRequireUUID(t, p.LeaseID)
		require.Equal(t, ctQueueMode, p.ConsumerGroup)
		require.Equal(t, 1, p.PartitionsClaimed)
		require.Len(t, p.Messages, 1)
		m := p.Messages[0]
		require.Equal(t, pushed[0].MessageID, m.ID)
		require.Equal(t, "tx-1", m.TransactionID)
		require.NotNil(t, m.TraceID)
		require.Equal(t, trace, *m.TraceID)
		require.JSONEq(t, `{"a":[1,"x"]}`, string(m.Data))
		require.Nil(t, m.ProducerSub, "no auth: producerSub is null")
		require.Regexp(t, ctMicroTime, m.CreatedAt)
		require.Equal(t, pushed[0].PartitionID, m.PartitionID)
		require.Equal(t, "P", m.Partition)
		require.Equal(t, p.LeaseID, m.LeaseID)
		require.Equal(t, ctQueueMode, m.ConsumerGroup)
		require.Equal(t, q, m.Queue)
		require.Zero(t, m.RetryCount)
	})

	t.Run("204 has no body, no length, no transfer encoding", func(t *testing.T) {
		t.Parallel()
		q := ctName("empty")
		// Unknown queue, wildcard and partition routes, immediate and long-poll.
		require.Nil(t, b.pop(t, q, "", nil))
		require.Nil(t, b.pop(t, q, "Default", nil))
		require.Nil(t, b.pop(t, q, "", ctQ("wait", "true", "timeout", "50")))
		require.Nil(t, b.pop(t, q, "nope", ctQ("wait", "true", "timeout", "50", "consumerGroup", "g")))
		ctRequireRaw204(t, b.addr(), "GET", ctPopPath(q, "", nil))
		// Known queue, drained.
		b.push(t, ctItem(q, "", "only", 1))
		require.NotNil(t, b.pop(t, q, "", ctQ("autoAck", "true")))
		require.Nil(t, b.pop(t, q, "", nil))
		ctRequireRaw204(t, b.addr(), "GET", ctPopPath(q, "", nil))
	})

	t.Run("a leased partition is 204 for the same group, other groups get the same messages", func(t *testing.T) {
		t.Parallel()
		q := ctName("lease")
		pushed := b.push(t, ctItem(q, "", "m1", 1), ctItem(q, "", "m2", 2))
		first := b.pop(t, q, "", ctQ("batch", "1"))
		require.NotNil(t, first)
		require.Equal(t, []string{"m1"}, ctTxIDs(first.Messages))
		// Same group (queue mode): the partition is leased, even though m2 is pending.
		require.Nil(t, b.pop(t, q, "", nil))
		require.Nil(t, b.pop(t, q, "Default", nil))
		require.Nil(t, b.pop(t, q, "", ctQ("consumerGroup", "")), "an empty consumerGroup is queue mode")

		for _, g := range []string{"g1", "g2"} {
			p := b.pop(t, q, "", ctQ("consumerGroup", g, "batch", "10"))
			require.NotNil(t, p, "group %s", g)
			require.Equal(t, g, p.ConsumerGroup)
			require.Equal(t, []string{"m1", "m2"}, ctTxIDs(p.Messages))
			require.Equal(t, pushed[0].MessageID, p.Messages[0].ID)
			require.NotEqual(t, first.LeaseID, p.LeaseID)
			require.Nil(t, b.pop(t, q, "", ctQ("consumerGroup", g)), "group %s holds its lease", g)
		}
	})

	t.Run("autoAck takes no lease and does not redeliver", func(t *testing.T) {
		t.Parallel()
		q := ctName("auto")
		b.push(t, ctItem(q, "", "a1", 1), ctItem(q, "", "a2", 2))
		p := b.pop(t, q, "", ctQ("autoAck", "true", "consumerGroup", "g"))
		require.NotNil(t, p)
		require.Equal(t, "", p.LeaseID)
		require.Equal(t, []string{"a1"}, ctTxIDs(p.Messages))
		require.Equal(t, "", p.Messages[0].LeaseID)
		// Not leased (the next message comes at once) and not redelivered.
		p = b.pop(t, q, "", ctQ("consumerGroup", "g"))
		require.NotNil(t, p)
		require.Equal(t, []string{"a2"}, ctTxIDs(p.Messages))
		ctRequireUUID(t, p.LeaseID)
		// The completion of an auto-acked message is a harmless noop.
		a := b.ack(t, map[string]any{"transactionId": "a1", "partitionId": p.PartitionID, "consumerGroup": "g"})
		require.True(t, a.Success)
		require.True(t, a.Noop)
	})

	t.Run("batch and partitions are honoured", func(t *testing.T) {
		t.Parallel()
		q := ctName("batch")
		var items []map[string]any
		for i := range 5 {
			items = append(items, ctItem(q, "A", fmt.Sprintf("a%d", i), i))
		}
		items = append(items, ctItem(q, "B", "b0", 0), ctItem(q, "C", "c0", 0))
		b.push(t, items...)

		p := b.pop(t, q, "A", ctQ("batch", "3", "consumerGroup", "g1"))
		require.NotNil(t, p)
		require.Equal(t, []string{"a0", "a1", "a2"}, ctTxIDs(p.Messages))
		require.Equal(t, 1, p.PartitionsClaimed)

		// Default batch is 1; default partitions is 1.
		p = b.pop(t, q, "", ctQ("consumerGroup", "g2"))
		require.NotNil(t, p)
		require.Len(t, p.Messages, 1)
		p = b.pop(t, q, "", ctQ("consumerGroup", "g3", "batch", "100"))
		require.NotNil(t, p)
		require.Equal(t, 1, p.PartitionsClaimed)

		// partitions=2 claims two partitions under one lease; batch is a global cap.
		p = b.pop(t, q, "", ctQ("consumerGroup", "g4", "batch", "100", "partitions", "2"))
		require.NotNil(t, p)
		require.Equal(t, 2, p.PartitionsClaimed)
		seen := map[string]bool{}
		for _, m := range p.Messages {
			seen[m.Partition] = true
			require.Equal(t, p.LeaseID, m.LeaseID)
		}
		require.Len(t, seen, 2)
		rest := b.pop(t, q, "", ctQ("consumerGroup", "g4", "batch", "100", "partitions", "5"))
		require.NotNil(t, rest)
		require.Equal(t, 1, rest.PartitionsClaimed)
		require.False(t, seen[rest.Partition])
		require.Nil(t, b.pop(t, q, "", ctQ("consumerGroup", "g4", "partitions", "5")))

		p = b.pop(t, q, "", ctQ("consumerGroup", "g5", "batch", "2", "partitions", "3"))
		require.NotNil(t, p)
		require.Len(t, p.Messages, 2, "batch caps the messages across partitions")

		// partitions is ignored on the partition route.
		p = b.pop(t, q, "B", ctQ("consumerGroup", "g6", "batch", "100", "partitions", "3"))
		require.NotNil(t, p)
		require.Equal(t, 1, p.PartitionsClaimed)
		require.Equal(t, []string{"b0"}, ctTxIDs(p.Messages))
	})

	t.Run("long-poll returns when a push arrives", func(t *testing.T) {
		t.Parallel()
		q := ctName("wait")
		type result struct {
			r   ctReply
			err error
		}
		got := make(chan result, 1)
		ctx, cancel := context.WithTimeout(t.Context(), ctHangGuard)
		defer cancel()
		go func() {
			r, err := b.rawCall(ctx, "GET", ctPopPath(q, "", ctQ("wait", "true", "timeout", "60000")), nil)
			got <- result{r, err}
		}()
		parked := b.rb.Broker.Parked()
		ctWaitFor(t, func() bool { return b.rb.Broker.Parked() > parked })
		b.push(t, ctItem(q, "", "w1", 1))
		res := <-got
		require.NoError(t, res.err)
		var p ctPop
		ctRequireJSON(t, res.r, http.StatusOK, &p)
		require.Equal(t, []string{"w1"}, ctTxIDs(p.Messages))
	})

	t.Run("bad query parameters", func(t *testing.T) {
		t.Parallel()
		q := ctName("badq")
		b.push(t, ctItem(q, "", "x", 1))
		for _, qs := range []url.Values{ctQ("batch", "abc"), ctQ("batch", "-1"), ctQ("batch", "1.5"), ctQ("partitions", "abc"), ctQ("timeout", "soon")} {
			ctRequireError(t, b.call(t, t.Context(), "GET", ctPopPath(q, "", qs), nil), http.StatusBadRequest)
			ctRequireError(t, b.call(t, t.Context(), "GET", ctPopPath(q, "Default", qs), nil), http.StatusBadRequest)
		}
		// Nothing was claimed by the refused pops.
		p := b.pop(t, q, "", nil)
		require.NotNil(t, p)
		require.Equal(t, []string{"x"}, ctTxIDs(p.Messages))
	})
}

// ---------------------------------------------------------------------------------------------------
// Ack
// ---------------------------------------------------------------------------------------------------

func TestContractAck(t *testing.T) {
	t.Parallel()
	b := ctStart(t, nil)

	t.Run("single ack, lease release, repeated completion is a noop", func(t *testing.T) {
		t.Parallel()
		q, _ := b.ctFreshQueue(t, "ack", nil)
		b.push(t, ctItem(q, "", "t1", 1), ctItem(q, "", "t2", 2))
		p := b.pop(t, q, "", nil)
		require.NotNil(t, p)
		m := p.Messages[0]
		a := b.ack(t, ctAckOf(m, "completed", p.LeaseID))
		ctRequireAckOK(t, a, q, "Default")
		require.True(t, a.LeaseReleased)
		require.False(t, a.DLQ)
		require.False(t, a.Noop)

		again := b.ack(t, ctAckOf(m, "completed", p.LeaseID))
		ctRequireAckOK(t, again, q, "Default")
		require.True(t, again.Noop)
		require.False(t, again.LeaseReleased)
		noLease := b.ack(t, ctAckOf(m, "", ""))
		require.True(t, noLease.Success)
		require.True(t, noLease.Noop)
		succ := b.ack(t, ctAckOf(m, "success", p.LeaseID))
		require.True(t, succ.Success)
		require.True(t, succ.Noop)

		next := b.pop(t, q, "", nil)
		require.NotNil(t, next, "the lease was released")
		require.Equal(t, []string{"t2"}, ctTxIDs(next.Messages))
	})

	t.Run("batch ack in request order", func(t *testing.T) {
		t.Parallel()
		q, _ := b.ctFreshQueue(t, "ackb", nil)
		b.push(t, ctItem(q, "", "t0", 0), ctItem(q, "", "t1", 1), ctItem(q, "", "t2", 2), ctItem(q, "", "t3", 3))
		p := b.pop(t, q, "", ctQ("batch", "3", "consumerGroup", "grp"))
		require.NotNil(t, p)
		require.Len(t, p.Messages, 3)
		acks := make([]map[string]any, 0, 4)
		for _, m := range p.Messages {
			a := ctAckOf(m, "completed", p.LeaseID)
			a["consumerGroup"] = "ignored" // the top-level group overrides per-item groups
			acks = append(acks, a)
		}
		acks = append(acks, ctAckOf(p.Messages[2], "completed", p.LeaseID)) // repeated in the same request
		res := b.ackBatch(t, "grp", acks...)
		for i, r := range res[:3] {
			ctRequireAckOK(t, r, q, "Default")
			require.Equal(t, i == 2, r.LeaseReleased, "the lease ends with the last delivered message")
			require.False(t, r.Noop)
		}
		require.True(t, res[3].Success)
		require.True(t, res[3].Noop)
		require.False(t, res[3].LeaseReleased)

		p = b.pop(t, q, "", ctQ("batch", "10", "consumerGroup", "grp"))
		require.NotNil(t, p)
		require.Equal(t, []string{"t3"}, ctTxIDs(p.Messages))
	})

	t.Run("empty acknowledgments", func(t *testing.T) {
		t.Parallel()
		for _, body := range []string{`{"acknowledgments":[]}`, `{"consumerGroup":"g","acknowledgments":[]}`} {
			r := b.call(t, t.Context(), "POST", "/api/v1/ack/batch", body)
			ctRequireJSON(t, r, http.StatusOK, nil)
			require.Equal(t, "[]", string(r.body))
		}
	})

	t.Run("per-request indices under concurrency", func(t *testing.T) {
		t.Parallel()
		pid := uuid.NewString()
		reqs := make([][]map[string]any, 10)
		txs := make([][]string, len(reqs))
		for g := range reqs {
			for i := range 1 + g%4 {
				tx := fmt.Sprintf("r%d-%d", g, i)
				reqs[g] = append(reqs[g], map[string]any{"transactionId": tx, "partitionId": pid})
				txs[g] = append(txs[g], tx)
			}
		}
		replies := ctParallel(t, len(reqs), func(g int) (ctReply, error) {
			return b.rawCall(t.Context(), "POST", "/api/v1/ack/batch", map[string]any{"acknowledgments": reqs[g]})
		})
		for g, r := range replies {
			for _, res := range ctCheckAcks(t, r, txs[g]) { // checks index 0..n-1 and request order
				ctRequireRejected(t, res, ctRejectUnresolvable)
			}
		}
	})

	t.Run("unresolvable: the cursor does not move and the message redelivers", func(t *testing.T) {
		t.Parallel()
		q, _ := b.ctFreshQueue(t, "unres", nil)
		b.push(t, ctItem(q, "", "u1", 1))
		p := b.pop(t, q, "", nil)
		require.NotNil(t, p)
		m := p.Messages[0]

		a := b.ack(t, map[string]any{"transactionId": "never-pushed", "partitionId": m.PartitionID, "leaseId": p.LeaseID})
		ctRequireRejected(t, a, ctRejectUnresolvable)
		a = b.ack(t, map[string]any{"transactionId": m.TransactionID, "partitionId": uuid.NewString()})
		ctRequireRejected(t, a, ctRejectUnresolvable)
		res := b.ackBatch(t, "", map[string]any{"transactionId": "nope", "partitionId": m.PartitionID, "leaseId": p.LeaseID, "status": "failed"})
		ctRequireRejected(t, res[0], ctRejectUnresolvable)

		// The lease is intact (a retry under it releases it) and the message comes back unchanged.
		r := b.ack(t, ctAckOf(m, "retry", p.LeaseID))
		ctRequireAckOK(t, r, q, "Default")
		require.True(t, r.LeaseReleased)
		again := b.pop(t, q, "", nil)
		require.NotNil(t, again)
		require.Equal(t, m.ID, again.Messages[0].ID)
		require.Zero(t, again.Messages[0].RetryCount, "retry does not count")
	})

	t.Run("invalid or expired lease: the cursor does not move and the message redelivers", func(t *testing.T) {
		t.Parallel()
		q, _ := b.ctFreshQueue(t, "lease", map[string]any{"leaseTime": 1})
		b.push(t, ctItem(q, "", "l1", 1), ctItem(q, "", "l2", 2))
		p := b.pop(t, q, "", nil)
		require.NotNil(t, p)
		m := p.Messages[0]

		ctRequireRejected(t, b.ack(t, ctAckOf(m, "completed", uuid.NewString())), ctRejectLease)
		res := b.ackBatch(t, "", ctAckOf(m, "failed", uuid.NewString()), ctAckOf(m, "dlq", uuid.NewString()))
		ctRequireRejected(t, res[0], ctRejectLease)
		ctRequireRejected(t, res[1], ctRejectLease)

		// Nothing moved: once the lease expires, the same message is delivered again.
		r := b.call(t, t.Context(), "GET", ctPopPath(q, "", ctQ("wait", "true", "timeout", "30000")), nil)
		var again ctPop
		ctRequireJSON(t, r, http.StatusOK, &again)
		require.Equal(t, m.ID, again.Messages[0].ID)
		require.NotEqual(t, p.LeaseID, again.LeaseID)

		// The old lease is now expired and replaced; an ack without a lease is not validated.
		ctRequireRejected(t, b.ack(t, ctAckOf(m, "completed", p.LeaseID)), ctRejectLease)
		ctRequireAckOK(t, b.ack(t, ctAckOf(again.Messages[0], "completed", "")), q, "Default")
		next := b.pop(t, q, "", ctQ("wait", "true", "timeout", "30000"))
		require.NotNil(t, next)
		require.Equal(t, "l2", next.Messages[0].TransactionID)
	})

	t.Run("already committed", func(t *testing.T) {
		t.Parallel()
		q, _ := b.ctFreshQueue(t, "commit", nil)
		b.push(t, ctItem(q, "", "c1", 1), ctItem(q, "", "c2", 2), ctItem(q, "", "c3", 3))
		p1 := b.pop(t, q, "", nil)
		require.NotNil(t, p1)
		m1 := p1.Messages[0]
		ctRequireAckOK(t, b.ack(t, ctAckOf(m1, "completed", p1.LeaseID)), q, "Default")

		// A failed / dlq ack for a message behind the cursor is refused, even under its own lease.
		ctRequireRejected(t, b.ack(t, ctAckOf(m1, "failed", p1.LeaseID)), ctRejectCommitted)
		ctRequireRejected(t, b.ack(t, ctAckOf(m1, "dlq", "")), ctRejectCommitted)
		ctRequireRejected(t, b.ack(t, ctAckOf(m1, "completed", uuid.NewString())), ctRejectCommitted)

		// The cursor did not move back: the next pop serves c2.
		p2 := b.pop(t, q, "", nil)
		require.NotNil(t, p2)
		m2 := p2.Messages[0]
		require.Equal(t, "c2", m2.TransactionID)

		// A completion without a lease is a harmless repeat.
		repeated := b.ack(t, ctAckOf(m1, "completed", ""))
		require.True(t, repeated.Success, "%+v", repeated)
		require.True(t, repeated.Noop)

		// None of this disturbed c2's lease.
		a := b.ack(t, ctAckOf(m2, "completed", p2.LeaseID))
		ctRequireAckOK(t, a, q, "Default")
		require.True(t, a.LeaseReleased)
		p3 := b.pop(t, q, "", nil)
		require.NotNil(t, p3)
		require.Equal(t, "c3", p3.Messages[0].TransactionID)
	})

	t.Run("repeated completion: noop under the delivering lease, already committed under another", func(t *testing.T) {
		t.Parallel()
		q, _ := b.ctFreshQueue(t, "relax", nil)
		b.push(t, ctItem(q, "", "c1", 1), ctItem(q, "", "c2", 2))
		p1 := b.pop(t, q, "", nil)
		require.NotNil(t, p1)
		m1 := p1.Messages[0]
		ctRequireAckOK(t, b.ack(t, ctAckOf(m1, "completed", p1.LeaseID)), q, "Default")
		p2 := b.pop(t, q, "", nil)
		require.NotNil(t, p2)
		m2 := p2.Messages[0]
		require.Equal(t, "c2", m2.TransactionID)

		// decisions.md: a completion of a message behind the cursor is a noop when "repeated under the
		// lease that delivered it (or with no lease)"; "a completion under another lease" is "already
		// committed", even when that other lease is the partition's current one.
		ctRequireRejected(t, b.ack(t, ctAckOf(m1, "completed", p2.LeaseID)), ctRejectCommitted)
		repeated := b.ack(t, ctAckOf(m1, "completed", p1.LeaseID))
		require.True(t, repeated.Success, "%+v", repeated)
		require.True(t, repeated.Noop)

		// None of this disturbed c2's lease.
		a := b.ack(t, ctAckOf(m2, "completed", p2.LeaseID))
		ctRequireAckOK(t, a, q, "Default")
		require.True(t, a.LeaseReleased)
	})

	t.Run("failed within retryLimit redelivers with retryCount incremented", func(t *testing.T) {
		t.Parallel()
		q, _ := b.ctFreshQueue(t, "retry", map[string]any{"retryLimit": 2})
		b.push(t, ctItem(q, "", "f1", 1), ctItem(q, "", "f2", 2))
		var lastLease string
		for want := range 3 {
			p := b.pop(t, q, "", nil)
			require.NotNil(t, p, "delivery %d", want)
			m := p.Messages[0]
			require.Equal(t, "f1", m.TransactionID)
			require.Equal(t, want, m.RetryCount)
			require.NotEqual(t, lastLease, p.LeaseID)
			lastLease = p.LeaseID
			a := b.ack(t, map[string]any{"transactionId": m.TransactionID, "partitionId": m.PartitionID, "leaseId": p.LeaseID, "status": "failed", "error": "boom"})
			ctRequireAckOK(t, a, q, "Default")
			require.True(t, a.LeaseReleased)
			require.Equal(t, want == 2, a.DLQ, "retries exhausted after retryLimit failures")
			if want < 2 {
				// The released lease is no longer valid.
				ctRequireRejected(t, b.ack(t, ctAckOf(m, "completed", p.LeaseID)), ctRejectLease)
			}
		}
		p := b.pop(t, q, "", nil)
		require.NotNil(t, p)
		require.Equal(t, "f2", p.Messages[0].TransactionID)
		require.Zero(t, p.Messages[0].RetryCount, "the next message has a fresh budget")
	})

	t.Run("failed past retryLimit goes to the DLQ and the next message is served", func(t *testing.T) {
		t.Parallel()
		q, _ := b.ctFreshQueue(t, "nodlq", map[string]any{"retryLimit": 0})
		b.push(t, ctItem(q, "", "d1", 1), ctItem(q, "", "d2", 2), ctItem(q, "", "d3", 3))
		p := b.pop(t, q, "", nil)
		require.NotNil(t, p)
		a := b.ack(t, ctAckOf(p.Messages[0], "failed", p.LeaseID))
		ctRequireAckOK(t, a, q, "Default")
		require.True(t, a.DLQ)
		require.True(t, a.LeaseReleased)

		p = b.pop(t, q, "", nil)
		require.NotNil(t, p)
		require.Equal(t, "d2", p.Messages[0].TransactionID)
		a = b.ack(t, ctAckOf(p.Messages[0], "dlq", p.LeaseID))
		ctRequireAckOK(t, a, q, "Default")
		require.True(t, a.DLQ)
		require.True(t, a.LeaseReleased)

		p = b.pop(t, q, "", nil)
		require.NotNil(t, p)
		require.Equal(t, "d3", p.Messages[0].TransactionID)
	})

	t.Run("status dlq with the default retry budget", func(t *testing.T) {
		t.Parallel()
		q, _ := b.ctFreshQueue(t, "dlq", nil)
		b.push(t, ctItem(q, "", "x1", 1), ctItem(q, "", "x2", 2))
		p := b.pop(t, q, "", ctQ("batch", "2"))
		require.NotNil(t, p)
		res := b.ackBatch(t, "", ctAckOf(p.Messages[0], "dlq", p.LeaseID), ctAckOf(p.Messages[1], "completed", p.LeaseID))
		ctRequireAckOK(t, res[0], q, "Default")
		require.True(t, res[0].DLQ)
		require.False(t, res[0].LeaseReleased)
		ctRequireAckOK(t, res[1], q, "Default")
		require.False(t, res[1].DLQ)
		require.True(t, res[1].LeaseReleased)
		require.Nil(t, b.pop(t, q, "", nil))
	})

	t.Run("validation errors", func(t *testing.T) {
		t.Parallel()
		pid := uuid.NewString()
		for _, c := range []struct{ body, want string }{
			{`{}`, "transactionId is required"},
			{`{"partitionId":"` + pid + `"}`, "transactionId is required"},
			{`{"transactionId":5,"partitionId":"` + pid + `"}`, "transactionId is required"},
			{`{"transactionId":null,"partitionId":"` + pid + `"}`, "transactionId is required"},
			{`{"transactionId":"t"}`, "partitionId is required to ensure message uniqueness"},
			{`{"transactionId":"t","partitionId":5}`, "partitionId is required to ensure message uniqueness"},
			{`{"transactionId":"t","partitionId":null}`, "partitionId is required to ensure message uniqueness"},
		} {
			ctRequireErrorText(t, b.call(t, t.Context(), "POST", "/api/v1/ack", c.body), http.StatusBadRequest, c.want)
		}
		for _, bad := range []string{"not-a-uuid", pid + "0", strings.ReplaceAll(pid, "-", "")} {
			ctRequireError(t, b.call(t, t.Context(), "POST", "/api/v1/ack", map[string]any{"transactionId": "t", "partitionId": bad}), http.StatusBadRequest)
		}
		for _, body := range []string{`{"transactionId":`, `[]x`, ``, ` `} {
			ctRequireBadBody(t, b.call(t, t.Context(), "POST", "/api/v1/ack", body))
		}
		ctRequireBadBody(t, b.call(t, t.Context(), "POST", "/api/v1/ack", nil))

		for _, c := range []struct{ body, want string }{
			{`{}`, "acknowledgments array is required"},
			{`{"consumerGroup":"g"}`, "acknowledgments array is required"},
			{`{"acknowledgments":null}`, "acknowledgments array is required"},
			{`{"acknowledgments":"x"}`, "acknowledgments array is required"},
			{`{"acknowledgments":{"transactionId":"t"}}`, "acknowledgments array is required"},
			{`{"acknowledgments":[{"partitionId":"` + pid + `"}]}`, "Each acknowledgment must have a valid transactionId string"},
			{`{"acknowledgments":[{"transactionId":1,"partitionId":"` + pid + `"}]}`, "Each acknowledgment must have a valid transactionId string"},
			{`{"acknowledgments":[{"transactionId":"t"}]}`, "Each acknowledgment must have a valid partitionId string to ensure message uniqueness"},
			{`{"acknowledgments":[{"transactionId":"t","partitionId":false}]}`, "Each acknowledgment must have a valid partitionId string to ensure message uniqueness"},
			{`{"acknowledgments":[{"transactionId":"t","partitionId":"` + pid + `"},{"transactionId":"u"}]}`, "Each acknowledgment must have a valid partitionId string to ensure message uniqueness"},
		} {
			ctRequireErrorText(t, b.call(t, t.Context(), "POST", "/api/v1/ack/batch", c.body), http.StatusBadRequest, c.want)
		}
		ctRequireError(t, b.call(t, t.Context(), "POST", "/api/v1/ack/batch",
			map[string]any{"acknowledgments": []any{map[string]any{"transactionId": "t", "partitionId": "zzz"}}}), http.StatusBadRequest)
		for _, body := range []string{`{"acknowledgments":[`, `nope`, ``} {
			ctRequireBadBody(t, b.call(t, t.Context(), "POST", "/api/v1/ack/batch", body))
		}
	})

	t.Run("a refused batch applies nothing", func(t *testing.T) {
		t.Parallel()
		q, _ := b.ctFreshQueue(t, "refuse", nil)
		b.push(t, ctItem(q, "", "r1", 1))
		p := b.pop(t, q, "", nil)
		require.NotNil(t, p)
		m := p.Messages[0]
		r := b.call(t, t.Context(), "POST", "/api/v1/ack/batch", map[string]any{"acknowledgments": []any{
			ctAckOf(m, "completed", p.LeaseID),
			map[string]any{"transactionId": "x", "partitionId": "not-a-uuid"},
		}})
		ctRequireError(t, r, http.StatusBadRequest)
		// The valid first item was not applied: the message is still pending under its lease.
		a := b.ack(t, ctAckOf(m, "retry", p.LeaseID))
		ctRequireAckOK(t, a, q, "Default")
		require.True(t, a.LeaseReleased)
		again := b.pop(t, q, "", nil)
		require.NotNil(t, again)
		require.Equal(t, m.ID, again.Messages[0].ID)
	})
}

// ---------------------------------------------------------------------------------------------------
// 413
// ---------------------------------------------------------------------------------------------------

func TestContractBodyLimit(t *testing.T) {
	t.Parallel()
	b := ctStart(t, map[string]string{"QUEEN_MAX_BODY_BYTES": "1024"})
	const want = `{"error":"request body exceeds QUEEN_MAX_BODY_BYTES (1024)"}`

	bigPush := func(size int) []byte {
		pad := strings.Repeat("x", size)
		raw := []byte(`{"items":[{"queue":"big","payload":"` + pad + `"}]}`)
		return raw[:size]
	}
	require413 := func(t *testing.T, r ctReply) {
		t.Helper()
		ctRequireError(t, r, http.StatusRequestEntityTooLarge)
		require.JSONEq(t, want, string(r.body))
	}

	t.Run("declared length over the cap", func(t *testing.T) {
		t.Parallel()
		for _, path := range []string{"/api/v1/push", "/api/v1/configure", "/api/v1/ack", "/api/v1/ack/batch"} {
			require413(t, b.call(t, t.Context(), "POST", path, bigPush(4096)))
		}
		// Just over and just under the cap.
		require413(t, b.call(t, t.Context(), "POST", "/api/v1/push", bigPush(1025)))
		q := ctName("small")
		small := []byte(`{"items":[{"queue":"` + q + `","payload":"`)
		small = append(small, bytes.Repeat([]byte("y"), 1024-len(small)-len(`"}]}`))...)
		small = append(small, `"}]}`...)
		require.Len(t, small, 1024)
		ctRequireJSON(t, b.call(t, t.Context(), "POST", "/api/v1/push", small), http.StatusCreated, nil)
	})

	t.Run("chunked body over the cap", func(t *testing.T) {
		t.Parallel()
		// A reader without a length is sent chunked.
		req, err := http.NewRequestWithContext(t.Context(), "POST", b.rb.URL+"/api/v1/push", io.MultiReader(bytes.NewReader(bigPush(4096))))
		require.NoError(t, err)
		req.ContentLength = -1
		require413(t, b.send(t, req))
	})

	t.Run("chunked body over the cap is answered before the stream ends", func(t *testing.T) {
		t.Parallel()
		// The cap must be answered without reading the whole body: a client still streaming gets its
		// 413 while it streams.
		pr, pw := io.Pipe()
		defer pw.Close()
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second) // hang guard only
		defer cancel()
		// The transport waits for the body writer before it gives up on a request: end the stream
		// when the guard fires.
		stop := context.AfterFunc(ctx, func() { _ = pw.CloseWithError(ctx.Err()) })
		defer stop()
		req, err := http.NewRequestWithContext(ctx, "POST", b.rb.URL+"/api/v1/push", pr)
		require.NoError(t, err)
		req.ContentLength = -1
		go func() {
			// Over the cap, then the stream stays open until the test ends.
			_, _ = pw.Write(bigPush(2048))
		}()
		require413(t, b.send(t, req))
	})

	t.Run("declared 10 MB, a few bytes sent: 413 at once", func(t *testing.T) {
		t.Parallel()
		conn, err := net.Dial("tcp", b.addr())
		require.NoError(t, err)
		defer conn.Close()
		_, err = fmt.Fprintf(conn, "POST /api/v1/push HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
			b.addr(), 10<<20, `{"items":[`)
		require.NoError(t, err)
		// The deadline is a hang guard: the answer must come without the rest of the body.
		require.NoError(t, conn.SetReadDeadline(time.Now().Add(ctHangGuard)))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		require.NoError(t, err)
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require413(t, ctReply{status: resp.StatusCode, header: resp.Header, contentLength: resp.ContentLength, body: raw})
	})

	t.Run("GETs are unaffected", func(t *testing.T) {
		t.Parallel()
		ctRequireJSON(t, b.call(t, t.Context(), "GET", "/health", nil), http.StatusOK, nil)
	})
}
