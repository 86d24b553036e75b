// Transactions: acknowledgements and pushes applied atomically (POST /api/v1/transaction).

import { toSpec, wireAck, type AckStatusInput } from "./ack.js";
import { MalformedResponseError, QueenError, TransactionError } from "./errors.js";
import { QueueBuilder } from "./queue.js";
import type { Transport } from "./transport.js";
import { QUEUE_MODE, type AckSpec, type CallOptions, type Message, type PushItem, type TransactionResult } from "./types.js";

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
  private readonly t: Transport;
  private readonly ops: unknown[] = [];
  private err: QueenError | undefined;

  /** @internal use client.transaction() */
  constructor(t: Transport) {
    this.t = t;
  }

  /**
   * Adds an acknowledgement of a message (or spec); status defaults to completed. Inside a transaction
   * `failed` and `dlq` go straight to the dead-letter queue, and `retry` rolls the transaction back.
   */
  ack(m: Message | AckSpec | Array<Message | AckSpec>, status?: AckStatusInput, opts: { error?: string } = {}): this {
    for (const x of Array.isArray(m) ? m : [m]) {
      try {
        const spec = toSpec(x, status, opts.error);
        const w = { type: "ack", ...wireAck(spec, true) } as Record<string, unknown>;
        if (!w.consumerGroup) w.consumerGroup = QUEUE_MODE;
        this.ops.push(w);
      } catch (e) {
        this.err ??= e as QueenError;
      }
    }
    return this;
  }

  /** Selects the queue the next push of this transaction goes to. */
  queue(name: string): TxQueue {
    return new TxQueue(this, new QueueBuilder(this.t, { name }));
  }

  /** @internal */
  addPush(q: QueueBuilder, items: PushItem | unknown | Array<PushItem | unknown>): this {
    if (!q.name) this.err ??= new QueenError("queen: transaction push: empty queue name");
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
  async commit(opts: CallOptions = {}): Promise<TransactionResult> {
    if (this.err) throw this.err;
    if (this.ops.length === 0) throw new QueenError("queen: empty transaction");
    const got = await this.t.json<unknown>({ method: "POST", path: "/api/v1/transaction", body: { operations: this.ops }, signal: opts.signal });
    if (!got || typeof got !== "object" || typeof (got as { success?: unknown }).success !== "boolean") {
      throw new MalformedResponseError(`queen: malformed response: transaction answered ${JSON.stringify(got)?.slice(0, 200)}`);
    }
    const g = got as Record<string, unknown>;
    const out: TransactionResult = {
      transactionId: typeof g.transactionId === "string" ? g.transactionId : "",
      success: g.success as boolean,
      results: Array.isArray(g.results) ? (g.results as TransactionResult["results"]) : [],
    };
    if (typeof g.error === "string") out.error = g.error;
    if (!out.success) throw new TransactionError(out);
    return out;
  }
}

/** The push target of a transaction; see {@link Transaction.queue}. */
export class TxQueue {
  private readonly tx: Transaction;
  private q: QueueBuilder;
  /** @internal */
  constructor(tx: Transaction, q: QueueBuilder) {
    this.tx = tx;
    this.q = q;
  }
  /** Selects the partition for the next push. */
  partition(name: string): this {
    this.q = this.q.partition(name);
    return this;
  }
  /** Adds items (same shapes as queue.push) and returns the transaction for chaining. */
  push(items: PushItem | unknown | Array<PushItem | unknown>): Transaction {
    return this.tx.addPush(this.q, items);
  }
}
