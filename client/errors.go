package client

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// ErrMalformedResponse reports a response the SDK refuses to interpret: a per-item result array of
// the wrong length, an item whose index or transaction id does not line up with the request, or a
// body that is not the JSON the route documents. It is wrapped with the details; test it with
// [errors.Is]. A result is never attributed to the wrong message.
var ErrMalformedResponse = errors.New("queen: malformed response")

// ErrLeaseLost is wrapped by [Client.ExtendLease] when the broker reports the lease unknown,
// expired or no longer active: its messages are (or will be) redelivered.
var ErrLeaseLost = errors.New("queen: lease lost")

// ErrClosed is returned by a [Producer] after Close.
var ErrClosed = errors.New("queen: producer closed")

// APIError is a non-2xx answer from the broker or the proxy in front of it. Code is the proxy's
// machine-readable code (for example "rate_limited", "quota_exceeded", "payload_too_large") or the
// broker's "no_such_route"; it is empty when the body carried none. Branch on Status and Code, not
// on Message, whose text may change.
type APIError struct {
	// Status is the HTTP status code.
	Status int
	// Code is the `code` field of the error envelope, if any.
	Code string
	// Message is the `error` field of the envelope, or the raw body when it was not JSON.
	Message string
	// RetryAfter is the parsed Retry-After header of a 429 (zero when absent).
	RetryAfter time.Duration
	// Method and URL identify the failed request.
	Method, URL string
}

// Error implements error.
func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "queen: %s %s: %d %s", e.Method, e.URL, e.Status, http.StatusText(e.Status))
	if e.Code != "" {
		fmt.Fprintf(&b, " [%s]", e.Code)
	}
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	return b.String()
}

// Terminal reports whether retrying the same request cannot help: every 4xx except 429. A 401
// means fix the credential, a 403 a quota or permission, a 413 means reshape the request.
func (e *APIError) Terminal() bool {
	return e.Status >= 400 && e.Status < 500 && e.Status != http.StatusTooManyRequests
}

// TransportError is a request that never produced an HTTP response (connection refused, reset,
// timeout) on its last attempt, after the layer-one retries and failover were exhausted.
type TransportError struct {
	// Method and URL identify the last attempt.
	Method, URL string
	// Err is the underlying network error.
	Err error
}

// Error implements error.
func (e *TransportError) Error() string {
	return fmt.Sprintf("queen: %s %s: transport: %v", e.Method, e.URL, e.Err)
}

// Unwrap returns the network error.
func (e *TransportError) Unwrap() error { return e.Err }

// AckError is a rejected acknowledgement: the broker answered 200 but the item said
// success:false. The cursor did not move and the message will be redelivered.
type AckError struct {
	// Index is the position of the acknowledgement in its request.
	Index int
	// TransactionID is the acknowledged message's transaction id.
	TransactionID string
	// Reason is the broker's text, e.g. "invalid or expired lease".
	Reason string
}

// Error implements error.
func (e *AckError) Error() string {
	return fmt.Sprintf("queen: ack %d (transaction %s) rejected: %s", e.Index, e.TransactionID, e.Reason)
}

// TransactionError is a transaction the broker rolled back (HTTP 200 with success:false). Nothing
// in it was applied. Code is the error prefix: "QDUP" for a duplicate push, "QTXN" for a rejected
// ack, empty when the text carries no code.
type TransactionError struct {
	// TransactionID is the broker's id for the attempted transaction.
	TransactionID string
	// Code is "QDUP", "QTXN" or "".
	Code string
	// Message is the full error text.
	Message string
}

// Error implements error.
func (e *TransactionError) Error() string {
	return fmt.Sprintf("queen: transaction %s rolled back: %s", e.TransactionID, e.Message)
}

// IsRateLimited reports whether err is (or wraps) a 429 that outlived the layer-two retry budget.
func IsRateLimited(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Status == http.StatusTooManyRequests
}

// IsNotFound reports whether err is (or wraps) a 404: an unknown queue, message, dead-letter row or
// consumer group, or a route the broker does not have (Code "no_such_route").
func IsNotFound(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Status == http.StatusNotFound
}

// IsTerminal reports whether err is an [APIError] that retrying cannot fix (4xx other than 429):
// authentication (401), permissions or quotas (403), size limits (413), bad requests (400).
func IsTerminal(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Terminal()
}

// IsTransport reports whether err is a network failure that exhausted the retries.
func IsTransport(err error) bool {
	var te *TransportError
	return errors.As(err, &te)
}

// HTTPStatus returns the status of an [APIError] in err's chain, or 0.
func HTTPStatus(err error) int {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Status
	}
	return 0
}

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformedResponse, fmt.Sprintf(format, args...))
}

// isMissing reports a 404 about an addressed object, as opposed to a route the broker lacks.
func isMissing(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Status == http.StatusNotFound && ae.Code != "no_such_route"
}
