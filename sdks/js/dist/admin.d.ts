import { type Transport } from "./transport.js";
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
    pagination?: {
        limit: number;
        offset: number;
    };
}
/** Administration calls; reach it as `client.admin`. */
export declare class Admin {
    private readonly t;
    /** @internal */
    constructor(t: Transport);
    private get;
    /** Lists dead letters (GET /api/v1/dlq). */
    dlq(f?: DLQFilter): Promise<DLQPage>;
    /** One dead letter; NotFoundError when there is none. */
    dlqMessage(partitionId: string, transactionId: string, opts?: CallOptions): Promise<DLQMessage>;
    /** Discards a dead letter. */
    deleteDLQMessage(partitionId: string, transactionId: string, opts?: CallOptions): Promise<void>;
    /** Puts a dead letter back in front of its consumer group. */
    retryDLQMessage(partitionId: string, transactionId: string, opts?: CallOptions): Promise<void>;
    /** Lists the queues, newest first (GET /api/v1/resources/queues). */
    queues(opts?: CallOptions): Promise<Json[]>;
    /** GET /api/v1/resources/overview. */
    overview(opts?: CallOptions): Promise<Json>;
    /** GET /api/v1/resources/namespaces. */
    namespaces(opts?: CallOptions): Promise<Json>;
    /** GET /api/v1/resources/tasks. */
    tasks(opts?: CallOptions): Promise<Json>;
    /** Lists messages (GET /api/v1/messages) with the broker's filters (queue, partition, status, limit, offset, …). */
    messages(filter?: Record<string, string | number | undefined>, opts?: CallOptions): Promise<Json>;
    /** One message by partition id and transaction id; NotFoundError when unknown. */
    message(partitionId: string, transactionId: string, opts?: CallOptions): Promise<Json>;
    /** Deletes one message. */
    deleteMessage(partitionId: string, transactionId: string, opts?: CallOptions): Promise<void>;
    /** Consumer groups per queue, including queue mode (GET /api/v1/consumer-groups). */
    consumerGroups(opts?: CallOptions): Promise<Json[]>;
    /** Partitions whose oldest unconsumed message is older than minLagSeconds. */
    laggingPartitions(minLagSeconds?: number, opts?: CallOptions): Promise<Json[]>;
    /** A handle for administering one consumer group. */
    consumerGroup(name: string): ConsumerGroupAdmin;
    /** Whether push maintenance (pushes diverted to the disk spool) is on. */
    maintenance(opts?: CallOptions): Promise<Json>;
    /** Turns push maintenance on or off. */
    setMaintenance(enabled: boolean, opts?: CallOptions): Promise<Json>;
    /** Whether pop maintenance (every pop answers 204) is on. */
    popMaintenance(opts?: CallOptions): Promise<Json>;
    /** Turns pop maintenance on or off. */
    setPopMaintenance(enabled: boolean, opts?: CallOptions): Promise<Json>;
    /** Dashboard overview (GET /api/v1/status); filter by from/to/queue/namespace/task. */
    status(f?: {
        from?: Date | string;
        to?: Date | string;
        queue?: string;
        namespace?: string;
        task?: string;
    } & CallOptions): Promise<Json>;
    /** Queues with counts (GET /api/v1/status/queues). */
    statusQueues(opts?: CallOptions): Promise<Json>;
    /** One queue's configuration, partitions and totals; NotFoundError for an unknown queue. */
    statusQueue(queue: string, opts?: CallOptions): Promise<Json>;
    /** A queue's recent messages. */
    statusQueueMessages(queue: string, page?: {
        limit?: number;
        offset?: number;
    }, opts?: CallOptions): Promise<Json>;
    /** GET /health: a database round-trip; a broker that cannot reach PostgreSQL answers 503 (an ApiError after layer one). */
    health(opts?: CallOptions): Promise<Json>;
    /** GET on any read route (e.g. "/api/v1/analytics/queue-lag") with both retry layers; the parsed JSON body. */
    getRaw<T = unknown>(path: string, query?: Record<string, string | number | boolean | undefined>, opts?: CallOptions): Promise<T>;
}
/** Administration of one consumer group; see {@link Admin.consumerGroup}. */
export declare class ConsumerGroupAdmin {
    private readonly t;
    readonly name: string;
    /** @internal */
    constructor(t: Transport, name: string);
    private path;
    /** The group's cursors keyed by queue name; an unknown group yields {}. */
    get(opts?: CallOptions): Promise<Record<string, Json[]>>;
    /** Removes the group's cursors on every queue; with deleteMetadata the subscription record goes too. */
    delete(deleteMetadata?: boolean, opts?: CallOptions): Promise<Json>;
    /** Removes the group's cursors on one queue. */
    deleteForQueue(queue: string, deleteMetadata?: boolean, opts?: CallOptions): Promise<Json>;
    /** Rewrites the group's subscription timestamp (affects partitions it has not consumed yet). */
    setSubscription(at: Date | string, opts?: CallOptions): Promise<Json>;
    /** Moves every cursor of the group on queue to the newest message, skipping the backlog. */
    seekToEnd(queue: string, opts?: CallOptions): Promise<Json>;
    /** Moves every cursor of the group on queue to the last message at or before `at` (replay). */
    seekTo(queue: string, at: Date | string, opts?: CallOptions): Promise<Json>;
    /** Moves the group's cursor on one partition to its end. */
    seekPartitionToEnd(queue: string, partition: string, opts?: CallOptions): Promise<Json>;
}
export {};
