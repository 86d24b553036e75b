package httpapi_test

import (
	"bytes"
	"context"
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
	rb := setup(t, env).rb
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
