"""The synchronous client: :class:`Queen`, its queue builder, transactions, consumer groups,
the buffered producer and the threaded consume loop.

What to send and how to read the answer is shared with the asyncio client (:mod:`._calls`,
:mod:`._base`); this module only blocks on the I/O and runs the consumer and producer on threads."""

from __future__ import annotations

import functools
import threading
import time
from datetime import datetime
from typing import TypeVar, Any, Callable, Dict, Iterable, List, Optional, Sequence, Set, Union

import httpx

from . import _calls
from ._base import Batch, ClientBase, Consumer, ConsumerGroupBase, OnPushError, ProducerBase, QueueBase
from ._calls import ItemLike, QueueSpec
from ._core import Call
from ._transport import drive, sync_client
from .errors import QueenError
from .streams import StreamsClient
from .types import (
    QUEUE_MODE,
    AckResult,
    AckTarget,
    DLQMessage,
    DLQPage,
    LeaseResult,
    Message,
    PushResult,
    TransactionResult,
    to_ack,
)

T = TypeVar("T")

Handler = Callable[[Message], Any]


class _Halted(Exception):
    """A consumer was stopped while one of its requests waited between retries."""


class Queen(ClientBase[httpx.Client, Callable[[float], None]]):
    """A synchronous client for one Queen deployment (one or several broker URLs).

    Thread-safe: create one per process and share it. ``url`` may be a string or a list of URLs;
    with several, a backend that answers 5xx or fails at the network level is marked unhealthy and
    requests fail over to the next one.

    The ``sleep`` (seconds -> None), ``random`` (-> float in [0, 1)) and ``clock`` (-> epoch
    seconds) arguments are seams for tests; leave them unset in production.
    """

    # ---- plumbing ----

    def _new_http(self) -> httpx.Client:
        return sync_client()

    def _real_sleep(self) -> Callable[[float], None]:
        return time.sleep

    def _execute(self, call: Call[T], halted: Optional[Callable[[], bool]] = None) -> T:
        sleep = self._sleep
        if halted is not None:
            sleep = functools.partial(self._halting_sleep, halted)
        return drive(self._steps(call), self._http, sleep)

    def _halting_sleep(self, halted: Callable[[], bool], seconds: float) -> None:
        # A consumer's long poll may wait out 429s without bound: its stop must cut those waits short.
        self._pause(seconds, halted)
        if halted():
            raise _Halted()

    def _pause(self, seconds: float, halted: Callable[[], bool]) -> None:
        """A consumer back-off that ends early when the consumer is stopped."""
        if self._custom_sleep:
            self._sleep(seconds)
            return
        end = time.monotonic() + seconds
        while not halted():
            rem = end - time.monotonic()
            if rem <= 0:
                return
            time.sleep(min(rem, 0.05))

    def close(self) -> None:
        """Flushes and closes every producer created from this client, then the HTTP pool."""
        for p in self._take_producers():
            p.close()
        if self._own_http:
            self._http.close()

    def __enter__(self) -> "Queen":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ---- messaging ----

    def queue(self, name: str) -> "Queue":
        """A builder addressing the named queue (created on first push)."""
        return Queue(self, QueueSpec(name=name))

    def matching(self, namespace: str = "", task: str = "") -> "Queue":
        """A consume-only handle over every queue of a namespace and/or task (GET /api/v1/pop?namespace=&task=)."""
        return Queue(self, QueueSpec.matching(namespace, task))

    def ack(self, target: AckTarget, status: Optional[str] = None, *, error: Optional[str] = None) -> AckResult:
        """Sends one acknowledgement (POST /api/v1/ack). ``status`` is ``completed`` (default),
        ``failed``, ``dlq`` or ``retry``. A rejection (HTTP 200 with ``success: false``) raises
        :class:`AckError` carrying the result; the message will be redelivered."""
        return self._execute(_calls.ack(target, status, error))

    def ack_batch(self, targets: Sequence[AckTarget], status: Optional[str] = None) -> List[AckResult]:
        """Sends many acknowledgements in one request (POST /api/v1/ack/batch) and returns one
        result per ack, in order. Per-item rejections are in the results (``result.success``,
        ``result.check()``); a response that does not line up with the request raises
        :class:`MalformedResponseError`. All acks must share one consumer group."""
        return self._execute(_calls.ack_batch(targets, status))

    def extend_lease(self, lease: Union[str, Message], seconds: float = 60) -> LeaseResult:
        """Extends every partition lease held under the lease id to at least now + seconds
        (POST /api/v1/lease/:id/extend). An unknown, expired or inactive lease raises :class:`LeaseLostError`."""
        return self._execute(_calls.extend_lease(lease, seconds))

    renew = extend_lease

    def streams(self, *, retries: int = 3) -> StreamsClient:
        """A client of the stream-cycle routes (``/streams/v1``) on the first URL, with the same token
        and HTTP pool and the streams runtime's own retry policy (see :mod:`queen_client.streams`)."""
        return StreamsClient._of(self, retries)

    def transaction(self) -> "Transaction":
        """An empty transaction: acks and pushes applied atomically on ``commit()``."""
        return Transaction(self)

    # ---- dead letters ----

    def dlq(
        self,
        queue: Optional[str] = None,
        *,
        consumer_group: Optional[str] = None,
        partition: Optional[str] = None,
        from_: Optional[datetime] = None,
        to: Optional[datetime] = None,
        limit: Optional[int] = None,
        offset: Optional[int] = None,
    ) -> DLQPage:
        """Lists dead letters (GET /api/v1/dlq), newest failure first."""
        return self._execute(_calls.dlq(queue, consumer_group, partition, from_, to, limit, offset))

    def dlq_message(self, partition_id: str, transaction_id: str) -> DLQMessage:
        """One dead letter; :class:`NotFoundError` when there is none."""
        return self._execute(_calls.dlq_message(partition_id, transaction_id))

    def delete_dlq_message(self, partition_id: str, transaction_id: str) -> None:
        """Discards a dead letter."""
        self._execute(_calls.delete_dlq_message(partition_id, transaction_id))

    def retry_dlq_message(self, partition_id: str, transaction_id: str) -> None:
        """Puts a dead letter back in front of its consumer group."""
        self._execute(_calls.retry_dlq_message(partition_id, transaction_id))

    # ---- administration ----

    def queues(self) -> List[Dict[str, Any]]:
        """Lists the queues with counts (GET /api/v1/resources/queues)."""
        return self._execute(_calls.queues())

    def consumer_groups(self) -> List[Dict[str, Any]]:
        """Lists consumer groups per queue, queue mode included (GET /api/v1/consumer-groups)."""
        return self._execute(_calls.consumer_groups())

    def lagging_partitions(self, min_lag_seconds: int = 60) -> List[Dict[str, Any]]:
        """Partitions whose oldest unconsumed message is older than min_lag_seconds."""
        return self._execute(_calls.lagging_partitions(min_lag_seconds))

    def consumer_group(self, name: str) -> "ConsumerGroup":
        """A handle for administering one consumer group."""
        return ConsumerGroup(self, name)

    def delete_consumer_group(self, name: str, delete_metadata: bool = True) -> Dict[str, Any]:
        return self.consumer_group(name).delete(delete_metadata)

    def maintenance(self) -> Dict[str, Any]:
        """Push-maintenance state (pushes diverted to the broker's disk spool)."""
        return self._execute(_calls.maintenance())

    def set_maintenance(self, enabled: bool) -> Dict[str, Any]:
        return self._execute(_calls.set_maintenance(enabled))

    def pop_maintenance(self) -> Dict[str, Any]:
        """Pop-maintenance state (every pop answers 204)."""
        return self._execute(_calls.pop_maintenance())

    def set_pop_maintenance(self, enabled: bool) -> Dict[str, Any]:
        return self._execute(_calls.set_pop_maintenance(enabled))

    def status(
        self,
        *,
        from_: Optional[datetime] = None,
        to: Optional[datetime] = None,
        queue: Optional[str] = None,
        namespace: Optional[str] = None,
        task: Optional[str] = None,
    ) -> Dict[str, Any]:
        """The dashboard overview (GET /api/v1/status)."""
        return self._execute(_calls.status(from_, to, queue, namespace, task))

    def status_queues(self) -> Any:
        return self._execute(_calls.status_queues())

    def status_queue(self, queue: str) -> Dict[str, Any]:
        return self._execute(_calls.status_queue(queue))

    def status_queue_messages(self, queue: str, limit: Optional[int] = None, offset: Optional[int] = None) -> Any:
        return self._execute(_calls.status_queue_messages(queue, limit, offset))

    def health(self) -> Dict[str, Any]:
        """GET /health (a database round-trip); a 503 surfaces as :class:`ServerError` after retries."""
        return self._execute(_calls.health())

    def get_raw(self, path: str, query: Optional[Dict[str, Any]] = None) -> Any:
        """A GET on any read route, with both retry layers, returning the decoded JSON."""
        return self._execute(_calls.get(path, query))


