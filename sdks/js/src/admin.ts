// Administration: dead letters, queues, consumer groups, maintenance, status and health. Dashboard-shaped
// answers are returned as parsed JSON; their inner shape may grow.

import { isMissing } from "./errors.js";
import { seg, type Transport } from "./transport.js";
import type { CallOptions } from "./types.js";

type Json = Record<string, unknown>;

/** Filters of `admin.dlq()`; unset fields do not filter. */
export interface DLQFilter extends CallOptions {
  queue?: string;
  /** Consumer group (QUEUE_MODE for queue mode). */
  consumerGroup?: string;
  partition?: string;
  /** Failure-time window. */
  from?: Date | string;
  to?: Date | string;
  /** Paging (broker default limit 100). */
  limit?: number;
  offset?: number;
}

/** A dead-lettered message. */
export interface DLQMessage {
  id: string;
  transactionId: string;
  partitionId: string;
  queue: string;
  partition: string;
  consumerGroup: string;
  errorMessage: string;
  retryCount: number;
  data: unknown;
  producerSub: string | null;
  createdAt: string;
  failedAt: string;
}

/** One page of dead letters, newest failure first. */
export interface DLQPage {
  messages: DLQMessage[];
  total: number;
  pagination?: { limit: number; offset: number };
}

const iso = (d: Date | string | undefined) => (d instanceof Date ? d.toISOString() : d);

/** Administration calls; reach it as `client.admin`. */
export class Admin {
  private readonly t: Transport;
  /** @internal */
  constructor(t: Transport) {
    this.t = t;
  }

  private get<T = Json>(path: string, query?: Json, signal?: AbortSignal): Promise<T> {
    return this.t.json<T>({ method: "GET", path, query: query as Record<string, string>, signal });
  }

  // ---- dead-letter queue ----

  /** Lists dead letters (GET /api/v1/dlq). */
  dlq(f: DLQFilter = {}): Promise<DLQPage> {
    return this.get<DLQPage>("/api/v1/dlq", {
      queue: f.queue, consumerGroup: f.consumerGroup, partition: f.partition,
      from: iso(f.from), to: iso(f.to), limit: f.limit, offset: f.offset,
    }, f.signal);
  }
  /** One dead letter; NotFoundError when there is none. */
  dlqMessage(partitionId: string, transactionId: string, opts: CallOptions = {}): Promise<DLQMessage> {
    return this.get<DLQMessage>(`/api/v1/dlq/${seg(partitionId)}/${seg(transactionId)}`, undefined, opts.signal);
  }
  /** Discards a dead letter. */
  async deleteDLQMessage(partitionId: string, transactionId: string, opts: CallOptions = {}): Promise<void> {
    await this.t.request({ method: "DELETE", path: `/api/v1/dlq/${seg(partitionId)}/${seg(transactionId)}`, signal: opts.signal });
  }
  /** Puts a dead letter back in front of its consumer group. */
  async retryDLQMessage(partitionId: string, transactionId: string, opts: CallOptions = {}): Promise<void> {
    await this.t.request({ method: "POST", path: `/api/v1/dlq/${seg(partitionId)}/${seg(transactionId)}/retry`, body: {}, signal: opts.signal });
  }

  // ---- resources ----

