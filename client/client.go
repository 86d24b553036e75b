package client

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Client talks to one Queen deployment (one or several broker URLs). It is safe for concurrent
// use; create one per process and share it.
type Client struct {
	cfg      Config
	backends []*backend

	mu   sync.Mutex // protects next and every backend's downUntil
	next int        // index of the preferred backend

	// Test seams: sleep waits for d or until ctx ends; rand returns a value in [0, 1) for jitter;
	// now is the clock used for backend health.
	sleep func(ctx context.Context, d time.Duration) error
	rand  func() float64
	now   func() time.Time
}

type backend struct {
	base      *url.URL
	downUntil time.Time // zero when healthy
}

// New returns a Client for cfg, applying the documented defaults to its zero fields. It fails when
// no URL is given or a URL does not parse as an absolute http(s) URL. New does no I/O.
func New(cfg Config) (*Client, error) {
	if len(cfg.URLs) == 0 {
		return nil, errors.New("queen: Config.URLs is empty")
	}
	c := &Client{cfg: cfg.withDefaults(), sleep: sleepCtx, rand: rand.Float64, now: time.Now}
	for _, raw := range cfg.URLs {
		u, err := url.Parse(strings.TrimRight(raw, "/"))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("queen: bad broker URL %q", raw)
		}
		c.backends = append(c.backends, &backend{base: u})
	}
	return c, nil
}

// Config returns the effective configuration, defaults applied.
func (c *Client) Config() Config { return c.cfg }

// BackendHealth reports each configured URL and whether it is currently considered healthy.
func (c *Client) BackendHealth() map[string]bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	out := make(map[string]bool, len(c.backends))
	for _, b := range c.backends {
		out[b.base.String()] = !now.Before(b.downUntil)
	}
	return out
}

// pick returns the backend to use: the first healthy one at or after the preferred index, or, when
// none is healthy, the one whose quarantine ends first.
func (c *Client) pick() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	best := -1
	for i := range c.backends {
		j := (c.next + i) % len(c.backends)
		b := c.backends[j]
		if !now.Before(b.downUntil) {
			return j
		}
		if best < 0 || b.downUntil.Before(c.backends[best].downUntil) {
			best = j
		}
	}
	return best
}

// markDown quarantines backend i and moves the preference to the next URL.
func (c *Client) markDown(i int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.backends[i].downUntil = c.now().Add(c.cfg.UnhealthyPeriod)
	if c.next == i {
		c.next = (i + 1) % len(c.backends)
	}
}

func (c *Client) markUp(i int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.backends[i].downUntil = time.Time{}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
