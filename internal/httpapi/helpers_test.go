package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

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

// eventually polls f until it returns nil or the timeout passes.
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
