// Acknowledgements and lease extension, with per-item normalisation: a result is matched to its
// acknowledgement by position, index and transaction id, or the whole response is refused.
import { AckError, LeaseLostError, MalformedResponseError, QueenError, isMissing } from "./errors.js";
import { seg } from "./transport.js";
import { QUEUE_MODE } from "./types.js";
function ackOf(m, status, error) {
    return {
        transactionId: m.transactionId,
        partitionId: m.partitionId,
        leaseId: m.leaseId || undefined,
        consumerGroup: m.consumerGroup || undefined,
        status,
        error,
    };
}
/** Acknowledges m as processed. */
export function completed(m) {
    return ackOf(m, "completed");
}
/** Reports m as failed with reason (subject to the queue's retry budget). */
export function failed(m, reason) {
    return ackOf(m, "failed", reason);
}
/** Sends m to the dead-letter queue with reason. */
export function deadLetter(m, reason) {
    return ackOf(m, "dlq", reason);
}
/** Gives m back for redelivery without counting a retry. */
export function release(m) {
    return ackOf(m, "retry");
}
export function normaliseStatus(s) {
    if (s === undefined || s === true)
        return "completed";
    if (s === false)
        return "failed";
    if (s === "completed" || s === "failed" || s === "dlq" || s === "retry")
        return s;
    throw new QueenError(`queen: unknown ack status ${JSON.stringify(s)}`);
}
/** Turns a message or a spec into a spec, applying a status/error override. */
export function toSpec(x, status, error) {
    const isMessage = "id" in x && "leaseId" in x && "data" in x;
    const base = isMessage ? ackOf(x, "completed") : { ...x };
    if (status !== undefined || base.status === undefined)
        base.status = normaliseStatus(status ?? base.status);
    if (error !== undefined)
        base.error = error;
    if (!base.transactionId || !base.partitionId) {
        throw new QueenError("queen: an acknowledgement needs transactionId and partitionId");
    }
    return base;
}
export function wireAck(a, withGroup) {
    const w = { transactionId: a.transactionId, partitionId: a.partitionId, status: a.status ?? "completed" };
    if (a.leaseId)
        w.leaseId = a.leaseId;
    if (withGroup && a.consumerGroup)
        w.consumerGroup = a.consumerGroup;
    if (a.error)
        w.error = a.error;
    return w;
}
/** Refuses an ack response that cannot be matched item by item to the request. */
export function checkAcks(sent, got) {
    if (!Array.isArray(got)) {
        throw new MalformedResponseError(`queen: malformed response: ${sent.length} acknowledgements answered with a non-array`);
    }
    if (got.length !== sent.length) {
        throw new MalformedResponseError(`queen: malformed response: ${sent.length} acknowledgements answered with ${got.length} results`);
    }
    return got.map((raw, i) => {
        if (!raw || typeof raw !== "object")
            throw new MalformedResponseError(`queen: malformed response: ack result ${i} is not an object`);
        const r = raw;
        if (r.index !== i)
            throw new MalformedResponseError(`queen: malformed response: ack result ${i} carries index ${String(r.index)}`);
        const tx = typeof r.transactionId === "string" ? r.transactionId : "";
        if (tx !== "" && tx !== sent[i].transactionId) {
            throw new MalformedResponseError(`queen: malformed response: ack result ${i} is for transaction ${tx}, sent ${sent[i].transactionId}`);
        }
        if (typeof r.success !== "boolean")
            throw new MalformedResponseError(`queen: malformed response: ack result ${i} has no success flag`);
        const out = {
            index: i,
            transactionId: sent[i].transactionId,
            success: r.success,
            error: typeof r.error === "string" ? r.error : null,
            leaseReleased: r.leaseReleased === true,
            dlq: r.dlq === true,
            noop: r.noop === true,
        };
        if (typeof r.queueName === "string")
            out.queueName = r.queueName;
        if (typeof r.partitionName === "string")
            out.partitionName = r.partitionName;
        return out;
    });
}
/** POST /api/v1/ack: one acknowledgement; a rejection throws AckError (carrying the result). */
export async function ackOne(t, a, signal) {
    const got = await t.json({ method: "POST", path: "/api/v1/ack", body: wireAck(a, true), signal });
    const [r] = checkAcks([a], got);
    if (!r.success)
        throw new AckError(r);
    return r;
}
/**
 * POST /api/v1/ack/batch: one result per acknowledgement in order; per-item rejections are in the results,
 * not thrown. All acks must share one consumer group, because the route applies a single group to every item.
 */
export async function ackMany(t, acks, signal) {
    if (acks.length === 0)
        return [];
    const groupOf = (a) => a.consumerGroup || QUEUE_MODE;
    const group = groupOf(acks[0]);
    for (const a of acks) {
        if (groupOf(a) !== group)
            throw new QueenError(`queen: ack batch mixes consumer groups ${group} and ${groupOf(a)}`);
    }
    const body = { acknowledgments: acks.map((a) => wireAck(a, false)), consumerGroup: group };
    const got = await t.json({ method: "POST", path: "/api/v1/ack/batch", body, signal });
    return checkAcks(acks, got);
}
/**
 * POST /api/v1/lease/:id/extend: extends every partition lease held under leaseId to at least now+seconds
 * (never shortens). An unknown, expired or inactive lease throws LeaseLostError.
 */
export async function extendLease(t, leaseId, seconds, signal) {
    if (!leaseId)
        throw new QueenError("queen: extend lease: empty lease id");
    const secs = Math.max(1, Math.ceil(seconds));
    let got;
    try {
        got = await t.json({ method: "POST", path: `/api/v1/lease/${seg(leaseId)}/extend`, body: { seconds: secs }, signal });
    }
    catch (e) {
        if (isMissing(e))
            throw new LeaseLostError(leaseId, e.message, { cause: e });
        throw e;
    }
    if (!Array.isArray(got) || got.length !== 1 || got[0]?.index !== 0) {
        throw new MalformedResponseError(`queen: malformed response: lease extend of ${leaseId} answered ${JSON.stringify(got)?.slice(0, 200)}`);
    }
    const r = got[0];
    if (typeof r.leaseId === "string" && r.leaseId !== "" && r.leaseId !== leaseId) {
        throw new MalformedResponseError(`queen: malformed response: lease extend of ${leaseId} answered for ${r.leaseId}`);
    }
    const out = {
        index: 0,
        leaseId,
        success: r.success === true,
        error: typeof r.error === "string" ? r.error : null,
        expiresAt: typeof r.expiresAt === "string" ? r.expiresAt : null,
    };
    if (!out.success)
        throw new LeaseLostError(leaseId, out.error ?? "not extended", { result: out });
    return out;
}