  /** Lists the queues, newest first (GET /api/v1/resources/queues). */
  async queues(opts: CallOptions = {}): Promise<Json[]> {
    const out = await this.get<{ queues?: Json[] }>("/api/v1/resources/queues", undefined, opts.signal);
    return out?.queues ?? [];
  }
  /** GET /api/v1/resources/overview. */
  overview(opts: CallOptions = {}): Promise<Json> {
    return this.get("/api/v1/resources/overview", undefined, opts.signal);
  }
  /** GET /api/v1/resources/namespaces. */
  namespaces(opts: CallOptions = {}): Promise<Json> {
    return this.get("/api/v1/resources/namespaces", undefined, opts.signal);
  }
  /** GET /api/v1/resources/tasks. */
  tasks(opts: CallOptions = {}): Promise<Json> {
    return this.get("/api/v1/resources/tasks", undefined, opts.signal);
  }
  /** Lists messages (GET /api/v1/messages) with the broker's filters (queue, partition, status, limit, offset, …). */
  messages(filter: Record<string, string | number | undefined> = {}, opts: CallOptions = {}): Promise<Json> {
    return this.get("/api/v1/messages", filter, opts.signal);
  }
  /** One message by partition id and transaction id; NotFoundError when unknown. */
  message(partitionId: string, transactionId: string, opts: CallOptions = {}): Promise<Json> {
    return this.get(`/api/v1/messages/${seg(partitionId)}/${seg(transactionId)}`, undefined, opts.signal);
  }
  /** Deletes one message. */
  async deleteMessage(partitionId: string, transactionId: string, opts: CallOptions = {}): Promise<void> {
    await this.t.request({ method: "DELETE", path: `/api/v1/messages/${seg(partitionId)}/${seg(transactionId)}`, signal: opts.signal });
  }

  // ---- consumer groups ----

  /** Consumer groups per queue, including queue mode (GET /api/v1/consumer-groups). */
  consumerGroups(opts: CallOptions = {}): Promise<Json[]> {
    return this.get<Json[]>("/api/v1/consumer-groups", undefined, opts.signal);
  }
  /** Partitions whose oldest unconsumed message is older than minLagSeconds. */
  laggingPartitions(minLagSeconds = 60, opts: CallOptions = {}): Promise<Json[]> {
    return this.get<Json[]>("/api/v1/consumer-groups/lagging", { minLagSeconds: Math.floor(minLagSeconds) }, opts.signal);
  }
  /** A handle for administering one consumer group. */
  consumerGroup(name: string): ConsumerGroupAdmin {
    return new ConsumerGroupAdmin(this.t, name);
  }

  // ---- maintenance ----

  /** Whether push maintenance (pushes diverted to the disk spool) is on. */
  maintenance(opts: CallOptions = {}): Promise<Json> {
    return this.get("/api/v1/system/maintenance", undefined, opts.signal);
  }
  /** Turns push maintenance on or off. */
  setMaintenance(enabled: boolean, opts: CallOptions = {}): Promise<Json> {
    return this.t.json({ method: "POST", path: "/api/v1/system/maintenance", body: { enabled }, signal: opts.signal });
  }
  /** Whether pop maintenance (every pop answers 204) is on. */
  popMaintenance(opts: CallOptions = {}): Promise<Json> {
    return this.get("/api/v1/system/maintenance/pop", undefined, opts.signal);
  }
  /** Turns pop maintenance on or off. */
  setPopMaintenance(enabled: boolean, opts: CallOptions = {}): Promise<Json> {
    return this.t.json({ method: "POST", path: "/api/v1/system/maintenance/pop", body: { enabled }, signal: opts.signal });
  }

  // ---- status and health ----

