package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
)

// Do sends any request (method, path like "/api/v1/messages", optional query and JSON body) through
// both retry layers and failover, and returns the response body as raw JSON (nil for a 204). It
// serves routes that have no typed method yet, such as `/streams/v1/*` or the proxy's
// `/_proxy/admin/*`; non-2xx answers are returned as [*APIError] like every other call.
func (c *Client) Do(ctx context.Context, method, path string, query url.Values, body any) (json.RawMessage, error) {
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	resp, err := c.do(ctx, request{method: method, path: path, query: query, body: body})
	if err != nil {
		return nil, err
	}
	if resp.status == http.StatusNoContent || len(resp.body) == 0 {
		return nil, nil
	}
	if !json.Valid(resp.body) {
		return nil, malformed("%s %s: body is not JSON", method, path)
	}
	return resp.body, nil
}

// GetText performs a GET and returns the body as it came, for routes that do not answer JSON (the
// Prometheus exposition at /metrics/prometheus).
func (c *Client) GetText(ctx context.Context, path string, query url.Values) ([]byte, error) {
	resp, err := c.do(ctx, request{method: http.MethodGet, path: path, query: query})
	if err != nil {
		return nil, err
	}
	return resp.body, nil
}
