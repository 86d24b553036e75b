package engine

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/queen-go/queen/internal/crypto"
	"github.com/queen-go/queen/internal/spool"
	"github.com/queen-go/queen/internal/store"
)

// QueueMode is the consumer group of competing consumers that share one cursor per partition.
const QueueMode = "__QUEUE_MODE__"

// Options tune the engine; zero values take the documented defaults.
type Options struct {
	PushWorkers             int           // concurrent push batches in flight
	PushMaxItems            int           // items merged into one push statement
	AckWorkers              int           // concurrent ack batches in flight
	AckMaxItems             int           // ack items merged into one transaction
	RecheckInterval         time.Duration // safety re-check of parked long-polls (expired leases, delays)
	EvictionInterval        time.Duration // maxWaitTimeSeconds sweep
	DefaultSubscriptionMode string        // DEFAULT_SUBSCRIPTION_MODE
	MaxPollTimeout          time.Duration // longest long-poll honoured
	Spool                   *spool.Spool  // nil: pushes fail with 500 while PostgreSQL is unreachable
	SpoolFlushInterval      time.Duration // FILE_BUFFER_FLUSH_MS
	SpoolReplayBatch        int           // FILE_BUFFER_MAX_BATCH
	DeadSpoolPath           string        // file for spooled pushes PostgreSQL refuses ("" = log them only)
	OperationTimeout        time.Duration // bound on one batched database operation
	Key                     *crypto.Key   // nil: no QUEEN_ENCRYPTION_KEY; encrypted queues refuse pushes
	Observer                Observer      // told about every push, pop and ack (metrics); nil: none
	// EncryptionCacheTTL bounds how long this broker trusts its cached "is queue X encrypted" answer
	// when another broker reconfigures the queue (a local configure invalidates at once).
	EncryptionCacheTTL time.Duration
}

func (o *Options) defaults() {
	if o.PushWorkers <= 0 {
		o.PushWorkers = 4
	}
	if o.PushMaxItems <= 0 {
		o.PushMaxItems = 1000
	}
	if o.AckWorkers <= 0 {
		o.AckWorkers = 4
	}
	if o.AckMaxItems <= 0 {
		o.AckMaxItems = 1000
	}
	if o.RecheckInterval <= 0 {
		o.RecheckInterval = time.Second
	}
	if o.MaxPollTimeout <= 0 {
		o.MaxPollTimeout = 300 * time.Second
	}
	if o.SpoolFlushInterval <= 0 {
		o.SpoolFlushInterval = 100 * time.Millisecond
	}
	if o.SpoolReplayBatch <= 0 {
		o.SpoolReplayBatch = 100
	}
	if o.EvictionInterval <= 0 {
		o.EvictionInterval = time.Minute
	}
	if o.OperationTimeout <= 0 {
		o.OperationTimeout = 30 * time.Second
	}
	if o.EncryptionCacheTTL <= 0 {
		o.EncryptionCacheTTL = time.Second
	}
}

// Engine is the queue engine of one broker process. Several engines may share a database.
type Engine struct {
	st      *store.Store
	log     *slog.Logger
	opt     Options
	waiters *waiters
	parts   *partitionCache
	subs    subscriptionCache
	lim     limitCache
	maint   maintenanceState

	ann         *announcer
	spool       *spool.Spool
	dbDown      atomic.Bool   // set when a push found PostgreSQL unreachable; cleared once the spool drains
	unmigrated  atomic.Bool   // startup.go: the schema is not migrated yet (started while PostgreSQL was down)
	replayKick  chan struct{} // wakes the replay loop early
	spoolHealth spoolHealth   // deadspool.go: what /health and metrics say about draining
	push        *coalescer[pushJob, []store.PushOutcome]
	ack         *coalescer[[]AckItem, []AckResult]
	key         *crypto.Key     // Options.Key
	enc         encryptionCache // which queues are encrypted
	counters    queueCounters   // per-queue operation counts for the stats loop

	draining     chan struct{} // closed when the broker shuts down: parked pops answer empty at once
	drainingOnce sync.Once

	stop context.CancelFunc
	wg   sync.WaitGroup
}