  /** Dashboard overview (GET /api/v1/status); filter by from/to/queue/namespace/task. */
  status(f: { from?: Date | string; to?: Date | string; queue?: string; namespace?: string; task?: string } & CallOptions = {}): Promise<Json> {
    return this.get("/api/v1/status", { from: iso(f.from), to: iso(f.to), queue: f.queue, namespace: f.namespace, task: f.task }, f.signal);
  }
  /** Queues with counts (GET /api/v1/status/queues). */
  statusQueues(opts: CallOptions = {}): Promise<Json> {
    return this.get("/api/v1/status/queues", undefined, opts.signal);
  }
  /** One queue's configuration, partitions and totals; NotFoundError for an unknown queue. */
  statusQueue(queue: string, opts: CallOptions = {}): Promise<Json> {
    return this.get(`/api/v1/status/queues/${seg(queue)}`, undefined, opts.signal);
  }
  /** A queue's recent messages. */
  statusQueueMessages(queue: string, page: { limit?: number; offset?: number } = {}, opts: CallOptions = {}): Promise<Json> {
    return this.get(`/api/v1/status/queues/${seg(queue)}/messages`, { limit: page.limit, offset: page.offset }, opts.signal);
  }
  /** GET /health: a database round-trip; a broker that cannot reach PostgreSQL answers 503 (an ApiError after layer one). */
  health(opts: CallOptions = {}): Promise<Json> {
    return this.get("/health", undefined, opts.signal);
  }
  /** GET on any read route (e.g. "/api/v1/analytics/queue-lag") with both retry layers; the parsed JSON body. */
  getRaw<T = unknown>(path: string, query?: Record<string, string | number | boolean | undefined>, opts: CallOptions = {}): Promise<T> {
    return this.get<T>(path.startsWith("/") ? path : "/" + path, query, opts.signal);
  }
}

/** Administration of one consumer group; see {@link Admin.consumerGroup}. */
export class ConsumerGroupAdmin {
  private readonly t: Transport;
  readonly name: string;
  /** @internal */
  constructor(t: Transport, name: string) {
    this.t = t;
    this.name = name;
  }
  private path(rest = ""): string {
    return `/api/v1/consumer-groups/${seg(this.name)}${rest}`;
  }
  /** The group's cursors keyed by queue name; an unknown group yields {}. */
  async get(opts: CallOptions = {}): Promise<Record<string, Json[]>> {
    try {
      const raw = await this.t.json<Record<string, { partitions?: Json[] }>>({ method: "GET", path: this.path(), signal: opts.signal });
      const out: Record<string, Json[]> = {};
      for (const [q, v] of Object.entries(raw ?? {})) out[q] = v?.partitions ?? [];
      return out;
    } catch (e) {
      if (isMissing(e)) return {};
      throw e;
    }
  }
  /** Removes the group's cursors on every queue; with deleteMetadata the subscription record goes too. */
  delete(deleteMetadata = true, opts: CallOptions = {}): Promise<Json> {
    return this.t.json({ method: "DELETE", path: this.path(), query: { deleteMetadata }, signal: opts.signal });
  }
  /** Removes the group's cursors on one queue. */
  deleteForQueue(queue: string, deleteMetadata = true, opts: CallOptions = {}): Promise<Json> {
    return this.t.json({ method: "DELETE", path: this.path(`/queues/${seg(queue)}`), query: { deleteMetadata }, signal: opts.signal });
  }
  /** Rewrites the group's subscription timestamp (affects partitions it has not consumed yet). */
  setSubscription(at: Date | string, opts: CallOptions = {}): Promise<Json> {
    return this.t.json({ method: "POST", path: this.path("/subscription"), body: { subscriptionTimestamp: iso(at) }, signal: opts.signal });
  }
  /** Moves every cursor of the group on queue to the newest message, skipping the backlog. */
  seekToEnd(queue: string, opts: CallOptions = {}): Promise<Json> {
    return this.t.json({ method: "POST", path: this.path(`/queues/${seg(queue)}/seek`), body: { toEnd: true }, signal: opts.signal });
  }
  /** Moves every cursor of the group on queue to the last message at or before `at` (replay). */
  seekTo(queue: string, at: Date | string, opts: CallOptions = {}): Promise<Json> {
    return this.t.json({ method: "POST", path: this.path(`/queues/${seg(queue)}/seek`), body: { timestamp: iso(at) }, signal: opts.signal });
  }
  /** Moves the group's cursor on one partition to its end. */
  seekPartitionToEnd(queue: string, partition: string, opts: CallOptions = {}): Promise<Json> {
    return this.t.json({ method: "POST", path: this.path(`/queues/${seg(queue)}/partitions/${seg(partition)}/seek`), body: {}, signal: opts.signal });
  }
}
