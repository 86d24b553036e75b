"""Values exchanged with the broker: messages, push items, acknowledgements and their results."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any, Dict, List, Mapping, Optional, Union

from .errors import AckError, MalformedResponseError

#: Consumer-group name the broker uses for queue mode (competing consumers, one cursor).
QUEUE_MODE = "__QUEUE_MODE__"

#: Subscription modes for a named group's first contact with a partition.
SUBSCRIBE_ALL = "all"
SUBSCRIBE_NEW = "new"

#: Every option ``POST /api/v1/configure`` accepts: its snake_case name (what :meth:`Queue.config`
#: takes besides the wire's camelCase, and what :meth:`Queue.options` returns) and its wire name.
#: Configure replaces the whole configuration: an option left out is reset to its broker default,
#: one given as ``0`` or ``False`` is stored as that.
QUEUE_OPTIONS: Mapping[str, str] = MappingProxyType({
    "lease_time": "leaseTime",
    "retry_limit": "retryLimit",
    "retry_delay": "retryDelay",
    "max_size": "maxSize",
    "ttl": "ttl",
    "priority": "priority",
    "delayed_processing": "delayedProcessing",
    "window_buffer": "windowBuffer",
    "retention_seconds": "retentionSeconds",
    "completed_retention_seconds": "completedRetentionSeconds",
    "retention_enabled": "retentionEnabled",
    "encryption_enabled": "encryptionEnabled",
    "dead_letter_queue": "deadLetterQueue",
    "dlq_after_max_retries": "dlqAfterMaxRetries",
    "max_wait_time_seconds": "maxWaitTimeSeconds",
})

#: Acknowledgement statuses.
COMPLETED = "completed"
FAILED = "failed"
DLQ = "dlq"
RETRY = "retry"

#: Push statuses reported in :attr:`PushResult.status`.
PUSH_QUEUED = "queued"
PUSH_DUPLICATE = "duplicate"
PUSH_BUFFERED = "buffered"
PUSH_FAILED = "failed"


def parse_time(value: Optional[str], what: str) -> Optional[datetime]:
    """Parses the broker's RFC 3339 timestamps; a bad one is a malformed response."""
    if not value:
        return None
    text = value.replace("Z", "+00:00") if value.endswith("Z") else value
    # Python < 3.11 accepts only 3 or 6 fractional digits: normalise to 6.
    if "." in text:
        head, rest = text.split(".", 1)
        digits = ""
        while rest and rest[0].isdigit():
            digits, rest = digits + rest[0], rest[1:]
        text = f"{head}.{(digits + '000000')[:6]}{rest}"
    try:
        return datetime.fromisoformat(text)
    except ValueError as e:
        raise MalformedResponseError(f"queen: {what} {value!r}: {e}") from None


@dataclass
class Message:
    """A delivered message. Acknowledge it with ``ack`` (or in a transaction).

    Handlers must be idempotent on :attr:`transaction_id`: every rejected ack, lease expiry and
    replay is a redelivery.
    """

    id: str
    transaction_id: str
    data: Any
    partition_id: str
    queue: str = ""
    partition: str = ""
    lease_id: Optional[str] = None
    consumer_group: str = ""
    trace_id: Optional[str] = None
    producer_sub: Optional[str] = None
    created_at: Optional[datetime] = None
    retry_count: int = 0


@dataclass
class PushItem:
    """One message to push. ``transaction_id`` is the idempotency key within the partition; when
    omitted one is generated, so a push retried after a 5xx or a network failure is reported
    ``duplicate`` instead of being stored twice. ``trace_id``, when set, must be a UUID."""

    payload: Any
    transaction_id: Optional[str] = None
    trace_id: Optional[str] = None


@dataclass
class PushResult:
    """The broker's answer for one pushed item, in request order."""

    index: int
    transaction_id: str
    status: str
    message_id: Optional[str] = None
    partition_id: Optional[str] = None
    trace_id: Optional[str] = None
    queue_name: Optional[str] = None
    error: Optional[str] = None