class Queue(QueueBase[Queen]):
    """An immutable builder addressing a queue, optionally a partition and a consumer group.
    Every builder method returns a modified copy, so a base handle can be shared."""

    def create(self) -> Dict[str, Any]:
        """Creates the queue or replaces its configuration (POST /api/v1/configure)."""
        return self._c._execute(_calls.configure(self._spec))

    def delete(self) -> bool:
        """Deletes the queue with its partitions, messages and dead letters; True when it existed."""
        return self._c._execute(_calls.delete_queue(self._spec.name))

    def options(self) -> Dict[str, Any]:
        """The queue's configuration with every option (snake_case keys, see :data:`QUEUE_OPTIONS`):
        given to :meth:`config` and :meth:`create` it configures the queue to what it is.
        :class:`NotFoundError` for an unknown queue."""
        return self._c._execute(_calls.queue_options(self._spec.name))

    def info(self) -> Dict[str, Any]:
        """The queue with its partitions and counts; :class:`NotFoundError` for an unknown queue."""
        return self._c._execute(_calls.queue_info(self._spec.name))

    def push(self, item: ItemLike, *, transaction_id: Optional[str] = None, trace_id: Optional[str] = None) -> PushResult:
        """Pushes one message (a payload or a :class:`PushItem`). A duplicate is not an error: check ``status``."""
        return self._c._execute(_calls.push_one(self._spec, item, transaction_id, trace_id))

    def push_batch(self, items: Iterable[ItemLike]) -> List[PushResult]:
        """Pushes many messages in one request; one result per item, in order."""
        return self._c._execute(_calls.push_batch(self._spec, items))

    def pop(
        self,
        *,
        batch: Optional[int] = None,
        wait: bool = False,
        timeout_millis: Optional[float] = None,
        partitions: Optional[int] = None,
        auto_ack: bool = False,
    ) -> List[Message]:
        """Fetches up to ``batch`` messages. An empty queue (HTTP 204) returns ``[]``; every failure,
        a 403 or an exhausted 429 budget included, raises and is never reported as "no messages".
        ``wait=True`` long-polls up to ``timeout_millis`` and waits out 429s indefinitely unless
        ``Retry429.max_attempts`` is set."""
        return self._c._execute(self._pop(batch, wait, timeout_millis, partitions, auto_ack))

    def dlq(self, *, limit: Optional[int] = None, offset: Optional[int] = None) -> DLQPage:
        """This queue's dead letters (for this builder's consumer group, if any)."""
        return self._c.dlq(self._spec.name, consumer_group=self._spec.group or None, limit=limit, offset=offset)

    def producer(
        self,
        *,
        batch_size: int = 100,
        flush_interval_millis: float = 100,
        on_error: Optional[OnPushError] = None,
    ) -> "Producer":
        """A buffered producer for this queue/partition; see :class:`Producer`."""
        p = Producer(self, batch_size, flush_interval_millis, on_error)
        self._c._add_producer(p)
        return p

    def consume(
        self,
        handler: Handler,
        *,
        concurrency: int = 1,
        batch: int = 1,
        partitions: Optional[int] = None,
        poll_timeout_millis: float = 30000,
        manual_ack: bool = False,
        auto_ack: bool = False,
        lease_renewal_millis: Optional[float] = None,
        error_backoff_millis: Optional[float] = None,
        stop: Optional[threading.Event] = None,
    ) -> None:
        """Long-polls with ``concurrency`` worker threads and calls ``handler(message)`` for every
        message until ``stop`` is set.

        By default a handler that returns acknowledges the message as completed and one that raises
        acknowledges it as failed; the rest of that partition's batch is then skipped and redelivers
        in order (unless the failure sent the message to the DLQ). ``manual_ack`` leaves acks to the
        handler; ``auto_ack`` pops at-most-once. ``lease_renewal_millis`` extends the batch's lease
        while handlers run.

        Stopping is graceful: no new pop starts, pops in flight finish (at most
        ``poll_timeout_millis``), batches received are processed and acknowledged. Transient
        failures (5xx, network, an exhausted 429 budget) are logged and retried after a back-off
        (the 429's Retry-After when longer). A terminal error (401, 403, 404, 413, ...) stops every
        worker and is raised: waiting will not fix it.
        """
        c = Consumer(self, handler, batch, partitions, poll_timeout_millis, manual_ack, auto_ack,
                     lease_renewal_millis, error_backoff_millis)
        stop_ev: threading.Event = stop or threading.Event()
        halt = threading.Event()
        failures: List[BaseException] = []

        def halted() -> bool:
            return stop_ev.is_set() or halt.is_set()

        def worker() -> None:
            try:
                while not halted():
                    try:
                        msgs = self._c._execute(c.pop(), halted)
                    except _Halted:
                        return
                    except QueenError as e:
                        backoff = c.pop_failed(e)
                        if backoff is None:
                            raise
                        self._c._pause(backoff, halted)
                        continue
                    if msgs:
                        self._process(c, c.batch(msgs))
            except BaseException as e:  # noqa: BLE001 - reported to the caller of consume
                failures.append(e)
                halt.set()

        threads = [threading.Thread(target=worker, name=f"queen-consume-{self.name}-{k}", daemon=True)
                   for k in range(max(1, concurrency))]
        for t in threads:
            t.start()
        try:
            for t in threads:
                t.join()
        except BaseException:
            halt.set()
            for t in threads:
                t.join()
            raise
        if failures:
            raise failures[0]

    def _process(self, c: Consumer, b: Batch) -> None:
        renewal_stop = threading.Event()
        renewer: Optional[threading.Thread] = None
        if c.renew_every:
            renewer = threading.Thread(target=self._renew, args=(c, c.renew_every, b.leases(), renewal_stop),
                                       daemon=True)
            renewer.start()
        try:
            for m in b.messages():
                err: Optional[BaseException] = None
                try:
                    c.handler(m)
                except Exception as e:  # noqa: BLE001 - a handler failure is a failed ack
                    err = e
                if b.handled(m, err):
                    b.failure_acked(m, self._flush(b))
        finally:
            renewal_stop.set()
            if renewer is not None:
                renewer.join()
            self._flush(b)

    def _flush(self, b: Batch) -> List[AckResult]:
        acks = b.take()
        if not acks:
            return []
        try:
            results = self._c.ack_batch(acks)
        except QueenError as e:
            return b.ack_failed(e)
        return b.acked(results)

    def _renew(self, c: Consumer, every: float, leases: Set[str], stop: threading.Event) -> None:
        while leases and not stop.wait(every):
            for lease in list(leases):
                try:
                    self._c.extend_lease(lease, 2 * every)
                except QueenError as e:
                    c.renewal_failed(leases, lease, e)


