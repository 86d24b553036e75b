import { type Transport } from "./transport.js";
import { Producer, type ProducerOptions } from "./producer.js";
import { type ConsumeOptions, type Handler } from "./consume.js";
import { type CallOptions, type Message, type PopOptions, type PushItem, type PushResult, type QueueConfigured, type QueueOptions } from "./types.js";
/** One item on the wire of POST /api/v1/push (and of a transaction's push). */
export interface WirePushItem {
    queue: string;
    partition?: string;
    payload: unknown;
    transactionId: string;
    traceId?: string;
}
interface QueueState {
    name: string;
    partition: string;
    group: string;
    subscriptionMode: string;
    subscriptionFrom: string;
    namespace: string;
    task: string;
    options: QueueOptions | undefined;
}
/**
 * Addresses a queue, optionally one partition of it and a consumer group. Builders are immutable: every
 * method returns a modified copy, so a base handle can be shared.
 *
 * ```js
 * const orders = client.queue("orders");
 * await orders.partition("user-1").push({ payload: order });
 * const msgs = await orders.group("billing").pop({ batch: 10, wait: true });
 * ```
 */
export declare class QueueBuilder {
    /** @internal */
    readonly t: Transport;
    /** @internal */
    readonly s: Readonly<QueueState>;
    /** @internal */
    constructor(t: Transport, s: Partial<QueueState>);
    private with;
    /** The queue name. */
    get name(): string;
    /** Pushes go to this partition (default "Default") and pops read only it. */
    partition(name: string): QueueBuilder;
    /** Consume as this named consumer group (fan-out: every group sees every message). Empty = queue mode. */
    group(name: string): QueueBuilder;
    /** `all` (default) or `new`: where a named group starts the first time it meets a partition. */
    subscriptionMode(mode: "all" | "new" | string): QueueBuilder;
    /** Start a new group after this time (or "now"); takes precedence over subscriptionMode. */
    subscriptionFrom(from: Date | string): QueueBuilder;
    /** The namespace create() registers the queue under. */
    namespace(ns: string): QueueBuilder;
    /** The task create() registers the queue under. */
    task(t: string): QueueBuilder;
    /** Options for create(). */
    config(options: QueueOptions): QueueBuilder;
    /**
     * Creates the queue or replaces its configuration (POST /api/v1/configure). Configure has full-replace
     * semantics: options left out are reset to the broker defaults.
     */
    create(opts?: CallOptions): Promise<QueueConfigured>;
    /**
     * Reads the queue's configuration (GET /api/v1/status/queues/:queue) with every option present: given to
     * config() and create() it configures the queue to what it is. NotFoundError for an unknown queue.
     */
    options(opts?: CallOptions): Promise<Required<QueueOptions>>;
    /** Deletes the queue with its partitions, messages and dead letters; resolves whether it existed. */
    delete(opts?: CallOptions): Promise<boolean>;
    /** The queue with its partitions and counts (GET /api/v1/resources/queues/:queue); NotFoundError when unknown. */
    info(opts?: CallOptions): Promise<Record<string, unknown>>;
    /** @internal */
    wireItems(items: PushItem | unknown | Array<PushItem | unknown>): WirePushItem[];
    /**
     * Pushes items in one request (to the chosen partition, else "Default") and resolves one result per item,
     * in order. An item is `{payload|data, transactionId?, traceId?}`; any other value is pushed as the payload
     * itself. Items without a transactionId get a generated one, so a push retried after a 5xx or a network
     * failure is reported `duplicate` instead of being stored twice. A duplicate is not an error.
     */
    push(items: PushItem | unknown | Array<PushItem | unknown>, opts?: CallOptions): Promise<PushResult[]>;
    /**
     * Fetches up to `batch` messages (GET /api/v1/pop/queue/:queue[/partition/:p]). An empty queue (HTTP 204)
     * resolves to `[]` and nothing else does: every failure rejects with a typed error: a terminal 403 is a
     * ForbiddenError, an exhausted 429 budget a RateLimitedError, never "no messages".
     */
    pop(opts?: PopOptions): Promise<Message[]>;
    /** @internal pop without the failure log (the consume loop logs its own decision). */
    popRaw(opts?: PopOptions): Promise<Message[]>;
    /** A buffered producer for this queue (and partition): batches by count or time; call close() at the end. */
    producer(opts?: ProducerOptions): Producer;
    /**
     * Long-polls with `concurrency` workers and calls handler for every message until `signal` aborts; see
     * {@link ConsumeOptions}. Resolves on a graceful stop, rejects with the error on a terminal failure
     * (401, 403, 404, 413, …).
     */
    consume(handler: Handler, opts?: ConsumeOptions): Promise<void>;
    private needName;
}
/** POST /api/v1/push with the result alignment check. */
export declare function pushWire(t: Transport, items: WirePushItem[], signal?: AbortSignal): Promise<PushResult[]>;
export {};
