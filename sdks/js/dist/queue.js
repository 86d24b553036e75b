// The queue builder: addressing (queue, partition, group, subscription), push and pop.
import { ApiError, MalformedResponseError, QueenError, isMissing } from "./errors.js";
import { seg, parseBody } from "./transport.js";
import { Producer } from "./producer.js";
import { consume } from "./consume.js";
import { QUEUE_OPTION_NAMES } from "./types.js";
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
export class QueueBuilder {
    /** @internal */
    t;
    /** @internal */
    s;
    /** @internal */
    constructor(t, s) {
        this.t = t;
        this.s = {
            name: "", partition: "", group: "", subscriptionMode: "", subscriptionFrom: "",
            namespace: "", task: "", options: undefined, ...s,
        };
    }
    with(p) {
        return new QueueBuilder(this.t, { ...this.s, ...p });
    }
    /** The queue name. */
    get name() {
        return this.s.name;
    }
    /** Pushes go to this partition (default "Default") and pops read only it. */
    partition(name) {
        return this.with({ partition: name });
    }
    /** Consume as this named consumer group (fan-out: every group sees every message). Empty = queue mode. */
    group(name) {
        return this.with({ group: name });
    }
    /** `all` (default) or `new`: where a named group starts the first time it meets a partition. */
    subscriptionMode(mode) {
        return this.with({ subscriptionMode: mode });
    }
    /** Start a new group after this time (or "now"); takes precedence over subscriptionMode. */
    subscriptionFrom(from) {
        return this.with({ subscriptionFrom: from instanceof Date ? from.toISOString() : from });
    }
    /** The namespace create() registers the queue under. */
    namespace(ns) {
        return this.with({ namespace: ns });
    }
    /** The task create() registers the queue under. */
    task(t) {
        return this.with({ task: t });
    }
    /** Options for create(). */
    config(options) {
        return this.with({ options: { ...options } });
    }
    /**
     * Creates the queue or replaces its configuration (POST /api/v1/configure). Configure has full-replace
     * semantics: options left out are reset to the broker defaults.
     */
    async create(opts = {}) {
        this.needName("create");
        const body = { queue: this.s.name, options: this.s.options ?? {} };
        if (this.s.namespace)
            body.namespace = this.s.namespace;
        if (this.s.task)
            body.task = this.s.task;
        return this.t.json({ method: "POST", path: "/api/v1/configure", body, signal: opts.signal });
    }
    /**
     * Reads the queue's configuration (GET /api/v1/status/queues/:queue) with every option present: given to
     * config() and create() it configures the queue to what it is. NotFoundError for an unknown queue.
     */
    async options(opts = {}) {
        this.needName("options");
        const out = await this.t.json({
            method: "GET", path: `/api/v1/status/queues/${seg(this.s.name)}`, signal: opts.signal,
        });
        const cfg = out?.queue?.config;
        if (!cfg || typeof cfg !== "object")
            throw new MalformedResponseError("queen: malformed response: the queue read has no queue.config");
        const res = {};
        for (const k of QUEUE_OPTION_NAMES) {
            if (!(k in cfg))
                throw new MalformedResponseError(`queen: malformed response: the queue read lacks option ${k}`);
            res[k] = cfg[k];
        }
        return res;
    }
    /** Deletes the queue with its partitions, messages and dead letters; resolves whether it existed. */
    async delete(opts = {}) {
        this.needName("delete");
        try {
            const out = await this.t.json({ method: "DELETE", path: `/api/v1/resources/queues/${seg(this.s.name)}`, signal: opts.signal });
            return out?.existed === true;
        }
        catch (e) {
            if (isMissing(e))
                return false;
            throw e;
        }
    }
    /** The queue with its partitions and counts (GET /api/v1/resources/queues/:queue); NotFoundError when unknown. */
    async info(opts = {}) {
        this.needName("info");
        return this.t.json({ method: "GET", path: `/api/v1/resources/queues/${seg(this.s.name)}`, signal: opts.signal });
    }
    /** @internal */
    wireItems(items) {
        const list = Array.isArray(items) ? items : [items];
        return list.map((it) => {
            const o = it && typeof it === "object" && !Array.isArray(it) ? it : undefined;
            const hasPayload = o !== undefined && ("payload" in o || "data" in o);
            const w = {
                queue: this.s.name,
                payload: hasPayload ? ("payload" in o ? o.payload : o.data) ?? null : it ?? null,
                transactionId: (hasPayload && o.transactionId) || newUUID(),
            };
            if (this.s.partition)
                w.partition = this.s.partition;
            if (hasPayload && o.traceId)
                w.traceId = o.traceId;
            return w;
        });
    }
    /**
     * Pushes items in one request (to the chosen partition, else "Default") and resolves one result per item,
     * in order. An item is `{payload|data, transactionId?, traceId?}`; any other value is pushed as the payload
     * itself. Items without a transactionId get a generated one, so a push retried after a 5xx or a network
     * failure is reported `duplicate` instead of being stored twice. A duplicate is not an error.
     */
    async push(items, opts = {}) {
        this.needName("push");
        return pushWire(this.t, this.wireItems(items), opts.signal);
    }
    /**
     * Fetches up to `batch` messages (GET /api/v1/pop/queue/:queue[/partition/:p]). An empty queue (HTTP 204)
     * resolves to `[]` and nothing else does: every failure rejects with a typed error: a terminal 403 is a
     * ForbiddenError, an exhausted 429 budget a RateLimitedError, never "no messages".
     */
    async pop(opts = {}) {
        try {
            return await this.popRaw(opts);
        }
        catch (err) {
            if (!opts.signal?.aborted) {
                // Logged with its code as every Queen SDK does, but never swallowed: [] only ever means "empty".
                const f = { queue: this.s.name, error: String(err) };
                if (err instanceof ApiError) {
                    f.status = err.status;
                    if (err.code)
                        f.code = err.code;
                }
                this.t.logger.warn?.("queen: pop failed", f);
            }
            throw err;
        }
    }
    /** @internal pop without the failure log (the consume loop logs its own decision). */
    async popRaw(opts = {}) {
        const q = {};
        let path;
        if (!this.s.name && (this.s.namespace || this.s.task)) {
            path = "/api/v1/pop";
            q.namespace = this.s.namespace || undefined;
            q.task = this.s.task || undefined;
        }
        else {
            this.needName("pop");
            path = `/api/v1/pop/queue/${seg(this.s.name)}`;
            if (this.s.partition)
                path += `/partition/${seg(this.s.partition)}`;
        }
        if (opts.batch && opts.batch > 0)
            q.batch = opts.batch;
        if (opts.partitions && opts.partitions > 0)
            q.partitions = opts.partitions;
        let timeoutMillis;
        if (opts.wait) {
            q.wait = true;
            timeoutMillis = (opts.timeoutMillis && opts.timeoutMillis > 0 ? opts.timeoutMillis : 30000) + this.t.config.timeoutMillis;
        }
        if (opts.timeoutMillis && opts.timeoutMillis > 0)
            q.timeout = Math.round(opts.timeoutMillis);
        if (this.s.group)
            q.consumerGroup = this.s.group;
        if (opts.autoAck)
            q.autoAck = true;
        if (this.s.subscriptionMode)
            q.subscriptionMode = this.s.subscriptionMode;
        if (this.s.subscriptionFrom)
            q.subscriptionFrom = this.s.subscriptionFrom;
        const r = { method: "GET", path, query: q, longPoll: opts.wait === true, timeoutMillis, signal: opts.signal };
        const resp = await this.t.request(r);
        const body = parseBody(resp, r);
        if (body === undefined)
            return [];
        return decodePop(body, this.s.name, opts.autoAck === true, r.method, path);
    }
    /** A buffered producer for this queue (and partition): batches by count or time; call close() at the end. */
    producer(opts = {}) {
        this.needName("producer");
        return new Producer(this, opts);
    }
    /**
     * Long-polls with `concurrency` workers and calls handler for every message until `signal` aborts; see
     * {@link ConsumeOptions}. Resolves on a graceful stop, rejects with the error on a terminal failure
     * (401, 403, 404, 413, …).
     */
    consume(handler, opts = {}) {
        return consume(this, handler, opts);
    }
    needName(op) {
        if (!this.s.name)
            throw new QueenError(`queen: ${op}: empty queue name`);
    }
}
/** POST /api/v1/push with the result alignment check. */
export async function pushWire(t, items, signal) {
    if (items.length === 0)
        return [];
    const got = await t.json({ method: "POST", path: "/api/v1/push", body: { items }, signal });
    if (!Array.isArray(got) || got.length !== items.length) {
        throw new MalformedResponseError(`queen: malformed response: push of ${items.length} items answered ${Array.isArray(got) ? got.length + " results" : "a non-array"}`);
    }
    return got.map((raw, i) => {
        const r = (raw ?? {});
        if (r.index !== undefined && r.index !== i) {
            throw new MalformedResponseError(`queen: malformed response: push result ${i} carries index ${String(r.index)}`);
        }
        const tx = typeof r.transaction_id === "string" ? r.transaction_id : typeof r.transactionId === "string" ? r.transactionId : "";
        if (tx !== "" && tx !== items[i].transactionId) {
            throw new MalformedResponseError(`queen: malformed response: push result ${i} is for transaction ${tx}, sent ${items[i].transactionId}`);
        }
        const out = { index: i, transactionId: items[i].transactionId, status: String(r.status ?? "") };
        if (typeof r.message_id === "string")
            out.messageId = r.message_id;
        if (typeof r.partition_id === "string")
            out.partitionId = r.partition_id;
        if (r.trace_id !== undefined)
            out.traceId = r.trace_id;
        if (typeof r.queueName === "string")
            out.queueName = r.queueName;
        else if (typeof r.queue === "string")
            out.queueName = r.queue;
        if (typeof r.error === "string")
            out.error = r.error;
        return out;
    });
}
/** A random (version 4) UUID; Web Crypto where the platform exposes it globally (Node ≥ 19). */
function newUUID() {
    const c = globalThis.crypto;
    if (c?.randomUUID)
        return c.randomUUID();
    const b = Array.from({ length: 16 }, () => Math.floor(Math.random() * 256));
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    const h = b.map((x) => x.toString(16).padStart(2, "0")).join("");
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
const emptyReasons = new Set(["no_available_partition", "lease_held", "partition_not_found"]);
function decodePop(pr, queue, autoAck, method, path) {
    const msgs = pr.messages;
    if (msgs !== undefined && !Array.isArray(msgs))
        throw new MalformedResponseError(`queen: malformed response: pop ${queue}: messages is not an array`);
    if (!msgs || msgs.length === 0) {
        if (pr.success === false && typeof pr.error === "string" && pr.error !== "" && !emptyReasons.has(pr.error)) {
            // A snapshot-era broker passes stored-procedure failures through as 200.
            throw ApiError.from({ status: 200, message: pr.error, method, url: path });
        }
        return [];
    }
    const str = (v) => (typeof v === "string" ? v : "");
    return msgs.map((raw) => {
        const w = (raw ?? {});
        return {
            id: str(w.id),
            transactionId: str(w.transactionId),
            traceId: typeof w.traceId === "string" ? w.traceId : null,
            data: w.data ?? null,
            producerSub: typeof w.producerSub === "string" ? w.producerSub : null,
            createdAt: str(w.createdAt),
            queue: str(w.queue) || str(pr.queue) || queue,
            partition: str(w.partition),
            partitionId: str(w.partitionId),
            leaseId: str(w.leaseId) || (autoAck ? "" : str(pr.leaseId)),
            consumerGroup: str(w.consumerGroup) || str(pr.consumerGroup),
            retryCount: typeof w.retryCount === "number" ? w.retryCount : 0,
        };
    });
}
