import { type Transport } from "./transport.js";
import { type AckResult, type AckSpec, type AckStatus, type LeaseResult, type Message } from "./types.js";
/** What `ack()` accepts as a status: true → completed, false → failed, or an explicit status. */
export type AckStatusInput = boolean | AckStatus;
/** Acknowledges m as processed. */
export declare function completed(m: Message): AckSpec;
/** Reports m as failed with reason (subject to the queue's retry budget). */
export declare function failed(m: Message, reason?: string): AckSpec;
/** Sends m to the dead-letter queue with reason. */
export declare function deadLetter(m: Message, reason?: string): AckSpec;
/** Gives m back for redelivery without counting a retry. */
export declare function release(m: Message): AckSpec;
export declare function normaliseStatus(s: AckStatusInput | undefined): AckStatus;
/** Turns a message or a spec into a spec, applying a status/error override. */
export declare function toSpec(x: Message | AckSpec, status?: AckStatusInput, error?: string): AckSpec;
interface WireAck {
    transactionId: string;
    partitionId: string;
    leaseId?: string;
    status: AckStatus;
    consumerGroup?: string;
    error?: string;
}
export declare function wireAck(a: AckSpec, withGroup: boolean): WireAck;
/** Refuses an ack response that cannot be matched item by item to the request. */
export declare function checkAcks(sent: AckSpec[], got: unknown): AckResult[];
/** POST /api/v1/ack: one acknowledgement; a rejection throws AckError (carrying the result). */
export declare function ackOne(t: Transport, a: AckSpec, signal?: AbortSignal): Promise<AckResult>;
/**
 * POST /api/v1/ack/batch: one result per acknowledgement in order; per-item rejections are in the results,
 * not thrown. All acks must share one consumer group, because the route applies a single group to every item.
 */
export declare function ackMany(t: Transport, acks: AckSpec[], signal?: AbortSignal): Promise<AckResult[]>;
/**
 * POST /api/v1/lease/:id/extend: extends every partition lease held under leaseId to at least now+seconds
 * (never shortens). An unknown, expired or inactive lease throws LeaseLostError.
 */
export declare function extendLease(t: Transport, leaseId: string, seconds: number, signal?: AbortSignal): Promise<LeaseResult>;
export {};
