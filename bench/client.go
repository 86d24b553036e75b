package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync/atomic"
	"time"
)

// client speaks the Queen wire protocol (docs/reference.md) over one http.Transport, to one broker or to
// several sharing a database (-brokers): then each request goes to the next broker in turn, as a load
// balancer without session affinity sends them, unless the client was pinned to one (pinned).
type client struct {
	bases []string
	next  *atomic.Uint64 // shared by a client and its pinned views
	hc    *http.Client
	auth  string // Authorization header of every request ("" = none): the proxy's key with -via-proxy
}

// requestsSent counts the HTTP requests of every client: with -via-proxy, the proxy's CPU per request.
var requestsSent atomic.Int64

// newClient returns a client whose transport holds at most conns connections to each broker.
func newClient(bases []string, conns int) *client {
	tr := &http.Transport{
		MaxConnsPerHost:     conns,
		MaxIdleConnsPerHost: conns,
		MaxIdleConns:        conns * len(bases),
		// Below the broker's (and the proxy's) idle timeout, 60 s: a connection the server closes as
		// idle while a POST goes out on it fails that POST ("server closed idle connection"; Go resends
		// only requests it knows to be idempotent), which the idle scenario at 19 000 consumers counted
		// as errors. Closing it first on this side leaves no such race.
		IdleConnTimeout:    50 * time.Second,
		DisableCompression: true,
	}
	return &client{bases: bases, next: new(atomic.Uint64), hc: &http.Client{Transport: tr, Timeout: 2 * time.Minute}}
}

// base is the broker the next request goes to.
func (c *client) base() string {
	if len(c.bases) == 1 {
		return c.bases[0]
	}
	return c.bases[(c.next.Add(1)-1)%uint64(len(c.bases))]
}

// pinned is a view of c (same transport) that sends every request to one broker, the next in turn: a
// producer or consumer loop given one keeps its broker, as a client with session affinity does.
func (c *client) pinned() *client {
	return &client{bases: []string{c.base()}, next: c.next, hc: c.hc, auth: c.auth}
}

func (c *client) close() { c.hc.CloseIdleConnections() }

// withConns is c (same brokers, turn and credentials) on a transport of its own holding at most conns
// connections to each broker.
func (c *client) withConns(conns int) *client {
	n := newClient(c.bases, conns)
	n.next, n.auth = c.next, c.auth
	return n
}

type pushItem struct {
	Queue         string          `json:"queue"`
	Partition     string          `json:"partition"`
	Payload       json.RawMessage `json:"payload"`
	TransactionID string          `json:"transactionId"`
}

// pushResult is what the producers read of each item's answer.
type pushResult struct {
	Status string `json:"status"`
	Error  string `json:"error"`
}

type popMessage struct {
	ID            string          `json:"id"`
	TransactionID string          `json:"transactionId"`
	PartitionID   string          `json:"partitionId"`
	LeaseID       string          `json:"leaseId"`
	ConsumerGroup string          `json:"consumerGroup"`
	Data          json.RawMessage `json:"data"`
	Partition     string          `json:"partition"`
}

type popResponse struct {
	Messages []popMessage `json:"messages"`
}

type ackItem struct {
	TransactionID string `json:"transactionId"`
	PartitionID   string `json:"partitionId"`
	LeaseID       string `json:"leaseId,omitempty"`
	Status        string `json:"status"`
}

type ackResult struct {
	Success bool   `json:"success"`
	Error   any    `json:"error"`
	Noop    bool   `json:"noop"`
	TxID    string `json:"transactionId"`
}

// httpError is a non-2xx answer.
type httpError struct {
	Status int
	Body   string
}

func (e *httpError) Error() string { return fmt.Sprintf("HTTP %d: %s", e.Status, e.Body) }

// do sends a request and decodes a JSON answer into out (unless nil or 204). It returns the status code.
func (c *client) do(ctx context.Context, method, path string, in, out any) (int, error) {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return 0, err
		}
	}
	status, b, err := c.send(ctx, method, path, body)
	if err != nil {
		return status, err
	}
	if out != nil && status != http.StatusNoContent && len(b) > 0 {
		if err := json.Unmarshal(b, out); err != nil {
			return status, fmt.Errorf("decode %s answer: %w", path, err)
		}
	}
	return status, nil
}

// request sends a request to the next broker (with a JSON body unless body is nil, and c's
// Authorization header) and counts it in requestsSent; the caller closes the answer's body.
func (c *client) request(ctx context.Context, method, path string, body []byte) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base()+path, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.auth != "" {
		req.Header.Set("Authorization", c.auth)
	}
	requestsSent.Add(1)
	return c.hc.Do(req)
}

// send sends a request (a JSON body unless nil) and returns the answer's status and body; a status of
// 300 or more is an *httpError.
func (c *client) send(ctx context.Context, method, path string, body []byte) (int, []byte, error) {
	resp, err := c.request(ctx, method, path, body)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, nil, err
	}
	if resp.StatusCode >= 300 {
		return resp.StatusCode, nil, &httpError{resp.StatusCode, string(bytes.TrimSpace(b))}
	}
	return resp.StatusCode, b, nil
}

