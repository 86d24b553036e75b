// The buffered producer: client-side batching of pushes to one queue/partition, by count or by time.

import { ProducerClosedError } from "./errors.js";
import { pushWire, type QueueBuilder, type WirePushItem } from "./queue.js";
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
export class Producer {
  private readonly q: QueueBuilder;
  private readonly batchSize: number;
  private readonly interval: number;
  private readonly onError: ProducerOptions["onError"];
  private buf: WirePushItem[] = [];
  private closed = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private chain: Promise<unknown> = Promise.resolve(); // serialises sends

  /** @internal use queue.producer() */
  constructor(q: QueueBuilder, opts: ProducerOptions) {
    this.q = q;
    this.batchSize = opts.batchSize && opts.batchSize > 0 ? Math.floor(opts.batchSize) : 100;
    this.interval = opts.flushIntervalMillis && opts.flushIntervalMillis > 0 ? opts.flushIntervalMillis : 100;
    this.onError = opts.onError;
  }

  /** Number of items waiting in the buffer. */
  get buffered(): number {
    return this.buf.length;
  }

  /**
   * Buffers items. When the buffer reaches batchSize, add() sends it before resolving (the caller feels the
   * broker's pace, which bounds memory) and rejects with that push's error.
   */
  async add(items: PushItem | unknown | Array<PushItem | unknown>): Promise<void> {
    if (this.closed) throw new ProducerClosedError();
    this.buf.push(...this.q.wireItems(items));
    try {
      if (this.buf.length >= this.batchSize) await this.flush();
    } finally {
      // Anything still waiting (a remainder, or items put back by a failed send) leaves with the timer.
      if (this.timer === undefined && this.buf.length > 0) {
        this.timer = setTimeout(() => this.background(), this.interval);
      }
    }
  }

  /** Sends everything buffered so far, in batches of at most batchSize; resolves the push results. */
  flush(): Promise<PushResult[]> {
    this.clearTimer();
    const run = this.chain.then(() => this.sendAll());
    this.chain = run.catch(() => undefined);
    return run;
  }

  /** Flushes the buffer and refuses later adds. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.flush();
  }

  private async sendAll(): Promise<PushResult[]> {
    let items = this.buf;
    this.buf = [];
    const out: PushResult[] = [];
    while (items.length > 0) {
      const n = Math.min(items.length, this.batchSize);
      try {
        out.push(...(await pushWire(this.q.t, items.slice(0, n))));
      } catch (e) {
        // Put the unsent items back in front so that a later flush retries them in order.
        this.buf = [...items, ...this.buf];
        throw e;
      }
      items = items.slice(n);
    }
    return out;
  }

  private background(): void {
    this.timer = undefined;
    this.flush().catch((err: unknown) => {
      const failed: PushItem[] = this.buf.map((w) => {
        const it: PushItem = { payload: w.payload, transactionId: w.transactionId };
        if (w.traceId) it.traceId = w.traceId;
        return it;
      });
      this.buf = []; // handed to onError; not retried forever in the background
      if (this.onError) this.onError(err, failed);
      else this.q.t.logger.error?.("queen: background flush failed", { queue: this.q.name, items: failed.length, error: String(err) });
    });
  }

  private clearTimer(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
  }
}
