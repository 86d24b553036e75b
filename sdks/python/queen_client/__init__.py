"""Python client for Queen, the partitioned message queue on PostgreSQL.

Two clients share one behaviour: :class:`Queen` (synchronous, thread-safe) and
:class:`AsyncQueen` (asyncio). Both implement the documented two-layer retry policy: 5xx and
network failures are retried with exponential backoff and failover across URLs (any 4xx
short-circuits), and 429 answers are retried in place honouring ``Retry-After`` with +/-20% jitter.
"""

from .aio import AsyncConsumerGroup, AsyncProducer, AsyncQueen, AsyncQueue, AsyncTransaction
from .client import ConsumerGroup, Producer, Queen, Queue, Transaction
from .config import Config, Retry429
from .errors import (
    AckError,
    APIError,
    BadRequestError,
    ForbiddenError,
    LeaseLostError,
    MalformedResponseError,
    NotFoundError,
    PayloadTooLargeError,
    ProducerClosedError,
    QueenError,
    RateLimitedError,
    ServerError,
    TransactionError,
    TransportError,
    UnauthorizedError,
    is_terminal,
)
from .streams import (
    AsyncStreamsClient,
    ConfigMismatchError,
    CycleError,
    CycleResult,
    StateRow,
    StreamQuery,
    StreamsClient,
    StreamsError,
)
from .types import (
    COMPLETED,
    DLQ,
    FAILED,
    QUEUE_MODE,
    RETRY,
    SUBSCRIBE_ALL,
    SUBSCRIBE_NEW,
    Ack,
    AckResult,
    DLQMessage,
    DLQPage,
    LeaseResult,
    Message,
    PushItem,
    PushResult,
    TransactionResult,
    completed,
    dead_letter,
    failed,
    release,
)

__all__ = [name for name in dir() if not name.startswith("_")]
__version__ = "0.1.0"
