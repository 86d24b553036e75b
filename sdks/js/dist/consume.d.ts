import type { QueueBuilder } from "./queue.js";
import type { Message } from "./types.js";
/**
 * Processes one delivered message. In the default acknowledgement mode, resolving acknowledges it as
 * completed and throwing acknowledges it as failed (with the error text as reason). Handlers must be
 * idempotent on message.transactionId: every rejected ack, lease expiry and replay is a redelivery.
 */
export type Handler = (message: Message) => unknown | Promise<unknown>;
/** Options of `queue.consume()`. */
export interface ConsumeOptions {
    /** Independent poll-and-process workers (default 1). Each holds its own partition lease. */
    concurrency?: number;
    /** Messages per pop (default 1). */
    batch?: number;
    /** Partitions one pop may claim (default 1). */
    partitions?: number;
    /** Long-poll deadline of each pop in ms (default 30000). */
    pollTimeoutMillis?: number;
    /** Leave acknowledgement to the handler (client.ack or a transaction); consume sends none. */
    manualAck?: boolean;
    /** Pop with autoAck=true (at-most-once): no lease is held and handler errors are only logged. */
    autoAck?: boolean;
    /** When positive, extend the batch's lease every this many ms (by twice that) while its handlers run. */
    renewLeaseMillis?: number;
    /** Pause after a failed pop before polling again, in ms (default retryDelayMillis); a longer Retry-After wins. */
    errorBackoffMillis?: number;
    /** Stops the loop gracefully: no new pop starts, received batches are finished and acknowledged. */
    signal?: AbortSignal;
}
/**
 * Long-polls with opts.concurrency workers until opts.signal aborts, then resolves. Transient failures (5xx,
 * network, an exhausted 429 budget) are logged with their status and code and retried after a backoff. A
 * terminal error (401, 403, 404, 413, …) is logged, stops every worker and rejects the promise: waiting
 * will not fix it.
 *
 * In the default acknowledgement mode, when the handler fails for a message, that message is acked as
 * failed and the rest of its partition's batch is skipped: it redelivers in order (unless the failure sent
 * the message to the DLQ, in which case the cursor moved past it and the rest is processed).
 */
export declare function consume(q: QueueBuilder, handler: Handler, opts: ConsumeOptions): Promise<void>;
