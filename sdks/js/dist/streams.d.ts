import { QueenError } from "./errors.js";
import { type Transport } from "./transport.js";
import type { CallOptions, PushResult } from "./types.js";
/** Error codes of {@link StreamsError}. */
export type StreamsErrorCode = "STREAMS_CONFIG_HASH_MISMATCH" | "STREAMS_REGISTER_FAILED" | "STREAMS_CYCLE_FAILED" | "STREAMS_STATE_GET_FAILED" | "STREAMS_HTTP";
/**
 * A streams call that failed. `code` says how: a registration refused because the operator chain changed
 * (`STREAMS_CONFIG_HASH_MISMATCH`, HTTP 409: pass reset:true or use a new name), a procedure answering
 * success:false (`STREAMS_REGISTER_FAILED`, `STREAMS_CYCLE_FAILED`, `STREAMS_STATE_GET_FAILED`; a failed
 * cycle was rolled back whole), or a final non-2xx answer (`STREAMS_HTTP`, with `status`).
 */
export declare class StreamsError extends QueenError {
    readonly code: StreamsErrorCode;
    readonly status: number | undefined;
    /** The parsed answer, when there was one. */
    readonly body: unknown;
    constructor(code: StreamsErrorCode, message: string, status?: number, body?: unknown, options?: {
        cause?: unknown;
    });
}
/** One state operation of a cycle, scoped to (query, source partition). */
export type StateOp = {
    type: "upsert";
    key: string;
    value?: unknown;
} | {
    type: "delete";
    key: string;
};
/** A sink message of a cycle (same dedup rules as a push). */
export interface CyclePushItem {
    queue: string;
    partition?: string;
    payload: unknown;
    transactionId?: string;
    traceId?: string;
}
/** The source acknowledgement of a cycle: cumulative up to transactionId. */
export interface CycleAck {
    transactionId: string;
    /** Always send it: it is what makes a retried cycle safe (a committed cycle released the lease). */
    leaseId?: string;
    status?: "completed" | "failed" | "dlq";
    /** Messages credited to the group (default 1). */
    count?: number;
    error?: string;
}
/** One atomic commit: state changes, sink pushes and the source ack, in one PostgreSQL transaction. */
export interface Cycle {
    queryId: string;
    /** The source partition (its lease makes this runner the only writer of its state). */
    partitionId: string;
    /** The group the source was popped with (the runtimes use `streams.<name>`). */
    consumerGroup?: string;
    /** Default true; false keeps the lease for ordered partial acks. */
    releaseLease?: boolean;
    stateOps?: StateOp[];
    pushItems?: CyclePushItem[];
    ack?: CycleAck;
}
/** The answer to a committed cycle. */
export interface CycleResult {
    success: true;
    queryId: string;
    partitionId: string;
    queueName: string | null;
    stateOpsApplied: number;
    pushResults: PushResult[] | unknown[];
    ackResult: {
        success: boolean;
        count: number;
        lease_released: boolean;
        dlq: boolean;
    } | null;
}
/** One stored state row. */
export interface StateRow {
    key: string;
    value: unknown;
    updated_at: string;
}
/** The answer to a registration. */
export interface Registration {
    queryId: string;
    name: string;
    configHash: string;
    /** First registration of this name. */
    fresh: boolean;
    /** State was wiped because reset:true came with a changed hash. */
    reset: boolean;
}
/** The streams routes; reach it as `client.streams`. */
export declare class Streams {
    private readonly t;
    private readonly retries;
    /** @internal */
    constructor(t: Transport, retries?: number);
    /**
     * Registers a query (POST /streams/v1/queries). A hash that differs from the stored one is refused with
     * STREAMS_CONFIG_HASH_MISMATCH unless reset is true, which wipes the query's state.
     */
    register(q: {
        name: string;
        sourceQueue: string;
        sinkQueue?: string;
        configHash: string;
        reset?: boolean;
    } & CallOptions): Promise<Registration>;
    /**
     * Commits one cycle (POST /streams/v1/cycle). The broker answers 200 whenever its procedure ran; a
     * success:false answer (everything of the cycle rolled back) throws STREAMS_CYCLE_FAILED. A 500 is an
     * infrastructure error and is retried: the cycle is one transaction, and a retry of a committed cycle
     * fails on the released lease instead of applying twice.
     */
    cycle(c: Cycle, opts?: CallOptions): Promise<CycleResult>;
    /** Reads state rows of (query, partition), ordered by key (POST /streams/v1/state/get). */
    getState(q: {
        queryId: string;
        partitionId: string;
        keys?: string[];
        keyPrefix?: string;
        ripeAtOrBefore?: number;
    } & CallOptions): Promise<StateRow[]>;
    /** Delay before retry n (0-based): min(5000, 100 × 2^n) ms plus 0–30 %. */
    backoff(n: number): number;
    /** {@link post}, with a final StreamsError that `refused` recognises replaced by what it returns. */
    private call;
    private post;
}
