package client

import (
	"log/slog"
	"net/http"
	"time"
)

// Defaults applied by [New] to zero fields of [Config].
const (
	DefaultRetryAttempts   = 3
	DefaultRetryDelay      = time.Second
	DefaultRetry429Max     = 10
	DefaultRetry429Base    = 500 * time.Millisecond
	DefaultRetry429Cap     = 30 * time.Second
	DefaultRequestTimeout  = 30 * time.Second
	DefaultUnhealthyPeriod = 5 * time.Second
)

// Config configures a [Client]. The zero value of every field selects the documented default, so
// Config{URLs: []string{"http://localhost:6632"}} is a complete configuration.
type Config struct {
	// URLs are the broker base URLs, e.g. "http://localhost:6632". With several, a backend that
	// answers 5xx or fails at the network level is marked unhealthy and requests fail over to the
	// next one. At least one is required.
	URLs []string

	// Token, when set, is sent as "Authorization: Bearer <Token>" (a JWT, or a proxy API key).
	Token string

	// RetryAttempts is the number of attempts layer one makes for 5xx answers and network
	// failures, failing over between URLs (default 3). Any 4xx ends the loop at once. Set 1 to
	// disable these retries.
	RetryAttempts int

	// RetryDelay is the first layer-one backoff (default 1s); it doubles after every attempt.
	RetryDelay time.Duration

	// Retry429 is layer two: in-place retries of 429 answers on the same backend.
	Retry429 Retry429

	// Timeout bounds one HTTP attempt of an ordinary request (default 30s). A long-poll pop gets
	// its poll timeout plus Timeout. A timed-out attempt counts as a network failure.
	Timeout time.Duration

	// UnhealthyPeriod is how long a failed backend is skipped before it is tried again
	// (default 5s). A healthy backend is always preferred while one exists.
	UnhealthyPeriod time.Duration

	// HTTPClient sends the requests (default: a client with its own pooled transport). Its own
	// Timeout, if set, applies on top of Timeout, so leave it 0 for long polls.
	HTTPClient *http.Client

	// Logger receives retry, failover and consumer diagnostics (default: discarded).
	Logger *slog.Logger
}

// Retry429 configures layer two, which retries 429 (rate limited) answers in place on the same
// backend: a rate limit is backpressure, not a backend-health signal, so it never triggers
// failover. The delay before retry n (n = 0, 1, …) is Retry-After when the response carries it,
// otherwise min(Cap, Base × 2^n); either way it is jittered by ±20%.
type Retry429 struct {
	// MaxAttempts bounds the attempts made for a request answered 429. Zero selects the default:
	// 10 for ordinary requests and unbounded for long-poll pops (wait=true), whose loop is
	// unbounded anyway. Any explicit positive value bounds both kinds; a negative value makes
	// both unbounded.
	MaxAttempts int
	// Base is the exponential base used when there is no Retry-After (default 500ms).
	Base time.Duration
	// Cap is the ceiling of the computed delay (default 30s). It does not shorten Retry-After.
	Cap time.Duration
}

func (c Config) withDefaults() Config {
	if c.RetryAttempts <= 0 {
		c.RetryAttempts = DefaultRetryAttempts
	}
	if c.RetryDelay <= 0 {
		c.RetryDelay = DefaultRetryDelay
	}
	if c.Retry429.Base <= 0 {
		c.Retry429.Base = DefaultRetry429Base
	}
	if c.Retry429.Cap <= 0 {
		c.Retry429.Cap = DefaultRetry429Cap
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultRequestTimeout
	}
	if c.UnhealthyPeriod <= 0 {
		c.UnhealthyPeriod = DefaultUnhealthyPeriod
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{Transport: &http.Transport{
			Proxy:               http.ProxyFromEnvironment,
			MaxIdleConnsPerHost: 64,
			IdleConnTimeout:     9 * time.Second, // the broker closes idle keep-alives after 10s
		}}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// max429 is the layer-two attempt budget for one request; 0 means unbounded.
func (r Retry429) max429(longPoll bool) int {
	switch {
	case r.MaxAttempts > 0:
		return r.MaxAttempts
	case r.MaxAttempts < 0:
		return 0
	case longPoll:
		return 0
	default:
		return DefaultRetry429Max
	}
}
