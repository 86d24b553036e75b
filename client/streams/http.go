package streams

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"
)

// HTTPError is a non-2xx answer from the streams routes.
type HTTPError struct {
	Status int
	Body   string
	Path   string
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("streams: POST %s: HTTP %d: %s", e.Path, e.Status, strings.TrimSpace(e.Body))
}

// retryable reports whether an answer is worth another attempt: 5xx, 408 and 429. Every other 4xx
// is the request's own fault and final.
func retryable(status int) bool {
	return status >= 500 || status == http.StatusRequestTimeout || status == http.StatusTooManyRequests
}

// httpClient is the streams runtime's own small client: one URL, POST with a JSON body, up to
// Retries retries with exponential backoff (100 ms doubling, capped at 5 s, plus 0–30 % jitter) on
// network errors, 5xx, 408 and 429. Retry-After is not read.
type httpClient struct {
	base    string
	token   string
	hc      *http.Client
	retries int
	timeout time.Duration

	sleep func(ctx context.Context, d time.Duration) error // test seam
	rand  func() float64                                   // test seam: [0, 1)
}

func newHTTPClient(base, token string, retries int) *httpClient {
	if retries < 0 {
		retries = 0
	}
	return &httpClient{base: strings.TrimRight(base, "/"), token: token, hc: &http.Client{}, retries: retries,
		timeout: 30 * time.Second, sleep: sleepCtx, rand: rand.Float64}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// backoff is the delay before retry n (0-based).
func (c *httpClient) backoff(n int) time.Duration {
	base := 5000.0
	if n < 6 {
		base = min(5000, 100*float64(int(1)<<n))
	}
	return time.Duration(base*(1+0.3*c.rand())) * time.Millisecond
}

// post sends body to path and decodes a 2xx answer into out. A non-2xx final answer is an *HTTPError
// carrying the status and body, so callers can read the 409 and 200-with-success:false cases.
func (c *httpClient) post(ctx context.Context, path string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("streams: encode %s: %w", path, err)
	}
	var last error
	for attempt := 0; attempt <= c.retries; attempt++ {
		if attempt > 0 {
			if err := c.sleep(ctx, c.backoff(attempt-1)); err != nil {
				return err
			}
		}
		status, resp, err := c.once(ctx, path, b)
		switch {
		case err != nil:
			if ctx.Err() != nil {
				return ctx.Err()
			}
			last = fmt.Errorf("streams: POST %s: %w", path, err)
			continue
		case status >= 200 && status < 300:
			if out == nil || len(bytes.TrimSpace(resp)) == 0 {
				return nil
			}
			if err := json.Unmarshal(resp, out); err != nil {
				return fmt.Errorf("streams: POST %s: decode answer: %w", path, err)
			}
			return nil
		}
		last = &HTTPError{Status: status, Body: string(resp), Path: path}
		if !retryable(status) {
			return last
		}
	}
	return last
}

func (c *httpClient) once(ctx context.Context, path string, body []byte) (int, []byte, error) {
	actx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, c.base+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, err
	}
	return resp.StatusCode, b, nil
}

// IsConfigMismatch reports whether err is the broker refusing a registration because the operator
// chain changed (HTTP 409): run again with Reset to wipe the state, or use a new query id.
func IsConfigMismatch(err error) bool {
	var he *HTTPError
	return errors.As(err, &he) && he.Status == http.StatusConflict
}
