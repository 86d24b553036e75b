import { type AckStatusInput } from "./ack.js";
import { Admin } from "./admin.js";
import { QueueBuilder } from "./queue.js";
import { Streams } from "./streams.js";
import { Transaction } from "./transaction.js";
import { type QueenConfig, type ResolvedConfig } from "./transport.js";
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
export declare class Queen {
    private readonly t;
    /** Administration: dead letters, queues, consumer groups, maintenance, status. */
    readonly admin: Admin;
    /** The /streams/v1 routes: register a query, commit a cycle (throws on success:false), read state. */
    readonly streams: Streams;
    /** cfg is a URL, a list of URLs, or a {@link QueenConfig}. Throws on a missing or malformed URL; does no I/O. */
    constructor(cfg: string | string[] | QueenConfig);
    /** The effective configuration, defaults applied. */
    get config(): ResolvedConfig;
    /** Each configured URL and whether it is currently considered healthy. */
    backendHealth(): Record<string, boolean>;
    /** A handle on the named queue. Queues are created on first push; configure one with `.config().create()`. */
    queue(name: string): QueueBuilder;
    /**
     * A consume-only handle over every queue of a namespace and/or task (GET /api/v1/pop?namespace=&task=),
     * highest priority first. At least one must be set.
     */
    matching(namespace: string, task?: string): QueueBuilder;
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
    /**
     * Extends the lease of a message (or a lease id) to at least now + seconds (default 60); never shortens.
     * An unknown, expired or inactive lease throws LeaseLostError.
     */
    renew(lease: Message | string, seconds?: number, opts?: CallOptions): Promise<LeaseResult>;
    /** Starts an empty transaction. */
    transaction(): Transaction;
}
