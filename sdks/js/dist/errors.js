// Error types. Branch on the class, `status` and `code`; never on the message text, which may change.
/** Base class of every error this SDK throws. */
export class QueenError extends Error {
    constructor(message, options) {
        super(message, options);
        this.name = new.target.name;
    }
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
export class ApiError extends QueenError {
    /** The HTTP status. */
    status;
    /** The envelope's `code`, if any. */
    code;
    /** The envelope's `error` text (or the raw body when it was not JSON). */
    error;
    /** Retry-After of a 429, in milliseconds. */
    retryAfterMs;
    /** The failed request. */
    method;
    url;
    constructor(init) {
        let text = `queen: ${init.method} ${init.url}: ${init.status}`;
        if (init.code)
            text += ` [${init.code}]`;
        if (init.message)
            text += `: ${init.message}`;
        super(text);
        this.status = init.status;
        this.code = init.code || undefined;
        this.error = init.message;
        this.retryAfterMs = init.retryAfterMs;
        this.method = init.method;
        this.url = init.url;
    }
    /** Whether retrying the same request cannot help: every 4xx except 429. */
    get terminal() {
        return this.status >= 400 && this.status < 500 && this.status !== 429;
    }
    /** Builds the most specific subclass for a status. */
    static from(init) {
        switch (init.status) {
            case 401:
                return new UnauthorizedError(init);
            case 403:
                return new ForbiddenError(init);
            case 404:
                return new NotFoundError(init);
            case 413:
                return new PayloadTooLargeError(init);
            case 429:
                return new RateLimitedError(init);
            default:
                return new ApiError(init);
        }
    }
}
/** 401: the credential is missing, unknown, revoked or expired. Terminal: fix the credential. */
export class UnauthorizedError extends ApiError {
}
/**
 * 403: authenticated but not allowed: insufficient role, or a proxy quota/billing gate (`quota_exceeded`,
 * `storage_quota_exceeded`, `cluster_suspended`, `push_blocked`, `feature_gated`). Terminal: retrying a 403
 * is a busy loop.
 */
export class ForbiddenError extends ApiError {
}
/** 404: an unknown queue, message, dead letter or lease, or a route the broker lacks (`no_such_route`). */
export class NotFoundError extends ApiError {
}
/**
 * 413 (`payload_too_large`): an item over the plan's payload cap, a batch over the item cap, or a body
 * over the instance cap; the message says which. Terminal: reshape the request.
 */
export class PayloadTooLargeError extends ApiError {
}
/** 429 (`rate_limited`) that outlived the layer-two retry budget. Not terminal: back off and retry later. */
export class RateLimitedError extends ApiError {
}
/**
 * A request that never produced an HTTP response (connection refused or reset, attempt timeout) on its
 * last attempt, after layer one's retries and failover were spent. `cause` is the network error.
 */
export class TransportError extends QueenError {
    method;
    url;
    constructor(method, url, cause) {
        super(`queen: ${method} ${url}: transport: ${describe(cause)}`, { cause });
        this.method = method;
        this.url = url;
    }
}
/**
 * A response the SDK refuses to interpret: a per-item result array of the wrong length, an item whose
 * index or transaction id does not line up with the request, or a body that is not the documented JSON.
 * A result is never attributed to the wrong message.
 */
export class MalformedResponseError extends QueenError {
}
/**
 * A rejected acknowledgement: HTTP 200 with `success:false` on the item. The cursor did not move; the
 * message will be redelivered.
 */
export class AckError extends QueenError {
    index;
    transactionId;
    reason;
    result;
    constructor(result) {
        const reason = result.error ?? "rejected without a reason";
        super(`queen: ack ${result.index} (transaction ${result.transactionId}) rejected: ${reason}`);
        this.index = result.index;
        this.transactionId = result.transactionId;
        this.reason = reason;
        this.result = result;
    }
}
/**
 * A transaction the broker rolled back (HTTP 200 with `success:false`); nothing in it was applied. `code` is
 * `QDUP` (duplicate push), `QTXN` (rejected ack) or undefined.
 */
export class TransactionError extends QueenError {
    transactionId;
    code;
    reason;
    result;
    constructor(result) {
        const reason = result.error || "rolled back without an error text";
        super(`queen: transaction ${result.transactionId} rolled back: ${reason}`);
        const head = reason.split(" ", 1)[0];
        this.code = head === "QDUP" || head === "QTXN" ? head : undefined;
        this.transactionId = result.transactionId;
        this.reason = reason;
        this.result = result;
    }
}
/** A lease that is unknown, expired or no longer active: its messages are (or will be) redelivered. */
export class LeaseLostError extends QueenError {
    leaseId;
    result;
    constructor(leaseId, reason, options) {
        super(`queen: lease ${leaseId} lost: ${reason}`, options);
        this.leaseId = leaseId;
        this.result = options?.result;
    }
}
/** Thrown by a {@link Producer} used after close(). */
export class ProducerClosedError extends QueenError {
    constructor() {
        super("queen: producer closed");
    }
}
/** Whether err is an {@link ApiError} that retrying cannot fix (4xx other than 429). */
export function isTerminal(err) {
    return err instanceof ApiError && err.terminal;
}
/** Whether err is a 429 that outlived the layer-two budget. */
export function isRateLimited(err) {
    return err instanceof RateLimitedError;
}
/** Whether err is a 404 (unknown object or `no_such_route`). */
export function isNotFound(err) {
    return err instanceof NotFoundError;
}
/** A 404 about an addressed object, as opposed to a route the broker does not have. */
export function isMissing(err) {
    return err instanceof NotFoundError && err.code !== "no_such_route";
}
export function describe(e) {
    if (e instanceof Error) {
        const cause = e.cause;
        return cause instanceof Error && cause.message && cause.message !== e.message ? `${e.message} (${cause.message})` : e.message;
    }
    return String(e);
}