// pushBody sends a push body written by a pushWriter and reads the statuses of its n items into res
// (reused), reading the answer through buf (reused).
func (c *client) pushBody(ctx context.Context, body []byte, n int, buf *bytes.Buffer, res []pushResult) ([]pushResult, error) {
	resp, err := c.request(ctx, http.MethodPost, "/api/v1/push", body)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	buf.Reset()
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	if resp.StatusCode >= 300 {
		return nil, &httpError{resp.StatusCode, string(bytes.TrimSpace(b))}
	}
	res, ok := scanPushStatuses(b, res[:0])
	if !ok {
		res = res[:0]
		if err := json.Unmarshal(b, &res); err != nil {
			return nil, fmt.Errorf("decode /api/v1/push answer: %w", err)
		}
	}
	if len(res) != n {
		return nil, fmt.Errorf("push: %d results for %d items", len(res), n)
	}
	return res, nil
}

func (c *client) push(ctx context.Context, items []pushItem) ([]pushResult, error) {
	var res []pushResult
	_, err := c.do(ctx, http.MethodPost, "/api/v1/push", map[string]any{"items": items}, &res)
	if err == nil && len(res) != len(items) {
		err = fmt.Errorf("push: %d results for %d items", len(res), len(items))
	}
	return res, err
}

// pop long-polls the queue; nil messages means 204.
func (c *client) pop(ctx context.Context, queue, group string, batch, partitions int, wait time.Duration) ([]popMessage, error) {
	q := url.Values{}
	q.Set("batch", strconv.Itoa(batch))
	if partitions > 1 {
		q.Set("partitions", strconv.Itoa(partitions))
	}
	if wait > 0 {
		q.Set("wait", "true")
		q.Set("timeout", strconv.Itoa(int(wait/time.Millisecond)))
	}
	if group != "" {
		q.Set("consumerGroup", group)
	}
	path := "/api/v1/pop/queue/" + queue + "?" + q.Encode()
	status, b, err := c.send(ctx, http.MethodGet, path, nil)
	if err != nil || status == http.StatusNoContent || len(b) == 0 {
		return nil, err
	}
	if msgs, ok := scanPopMessages(b, nil); ok {
		return msgs, nil
	}
	var res popResponse
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, fmt.Errorf("decode %s answer: %w", path, err)
	}
	return res.Messages, nil
}

func (c *client) ackBatch(ctx context.Context, group string, acks []ackItem) ([]ackResult, error) {
	_, b, err := c.send(ctx, http.MethodPost, "/api/v1/ack/batch", appendAckBody(nil, group, acks))
	if err != nil {
		return nil, err
	}
	res, ok := scanAckResults(b, nil)
	if !ok {
		res = nil
		if err := json.Unmarshal(b, &res); err != nil {
			return nil, fmt.Errorf("decode /api/v1/ack/batch answer: %w", err)
		}
	}
	if len(res) != len(acks) {
		return res, fmt.Errorf("ack: %d results for %d acks", len(res), len(acks))
	}
	return res, nil
}

type txAck struct {
	Type          string `json:"type"` // "ack"
	TransactionID string `json:"transactionId"`
	PartitionID   string `json:"partitionId"`
	LeaseID       string `json:"leaseId,omitempty"`
	ConsumerGroup string `json:"consumerGroup,omitempty"`
	Status        string `json:"status"`
}

type txPush struct {
	Type  string     `json:"type"` // "push"
	Items []pushItem `json:"items"`
}

type txResponse struct {
	TransactionID string `json:"transactionId"`
	Success       bool   `json:"success"`
	Error         string `json:"error"`
}

func (c *client) transaction(ctx context.Context, ops []any) (txResponse, error) {
	var res txResponse
	_, err := c.do(ctx, http.MethodPost, "/api/v1/transaction", map[string]any{"operations": ops}, &res)
	return res, err
}

// configure creates the queue (configure replaces every option, so the others take their defaults).
func (c *client) configure(ctx context.Context, queue string, leaseSeconds int) error {
	return c.configureOptions(ctx, queue, map[string]any{"leaseTime": leaseSeconds})
}

// configureOptions sets a queue's options (all of them: the ones not named take their defaults).
func (c *client) configureOptions(ctx context.Context, queue string, options map[string]any) error {
	_, err := c.do(ctx, http.MethodPost, "/api/v1/configure", map[string]any{"queue": queue, "options": options}, nil)
	return err
}

// hasTransactionRoute probes /api/v1/transaction with an empty operations list: an implementation answers
// 400 ("operations array cannot be empty"), a broker without the route 404.
func (c *client) hasTransactionRoute(ctx context.Context) (bool, error) {
	status, err := c.do(ctx, http.MethodPost, "/api/v1/transaction", map[string]any{"operations": []any{}}, nil)
	if status == http.StatusNotFound {
		return false, nil
	}
	if status == 0 {
		return false, err
	}
	return true, nil
}

// deleteQueue removes a queue and everything in it.
func (c *client) deleteQueue(ctx context.Context, queue string) error {
	_, err := c.do(ctx, http.MethodDelete, "/api/v1/resources/queues/"+url.PathEscape(queue), nil, nil)
	return err
}
