package engine

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/queen-go/queen/internal/crypto"
	"github.com/queen-go/queen/internal/notify"
	"github.com/queen-go/queen/internal/spool"
	"github.com/queen-go/queen/internal/store"
)

// QueueMode is the consumer group of competing consumers that share one cursor per partition.
const QueueMode = store.QueueMode

// Options tune the engine; zero values take the documented defaults.
type Options struct {
	// Hub parks long-poll pops and wakes them, here and across brokers. The caller starts and stops it;
	// nil: the engine builds its own and runs it between Start and Stop.
	Hub                     *notify.Hub
	PushWorkers             int           // concurrent push batches in flight (PUSH_WORKERS)
	PushMaxItems            int           // items merged into one push statement
	AckWorkers              int           // concurrent ack batches in flight (ACK_WORKERS)
	AckMaxItems             int           // ack items merged into one transaction
	RecheckInterval         time.Duration // safety re-check of a parked long-poll, jittered (wakeups.go announces what comes due)
	DefaultSubscriptionMode string        // DEFAULT_SUBSCRIPTION_MODE
	MaxPollTimeout          time.Duration // longest long-poll honoured
	Spool                   *spool.Spool  // nil: pushes fail with 500 while PostgreSQL is unreachable
	SpoolReplayBatch        int           // FILE_BUFFER_MAX_BATCH
	DeadSpoolPath           string        // file for spooled pushes PostgreSQL refuses ("" = log them only)
	OperationTimeout        time.Duration // bound on one batched database operation
	Key                     *crypto.Key   // nil: no QUEEN_ENCRYPTION_KEY; encrypted queues refuse pushes
	Observer                Observer      // told about every push, pop and ack (metrics); nil: none
	// EncryptionCacheTTL bounds how long this broker trusts its cached "is queue X encrypted" answer
	// when another broker reconfigures the queue and its NOTIFY is lost (changes.go).
	EncryptionCacheTTL time.Duration
}

func (o *Options) defaults() {
	orDefault(&o.PushWorkers, 4)
	orDefault(&o.PushMaxItems, 1000)
	orDefault(&o.AckWorkers, 1)
	orDefault(&o.AckMaxItems, 1000)
	orDefault(&o.RecheckInterval, 30*time.Second)
	orDefault(&o.MaxPollTimeout, 300*time.Second)
	orDefault(&o.SpoolReplayBatch, 100)
	orDefault(&o.OperationTimeout, 30*time.Second)
	orDefault(&o.EncryptionCacheTTL, time.Second)
}

// orDefault sets *p to def unless it is positive.
func orDefault[T int | time.Duration](p *T, def T) {
	if *p <= 0 {
		*p = def
	}
}

// Engine is the queue engine of one broker process. Several engines may share a database.
type Engine struct {
	st     *store.Store
	log    *slog.Logger
	opt    Options
	hub    *notify.Hub // parks pops and wakes them; started by Start only when New built it
	ownHub bool
	parts  *partitionCache             // partition ids by (queue, partition); never stale: ids are forgotten on delete
	subs   *ttlCache[string, struct{}] // recorded (queue, group) subscriptions, for subscriptionTTL
	lim    *ttlCache[string, int32]    // each queue's maxSize, for limitTTL
	modes  *Modes                      // maintenance.go: the shared maintenance flags and their routes
	groups *Groups                     // groups.go: the consumer-group routes
	dlq    *DeadLetters                // dlq.go: the dead-letter routes

	spool       *spool.Spool
	dbDown      atomic.Bool   // set when a push found PostgreSQL unreachable; cleared once the spool drains
	unmigrated  atomic.Bool   // startup.go: the schema is not migrated yet (started while PostgreSQL was down)
	replayKick  chan struct{} // wakes the replay loop early
	spoolHealth spoolHealth   // deadspool.go: what /health and metrics say about draining
	push        *coalescer[pushJob, []store.PushOutcome]
	ack         *coalescer[[]AckItem, []AckResult]
	key         *crypto.Key                   // Options.Key
	enc         *ttlCache[string, bool]       // which queues are encrypted, for EncryptionCacheTTL
	counters    queueCounters                 // per-queue operation counts for the stats loop
	ackOne      ackOneStats                   // ack.go: batches applied by the one-statement path
	leases      *leaseMemo                    // what this broker's pops delivered per lease, for acks of whole leases
	qtimes      *ttlCache[string, queueTimes] // wakeups.go: each queue's time settings, for queueTimesTTL
	qtMu        sync.Mutex                    // protects qtWaiting
	qtWaiting   map[string][]func(queueTimes) // queues being looked up, and what to do with the answer

	slots        *popSlots     // popslots.go: pops admitted to the hot pool at once
	draining     chan struct{} // closed when the broker shuts down: parked pops answer empty at once
	drainingOnce sync.Once

	stop context.CancelFunc
}

