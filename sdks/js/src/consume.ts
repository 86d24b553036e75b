// The consume loop: long-poll workers, handler calls, acknowledgements, lease renewal, graceful stop.

import { ackMany, completed, extendLease, failed } from "./ack.js";
import { ApiError, LeaseLostError, isTerminal } from "./errors.js";
import type { QueueBuilder } from "./queue.js";
import type { AckResult, AckSpec, Message } from "./types.js";

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
export async function consume(q: QueueBuilder, handler: Handler, opts: ConsumeOptions): Promise<void> {
  const concurrency = Math.max(1, Math.floor(opts.concurrency ?? 1));
  const stop = new AbortController();
  const onAbort = () => stop.abort(opts.signal?.reason);
  if (opts.signal?.aborted) return;
  opts.signal?.addEventListener("abort", onAbort, { once: true });
  let firstErr: unknown;
  let failedWorker = false;
  try {
    await Promise.all(
      Array.from({ length: concurrency }, () =>
        worker(q, handler, opts, stop.signal).catch((err: unknown) => {
          if (!failedWorker) {
            failedWorker = true;
            firstErr = err;
          }
          stop.abort(err);
        }),
      ),
    );
  } finally {
    opts.signal?.removeEventListener("abort", onAbort);
  }
  if (failedWorker) throw firstErr;
}

async function worker(q: QueueBuilder, handler: Handler, opts: ConsumeOptions, stop: AbortSignal): Promise<void> {
  const log = q.t.logger;
  const backoff = opts.errorBackoffMillis && opts.errorBackoffMillis > 0 ? opts.errorBackoffMillis : q.t.config.retryDelayMillis;
  const pop = {
    batch: opts.batch,
    partitions: opts.partitions,
    wait: true,
    timeoutMillis: opts.pollTimeoutMillis && opts.pollTimeoutMillis > 0 ? opts.pollTimeoutMillis : 30000,
    autoAck: opts.autoAck === true,
    signal: stop,
  };
  while (!stop.aborted) {
    let msgs: Message[];
    try {
      msgs = await q.popRaw(pop);
    } catch (err) {
      if (stop.aborted) return;
      const fields = errFields(q, err);
      if (isTerminal(err)) {
        log.error?.("queen: consumer stopped on terminal error", fields);
        throw err;
      }
      let d = backoff;
      if (err instanceof ApiError && err.retryAfterMs !== undefined && err.retryAfterMs > d) d = err.retryAfterMs;
      log.warn?.("queen: pop failed, backing off", { ...fields, delayMs: d });
      try {
        await q.t.sleep(d, stop);
      } catch {
        return;
      }
      continue;
    }
    if (msgs.length > 0) await processBatch(q, handler, opts, msgs);
  }
}

function errFields(q: QueueBuilder, err: unknown): Record<string, unknown> {
  const f: Record<string, unknown> = { queue: q.name, error: String(err) };
  if (err instanceof ApiError) {
    f.status = err.status;
    if (err.code) f.code = err.code;
  }
  return f;
}

/** Runs the handler over one popped batch and acknowledges it; a received batch is leased to us and is finished even when stopping. */
async function processBatch(q: QueueBuilder, handler: Handler, opts: ConsumeOptions, msgs: Message[]): Promise<void> {
  const log = q.t.logger;
  const stopRenewal = opts.renewLeaseMillis && opts.renewLeaseMillis > 0 && !opts.autoAck ? renew(q, opts.renewLeaseMillis, msgs) : async () => {};
  // Acks go in one batch at the end, except at a handler failure: the failed ack is sent at once because its
  // outcome decides what happens to the rest of that partition's batch.
  let pending: AckSpec[] = [];
  const flush = async (): Promise<AckResult[]> => {
    if (pending.length === 0) return [];
    const send = pending;
    pending = [];
    try {
      const res = await ackMany(q.t, send);
      for (const r of res) {
        if (!r.success) log.warn?.("queen: ack rejected; the message will redeliver", { queue: q.name, transactionId: r.transactionId, error: r.error });
      }
      return res;
    } catch (err) {
      log.error?.("queen: ack failed; the batch will redeliver", { ...errFields(q, err) });
      return [];
    }
  };
  const skip = new Set<string>(); // partitions whose batch stopped at a failure
  try {
    for (const m of msgs) {
      if (skip.has(m.partitionId)) continue;
      let err: unknown;
      let threw = false;
      try {
        await handler(m);
      } catch (e) {
        err = e;
        threw = true;
      }
      if (opts.autoAck || opts.manualAck) {
        if (threw) log.warn?.("queen: handler failed", { queue: q.name, transactionId: m.transactionId, error: String(err) });
      } else if (threw) {
        pending.push(failed(m, err instanceof Error ? err.message : String(err)));
        const res = await flush();
        const last = res[res.length - 1];
        if (!last || !last.success || !last.dlq) skip.add(m.partitionId);
      } else {
        pending.push(completed(m));
      }
    }
  } finally {
    await stopRenewal(); // the acks below release the lease; renewing it afterwards would only fail
    await flush();
  }
}

/** Extends every lease of msgs each interval until the returned stop function is called. */
function renew(q: QueueBuilder, every: number, msgs: Message[]): () => Promise<void> {
  const leases = new Set(msgs.map((m) => m.leaseId).filter((l) => l !== ""));
  if (leases.size === 0) return async () => {};
  const ctl = new AbortController();
  let inflight: Promise<unknown> = Promise.resolve();
  let running = false;
  const tick = () => {
    if (running) return; // a slow extension is still going: do not pile up requests
    running = true;
    inflight = (async () => {
      for (const id of [...leases]) {
        try {
          await extendLease(q.t, id, (2 * every) / 1000, ctl.signal);
        } catch (err) {
          if (ctl.signal.aborted) return;
          if (err instanceof LeaseLostError) {
            // Released by the handler's own acks (manual mode) or expired: nothing to renew.
            q.t.logger.debug?.("queen: lease no longer renewable", { leaseId: id, error: String(err) });
            leases.delete(id);
          } else {
            q.t.logger.warn?.("queen: lease renewal failed", { leaseId: id, error: String(err) });
          }
        }
      }
      if (leases.size === 0) clearInterval(timer);
    })().finally(() => {
      running = false;
    });
  };
  const timer = setInterval(tick, every);
  return async () => {
    clearInterval(timer);
    ctl.abort();
    await inflight.catch(() => undefined);
  };
}
