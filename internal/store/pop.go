package store

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// QueueMode is the consumer group of queue-mode (competing) consumers. Every queue has it, so pushes
// keep its pending-work records without it subscribing.
const QueueMode = "__QUEUE_MODE__"

// PopParams selects what one pop claims.
type PopParams struct {
	Queue         string
	Group         string
	Partition     *string // invalid (NULL) = any partition
	MaxPartitions int
	Batch         int
	LeaseID       uuid.UUID // minted by the caller; its last 8 bytes end the claim's lease id (see PoppedMessage.LeaseID)
	AutoAck       bool
}

// PoppedMessage is one delivered message with the partition it came from.
type PoppedMessage struct {
	PartitionID   uuid.UUID
	Partition     string
	Retries       int32
	ID            uuid.UUID
	TransactionID string
	TraceID       *uuid.UUID
	Payload       []byte
	ProducerSub   *string
	Encrypted     bool
	CreatedAt     time.Time
	// The lease the pop claimed its partitions under (the same in every row): its first 8 bytes are those of
	// the lowest claimed partition's id, by which ExtendLease finds it (queries/pop.sql).
	LeaseID uuid.UUID
}

// Pop claims partitions and reads their messages in one statement (see queries/pop.sql). An empty
// result means nothing was claimable.
//
// The statement runs alone, as its own transaction, on the hot pool (whose sessions carry the plan
// settings): one statement and one round-trip. Unless it is autoAck, the statement turns synchronous
// commit off for itself: a lease lost in a crash of PostgreSQL only means its messages are delivered
// again, as when a lease expires, which at-least-once allows; any later synchronous commit (the ack)
// flushes it first. autoAck consumes at delivery and stays synchronous.
func (s *Store) Pop(ctx context.Context, p PopParams) ([]PoppedMessage, error) {
	c, err := s.acquireHot(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Release()
	rows, err := c.Query(ctx, popStatements[shapeOf(p)], p.Queue, p.Group, p.Partition, p.MaxPartitions, p.Batch, p.LeaseID, p.AutoAck, s.now())
	if err != nil {
		return nil, fmt.Errorf("store: pop %q: %w", p.Queue, interpret(err))
	}
	out, err := collectRows(rows, func(r pgx.Rows) (m PoppedMessage, err error) {
		err = r.Scan(&m.PartitionID, &m.Partition, &m.Retries, &m.ID, &m.TransactionID, &m.TraceID,
			&m.Payload, &m.ProducerSub, &m.Encrypted, &m.CreatedAt, &m.LeaseID)
		return m, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: pop %q: %w", p.Queue, interpret(err))
	}
	s.changed.note(len(out), func(i int) uuid.UUID { return out[i].PartitionID })
	return out, nil
}

// popShape is what a pop needs of the Pop statement beyond its common path: each bit keeps the text of
// pop.sql marked with that tag (see "Variants" there).
type popShape uint8

const (
	popAutoAck popShape = 1 << iota // tag autoack
	popMulti                        // tag multi; without it, tag one
	popNamed                        // tag named
	popShapes
)

// shapeOf is the variant of the Pop statement a pop runs. A named pop reads one partition whatever
// MaxPartitions says, so it is never multi.
func shapeOf(p PopParams) popShape {
	var s popShape
	if p.AutoAck {
		s |= popAutoAck
	}
	if p.Partition != nil {
		s |= popNamed
	} else if p.MaxPartitions > 1 {
		s |= popMulti
	}
	return s
}

// PopText is the text of the Pop statement that Store.Pop runs for p: the benchmark's EXPLAIN shows
// the plan the broker runs, not the whole of pop.sql.
func PopText(p PopParams) string { return popStatements[shapeOf(p)] }

// popStatements holds the text of every variant of Pop, built once from the one source in pop.sql so
// that the variants cannot drift apart. Each is a distinct text, so each gets its own prepared
// statement and generic plan on a connection.
var popStatements = func() (out [popShapes]string) {
	for s := range out {
		if shape := popShape(s); shape&popNamed == 0 || shape&popMulti == 0 { // shapeOf makes no other
			out[s] = popVariant(q("Pop"), shape)
		}
	}
	return out
}()

var popSection = regexp.MustCompile(`(?s)/\*\[(\w+)\*/(.*?)/\*(\|.*?)?\]\*/`)

// popVariant keeps the sections of sql whose tag shape has and replaces the others with their
// alternative (/*[tag*/ kept /*|alternative]*/), or nothing. A tag it does not
// know or a marker left unpaired panics: pop.sql is compiled into the binary, so that is a programming
// error, and this runs at package initialisation.
func popVariant(sql string, shape popShape) string {
	has := map[string]bool{
		"autoack": shape&popAutoAck != 0,
		"multi":   shape&popMulti != 0,
		"one":     shape&popMulti == 0,
		"named":   shape&popNamed != 0,
	}
	out := popSection.ReplaceAllStringFunc(sql, func(sec string) string {
		m := popSection.FindStringSubmatch(sec)
		keep, ok := has[m[1]]
		if !ok {
			panic("store: pop.sql: unknown variant tag " + m[1])
		}
		if strings.Contains(m[2], "/*[") {
			panic("store: pop.sql: nested variant section " + m[1])
		}
		if keep {
			return m[2]
		}
		return strings.TrimPrefix(m[3], "|")
	})
	if strings.Contains(out, "/*[") || strings.Contains(out, "/*]*/") {
		panic("store: pop.sql: unpaired variant marker")
	}
	return out
}
