// Transactions: acknowledgements and pushes applied atomically (POST /api/v1/transaction).
import { toSpec, wireAck } from "./ack.js";
import { MalformedResponseError, QueenError, TransactionError } from "./errors.js";
import { QueueBuilder } from "./queue.js";
import { QUEUE_MODE } from "./types.js";
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
export class Transaction {
    t;
    ops = [];
    err;
    /** @internal use client.transaction() */
    constructor(t) {
        this.t = t;
    }
    /**
     * Adds an acknowledgement of a message (or spec); status defaults to completed. Inside a transaction
     * `failed` and `dlq` go straight to the dead-letter queue, and `retry` rolls the transaction back.
     */
    ack(m, status, opts = {}) {
        for (const x of Array.isArray(m) ? m : [m]) {
            try {
                const spec = toSpec(x, status, opts.error);
                const w = { type: "ack", ...wireAck(spec, true) };
                if (!w.consumerGroup)
                    w.consumerGroup = QUEUE_MODE;
                this.ops.push(w);
            }
            catch (e) {
                this.err ??= e;
            }
        }
        return this;
    }
    /** Selects the queue the next push of this transaction goes to. */
    queue(name) {
        return new TxQueue(this, new QueueBuilder(this.t, { name }));
    }
    /** @internal */
    addPush(q, items) {
        if (!q.name)
            this.err ??= new QueenError("queen: transaction push: empty queue name");
        this.ops.push({ type: "push", items: q.wireItems(items) });
        return this;
    }
    /**
     * Sends the transaction. A rollback (HTTP 200 with success:false) throws TransactionError whose code is
     * `QDUP` (duplicate push) or `QTXN` (rejected ack); nothing was applied. An empty transaction is an error.
     *
     * Like every request, a commit that fails with a 5xx or a network error is retried. If the first attempt
     * did commit and only its answer was lost, the retry reports QDUP for the pushes it already made: give
     * pushed items your own deterministic transactionId and treat QDUP as "already done".
     */
    async commit(opts = {}) {
        if (this.err)
            throw this.err;
        if (this.ops.length === 0)
            throw new QueenError("queen: empty transaction");
        const got = await this.t.json({ method: "POST", path: "/api/v1/transaction", body: { operations: this.ops }, signal: opts.signal });
        if (!got || typeof got !== "object" || typeof got.success !== "boolean") {
            throw new MalformedResponseError(`queen: malformed response: transaction answered ${JSON.stringify(got)?.slice(0, 200)}`);
        }
        const g = got;
        const out = {
            transactionId: typeof g.transactionId === "string" ? g.transactionId : "",
            success: g.success,
            results: Array.isArray(g.results) ? g.results : [],
        };
        if (typeof g.error === "string")
            out.error = g.error;
        if (!out.success)
            throw new TransactionError(out);
        return out;
    }
}
/** The push target of a transaction; see {@link Transaction.queue}. */
export class TxQueue {
    tx;
    q;
    /** @internal */
    constructor(tx, q) {
        this.tx = tx;
        this.q = q;
    }
    /** Selects the partition for the next push. */
    partition(name) {
        this.q = this.q.partition(name);
        return this;
    }
    /** Adds items (same shapes as queue.push) and returns the transaction for chaining. */
    push(items) {
        return this.tx.addPush(this.q, items);
    }
}
