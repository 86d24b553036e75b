import { type QueueBuilder } from "./queue.js";
import type { PushItem, PushResult } from "./types.js";
/** Options of a {@link Producer}. */
export interface ProducerOptions {
    /** Flush when the buffer holds this many items (default 100). */
    batchSize?: number;
    /** Flush a non-empty buffer at most this long after its first item arrived, in ms (default 100). */
    flushIntervalMillis?: number;
    /**
     * Receives the items of a background (timer) flush that failed after the client's retries; they are not
     * retried again. Default: logged. flush() and close() throw their errors instead.
     */
    onError?: (err: unknown, items: PushItem[]) => void;
}
/**
 * Buffers pushes client-side and sends them in batches. Items get a generated transactionId when they carry
 * none, so a retried batch is deduplicated by the broker. Batches leave in add() order. The timer is armed
 * only while items wait, so an idle producer keeps no process alive; still, call close() to flush the rest.
 */
export declare class Producer {
    private readonly q;
    private readonly batchSize;
    private readonly interval;
    private readonly onError;
    private buf;
    private closed;
    private timer;
    private chain;
    /** @internal use queue.producer() */
    constructor(q: QueueBuilder, opts: ProducerOptions);
    /** Number of items waiting in the buffer. */
    get buffered(): number;
    /**
     * Buffers items. When the buffer reaches batchSize, add() sends it before resolving (the caller feels the
     * broker's pace, which bounds memory) and rejects with that push's error.
     */
    add(items: PushItem | unknown | Array<PushItem | unknown>): Promise<void>;
    /** Sends everything buffered so far, in batches of at most batchSize; resolves the push results. */
    flush(): Promise<PushResult[]>;
    /** Flushes the buffer and refuses later adds. */
    close(): Promise<void>;
    private sendAll;
    private background;
    private clearTimer;
}
