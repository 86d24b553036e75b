package engine

import (
	"context"
	"encoding/json"

	"github.com/queen-go/queen/internal/notify"
	"github.com/queen-go/queen/internal/store"
)

// QueueOptions is the wire form of a queue's configuration. Pointers tell given from absent, because
// configure replaces the whole configuration and absent options fall back to their defaults.
type QueueOptions struct {
	Priority                  *int32 `json:"priority,omitempty"`
	LeaseTime                 *int32 `json:"leaseTime,omitempty"`
	RetryLimit                *int32 `json:"retryLimit,omitempty"`
	RetryDelay                *int32 `json:"retryDelay,omitempty"`
	MaxSize                   *int32 `json:"maxSize,omitempty"`
	TTL                       *int32 `json:"ttl,omitempty"`
	DeadLetterQueue           *bool  `json:"deadLetterQueue,omitempty"`
	DLQAfterMaxRetries        *bool  `json:"dlqAfterMaxRetries,omitempty"`
	DelayedProcessing         *int32 `json:"delayedProcessing,omitempty"`
	WindowBuffer              *int32 `json:"windowBuffer,omitempty"`
	RetentionSeconds          *int32 `json:"retentionSeconds,omitempty"`
	CompletedRetentionSeconds *int32 `json:"completedRetentionSeconds,omitempty"`
	RetentionEnabled          *bool  `json:"retentionEnabled,omitempty"`
	EncryptionEnabled         *bool  `json:"encryptionEnabled,omitempty"`
	MaxWaitTimeSeconds        *int32 `json:"maxWaitTimeSeconds,omitempty"`
}

// ConfigureResult answers configure with every effective option.
type ConfigureResult struct {
	Configured  bool            `json:"configured"`
	QueueID     string          `json:"queueId"`
	PartitionID string          `json:"partitionId"`
	Queue       string          `json:"queue"`
	Namespace   string          `json:"namespace"`
	Task        string          `json:"task"`
	Options     json.RawMessage `json:"options"`
}

// EffectiveOptions are a queue's options with every default filled in, under their wire names.
type EffectiveOptions struct {
	Priority                  int32 `json:"priority"`
	LeaseTime                 int32 `json:"leaseTime"`
	RetryLimit                int32 `json:"retryLimit"`
	RetryDelay                int32 `json:"retryDelay"`
	MaxSize                   int32 `json:"maxSize"`
	TTL                       int32 `json:"ttl"`
	DeadLetterQueue           bool  `json:"deadLetterQueue"`
	DLQAfterMaxRetries        bool  `json:"dlqAfterMaxRetries"`
	DelayedProcessing         int32 `json:"delayedProcessing"`
	WindowBuffer              int32 `json:"windowBuffer"`
	RetentionSeconds          int32 `json:"retentionSeconds"`
	CompletedRetentionSeconds int32 `json:"completedRetentionSeconds"`
	RetentionEnabled          bool  `json:"retentionEnabled"`
	EncryptionEnabled         bool  `json:"encryptionEnabled"`
	MaxWaitTimeSeconds        int32 `json:"maxWaitTimeSeconds"`
}

// EffectiveOf is a stored configuration under its wire names: what configure answers, and what the
// status read returns, so that the read configures the queue again unchanged.
func EffectiveOf(o store.QueueOptions) EffectiveOptions {
	return EffectiveOptions{Priority: o.Priority, LeaseTime: o.LeaseTime, RetryLimit: o.RetryLimit, RetryDelay: o.RetryDelay,
		MaxSize: o.MaxSize, TTL: o.TTL, DeadLetterQueue: o.DeadLetterQueue, DLQAfterMaxRetries: o.DLQAfterMaxRetries,
		DelayedProcessing: o.DelayedProcessing, WindowBuffer: o.WindowBuffer, RetentionSeconds: o.RetentionSeconds,
		CompletedRetentionSeconds: o.CompletedRetentionSeconds, RetentionEnabled: o.RetentionEnabled,
		EncryptionEnabled: o.EncryptionEnabled, MaxWaitTimeSeconds: o.MaxWaitTimeSeconds}
}

