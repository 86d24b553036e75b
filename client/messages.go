package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
)

// Operator reads over messages, traces and the resource rollups. Their answers are dashboard data
// whose inner shape may grow, so they are returned as raw JSON like [Client.Status].

// MessageFilter narrows [Client.Messages]. Zero fields do not filter.
type MessageFilter struct {
	Queue, Partition string
	// Status is pending, processing, completed or failed (relative to ConsumerGroup).
	Status        string
	ConsumerGroup string
	Limit, Offset int
}

func pageQuery(v url.Values, limit, offset int) url.Values {
	if limit > 0 {
		v.Set("limit", strconv.Itoa(limit))
	}
	if offset > 0 {
		v.Set("offset", strconv.Itoa(offset))
	}
	return v
}

// Messages lists messages (GET /api/v1/messages).
func (c *Client) Messages(ctx context.Context, f MessageFilter) (json.RawMessage, error) {
	v := url.Values{}
	for k, s := range map[string]string{"queue": f.Queue, "partition": f.Partition, "status": f.Status, "consumerGroup": f.ConsumerGroup} {
		if s != "" {
			v.Set(k, s)
		}
	}
	var out json.RawMessage
	err := c.call(ctx, request{method: http.MethodGet, path: "/api/v1/messages", query: pageQuery(v, f.Limit, f.Offset)}, &out)
	return out, err
}

func messagePath(partitionID, transactionID string) string {
	return "/api/v1/messages/" + seg(partitionID) + "/" + seg(transactionID)
}

// Message returns one message with its payload (GET /api/v1/messages/:partitionId/:transactionId);
// 404 when missing ([IsNotFound]).
func (c *Client) Message(ctx context.Context, partitionID, transactionID string) (json.RawMessage, error) {
	var out json.RawMessage
	err := c.call(ctx, request{method: http.MethodGet, path: messagePath(partitionID, transactionID)}, &out)
	return out, err
}

// DeleteMessage deletes one message (DELETE /api/v1/messages/:partitionId/:transactionId); 404
// when missing.
func (c *Client) DeleteMessage(ctx context.Context, partitionID, transactionID string) (json.RawMessage, error) {
	var out json.RawMessage
	err := c.call(ctx, request{method: http.MethodDelete, path: messagePath(partitionID, transactionID)}, &out)
	return out, err
}

// MessageTraces returns the trace events of a message (GET /api/v1/traces/:partitionId/:transactionId).
func (c *Client) MessageTraces(ctx context.Context, partitionID, transactionID string) (json.RawMessage, error) {
	var out json.RawMessage
	err := c.call(ctx, request{method: http.MethodGet, path: "/api/v1/traces/" + seg(partitionID) + "/" + seg(transactionID)}, &out)
	return out, err
}

// TraceNames lists trace names with usage (GET /api/v1/traces/names).
func (c *Client) TraceNames(ctx context.Context, limit, offset int) (json.RawMessage, error) {
	var out json.RawMessage
	err := c.call(ctx, request{method: http.MethodGet, path: "/api/v1/traces/names", query: pageQuery(url.Values{}, limit, offset)}, &out)
	return out, err
}

// TracesByName lists the trace events carrying name (GET /api/v1/traces/by-name/:name).
func (c *Client) TracesByName(ctx context.Context, name string, limit, offset int) (json.RawMessage, error) {
	var out json.RawMessage
	err := c.call(ctx, request{method: http.MethodGet, path: "/api/v1/traces/by-name/" + seg(name), query: pageQuery(url.Values{}, limit, offset)}, &out)
	return out, err
}

// Namespaces lists namespaces with rolled-up counts (GET /api/v1/resources/namespaces).
func (c *Client) Namespaces(ctx context.Context) (json.RawMessage, error) {
	var out json.RawMessage
	err := c.call(ctx, request{method: http.MethodGet, path: "/api/v1/resources/namespaces"}, &out)
	return out, err
}

// Tasks lists tasks with rolled-up counts (GET /api/v1/resources/tasks).
func (c *Client) Tasks(ctx context.Context) (json.RawMessage, error) {
	var out json.RawMessage
	err := c.call(ctx, request{method: http.MethodGet, path: "/api/v1/resources/tasks"}, &out)
	return out, err
}

// CommitRaw sends a transaction bundle as given ({"operations":[…],"requiredLeases":[…]}) to
// POST /api/v1/transaction and returns the answer, including a rollback (success:false), as raw
// JSON. [Transaction] is the typed builder; this serves tools that replay a bundle from a file.
func (c *Client) CommitRaw(ctx context.Context, bundle json.RawMessage) (json.RawMessage, error) {
	var out json.RawMessage
	err := c.call(ctx, request{method: http.MethodPost, path: "/api/v1/transaction", body: bundle}, &out)
	return out, err
}
