package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// ---------------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------------

const (
	queueMode = "__QUEUE_MODE__"

	rejectLease        = "invalid or expired lease"
	rejectCommitted    = "already committed: the cursor moved past this message before this ack"
	rejectUnresolvable = "unresolvable: transaction not in the ack window (hash purged or never pushed); if leased, the message redelivers"
)

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

// ackBatch posts to /api/v1/ack/batch.
func (b *testBundle) ackBatch(t testing.TB, group string, acks ...map[string]any) []ackResult {
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
	return checkAcks(t, r, txs)
}

// ackOf builds an acknowledgement of m; lease "" leaves it out.
func ackOf(m message, status, lease string) map[string]any {
	a := map[string]any{"transactionId": m.TransactionID, "partitionId": m.PartitionID, "status": status}
	if lease != "" {
		a["leaseId"] = lease
	}
	if m.ConsumerGroup != "" && m.ConsumerGroup != queueMode {
		a["consumerGroup"] = m.ConsumerGroup
	}
	return a
}

func requireAckOK(t testing.TB, a ackResult, queue, partition string) {
	t.Helper()
	require.True(t, a.Success, "%+v", a)
	require.Nil(t, a.Error)
	require.NotNil(t, a.QueueName)
	require.Equal(t, queue, *a.QueueName)
	require.NotNil(t, a.PartitionName)
	require.Equal(t, partition, *a.PartitionName)
}

func requireRejected(t testing.TB, a ackResult, text string) {
	t.Helper()
	require.False(t, a.Success, "%+v", a)
	require.NotNil(t, a.Error, "%+v", a)
	require.Equal(t, text, *a.Error)
	require.False(t, a.LeaseReleased)
	require.False(t, a.DLQ)
	require.False(t, a.Noop)
}

// --- configure ---

var defaultOptions = map[string]any{
	"priority": json.Number("0"), "leaseTime": json.Number("300"), "retryLimit": json.Number("3"),
	"retryDelay": json.Number("1000"), "maxSize": json.Number("0"), "ttl": json.Number("3600"),
	"deadLetterQueue": false, "dlqAfterMaxRetries": false, "delayedProcessing": json.Number("0"),
	"windowBuffer": json.Number("0"), "retentionSeconds": json.Number("0"),
	"completedRetentionSeconds": json.Number("0"), "retentionEnabled": false, "encryptionEnabled": false,
	"maxWaitTimeSeconds": json.Number("0"),
}

func (b *testBundle) configure(t testing.TB, body map[string]any) map[string]any {
	t.Helper()
	r := b.call(t, t.Context(), "POST", "/api/v1/configure", body)
	var res map[string]any
	requireJSON(t, r, http.StatusOK, &res)
	require.Equal(t, []string{"configured", "namespace", "options", "partitionId", "queue", "queueId", "task"}, sortedKeys(res), "%s", r)
	require.Equal(t, true, res["configured"])
	require.Equal(t, body["queue"], res["queue"])
	requireUUID(t, res["queueId"].(string))
	requireUUID(t, res["partitionId"].(string))
	return res
}

// freshQueue configures a queue with retryDelay 0 (so failed acks are redelivered at once) plus opts.
func (b *testBundle) freshQueue(t testing.TB, prefix string, opts map[string]any) (string, string) {
	t.Helper()
	q := uniqueName(prefix)
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

// ---------------------------------------------------------------------------------------------------
// Configure
// ---------------------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------------------
// Push
// ---------------------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------------------
// Pop
// ---------------------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------------------
// Ack
// ---------------------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------------------
// 413
// ---------------------------------------------------------------------------------------------------
