package proxy

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/queen-go/queen/internal/connlimit"
	"github.com/queen-go/queen/internal/proxy/proxystore"
)

// Code is the machine-readable `code` of a proxy error; the codes are a contract, the texts are not.
type Code string

// The proxy's codes (docs/proxy.md lists them with their statuses).
const (
	CodeUnauthorized         Code = "unauthorized"
	CodeClusterSuspended     Code = "cluster_suspended"
	CodeStorageQuotaExceeded Code = "storage_quota_exceeded"
	CodeQuotaExceeded        Code = "quota_exceeded"
	CodePushBlocked          Code = "push_blocked"
	CodeFeatureGated         Code = "feature_gated"
	CodeRouteBlocked         Code = "route_blocked"
	CodePayloadTooLarge      Code = "payload_too_large"
	CodeClusterUnknown       Code = "cluster_unknown"
	CodeRateLimited          Code = "rate_limited"
	CodeBadGateway           Code = "bad_gateway"
	CodeUpstreamTimeout      Code = "upstream_timeout"
	CodeConnectionLimit      Code = connlimit.Code // also the listener's refusal past the global cap
	// CodeClientClosed: the client went away before the broker answered (a consumer giving up its
	// long-poll). Counted as a decision of its own, never answered nor logged as a failure.
	CodeClientClosed Code = "client_closed"

	// Admin-API and internal codes (not part of the tenant table).
	CodeBadRequest    Code = "bad_request"
	CodeNotFound      Code = "not_found"
	CodeConflict      Code = "conflict"
	CodeInternalError Code = "internal_error"
)

// codeTable is the one place a code gets its HTTP status and default text.
var codeTable = map[Code]struct {
	Status int
	Text   string
}{
	CodeUnauthorized:         {http.StatusUnauthorized, "unauthorized"},
	CodeClusterSuspended:     {http.StatusForbidden, "cluster is suspended"},
	CodeStorageQuotaExceeded: {http.StatusForbidden, "storage quota exceeded"},
	CodeQuotaExceeded:        {http.StatusForbidden, "monthly message quota exhausted"},
	CodePushBlocked:          {http.StatusForbidden, "pushes are blocked by a billing hold"},
	CodeFeatureGated:         {http.StatusForbidden, "route requires a plan feature that is off"},
	CodeRouteBlocked:         {http.StatusNotFound, "route not available"},
	CodePayloadTooLarge:      {http.StatusRequestEntityTooLarge, "request body exceeds cap"},
	CodeClusterUnknown:       {http.StatusMisdirectedRequest, "unknown cluster"},
	CodeRateLimited:          {http.StatusTooManyRequests, "request rate limit exceeded"},
	CodeBadGateway:           {http.StatusBadGateway, "bad gateway"},
	CodeUpstreamTimeout:      {http.StatusGatewayTimeout, "upstream timeout"},
	CodeConnectionLimit:      {http.StatusServiceUnavailable, "too many open connections"},
	CodeClientClosed:         {499, "client closed request"},
	CodeBadRequest:           {http.StatusBadRequest, "bad request"},
	CodeNotFound:             {http.StatusNotFound, "not found"},
	CodeConflict:             {http.StatusConflict, "already exists"},
	CodeInternalError:        {http.StatusInternalServerError, "internal error"},
}

// Error is a proxy decision or failure that becomes `{"error":…,"code":…}`.
type Error struct {
	Code       Code
	Message    string // empty: the table's default text
	RetryAfter int    // seconds; set on every rate_limited error
	cause      error  // logged, never sent
}

func (e *Error) Error() string {
	if e.Message != "" {
		return string(e.Code) + ": " + e.Message
	}
	return string(e.Code)
}

// Unwrap returns the logged cause.
func (e *Error) Unwrap() error { return e.cause }

// Status is the HTTP status of e's code.
func (e *Error) Status() int {
	if c, ok := codeTable[e.Code]; ok {
		return c.Status
	}
	return http.StatusInternalServerError
}

// Text is the human-readable message sent on the wire.
func (e *Error) Text() string {
	if e.Message != "" {
		return e.Message
	}
	return codeTable[e.Code].Text
}

func newError(code Code, msg string) *Error { return &Error{Code: code, Message: msg} }

func wrapError(code Code, msg string, cause error) *Error {
	return &Error{Code: code, Message: msg, cause: cause}
}

// storeErrors maps the store's sentinels (admin API and CLI paths) to codes.
var storeErrors = []struct {
	err  error
	code Code
}{
	{proxystore.ErrNotFound, CodeNotFound},
	{proxystore.ErrConflict, CodeConflict},
	{proxystore.ErrInvalid, CodeBadRequest},
}

// asError classifies err; anything unclassified becomes a generic internal_error whose cause is logged only.
func asError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	for _, m := range storeErrors {
		if errors.Is(err, m.err) {
			return &Error{Code: m.code, Message: err.Error(), cause: err}
		}
	}
	return &Error{Code: CodeInternalError, cause: err}
}

// writeError writes e's envelope, with Retry-After on a 429.
func writeError(w http.ResponseWriter, e *Error) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if e.Code == CodeRateLimited {
		ra := e.RetryAfter
		if ra < 1 {
			ra = 1
		}
		h.Set("Retry-After", strconv.Itoa(ra))
	}
	if e.Code == CodeConnectionLimit {
		h.Set("Connection", "close") // the connection over the cap is the one to give back
	}
	w.WriteHeader(e.Status())
	_ = json.NewEncoder(w).Encode(struct {
		Error string `json:"error"`
		Code  Code   `json:"code"`
	}{e.Text(), e.Code})
}
