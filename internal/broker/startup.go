package broker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/queen-go/queen/internal/crypto"
	"github.com/queen-go/queen/internal/store"
)

// A broker whose configured PostgreSQL is unreachable at startup still starts (docs/decisions.md,
// "Starting without PostgreSQL"): /livez answers, /health is 503, pushes go to the spool; the schema is
// migrated, the encryption key checked and the spool replayed as soon as the database appears. This is
// what lets a restarted pod keep taking pushes through an outage. The embedded database is ours to
// start, so there a failure still stops the broker.

// migrateRetry is how often a broker started without its database tries again.
const migrateRetry = time.Second

// migrateOrWait migrates the schema; unmigrated is true when the database is unreachable and the
// broker starts without it.
func (b *Broker) migrateOrWait(ctx context.Context) (unmigrated bool, err error) {
	err = b.st.Migrate(ctx)
	switch {
	case err == nil:
		return false, nil
	case errors.Is(err, store.ErrUnavailable) && !b.cfg.Embedded():
		b.log.WarnContext(ctx, "PostgreSQL unreachable at startup: serving, spooling pushes; migrating when it appears",
			slog.Any("error", err))
		return true, nil
	}
	return false, fmt.Errorf("broker: %w", err)
}

// checkEncryptionKey refuses to run without the key when a queue is encrypted: the broker could
// neither seal new payloads of that queue nor open stored ones.
func (b *Broker) checkEncryptionKey(ctx context.Context) error {
	if b.cfg.Encryption.Key != nil {
		return nil
	}
	encrypted, err := b.st.AnyEncryptedQueue(ctx)
	if err != nil {
		return fmt.Errorf("broker: %w", err)
	}
	if encrypted {
		return errors.New("broker: a queue has encryptionEnabled but " + crypto.KeyHint + " is not set")
	}
	return nil
}

// awaitDatabase migrates once the database answers, then lets the engine replay and push directly.
// A refusal other than unavailability (permissions, a missing key) stops the broker, as it would have
// at startup.
func (b *Broker) awaitDatabase(ctx context.Context) {
	ctx = context.WithoutCancel(ctx)
	t := time.NewTicker(migrateRetry)
	defer t.Stop()
	for {
		select {
		case <-b.stopped:
			return
		case <-t.C:
		}
		err := b.st.Migrate(ctx)
		if errors.Is(err, store.ErrUnavailable) {
			continue
		}
		if err == nil {
			err = b.checkEncryptionKey(ctx)
		}
		if err != nil {
			b.log.ErrorContext(ctx, "database appeared but the broker cannot use it", slog.Any("error", err))
			select {
			case b.served <- err:
			default:
			}
			return
		}
		b.eng.Migrated()
		b.log.InfoContext(ctx, "PostgreSQL reachable: schema migrated, replaying the spool")
		return
	}
}