class Producer(ProducerBase[Queue]):
    """Buffers pushes to one queue/partition client-side and sends them in batches, by count
    (``batch_size``) or by time (``flush_interval_millis``). Items get generated transaction ids,
    so a retried batch is deduplicated by the broker. Thread-safe; ``close()`` flushes the rest.
    Usable as a context manager."""

    def __init__(self, queue: Queue, batch_size: int, flush_interval_millis: float,
                 on_error: Optional[OnPushError]) -> None:
        super().__init__(queue, batch_size, flush_interval_millis, on_error)
        self._send_lock = threading.Lock()  # batches leave in add order
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"queen-producer-{queue.name}", daemon=True)
        self._thread.start()

    def add(self, item: ItemLike) -> None:
        """Buffers one item; when the buffer reaches ``batch_size`` it is sent before returning
        (the caller feels the broker's pace) and that push's error is raised."""
        if self._buffer(item):
            self.flush()

    def flush(self) -> None:
        """Sends everything buffered so far, in batches of at most ``batch_size``. On failure the
        unsent items stay buffered, in order, and the error is raised."""
        with self._send_lock, self._sending() as outbox:
            for call in outbox:
                self._q._c._execute(call)

    def close(self) -> None:
        """Stops the timer and flushes the buffer. Later adds raise :class:`ProducerClosedError`."""
        if not self._close():
            return
        self._stop.set()
        self._thread.join()
        self.flush()

    def __enter__(self) -> "Producer":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _loop(self) -> None:
        while not self._stop.wait(self._interval):
            if not self.pending():
                continue
            try:
                self.flush()
            except QueenError as e:
                self._lost(e)