// New builds an engine over st. Call Start before use and Stop when done.
func New(st *store.Store, log *slog.Logger, opt Options) *Engine {
	opt.defaults()
	e := &Engine{st: st, log: log, opt: opt, parts: newPartitionCache(100_000),
		subs: newTTLCache[string, struct{}](subscriptionTTL, 100_000, nil), lim: newTTLCache[string, int32](limitTTL, 100_000, nil),
		draining: make(chan struct{}), spool: opt.Spool, replayKick: make(chan struct{}, 1), hub: opt.Hub,
		key: opt.Key, enc: newTTLCache[string, bool](opt.EncryptionCacheTTL, 100_000, nil), leases: newLeaseMemo(50_000),
		qtimes: newTTLCache[string, queueTimes](queueTimesTTL, 100_000, nil), qtWaiting: map[string][]func(queueTimes){}}
	if e.hub == nil {
		e.hub, e.ownHub = notify.New(st, log), true
	}
	e.hub.OnChange(e.applyChange)
	e.groups = &Groups{st: st, hub: e.hub, announce: e.announce}
	e.modes = &Modes{st: st, dbDown: &e.dbDown, health: e.SpoolHealth, spool: opt.Spool, deadSpoolPath: opt.DeadSpoolPath,
		log: log, replayKick: e.replayKick}
	e.dlq = &DeadLetters{st: st, hub: e.hub, decrypt: e.DecryptPayload}
	e.push = newCoalescer(opt.PushWorkers, opt.PushMaxItems, func(j pushJob) int { return len(j.rows) }, e.pushBatch).
		sharded(opt.PushWorkers, pushFill, pushShard)
	e.ack = newCoalescer(opt.AckWorkers, opt.AckMaxItems, func(r []AckItem) int { return len(r) }, e.ackBatch)
	e.slots = newPopSlots(st.HotConns()-opt.AckWorkers, st.AcquireTimeout())
	e.hub.SetEmptyMemo(opt.RecheckInterval)
	return e
}

// Start launches the batch workers. The spool replay (maintenance.NewSpoolReplay over ReplaySpool)
// and the wake-ups of parked pops (Options.Hub) are services the broker starts with the others; an
// engine given no hub runs its own here.
func (e *Engine) Start(ctx context.Context) {
	ctx, e.stop = context.WithCancel(context.WithoutCancel(ctx))
	e.push.start(ctx)
	e.ack.start(ctx)
	if e.ownHub {
		_ = e.hub.Start(ctx) // a fresh hub: it cannot be running already
	}
}

// Drain answers every parked long-poll empty and makes new ones return at once; the first step of a
// graceful shutdown.
func (e *Engine) Drain() {
	e.drainingOnce.Do(func() { close(e.draining) })
}

// Stop ends the background work. In-flight requests should be finished first.
func (e *Engine) Stop() {
	if e.stop == nil {
		return
	}
	e.stop()
	e.push.wait()
	e.ack.wait()
	if e.ownHub {
		e.hub.Stop()
	}
}

// Parked reports how many long-poll pops are waiting.
func (e *Engine) Parked() int { return e.hub.Parked() }

// ParkedByQueue reports the long-poll pops parked per queue now (cross-queue pops under "*"), for the
// broker samples.
func (e *Engine) ParkedByQueue() map[string]int { return e.hub.ParkedByQueue() }

// Ping checks the database round-trip.
func (e *Engine) Ping(ctx context.Context) error {
	if e.unmigrated.Load() {
		return ErrNotMigrated
	}
	return e.st.Ping(ctx)
}

// PoolStats reports the database pool for the metrics surface.
func (e *Engine) PoolStats() (total, idle, waiting int32) { return e.st.PoolStats() }