@dataclass
class Ack:
    """One acknowledgement. Build it from a message with :func:`completed`, :func:`failed`,
    :func:`dead_letter` or :func:`release`."""

    transaction_id: str
    partition_id: str
    lease_id: Optional[str] = None
    consumer_group: Optional[str] = None
    status: str = COMPLETED
    error: Optional[str] = None

    def wire(self) -> Dict[str, Any]:
        w: Dict[str, Any] = {
            "transactionId": self.transaction_id,
            "partitionId": self.partition_id,
            "status": self.status or COMPLETED,
        }
        if self.lease_id:
            w["leaseId"] = self.lease_id
        if self.consumer_group:
            w["consumerGroup"] = self.consumer_group
        if self.error:
            w["error"] = self.error
        return w


def _ack_of(m: Message, status: str, reason: Optional[str]) -> Ack:
    return Ack(
        transaction_id=m.transaction_id,
        partition_id=m.partition_id,
        lease_id=m.lease_id,
        consumer_group=m.consumer_group or None,
        status=status,
        error=reason,
    )


def completed(m: Message) -> Ack:
    """Acknowledges ``m`` as processed: the group's cursor moves past it."""
    return _ack_of(m, COMPLETED, None)


def failed(m: Message, reason: str = "") -> Ack:
    """Reports ``m`` as failed (counts against the queue's retry limit, then the DLQ)."""
    return _ack_of(m, FAILED, reason or None)


def dead_letter(m: Message, reason: str = "") -> Ack:
    """Sends ``m`` straight to the dead-letter queue."""
    return _ack_of(m, DLQ, reason or None)


def release(m: Message) -> Ack:
    """Gives ``m`` back for redelivery without counting a retry."""
    return _ack_of(m, RETRY, None)


AckTarget = Union[Message, Ack]


def to_ack(target: AckTarget, status: Optional[str] = None, error: Optional[str] = None) -> Ack:
    if isinstance(target, Message):
        a = _ack_of(target, status or COMPLETED, error)
    elif isinstance(target, Ack):
        a = Ack(**target.__dict__)
        if status:
            a.status = status
        if error:
            a.error = error
    else:
        raise TypeError(f"queen: cannot acknowledge a {type(target).__name__}; pass a Message or an Ack")
    if not a.transaction_id or not a.partition_id:
        raise ValueError("queen: an ack needs transaction_id and partition_id")
    return a


@dataclass
class AckResult:
    """The broker's verdict on one acknowledgement. ``success`` is the only signal: a rejected ack
    still arrives with HTTP 200."""

    index: int
    transaction_id: str
    success: bool
    error: Optional[str] = None
    queue_name: Optional[str] = None
    partition_name: Optional[str] = None
    lease_released: bool = False
    dlq: bool = False
    noop: bool = False

    def check(self) -> "AckResult":
        """Raises :class:`AckError` when the ack was rejected; returns self otherwise."""
        if not self.success:
            raise AckError(self.index, self.transaction_id, self.error or "", self)
        return self


@dataclass
class LeaseResult:
    """The answer to a lease extension."""

    lease_id: str
    success: bool
    expires_at: Optional[datetime] = None
    error: Optional[str] = None


@dataclass
class TransactionResult:
    """The answer to a committed transaction."""

    transaction_id: str
    success: bool
    error: Optional[str] = None
    results: List[Dict[str, Any]] = field(default_factory=list)


@dataclass
class DLQMessage:
    """A dead-lettered message."""

    id: str
    transaction_id: str
    partition_id: str
    queue: str
    partition: str
    consumer_group: Optional[str]
    error_message: Optional[str]
    retry_count: int
    data: Any
    created_at: Optional[str] = None
    failed_at: Optional[str] = None
    producer_sub: Optional[str] = None


@dataclass
class DLQPage:
    """One page of dead letters, newest failure first."""

    messages: List[DLQMessage]
    total: int
    limit: int = 0
    offset: int = 0
