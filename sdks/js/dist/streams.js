// The /streams/v1 routes (register a query, commit a cycle, read state) over the streams runtime's own
// small HTTP client: one URL, POST only, up to 3 retries from 100 ms to 5 s on network failures, 5xx, 408
// and 429, Retry-After not read, every other 4xx terminal. A cycle answered 200 with success:false throws.
import { QueenError, describe } from "./errors.js";
import { parseBody } from "./transport.js";
/**
 * A streams call that failed. `code` says how: a registration refused because the operator chain changed
 * (`STREAMS_CONFIG_HASH_MISMATCH`, HTTP 409: pass reset:true or use a new name), a procedure answering
 * success:false (`STREAMS_REGISTER_FAILED`, `STREAMS_CYCLE_FAILED`, `STREAMS_STATE_GET_FAILED`; a failed
 * cycle was rolled back whole), or a final non-2xx answer (`STREAMS_HTTP`, with `status`).
 */
export class StreamsError extends QueenError {
    code;
    status;
    /** The parsed answer, when there was one. */
    body;
    constructor(code, message, status, body, options) {
        super(message, options);
        this.code = code;
        this.status = status;
        this.body = body;
    }
}
const DEFAULT_RETRIES = 3;
/** The streams routes; reach it as `client.streams`. */
export class Streams {
    t;
    retries;
    /** @internal */
    constructor(t, retries = DEFAULT_RETRIES) {
        this.t = t;
        this.retries = Math.max(0, Math.floor(retries));
    }
    /**
     * Registers a query (POST /streams/v1/queries). A hash that differs from the stored one is refused with
     * STREAMS_CONFIG_HASH_MISMATCH unless reset is true, which wipes the query's state.
     */
    async register(q) {
        const body = { name: q.name, source_queue: q.sourceQueue, config_hash: q.configHash, reset: q.reset === true };
        if (q.sinkQueue)
            body.sink_queue = q.sinkQueue;
        const res = await this.call("/streams/v1/queries", body, q.signal, (e) => {
            if (e.status !== 409)
                return undefined;
            const text = e.body?.error;
            return new StreamsError("STREAMS_CONFIG_HASH_MISMATCH", `streams: query ${JSON.stringify(q.name)} was registered with another operator chain; pass reset: true to wipe its state or use a new name${typeof text === "string" ? ` (${text})` : ""}`, 409, e.body);
        });
        if (res.success !== true || typeof res.query_id !== "string" || !res.query_id) {
            throw new StreamsError("STREAMS_REGISTER_FAILED", `streams: register ${q.name} failed: ${String(res.error ?? "no query_id")}`, 200, res);
        }
        return {
            queryId: res.query_id, name: String(res.name ?? q.name), configHash: String(res.config_hash ?? q.configHash),
            fresh: res.fresh === true, reset: res.reset === true,
        };
    }
    /**
     * Commits one cycle (POST /streams/v1/cycle). The broker answers 200 whenever its procedure ran; a
     * success:false answer (everything of the cycle rolled back) throws STREAMS_CYCLE_FAILED. A 500 is an
     * infrastructure error and is retried: the cycle is one transaction, and a retry of a committed cycle
     * fails on the released lease instead of applying twice.
     */
    async cycle(c, opts = {}) {
        const body = {
            query_id: c.queryId,
            partition_id: c.partitionId,
            consumer_group: c.consumerGroup ?? "",
            release_lease: c.releaseLease ?? true,
            state_ops: c.stateOps ?? [],
            push_items: c.pushItems ?? [],
        };
        if (c.ack)
            body.ack = c.ack;
        const res = succeeded(await this.post("/streams/v1/cycle", body, opts.signal), "STREAMS_CYCLE_FAILED", "cycle failed and was rolled back");
        return {
            success: true,
            queryId: String(res.query_id ?? c.queryId),
            partitionId: String(res.partition_id ?? c.partitionId),
            queueName: typeof res.queueName === "string" ? res.queueName : null,
            stateOpsApplied: typeof res.state_ops_applied === "number" ? res.state_ops_applied : 0,
            pushResults: Array.isArray(res.push_results) ? res.push_results : [],
            ackResult: (res.ack_result ?? null),
        };
    }
    /** Reads state rows of (query, partition), ordered by key (POST /streams/v1/state/get). */
    async getState(q) {
        const body = { query_id: q.queryId, partition_id: q.partitionId, keys: q.keys ?? [] };
        if (q.keyPrefix)
            body.key_prefix = q.keyPrefix;
        if (typeof q.ripeAtOrBefore === "number")
            body.ripe_at_or_before = q.ripeAtOrBefore;
        const res = succeeded(await this.call("/streams/v1/state/get", body, q.signal, (e) => e.status === 400 && e.body?.success === false
            ? new StreamsError("STREAMS_STATE_GET_FAILED", `streams: state get failed: ${String(e.body.error)}`, 400, e.body)
            : undefined), "STREAMS_STATE_GET_FAILED", "state get failed");
        return Array.isArray(res.rows) ? res.rows : [];
    }
    /** Delay before retry n (0-based): min(5000, 100 × 2^n) ms plus 0–30 %. */
    backoff(n) {
        return Math.min(5000, 100 * 2 ** Math.min(n, 16)) * (1 + 0.3 * this.t.random());
    }
    /** {@link post}, with a final StreamsError that `refused` recognises replaced by what it returns. */
    async call(path, body, signal, refused) {
        try {
            return await this.post(path, body, signal);
        }
        catch (e) {
            throw (e instanceof StreamsError && refused(e)) || e;
        }
    }
    async post(path, body, signal) {
        const url = this.t.config.urls[0] + path;
        let last;
        for (let attempt = 0; attempt <= this.retries; attempt++) {
            if (attempt > 0)
                await this.t.sleep(this.backoff(attempt - 1), signal);
            let resp;
            try {
                resp = await this.t.sendOnce(0, { method: "POST", path, body, signal }, JSON.stringify(body));
            }
            catch (e) {
                if (signal?.aborted)
                    throw e;
                last = new StreamsError("STREAMS_HTTP", `streams: POST ${url}: ${describe(e)}`, undefined, undefined, { cause: e });
                continue;
            }
            if (resp.status >= 200 && resp.status < 300) {
                let parsed;
                try {
                    parsed = parseBody(resp, { method: "POST", path });
                }
                catch {
                    parsed = { raw: resp.text };
                }
                return (parsed && typeof parsed === "object" ? parsed : {});
            }
            let parsed;
            try {
                parsed = JSON.parse(resp.text);
            }
            catch {
                parsed = undefined;
            }
            last = new StreamsError("STREAMS_HTTP", `streams: POST ${url}: HTTP ${resp.status}: ${resp.text.trim().slice(0, 512)}`, resp.status, parsed);
            if (!(resp.status >= 500 || resp.status === 408 || resp.status === 429))
                throw last;
        }
        throw last;
    }
}
/** The answer of a procedure that ran, or the StreamsError `code` when it answered success:false (rolled back). */
function succeeded(res, code, what) {
    if (res.success !== true)
        throw new StreamsError(code, `streams: ${what}: ${String(res.error ?? "no error text")}`, 200, res);
    return res;
}
