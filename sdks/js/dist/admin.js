// Administration: dead letters, queues, consumer groups, maintenance, status and health. Dashboard-shaped
// answers are returned as parsed JSON; their inner shape may grow.
import { isMissing } from "./errors.js";
import { seg } from "./transport.js";
const iso = (d) => (d instanceof Date ? d.toISOString() : d);
/** Administration calls; reach it as `client.admin`. */
export class Admin {
    t;
    /** @internal */
    constructor(t) {
        this.t = t;
    }
    get(path, query, signal) {
        return this.t.json({ method: "GET", path, query: query, signal });
    }
    // ---- dead-letter queue ----
    /** Lists dead letters (GET /api/v1/dlq). */
    dlq(f = {}) {
        return this.get("/api/v1/dlq", {
            queue: f.queue, consumerGroup: f.consumerGroup, partition: f.partition,
            from: iso(f.from), to: iso(f.to), limit: f.limit, offset: f.offset,
        }, f.signal);
    }
    /** One dead letter; NotFoundError when there is none. */
    dlqMessage(partitionId, transactionId, opts = {}) {
        return this.get(`/api/v1/dlq/${seg(partitionId)}/${seg(transactionId)}`, undefined, opts.signal);
    }
    /** Discards a dead letter. */
    async deleteDLQMessage(partitionId, transactionId, opts = {}) {
        await this.t.request({ method: "DELETE", path: `/api/v1/dlq/${seg(partitionId)}/${seg(transactionId)}`, signal: opts.signal });
    }
    /** Puts a dead letter back in front of its consumer group. */
    async retryDLQMessage(partitionId, transactionId, opts = {}) {
        await this.t.request({ method: "POST", path: `/api/v1/dlq/${seg(partitionId)}/${seg(transactionId)}/retry`, body: {}, signal: opts.signal });
    }
    // ---- resources ----
    /** Lists the queues, newest first (GET /api/v1/resources/queues). */
    async queues(opts = {}) {
        const out = await this.get("/api/v1/resources/queues", undefined, opts.signal);
        return out?.queues ?? [];
    }
    /** GET /api/v1/resources/overview. */
    overview(opts = {}) {
        return this.get("/api/v1/resources/overview", undefined, opts.signal);
    }
    /** GET /api/v1/resources/namespaces. */
    namespaces(opts = {}) {
        return this.get("/api/v1/resources/namespaces", undefined, opts.signal);
    }
    /** GET /api/v1/resources/tasks. */
    tasks(opts = {}) {
        return this.get("/api/v1/resources/tasks", undefined, opts.signal);
    }
    /** Lists messages (GET /api/v1/messages) with the broker's filters (queue, partition, status, limit, offset, …). */
    messages(filter = {}, opts = {}) {
        return this.get("/api/v1/messages", filter, opts.signal);
    }
    /** One message by partition id and transaction id; NotFoundError when unknown. */
    message(partitionId, transactionId, opts = {}) {
        return this.get(`/api/v1/messages/${seg(partitionId)}/${seg(transactionId)}`, undefined, opts.signal);
    }
    /** Deletes one message. */
    async deleteMessage(partitionId, transactionId, opts = {}) {
        await this.t.request({ method: "DELETE", path: `/api/v1/messages/${seg(partitionId)}/${seg(transactionId)}`, signal: opts.signal });
    }
    // ---- consumer groups ----
    /** Consumer groups per queue, including queue mode (GET /api/v1/consumer-groups). */
    consumerGroups(opts = {}) {
        return this.get("/api/v1/consumer-groups", undefined, opts.signal);
    }
    /** Partitions whose oldest unconsumed message is older than minLagSeconds. */
    laggingPartitions(minLagSeconds = 60, opts = {}) {
        return this.get("/api/v1/consumer-groups/lagging", { minLagSeconds: Math.floor(minLagSeconds) }, opts.signal);
    }
    /** A handle for administering one consumer group. */
    consumerGroup(name) {
        return new ConsumerGroupAdmin(this.t, name);
    }
    // ---- maintenance ----
    /** Whether push maintenance (pushes diverted to the disk spool) is on. */
    maintenance(opts = {}) {
        return this.get("/api/v1/system/maintenance", undefined, opts.signal);
    }
    /** Turns push maintenance on or off. */
    setMaintenance(enabled, opts = {}) {
        return this.t.json({ method: "POST", path: "/api/v1/system/maintenance", body: { enabled }, signal: opts.signal });
    }
    /** Whether pop maintenance (every pop answers 204) is on. */
    popMaintenance(opts = {}) {
        return this.get("/api/v1/system/maintenance/pop", undefined, opts.signal);
    }
    /** Turns pop maintenance on or off. */
    setPopMaintenance(enabled, opts = {}) {
        return this.t.json({ method: "POST", path: "/api/v1/system/maintenance/pop", body: { enabled }, signal: opts.signal });
    }
    // ---- status and health ----
    /** Dashboard overview (GET /api/v1/status); filter by from/to/queue/namespace/task. */
    status(f = {}) {
        return this.get("/api/v1/status", { from: iso(f.from), to: iso(f.to), queue: f.queue, namespace: f.namespace, task: f.task }, f.signal);
    }
    /** Queues with counts (GET /api/v1/status/queues). */
    statusQueues(opts = {}) {
        return this.get("/api/v1/status/queues", undefined, opts.signal);
    }
    /** One queue's configuration, partitions and totals; NotFoundError for an unknown queue. */
    statusQueue(queue, opts = {}) {
        return this.get(`/api/v1/status/queues/${seg(queue)}`, undefined, opts.signal);
    }
    /** A queue's recent messages. */
    statusQueueMessages(queue, page = {}, opts = {}) {
        return this.get(`/api/v1/status/queues/${seg(queue)}/messages`, { limit: page.limit, offset: page.offset }, opts.signal);
    }
    /** GET /health: a database round-trip; a broker that cannot reach PostgreSQL answers 503 (an ApiError after layer one). */
    health(opts = {}) {
        return this.get("/health", undefined, opts.signal);
    }
    /** GET on any read route (e.g. "/api/v1/analytics/queue-lag") with both retry layers; the parsed JSON body. */
    getRaw(path, query, opts = {}) {
        return this.get(path.startsWith("/") ? path : "/" + path, query, opts.signal);
    }
}
/** Administration of one consumer group; see {@link Admin.consumerGroup}. */
export class ConsumerGroupAdmin {
    t;
    name;
    /** @internal */
    constructor(t, name) {
        this.t = t;
        this.name = name;
    }
    path(rest = "") {
        return `/api/v1/consumer-groups/${seg(this.name)}${rest}`;
    }
    /** The group's cursors keyed by queue name; an unknown group yields {}. */
    async get(opts = {}) {
        try {
            const raw = await this.t.json({ method: "GET", path: this.path(), signal: opts.signal });
            const out = {};
            for (const [q, v] of Object.entries(raw ?? {}))
                out[q] = v?.partitions ?? [];
            return out;
        }
        catch (e) {
            if (isMissing(e))
                return {};
            throw e;
        }
    }
    /** Removes the group's cursors on every queue; with deleteMetadata the subscription record goes too. */
    delete(deleteMetadata = true, opts = {}) {
        return this.t.json({ method: "DELETE", path: this.path(), query: { deleteMetadata }, signal: opts.signal });
    }
    /** Removes the group's cursors on one queue. */
    deleteForQueue(queue, deleteMetadata = true, opts = {}) {
        return this.t.json({ method: "DELETE", path: this.path(`/queues/${seg(queue)}`), query: { deleteMetadata }, signal: opts.signal });
    }
    /** Rewrites the group's subscription timestamp (affects partitions it has not consumed yet). */
    setSubscription(at, opts = {}) {
        return this.t.json({ method: "POST", path: this.path("/subscription"), body: { subscriptionTimestamp: iso(at) }, signal: opts.signal });
    }
    /** Moves every cursor of the group on queue to the newest message, skipping the backlog. */
    seekToEnd(queue, opts = {}) {
        return this.t.json({ method: "POST", path: this.path(`/queues/${seg(queue)}/seek`), body: { toEnd: true }, signal: opts.signal });
    }
    /** Moves every cursor of the group on queue to the last message at or before `at` (replay). */
    seekTo(queue, at, opts = {}) {
        return this.t.json({ method: "POST", path: this.path(`/queues/${seg(queue)}/seek`), body: { timestamp: iso(at) }, signal: opts.signal });
    }
    /** Moves the group's cursor on one partition to its end. */
    seekPartitionToEnd(queue, partition, opts = {}) {
        return this.t.json({ method: "POST", path: this.path(`/queues/${seg(queue)}/partitions/${seg(partition)}/seek`), body: {}, signal: opts.signal });
    }
}
