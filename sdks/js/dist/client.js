// The client: one per process, shared by every queue handle.
import { ackMany, ackOne, extendLease, toSpec } from "./ack.js";
import { Admin } from "./admin.js";
import { QueenError } from "./errors.js";
import { QueueBuilder } from "./queue.js";
import { Streams } from "./streams.js";
import { Transaction } from "./transaction.js";
import { Transport } from "./transport.js";
/**
 * A client for one Queen deployment (one or several broker URLs). Create one per process and share it.
 *
 * ```js
 * const client = new Queen({ url: "http://localhost:6632" });
 * ```
 */
export class Queen {
    t;
    /** Administration: dead letters, queues, consumer groups, maintenance, status. */
    admin;
    /** The /streams/v1 routes: register a query, commit a cycle (throws on success:false), read state. */
    streams;
    /** cfg is a URL, a list of URLs, or a {@link QueenConfig}. Throws on a missing or malformed URL; does no I/O. */
    constructor(cfg) {
        const c = typeof cfg === "string" ? { url: cfg } : Array.isArray(cfg) ? { urls: cfg } : cfg;
        this.t = new Transport(c);
        this.admin = new Admin(this.t);
        this.streams = new Streams(this.t, c.streamsRetryAttempts);
    }
    /** The effective configuration, defaults applied. */
    get config() {
        return this.t.config;
    }
    /** Each configured URL and whether it is currently considered healthy. */
    backendHealth() {
        return this.t.backendHealth();
    }
    /** A handle on the named queue. Queues are created on first push; configure one with `.config().create()`. */
    queue(name) {
        return new QueueBuilder(this.t, { name });
    }
    /**
     * A consume-only handle over every queue of a namespace and/or task (GET /api/v1/pop?namespace=&task=),
     * highest priority first. At least one must be set.
     */
    matching(namespace, task = "") {
        if (!namespace && !task)
            throw new QueenError("queen: matching needs a namespace or a task");
        return new QueueBuilder(this.t, { namespace, task });
    }
    ack(m, status, opts = {}) {
        const spec = (x) => {
            const s = toSpec(x, status, opts.error);
            if (opts.group !== undefined)
                s.consumerGroup = opts.group;
            return s;
        };
        if (Array.isArray(m)) {
            let specs;
            try {
                specs = m.map(spec);
            }
            catch (e) {
                return Promise.reject(e);
            }
            return ackMany(this.t, specs, opts.signal);
        }
        try {
            return ackOne(this.t, spec(m), opts.signal);
        }
        catch (e) {
            return Promise.reject(e);
        }
    }
    /**
     * Extends the lease of a message (or a lease id) to at least now + seconds (default 60); never shortens.
     * An unknown, expired or inactive lease throws LeaseLostError.
     */
    renew(lease, seconds = 60, opts = {}) {
        return extendLease(this.t, typeof lease === "string" ? lease : lease.leaseId, seconds, opts.signal);
    }
    /** Starts an empty transaction. */
    transaction() {
        return new Transaction(this.t);
    }
}