// New builds an engine over st. Call Start before use and Stop when done.
func New(st *store.Store, log *slog.Logger, opt Options) *Engine {
	opt.defaults()
	e := &Engine{st: st, log: log, opt: opt, waiters: newWaiters(), parts: newPartitionCache(100_000),
		draining: make(chan struct{}), spool: opt.Spool, replayKick: make(chan struct{}, 1), ann: newAnnouncer(),
		key: opt.Key, enc: encryptionCache{ttl: opt.EncryptionCacheTTL, m: map[string]encEntry{}}}
	e.push = newCoalescer(opt.PushWorkers, opt.PushMaxItems, func(j pushJob) int { return len(j.rows) }, e.pushBatch)
	e.ack = newCoalescer(opt.AckWorkers, opt.AckMaxItems, func(r []AckItem) int { return len(r) }, e.ackBatch)
	return e
}

// Start launches the batch workers and the NOTIFY listener that wakes parked pops on pushes made by
// any broker on the database.
func (e *Engine) Start(ctx context.Context) {
	ctx, e.stop = context.WithCancel(context.WithoutCancel(ctx))
	e.push.start(ctx, e.opt.PushWorkers)
	e.ack.start(ctx, e.opt.AckWorkers)
	e.wg.Add(3)
	go func() {
		defer e.wg.Done()
		e.announceLoop(ctx)
	}()
	go func() {
		defer e.wg.Done()
		_ = e.st.Listen(ctx, e.st.PushChannel(), e.waiters.wakeAll, e.onNotify)
	}()
	go func() {
		defer e.wg.Done()
		e.evictLoop(ctx)
	}()
	if e.spool != nil {
		e.wg.Add(1)
		go func() {
			defer e.wg.Done()
			e.replayLoop(ctx)
		}()
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
	e.wg.Wait()
}

// Parked reports how many long-poll pops are waiting.
func (e *Engine) Parked() int { return e.waiters.count() }

// Ping checks the database round-trip.
func (e *Engine) Ping(ctx context.Context) error {
	if e.unmigrated.Load() {
		return ErrNotMigrated
	}
	return e.st.Ping(ctx)
}

// partitionCache remembers partition ids so a push to a known partition costs no lookup. It only
// grows until a size bound, then starts over: ids never change while a partition exists.
type partitionCache struct {
	mu  sync.RWMutex // protects m
	m   map[store.PartitionKey]uuid.UUID
	max int
}

func newPartitionCache(max int) *partitionCache {
	return &partitionCache{m: map[store.PartitionKey]uuid.UUID{}, max: max}
}

func (c *partitionCache) get(k store.PartitionKey) (uuid.UUID, bool) {
	c.mu.RLock()
	id, ok := c.m[k]
	c.mu.RUnlock()
	return id, ok
}

func (c *partitionCache) put(m map[store.PartitionKey]uuid.UUID) {
	c.mu.Lock()
	if len(c.m)+len(m) > c.max {
		c.m = map[store.PartitionKey]uuid.UUID{}
	}
	for k, v := range m {
		c.m[k] = v
	}
	c.mu.Unlock()
}

func (c *partitionCache) forgetQueue(queue string) {
	c.mu.Lock()
	for k := range c.m {
		if k.Queue == queue {
			delete(c.m, k)
		}
	}
	c.mu.Unlock()
}

func (c *partitionCache) forget(keys []store.PartitionKey) {
	c.mu.Lock()
	for _, k := range keys {
		delete(c.m, k)
	}
	c.mu.Unlock()
}

// PoolStats reports the database pool for the metrics surface.
func (e *Engine) PoolStats() (total, idle, waiting int32) { return e.st.PoolStats() }