class Transaction:
    """Acknowledgements and pushes the broker applies atomically (POST /api/v1/transaction).

    ::

        client.transaction().ack(msg).queue("next").partition(msg.partition).push(out).commit()
    """

    def __init__(self, client: Any) -> None:
        self._c = client
        self._ops: List[Dict[str, Any]] = []

    def ack(self, target: AckTarget, status: Optional[str] = None, *, error: Optional[str] = None) -> "Transaction":
        """Adds an acknowledgement (completed by default). ``retry`` is not allowed in a transaction."""
        w = to_ack(target, status, error).wire()
        w.setdefault("consumerGroup", QUEUE_MODE)
        self._ops.append({"type": "ack", **w})
        return self

    def queue(self, name: str) -> "TxQueue":
        """Selects the queue the next push goes to."""
        return TxQueue(self, QueueSpec(name=name))

    def _commit_call(self) -> Call[TransactionResult]:
        if not self._ops:
            raise ValueError("queen: empty transaction")
        return _calls.transaction(self._ops)

    def commit(self) -> TransactionResult:
        """Sends the transaction. A rollback (HTTP 200 with ``success: false``) raises
        :class:`TransactionError` with ``code`` ``QDUP`` (duplicate push) or ``QTXN`` (rejected
        ack); nothing was applied. A commit retried after a lost answer reports QDUP for pushes it
        already made: give pushed items your own deterministic transaction ids."""
        result: TransactionResult = self._c._execute(self._commit_call())
        return result


