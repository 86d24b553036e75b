package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// defaultListenProbe is how long the LISTEN session may stay silent before it is pinged: a cut session
// is replaced within twice this, and the reconnect wakes every parked pop (Listen's onConnect).
const defaultListenProbe = 10 * time.Second

// PushChannel is the NOTIFY channel on which brokers announce queues with newly claimable partitions.
// It carries the schema name so that installations sharing a database do not wake each other.
func (s *Store) PushChannel() string { return s.schema + "_push" }

// Notify sends each payload on the push channel, in one statement of its own (never inside a pushing
// or acking transaction, where NOTIFY would serialise commits on PostgreSQL's notification lock).
func (s *Store) Notify(ctx context.Context, payloads []string) error {
	if _, err := s.pool.Exec(ctx, q("QueueNotify"), s.PushChannel(), payloads); err != nil {
		return fmt.Errorf("store: notify: %w", interpret(err))
	}
	return nil
}

// Listen holds a dedicated connection LISTENing on channel and calls onNotify with each payload until
// ctx ends. After every (re)connect it calls onConnect, because notifications sent while it was not
// listening are lost and parked consumers must re-check. Under transaction pooling without a
// ListenURL it returns at once: a LISTEN through the pooler would hold a server session only until its
// transaction ends and then hear nothing (see Listens).
//
// A session silent for listenProbe is pinged, and one that does not answer within as long again is
// replaced like a broken one.
func (s *Store) Listen(ctx context.Context, channel string, onConnect func(), onNotify func(payload string)) error {
	if s.noListen {
		return nil
	}
	const first, most = 100 * time.Millisecond, 5 * time.Second
	backoff := first
	for {
		listened := false
		err := s.listenOnce(ctx, channel, func() { listened = true; onConnect() }, onNotify)
		if ctx.Err() != nil {
			return nil
		}
		_ = err // the caller learns about database outages from its own requests
		if listened {
			// The session worked before it broke (a failover, a restart): the new primary may already
			// be there, so the next attempt is quick and the backoff only grows while attempts fail.
			backoff = first
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, most)
	}
}

func (s *Store) listenOnce(ctx context.Context, channel string, onConnect func(), onNotify func(string)) error {
	cfg, err := s.listenConfig()
	if err != nil {
		return err
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("store: listen connect: %w", interpret(err))
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, fmt.Sprintf(q("Listen"), pgx.Identifier{channel}.Sanitize())); err != nil {
		return fmt.Errorf("store: listen: %w", interpret(err))
	}
	onConnect()
	for {
		wctx, cancel := context.WithTimeout(ctx, s.listenProbe)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		if err == nil {
			onNotify(n.Payload)
			continue
		}
		if ctx.Err() != nil || !errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("store: wait for notification: %w", interpret(err))
		}
		// Silent for a probe interval: the session must still answer. A session cut without a FIN (a
		// failover behind a moved address, a dropped NAT or firewall entry) hears nothing and fails
		// nothing until TCP keepalive gives up, minutes in which other brokers' pushes would wake no one
		// here. The driver keeps the connection open after a wait's deadline.
		pctx, cancel := context.WithTimeout(ctx, s.listenProbe)
		err = conn.Ping(pctx)
		cancel()
		if err != nil {
			return fmt.Errorf("store: listen session probe: %w", interpret(err))
		}
	}
}

// Listens reports whether Listen listens: false under transaction pooling without a ListenURL.
func (s *Store) Listens() bool { return !s.noListen }

// listenConfig is the connection of Listen: the general pool's, or ListenURL with the same session
// parameters (LISTEN needs none of them, but the session should look like the broker's).
func (s *Store) listenConfig() (*pgx.ConnConfig, error) {
	pooled := s.pool.Config().ConnConfig
	if s.listenURL == "" {
		return pooled.Copy(), nil
	}
	cfg, err := pgx.ParseConfig(s.listenURL)
	if err != nil {
		return nil, fmt.Errorf("store: parse listen url: %w", err)
	}
	cfg.RuntimeParams["application_name"] = pooled.RuntimeParams["application_name"]
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = pooled.ConnectTimeout
	}
	return cfg, nil
}
