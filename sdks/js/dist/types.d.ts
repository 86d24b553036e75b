/** The consumer-group name the broker uses for queue mode (competing consumers share one cursor). */
export declare const QUEUE_MODE = "__QUEUE_MODE__";
/** A delivered message. Acknowledge it with `client.ack()` or inside a transaction. */
export interface Message {
    /** The broker's message id (a UUIDv7). */
    id: string;
    /** The producer's idempotency key. Handlers must be idempotent on it: every rejected ack is a redelivery. */
    transactionId: string;
    traceId: string | null;
    /** The payload as pushed (null when pushed without one). */
    data: unknown;
    /** The authenticated subject that pushed it, or null. */
    producerSub: string | null;
    /** When it was stored (ISO-8601, microsecond precision). */
    createdAt: string;
    queue: string;
    partition: string;
    partitionId: string;
    /** The lease this delivery holds ("" for an autoAck pop). */
    leaseId: string;
    /** The group it was delivered to (QUEUE_MODE in queue mode). */
    consumerGroup: string;
    /** How many times this message was delivered and failed before. */
    retryCount: number;
}
/** One message to push. */
export interface PushItem {
    /** Any JSON value; stored as JSON null when absent. `data` is accepted as an alias. */
    payload?: unknown;
    data?: unknown;
    /** Idempotency key within the partition; generated (UUID) when absent, so a retried push is deduplicated. */
    transactionId?: string;
    /** Optional UUID. */
    traceId?: string;
}
/** The broker's answer for one pushed item, in request order. */
export interface PushResult {
    index: number;
    /** The item's transaction id (checked against the request by the SDK). */
    transactionId: string;
    /** `queued`, `duplicate` (already stored; nothing inserted), `buffered` (spooled to the broker's disk) or `failed`. */
    status: "queued" | "duplicate" | "buffered" | "failed" | string;
    messageId?: string;
    partitionId?: string;
    traceId?: string | null;
    queueName?: string;
    error?: string;
}
/** Acknowledgement statuses. */
export type AckStatus = "completed" | "failed" | "dlq" | "retry";
/** One acknowledgement, usually built from a delivered message with `completed()`, `failed()`, … */
export interface AckSpec {
    transactionId: string;
    partitionId: string;
    /** The delivering lease; when absent the broker does not check it. */
    leaseId?: string | undefined;
    /** The consuming group; absent means queue mode. */
    consumerGroup?: string | undefined;
    /** Default `completed`. */
    status?: AckStatus | undefined;
    /** Failure reason recorded with failed and dead-lettered messages. */
    error?: string | undefined;
}
/** The broker's verdict on one acknowledgement. `success` is the only signal: a rejection is still HTTP 200. */
export interface AckResult {
    index: number;
    transactionId: string;
    success: boolean;
    /** The rejection reason, null on success. */
    error: string | null;
    queueName?: string;
    partitionName?: string;
    /** This ack completed the lease's batch. */
    leaseReleased: boolean;
    /** The message went to the dead-letter queue. */
    dlq: boolean;
    /** A harmless repeat of an earlier completion. */
    noop: boolean;
}
/** The answer to a lease extension. */
export interface LeaseResult {
    index: number;
    leaseId: string;
    success: boolean;
    error: string | null;
    expiresAt: string | null;
}
/** One operation's result in a committed transaction. */
export interface TxResult {
    index: number;
    type: string;
    success: boolean;
    transactionId?: string;
    messageId?: string;
    partitionId?: string;
    queueName?: string;
    error?: string | null;
    dlq?: boolean;
}
/** The answer to a transaction commit. */
export interface TransactionResult {
    transactionId: string;
    success: boolean;
    error?: string;
    results: TxResult[];
}
/**
 * A queue's settings for POST /api/v1/configure. Configure has full-replace semantics: an option left out
 * (or `undefined`) is reset to its broker default, while one given as `0` or `false` is stored as that.
 */
export interface QueueOptions {
    /** Seconds a pop's lease lasts (default 300). */
    leaseTime?: number;
    /** Failed deliveries before dead-lettering (default 3). */
    retryLimit?: number;
    /** Milliseconds before a failed message redelivers (default 1000). */
    retryDelay?: number;
    /** Maximum queued messages (0 = unlimited). */
    maxSize?: number;
    /** Message time to live in seconds (default 3600). */
    ttl?: number;
    /** Higher is served first by namespace/task pops. */
    priority?: number;
    /** Seconds a message stays invisible after push. */
    delayedProcessing?: number;
    /** Seconds a partition must be quiet before it is served. */
    windowBuffer?: number;
    /** Delete pending messages older than this many seconds (with retentionEnabled). */
    retentionSeconds?: number;
    /** Delete consumed messages older than this many seconds (with retentionEnabled). */
    completedRetentionSeconds?: number;
    /** Enables the two retention settings. */
    retentionEnabled?: boolean;
    /** Encrypt payloads at rest (the broker needs QUEEN_ENCRYPTION_KEY). */
    encryptionEnabled?: boolean;
    /** Keep dead letters. */
    deadLetterQueue?: boolean;
    /** Dead-letter when the retry limit is exhausted. */
    dlqAfterMaxRetries?: boolean;
    /** Dead-letter messages waiting longer than this many seconds. */
    maxWaitTimeSeconds?: number;
}
/** The name of every option configure accepts (every key of QueueOptions). */
export declare const QUEUE_OPTION_NAMES: readonly (keyof QueueOptions)[];
/** The answer to `queue.create()`. */
export interface QueueConfigured {
    configured: boolean;
    queueId: string;
    partitionId: string;
    queue: string;
    namespace: string;
    task: string;
    options: Record<string, unknown>;
}
/** Options of one pop. */
export interface PopOptions {
    /** Maximum messages returned (broker default 1). */
    batch?: number;
    /** Let a pop without a partition claim up to this many partitions. */
    partitions?: number;
    /** Long-poll until a message arrives or `timeoutMillis` passes. Waits out 429s indefinitely unless retry429.maxAttempts is set. */
    wait?: boolean;
    /** Long-poll deadline in milliseconds (broker default 30000). */
    timeoutMillis?: number;
    /** Advance the cursor at delivery (at-most-once); no lease is taken. */
    autoAck?: boolean;
    /** Aborts the pop (and its retries). */
    signal?: AbortSignal;
}
/** Per-call options accepted by most methods. */
export interface CallOptions {
    /** Aborts the call and its retries. */
    signal?: AbortSignal | undefined;
}
/** A logger; every method is optional. Fields carry structured context such as `code` and `status`. */
export interface Logger {
    debug?(msg: string, fields?: Record<string, unknown>): void;
    info?(msg: string, fields?: Record<string, unknown>): void;
    warn?(msg: string, fields?: Record<string, unknown>): void;
    error?(msg: string, fields?: Record<string, unknown>): void;
}
