package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// BrokerSample is one broker process's vital signs at one moment.
type BrokerSample struct {
	At                           time.Time
	BrokerID, Hostname           string
	Port, PID                    int
	CPUUserPct, CPUSysPct, RSSMB float64
	Goroutines                   int
	SchedLagAvgMs, SchedLagMaxMs float64
	PoolSize, PoolIdle           int
	PoolActive, PoolWaiting      int
	Parked                       int
	ParkedByQueue                map[string]int
}

// AddBrokerSample stores one sample and drops this and every broker's samples older than keepDays.
func (a Analytics) AddBrokerSample(ctx context.Context, b BrokerSample, keepDays int) error {
	s := a.s
	byQueue := b.ParkedByQueue
	if byQueue == nil {
		byQueue = map[string]int{}
	}
	_, err := s.pool.Exec(ctx, q("BrokerSampleInsert"), b.At, b.BrokerID, b.Hostname, b.Port, b.PID,
		b.CPUUserPct, b.CPUSysPct, b.RSSMB, b.Goroutines, b.SchedLagAvgMs, b.SchedLagMaxMs,
		b.PoolSize, b.PoolIdle, b.PoolActive, b.PoolWaiting, b.Parked, byQueue, keepDays)
	if err != nil {
		return fmt.Errorf("store: add broker sample: %w", interpret(err))
	}
	return nil
}

// BrokerSamples reads the samples between from and to, oldest first; hostname and brokerID filter
// when not empty.
func (a Analytics) BrokerSamples(ctx context.Context, from, to time.Time, hostname, brokerID string) ([]BrokerSample, error) {
	s := a.s
	return collect(ctx, s, "BrokerSampleList", func(r pgx.Rows) (b BrokerSample, err error) {
		err = r.Scan(&b.At, &b.BrokerID, &b.Hostname, &b.Port, &b.PID, &b.CPUUserPct, &b.CPUSysPct, &b.RSSMB,
			&b.Goroutines, &b.SchedLagAvgMs, &b.SchedLagMaxMs, &b.PoolSize, &b.PoolIdle, &b.PoolActive,
			&b.PoolWaiting, &b.Parked, &b.ParkedByQueue)
		return b, err
	}, from, to, nullText(hostname), nullText(brokerID))
}

// PoolSnapshot reports this broker's connection pools (both together): their maximum size, idle and
// in-use connections, and how many acquires so far found no idle connection and had to wait (a running
// total).
func (s *Store) PoolSnapshot() (size, idle, active int, waitedTotal int64) {
	for _, p := range []*pgxpool.Pool{s.pool.Pool, s.hot.Pool} {
		st := p.Stat()
		size, idle, active = size+int(st.MaxConns()), idle+int(st.IdleConns()), active+int(st.AcquiredConns())
		waitedTotal += st.EmptyAcquireCount()
	}
	return size, idle, active, waitedTotal
}
