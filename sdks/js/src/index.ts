// Queen client for JavaScript and TypeScript: the public surface.

export { Queen, type AckOptions } from "./client.js";
export { QueueBuilder } from "./queue.js";
export { Producer, type ProducerOptions } from "./producer.js";
export { type ConsumeOptions, type Handler } from "./consume.js";
export { Transaction, TxQueue } from "./transaction.js";
export {
  Streams, StreamsError, type StreamsErrorCode, type StateOp, type CyclePushItem, type CycleAck, type Cycle,
  type CycleResult, type StateRow, type Registration,
} from "./streams.js";
export { Admin, ConsumerGroupAdmin, type DLQFilter, type DLQMessage, type DLQPage } from "./admin.js";
export { completed, failed, deadLetter, release, type AckStatusInput } from "./ack.js";
export { DEFAULTS, jitter, retryAfterMs, type QueenConfig, type Retry429Options, type ResolvedConfig } from "./transport.js";
export {
  QueenError, ApiError, UnauthorizedError, ForbiddenError, NotFoundError, PayloadTooLargeError, RateLimitedError,
  TransportError, MalformedResponseError, AckError, TransactionError, LeaseLostError, ProducerClosedError,
  isTerminal, isRateLimited, isNotFound, type ApiErrorInit,
} from "./errors.js";
export {
  QUEUE_MODE, QUEUE_OPTION_NAMES, type Message, type PushItem, type PushResult, type AckStatus, type AckSpec, type AckResult,
  type LeaseResult, type TxResult, type TransactionResult, type QueueOptions, type QueueConfigured,
  type PopOptions, type CallOptions, type Logger,
} from "./types.js";
