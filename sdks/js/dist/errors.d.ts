import type { AckResult, TransactionResult, LeaseResult } from "./types.js";
/** Base class of every error this SDK throws. */
export declare class QueenError extends Error {
    constructor(message: string, options?: {
        cause?: unknown;
    });
}
/** Fields shared by every {@link ApiError}. */
export interface ApiErrorInit {
    status: number;
    code?: string | undefined;
    message: string;
    method: string;
    url: string;
    retryAfterMs?: number | undefined;
    body?: string | undefined;
}
/**
 * A non-2xx answer from the broker or the proxy in front of it. `code` is the envelope's machine-readable
 * `code` (the proxy's `rate_limited`, `quota_exceeded`, `payload_too_large`, … or the broker's
 * `no_such_route`); it is undefined when the body carried none.
 *
 * Subclasses type the answers a client must treat differently: {@link ForbiddenError} (403) and
 * {@link PayloadTooLargeError} (413) are terminal, {@link RateLimitedError} (429) outlived the layer-two
 * budget and may be retried later.
 */
export declare class ApiError extends QueenError {
    /** The HTTP status. */
    readonly status: number;
    /** The envelope's `code`, if any. */
    readonly code: string | undefined;
    /** The envelope's `error` text (or the raw body when it was not JSON). */
    readonly error: string;
    /** Retry-After of a 429, in milliseconds. */
    readonly retryAfterMs: number | undefined;
    /** The failed request. */
    readonly method: string;
    readonly url: string;
    constructor(init: ApiErrorInit);
    /** Whether retrying the same request cannot help: every 4xx except 429. */
    get terminal(): boolean;
    /** Builds the most specific subclass for a status. */
    static from(init: ApiErrorInit): ApiError;
}
/** 401: the credential is missing, unknown, revoked or expired. Terminal: fix the credential. */
export declare class UnauthorizedError extends ApiError {
}
/**
 * 403: authenticated but not allowed: insufficient role, or a proxy quota/billing gate (`quota_exceeded`,
 * `storage_quota_exceeded`, `cluster_suspended`, `push_blocked`, `feature_gated`). Terminal: retrying a 403
 * is a busy loop.
 */
export declare class ForbiddenError extends ApiError {
}
/** 404: an unknown queue, message, dead letter or lease, or a route the broker lacks (`no_such_route`). */
export declare class NotFoundError extends ApiError {
}
/**
 * 413 (`payload_too_large`): an item over the plan's payload cap, a batch over the item cap, or a body
 * over the instance cap; the message says which. Terminal: reshape the request.
 */
export declare class PayloadTooLargeError extends ApiError {
}
/** 429 (`rate_limited`) that outlived the layer-two retry budget. Not terminal: back off and retry later. */
export declare class RateLimitedError extends ApiError {
}
/**
 * A request that never produced an HTTP response (connection refused or reset, attempt timeout) on its
 * last attempt, after layer one's retries and failover were spent. `cause` is the network error.
 */
export declare class TransportError extends QueenError {
    readonly method: string;
    readonly url: string;
    constructor(method: string, url: string, cause: unknown);
}
/**
 * A response the SDK refuses to interpret: a per-item result array of the wrong length, an item whose
 * index or transaction id does not line up with the request, or a body that is not the documented JSON.
 * A result is never attributed to the wrong message.
 */
export declare class MalformedResponseError extends QueenError {
}
/**
 * A rejected acknowledgement: HTTP 200 with `success:false` on the item. The cursor did not move; the
 * message will be redelivered.
 */
export declare class AckError extends QueenError {
    readonly index: number;
    readonly transactionId: string;
    readonly reason: string;
    readonly result: AckResult;
    constructor(result: AckResult);
}
/**
 * A transaction the broker rolled back (HTTP 200 with `success:false`); nothing in it was applied. `code` is
 * `QDUP` (duplicate push), `QTXN` (rejected ack) or undefined.
 */
export declare class TransactionError extends QueenError {
    readonly transactionId: string;
    readonly code: "QDUP" | "QTXN" | undefined;
    readonly reason: string;
    readonly result: TransactionResult;
    constructor(result: TransactionResult);
}
/** A lease that is unknown, expired or no longer active: its messages are (or will be) redelivered. */
export declare class LeaseLostError extends QueenError {
    readonly leaseId: string;
    readonly result: LeaseResult | undefined;
    constructor(leaseId: string, reason: string, options?: {
        cause?: unknown;
        result?: LeaseResult;
    });
}
/** Thrown by a {@link Producer} used after close(). */
export declare class ProducerClosedError extends QueenError {
    constructor();
}
/** Whether err is an {@link ApiError} that retrying cannot fix (4xx other than 429). */
export declare function isTerminal(err: unknown): boolean;
/** Whether err is a 429 that outlived the layer-two budget. */
export declare function isRateLimited(err: unknown): err is RateLimitedError;
/** Whether err is a 404 (unknown object or `no_such_route`). */
export declare function isNotFound(err: unknown): err is NotFoundError;
/** A 404 about an addressed object, as opposed to a route the broker does not have. */
export declare function isMissing(err: unknown): boolean;
export declare function describe(e: unknown): string;