// stored is the configuration to store, EffectiveOf's inverse.
func (eff EffectiveOptions) stored(namespace, task string) store.QueueOptions {
	return store.QueueOptions{
		Namespace: namespace, Task: task, Priority: eff.Priority, LeaseTime: eff.LeaseTime,
		RetryLimit: eff.RetryLimit, RetryDelay: eff.RetryDelay, MaxSize: eff.MaxSize, TTL: eff.TTL,
		DeadLetterQueue: eff.DeadLetterQueue, DLQAfterMaxRetries: eff.DLQAfterMaxRetries,
		DelayedProcessing: eff.DelayedProcessing, WindowBuffer: eff.WindowBuffer,
		RetentionSeconds: eff.RetentionSeconds, CompletedRetentionSeconds: eff.CompletedRetentionSeconds,
		RetentionEnabled: eff.RetentionEnabled, EncryptionEnabled: eff.EncryptionEnabled,
		MaxWaitTimeSeconds: eff.MaxWaitTimeSeconds,
	}
}

func or[T any](p *T, def T) T {
	if p != nil {
		return *p
	}
	return def
}

// Configure creates or fully reconfigures a queue: options not given are reset to their defaults. The
// empty name is a queue like any other here, as in the original (its clients configure one).
func (e *Engine) Configure(ctx context.Context, queue, namespace, task string, o QueueOptions) (*ConfigureResult, error) {
	if len(queue) > 255 {
		return nil, Invalid("queue names are limited to 255 bytes")
	}
	eff := EffectiveOptions{
		Priority: or(o.Priority, 0), LeaseTime: or(o.LeaseTime, 300), RetryLimit: or(o.RetryLimit, 3),
		RetryDelay: or(o.RetryDelay, 1000), MaxSize: or(o.MaxSize, 0), TTL: or(o.TTL, 3600),
		DeadLetterQueue: or(o.DeadLetterQueue, false), DLQAfterMaxRetries: or(o.DLQAfterMaxRetries, false),
		DelayedProcessing: or(o.DelayedProcessing, 0), WindowBuffer: or(o.WindowBuffer, 0),
		RetentionSeconds: or(o.RetentionSeconds, 0), CompletedRetentionSeconds: or(o.CompletedRetentionSeconds, 0),
		RetentionEnabled: or(o.RetentionEnabled, false), EncryptionEnabled: or(o.EncryptionEnabled, false),
		MaxWaitTimeSeconds: or(o.MaxWaitTimeSeconds, 0),
	}
	for name, v := range map[string]int32{
		"leaseTime": eff.LeaseTime, "retryLimit": eff.RetryLimit, "retryDelay": eff.RetryDelay, "maxSize": eff.MaxSize,
		"ttl": eff.TTL, "delayedProcessing": eff.DelayedProcessing, "windowBuffer": eff.WindowBuffer,
		"retentionSeconds": eff.RetentionSeconds, "completedRetentionSeconds": eff.CompletedRetentionSeconds,
		"maxWaitTimeSeconds": eff.MaxWaitTimeSeconds,
	} {
		if v < 0 {
			return nil, Invalid("options.%s must not be negative", name)
		}
	}
	if err := e.checkEncryption(eff.EncryptionEnabled); err != nil {
		return nil, err
	}
	qid, pid, err := e.st.Queues().ConfigureQueue(ctx, queue, eff.stored(namespace, task))
	if err != nil {
		return nil, OpFailed("configure", err)
	}
	e.announce(notify.Change{Kind: notify.QueueConfigured, Name: queue})
	opts, err := json.Marshal(eff)
	if err != nil {
		return nil, err
	}
	return &ConfigureResult{Configured: true, QueueID: qid.String(), PartitionID: pid.String(), Queue: queue,
		Namespace: namespace, Task: task, Options: opts}, nil
}

// DeleteQueue removes a queue and everything in it; ErrNotFound when it does not exist.
func (e *Engine) DeleteQueue(ctx context.Context, name string) error {
	ok, err := e.st.Queues().DeleteQueue(ctx, name)
	if err != nil {
		return OpFailed("delete queue", err)
	}
	if !ok {
		return notFound("queue %q not found", name)
	}
	e.announce(notify.Change{Kind: notify.QueueDeleted, Name: name})
	return nil
}