class TxQueue:
    """The push target of a transaction."""

    def __init__(self, tx: Any, spec: QueueSpec) -> None:
        self._tx = tx
        self._spec = spec

    def partition(self, name: str) -> "TxQueue":
        self._spec = self._spec.with_(partition=name)
        return self

    def push(self, *items: ItemLike) -> Any:
        """Adds items (payloads or :class:`PushItem`) and returns the transaction for chaining."""
        self._tx._ops.append({"type": "push", "items": _calls.wire_items(self._spec, items)})
        return self._tx


class ConsumerGroup(ConsumerGroupBase[Queen]):
    """Administration of one consumer group."""

    def get(self) -> Dict[str, List[Dict[str, Any]]]:
        """The group's cursors keyed by queue name; ``{}`` for an unknown group."""
        return self._c._execute(_calls.group_get(self.name))

    def delete(self, delete_metadata: bool = True) -> Dict[str, Any]:
        """Removes the group's cursors on every queue (and its subscription record with ``delete_metadata``)."""
        return self._c._execute(_calls.group_delete(self.name, delete_metadata))

    def delete_for_queue(self, queue: str, delete_metadata: bool = True) -> Dict[str, Any]:
        return self._c._execute(_calls.group_delete_for_queue(self.name, queue, delete_metadata))

    def set_subscription(self, t: datetime) -> Dict[str, Any]:
        """Rewrites the subscription timestamp (only partitions the group has not consumed yet)."""
        return self._c._execute(_calls.group_set_subscription(self.name, t))

    def seek_to_end(self, queue: str) -> Dict[str, Any]:
        """Moves every cursor of the group on ``queue`` to the newest message."""
        return self._c._execute(_calls.group_seek_to_end(self.name, queue))

    def seek_to(self, queue: str, t: datetime) -> Dict[str, Any]:
        """Moves every cursor on ``queue`` to the last message at or before ``t`` (replay)."""
        return self._c._execute(_calls.group_seek_to(self.name, queue, t))

    def seek_partition_to_end(self, queue: str, partition: str) -> Dict[str, Any]:
        return self._c._execute(_calls.group_seek_partition_to_end(self.name, queue, partition))
