// Queen client for JavaScript and TypeScript: the public surface.
export { Queen } from "./client.js";
export { QueueBuilder } from "./queue.js";
export { Producer } from "./producer.js";
export { Transaction, TxQueue } from "./transaction.js";
export { Streams, StreamsError, } from "./streams.js";
export { Admin, ConsumerGroupAdmin } from "./admin.js";
export { completed, failed, deadLetter, release } from "./ack.js";
export { DEFAULTS, jitter, retryAfterMs } from "./transport.js";
export { QueenError, ApiError, UnauthorizedError, ForbiddenError, NotFoundError, PayloadTooLargeError, RateLimitedError, TransportError, MalformedResponseError, AckError, TransactionError, LeaseLostError, ProducerClosedError, isTerminal, isRateLimited, isNotFound, } from "./errors.js";
export { QUEUE_MODE, QUEUE_OPTION_NAMES, } from "./types.js";
