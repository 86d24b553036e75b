package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// request is one logical API call; do turns it into as many HTTP attempts as the two retry layers
// allow.
type request struct {
	method   string
	path     string // already escaped, starting with "/"
	query    url.Values
	body     any  // JSON-encoded when non-nil
	longPoll bool // a pop with wait=true: unbounded 429 budget by default
	timeout  time.Duration
}

type response struct {
	status int
	header http.Header
	body   []byte
}

// do runs r through both retry layers.
//
// Layer one (this loop): up to RetryAttempts attempts; a 5xx or a network failure marks the backend
// unhealthy, waits RetryDelay × 2^(attempt-1) and fails over to the next healthy URL. Any 4xx ends
// the loop. Layer two (send429) runs inside each attempt and retries 429 in place.
func (c *Client) do(ctx context.Context, r request) (*response, error) {
	var payload []byte
	if r.body != nil {
		var err error
		if payload, err = json.Marshal(r.body); err != nil {
			return nil, fmt.Errorf("queen: encode %s %s: %w", r.method, r.path, err)
		}
	}
	var lastErr error
	for attempt := 0; attempt < c.cfg.RetryAttempts; attempt++ {
		if attempt > 0 {
			d := c.cfg.RetryDelay << (attempt - 1)
			c.cfg.Logger.WarnContext(ctx, "queen: retrying after server or network failure",
				slog.String("method", r.method), slog.String("path", r.path),
				slog.Int("attempt", attempt+1), slog.Duration("delay", d), slog.Any("error", lastErr))
			if err := c.sleep(ctx, d); err != nil {
				return nil, fmt.Errorf("queen: %s %s: %w (last failure: %v)", r.method, r.path, err, lastErr)
			}
		}
		i := c.pick()
		resp, err := c.send429(ctx, i, r, payload)
		switch {
		case err != nil && ctx.Err() != nil:
			return nil, fmt.Errorf("queen: %s %s: %w", r.method, r.path, ctx.Err())
		case err != nil: // network failure
			c.markDown(i)
			lastErr = err
			continue
		case resp.status >= 500:
			c.markDown(i)
			lastErr = c.apiError(i, r, resp)
			continue
		case resp.status >= 400:
			return nil, c.apiError(i, r, resp)
		}
		c.markUp(i)
		return resp, nil
	}
	return nil, lastErr
}

// send429 is layer two: it repeats the attempt on backend i while the answer is 429, sleeping
// Retry-After (or min(Cap, Base×2^n)) jittered by ±20%, until the budget is spent. The last 429 is
// returned as a response, not an error, so that do reports it as a terminal *APIError.
func (c *Client) send429(ctx context.Context, i int, r request, payload []byte) (*response, error) {
	budget := c.cfg.Retry429.max429(r.longPoll)
	for n := 0; ; n++ {
		resp, err := c.send(ctx, i, r, payload)
		if err != nil || resp.status != http.StatusTooManyRequests {
			return resp, err
		}
		if budget > 0 && n+1 >= budget {
			return resp, nil
		}
		d, ok := retryAfter(resp.header, c.now())
		if !ok {
			d = c.cfg.Retry429.Base << min(n, 32)
			if d > c.cfg.Retry429.Cap || d <= 0 {
				d = c.cfg.Retry429.Cap
			}
		}
		d = jitter(d, c.rand())
		c.cfg.Logger.DebugContext(ctx, "queen: rate limited, retrying in place",
			slog.String("method", r.method), slog.String("path", r.path),
			slog.Int("attempt", n+1), slog.Duration("delay", d))
		if err := c.sleep(ctx, d); err != nil {
			return nil, err
		}
	}
}

// jitter spreads d uniformly over [0.8d, 1.2d) given u in [0, 1).
func jitter(d time.Duration, u float64) time.Duration {
	return time.Duration(float64(d) * (0.8 + 0.4*u))
}

// retryAfter parses a Retry-After header: delay-seconds (the proxy's form) or an HTTP date.
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil && secs >= 0 {
		return time.Duration(secs * 1000 * float64(time.Millisecond)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// send makes exactly one HTTP attempt against backend i.
func (c *Client) send(ctx context.Context, i int, r request, payload []byte) (*response, error) {
	u := c.endpoint(i, r)
	timeout := r.timeout
	if timeout <= 0 {
		timeout = c.cfg.Timeout
	}
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var body io.Reader
	if payload != nil {
		body = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(actx, r.method, u, body)
	if err != nil {
		return nil, fmt.Errorf("queen: build request: %w", err)
	}
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if c.cfg.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.Token)
	}
	res, err := c.cfg.HTTPClient.Do(req)
	if err != nil {
		return nil, &TransportError{Method: r.method, URL: u, Err: err}
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, &TransportError{Method: r.method, URL: u, Err: err}
	}
	return &response{status: res.StatusCode, header: res.Header, body: b}, nil
}

func (c *Client) endpoint(i int, r request) string {
	u := c.backends[i].base.String() + r.path
	if len(r.query) > 0 {
		u += "?" + r.query.Encode()
	}
	return u
}

func (c *Client) apiError(i int, r request, resp *response) *APIError {
	e := &APIError{Status: resp.status, Method: r.method, URL: c.endpoint(i, r)}
	var env struct {
		Error any    `json:"error"`
		Code  string `json:"code"`
	}
	if json.Unmarshal(resp.body, &env) == nil && env.Error != nil {
		if s, ok := env.Error.(string); ok {
			e.Message = s
		} else {
			e.Message = string(resp.body)
		}
		e.Code = env.Code
	} else {
		e.Message = strings.TrimSpace(string(resp.body))
		if len(e.Message) > 512 {
			e.Message = e.Message[:512] + "…"
		}
	}
	if d, ok := retryAfter(resp.header, c.now()); ok && resp.status == http.StatusTooManyRequests {
		e.RetryAfter = d
	}
	return e
}

// getJSON/postJSON etc. run a request and decode a 2xx JSON body into out (when out is non-nil).
func (c *Client) call(ctx context.Context, r request, out any) error {
	resp, err := c.do(ctx, r)
	if err != nil {
		return err
	}
	if out == nil || resp.status == http.StatusNoContent {
		return nil
	}
	if err := json.Unmarshal(resp.body, out); err != nil {
		return fmt.Errorf("%w: %s %s: %v", ErrMalformedResponse, r.method, r.path, err)
	}
	return nil
}

var errEmptyName = errors.New("queen: empty name")

// seg escapes one path segment. The broker's routes match one segment per name, so a name containing
// "/" cannot be addressed.
func seg(s string) string { return url.PathEscape(s) }
