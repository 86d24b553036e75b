// The client: one per process, shared by every queue handle.

import { ackMany, ackOne, extendLease, toSpec, type AckStatusInput } from "./ack.js";
import { Admin } from "./admin.js";
import { QueenError } from "./errors.js";
import { QueueBuilder } from "./queue.js";
import { Streams } from "./streams.js";
import { Transaction } from "./transaction.js";
import { Transport, type QueenConfig, type ResolvedConfig } from "./transport.js";
import type { AckResult, AckSpec, CallOptions, LeaseResult, Message } from "./types.js";

/** Options of `client.ack()`. */
export interface AckOptions extends CallOptions {
  /** Failure reason recorded with failed and dead-lettered messages. */
  error?: string;
  /** Overrides the consumer group carried by the messages. */
  group?: string;
}

/**
 * A client for one Queen deployment (one or several broker URLs). Create one per process and share it.
 *
 * ```js
 * const client = new Queen({ url: "http://localhost:6632" });
 * ```
 */
export class Queen {
  private readonly t: Transport;
  /** Administration: dead letters, queues, consumer groups, maintenance, status. */
  readonly admin: Admin;
  /** The /streams/v1 routes: register a query, commit a cycle (throws on success:false), read state. */
  readonly streams: Streams;

  /** cfg is a URL, a list of URLs, or a {@link QueenConfig}. Throws on a missing or malformed URL; does no I/O. */
  constructor(cfg: string | string[] | QueenConfig) {
    const c: QueenConfig = typeof cfg === "string" ? { url: cfg } : Array.isArray(cfg) ? { urls: cfg } : cfg;
    this.t = new Transport(c);
    this.admin = new Admin(this.t);
    this.streams = new Streams(this.t, c.streamsRetryAttempts);
  }

  /** The effective configuration, defaults applied. */
  get config(): ResolvedConfig {
    return this.t.config;
  }

  /** Each configured URL and whether it is currently considered healthy. */
  backendHealth(): Record<string, boolean> {
    return this.t.backendHealth();
  }

  /** A handle on the named queue. Queues are created on first push; configure one with `.config().create()`. */
  queue(name: string): QueueBuilder {
    return new QueueBuilder(this.t, { name });
  }

  /**
   * A consume-only handle over every queue of a namespace and/or task (GET /api/v1/pop?namespace=&task=),
   * highest priority first. At least one must be set.
   */
  matching(namespace: string, task = ""): QueueBuilder {
    if (!namespace && !task) throw new QueenError("queen: matching needs a namespace or a task");
    return new QueueBuilder(this.t, { namespace, task });
  }

  /**
   * Acknowledges one message (POST /api/v1/ack) and resolves its result; a rejection (HTTP 200 with
   * success:false, e.g. "invalid or expired lease") throws AckError carrying the result.
   *
   * Given an array, acknowledges them in one request (POST /api/v1/ack/batch) and resolves one result per
   * message, in order; per-item rejections are in the results (success:false), not thrown. A response that
   * does not line up with the request item by item throws MalformedResponseError.
   *
   * status: true → completed (default), false → failed, or "completed" | "failed" | "dlq" | "retry".
   */
  ack(m: Message | AckSpec, status?: AckStatusInput, opts?: AckOptions): Promise<AckResult>;
  ack(m: Array<Message | AckSpec>, status?: AckStatusInput, opts?: AckOptions): Promise<AckResult[]>;
  ack(m: Message | AckSpec | Array<Message | AckSpec>, status?: AckStatusInput, opts: AckOptions = {}): Promise<AckResult | AckResult[]> {
    const spec = (x: Message | AckSpec) => {
      const s = toSpec(x, status, opts.error);
      if (opts.group !== undefined) s.consumerGroup = opts.group;
      return s;
    };
    if (Array.isArray(m)) {
      let specs: AckSpec[];
      try {
        specs = m.map(spec);
      } catch (e) {
        return Promise.reject(e);
      }
      return ackMany(this.t, specs, opts.signal);
    }
    try {
      return ackOne(this.t, spec(m), opts.signal);
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /**
   * Extends the lease of a message (or a lease id) to at least now + seconds (default 60); never shortens.
   * An unknown, expired or inactive lease throws LeaseLostError.
   */
  renew(lease: Message | string, seconds = 60, opts: CallOptions = {}): Promise<LeaseResult> {
    return extendLease(this.t, typeof lease === "string" ? lease : lease.leaseId, seconds, opts.signal);
  }

  /** Starts an empty transaction. */
  transaction(): Transaction {
    return new Transaction(this.t);
  }
}
