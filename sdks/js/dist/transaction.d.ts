import { type AckStatusInput } from "./ack.js";
import { QueueBuilder } from "./queue.js";
import type { Transport } from "./transport.js";
import { type AckSpec, type CallOptions, type Message, type PushItem, type TransactionResult } from "./types.js";
/**
 * Collects acknowledgements and pushes that the broker applies atomically: all commit, or none do.
 *
 * ```js
 * await client.transaction()
 *   .ack(msg)
 *   .queue("next").partition(msg.partition).push({ payload: out })
 *   .commit();
 * ```
 */
export declare class Transaction {
    private readonly t;
    private readonly ops;
    private err;
    /** @internal use client.transaction() */
    constructor(t: Transport);
    /**
     * Adds an acknowledgement of a message (or spec); status defaults to completed. Inside a transaction
     * `failed` and `dlq` go straight to the dead-letter queue, and `retry` rolls the transaction back.
     */
    ack(m: Message | AckSpec | Array<Message | AckSpec>, status?: AckStatusInput, opts?: {
        error?: string;
    }): this;
    /** Selects the queue the next push of this transaction goes to. */
    queue(name: string): TxQueue;
    /** @internal */
    addPush(q: QueueBuilder, items: PushItem | unknown | Array<PushItem | unknown>): this;
    /**
     * Sends the transaction. A rollback (HTTP 200 with success:false) throws TransactionError whose code is
     * `QDUP` (duplicate push) or `QTXN` (rejected ack); nothing was applied. An empty transaction is an error.
     *
     * Like every request, a commit that fails with a 5xx or a network error is retried. If the first attempt
     * did commit and only its answer was lost, the retry reports QDUP for the pushes it already made: give
     * pushed items your own deterministic transactionId and treat QDUP as "already done".
     */
    commit(opts?: CallOptions): Promise<TransactionResult>;
}
/** The push target of a transaction; see {@link Transaction.queue}. */
export declare class TxQueue {
    private readonly tx;
    private q;
    /** @internal */
    constructor(tx: Transaction, q: QueueBuilder);
    /** Selects the partition for the next push. */
    partition(name: string): this;
    /** Adds items (same shapes as queue.push) and returns the transaction for chaining. */
    push(items: PushItem | unknown | Array<PushItem | unknown>): Transaction;
}
