"""The asyncio client: :class:`AsyncQueen` and its builders. Same behaviour and names as the
synchronous client; every call that does I/O is a coroutine.

What to send and how to read the answer is shared with the synchronous client (:mod:`._calls`,
:mod:`._base`); this module only awaits the I/O and runs the consumer and producer as tasks."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from datetime import datetime
from typing import TypeVar, Any, Awaitable, Callable, Dict, Iterable, List, Optional, Sequence, Set, Union

import httpx

from . import _calls
from ._base import Batch, ClientBase, Consumer, ConsumerGroupBase, OnPushError, ProducerBase, QueueBase
from ._calls import ItemLike, QueueSpec
from ._core import Call
from ._transport import adrive, async_client
from .client import Transaction
from .errors import QueenError
from .streams import AsyncStreamsClient
from .types import (
    AckResult,
    AckTarget,
    DLQMessage,
    DLQPage,
    LeaseResult,
    Message,
    PushResult,
    TransactionResult,
)

T = TypeVar("T")

#: A handler may be a plain function or a coroutine function.
AsyncHandler = Callable[[Message], Union[Any, Awaitable[Any]]]


class AsyncQueen(ClientBase[httpx.AsyncClient, Callable[[float], Awaitable[None]]]):
    """An asyncio client for one Queen deployment; see :class:`queen_client.Queen` for the
    arguments. ``sleep`` here is an async callable (seconds -> awaitable)."""

    # ---- plumbing ----

    def _new_http(self) -> httpx.AsyncClient:
        return async_client()

    def _real_sleep(self) -> Callable[[float], Awaitable[None]]:
        return asyncio.sleep

    async def _execute(self, call: Call[T]) -> T:
        return await adrive(self._steps(call), self._http, self._sleep)

    async def _pause(self, seconds: float, halt: asyncio.Event) -> None:
        if self._custom_sleep:
            await self._sleep(seconds)
            return
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(halt.wait(), seconds)

    async def close(self) -> None:
        """Flushes and closes every producer created from this client, then the HTTP pool."""
        for p in self._take_producers():
            await p.close()
        if self._own_http:
            await self._http.aclose()

    async def __aenter__(self) -> "AsyncQueen":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    # ---- messaging ----

    def queue(self, name: str) -> "AsyncQueue":
        return AsyncQueue(self, QueueSpec(name=name))

    def matching(self, namespace: str = "", task: str = "") -> "AsyncQueue":
        return AsyncQueue(self, QueueSpec.matching(namespace, task))

    async def ack(self, target: AckTarget, status: Optional[str] = None, *, error: Optional[str] = None) -> AckResult:
        """See :meth:`Queen.ack`: a rejection raises :class:`AckError`."""
        return await self._execute(_calls.ack(target, status, error))

    async def ack_batch(self, targets: Sequence[AckTarget], status: Optional[str] = None) -> List[AckResult]:
        """See :meth:`Queen.ack_batch`: per-item results, misalignment raises."""
        return await self._execute(_calls.ack_batch(targets, status))

    async def extend_lease(self, lease: Union[str, Message], seconds: float = 60) -> LeaseResult:
        return await self._execute(_calls.extend_lease(lease, seconds))

    renew = extend_lease

    def streams(self, *, retries: int = 3) -> AsyncStreamsClient:
        """See :meth:`Queen.streams`."""
        return AsyncStreamsClient._of(self, retries)

    def transaction(self) -> "AsyncTransaction":
        return AsyncTransaction(self)

    # ---- dead letters ----

    async def dlq(
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
        return await self._execute(_calls.dlq(queue, consumer_group, partition, from_, to, limit, offset))

    async def dlq_message(self, partition_id: str, transaction_id: str) -> DLQMessage:
        return await self._execute(_calls.dlq_message(partition_id, transaction_id))

    async def delete_dlq_message(self, partition_id: str, transaction_id: str) -> None:
        await self._execute(_calls.delete_dlq_message(partition_id, transaction_id))

    async def retry_dlq_message(self, partition_id: str, transaction_id: str) -> None:
        await self._execute(_calls.retry_dlq_message(partition_id, transaction_id))

    # ---- administration ----

    async def queues(self) -> List[Dict[str, Any]]:
        return await self._execute(_calls.queues())

    async def consumer_groups(self) -> List[Dict[str, Any]]:
        return await self._execute(_calls.consumer_groups())

    async def lagging_partitions(self, min_lag_seconds: int = 60) -> List[Dict[str, Any]]:
        return await self._execute(_calls.lagging_partitions(min_lag_seconds))

    def consumer_group(self, name: str) -> "AsyncConsumerGroup":
        return AsyncConsumerGroup(self, name)

    async def delete_consumer_group(self, name: str, delete_metadata: bool = True) -> Dict[str, Any]:
        return await self.consumer_group(name).delete(delete_metadata)

    async def maintenance(self) -> Dict[str, Any]:
        return await self._execute(_calls.maintenance())

    async def set_maintenance(self, enabled: bool) -> Dict[str, Any]:
        return await self._execute(_calls.set_maintenance(enabled))

    async def pop_maintenance(self) -> Dict[str, Any]:
        return await self._execute(_calls.pop_maintenance())

    async def set_pop_maintenance(self, enabled: bool) -> Dict[str, Any]:
        return await self._execute(_calls.set_pop_maintenance(enabled))

    async def status(
        self,
        *,
        from_: Optional[datetime] = None,
        to: Optional[datetime] = None,
        queue: Optional[str] = None,
        namespace: Optional[str] = None,
        task: Optional[str] = None,
    ) -> Dict[str, Any]:
        return await self._execute(_calls.status(from_, to, queue, namespace, task))

    async def status_queues(self) -> Any:
        return await self._execute(_calls.status_queues())

    async def status_queue(self, queue: str) -> Dict[str, Any]:
        return await self._execute(_calls.status_queue(queue))

    async def status_queue_messages(self, queue: str, limit: Optional[int] = None, offset: Optional[int] = None) -> Any:
        return await self._execute(_calls.status_queue_messages(queue, limit, offset))

    async def health(self) -> Dict[str, Any]:
        return await self._execute(_calls.health())

    async def get_raw(self, path: str, query: Optional[Dict[str, Any]] = None) -> Any:
        return await self._execute(_calls.get(path, query))


class AsyncQueue(QueueBase[AsyncQueen]):
    """The asyncio queue builder; see :class:`queen_client.Queue`."""

    async def create(self) -> Dict[str, Any]:
        return await self._c._execute(_calls.configure(self._spec))

    async def delete(self) -> bool:
        return await self._c._execute(_calls.delete_queue(self._spec.name))

    async def options(self) -> Dict[str, Any]:
        return await self._c._execute(_calls.queue_options(self._spec.name))

    async def info(self) -> Dict[str, Any]:
        return await self._c._execute(_calls.queue_info(self._spec.name))

    async def push(self, item: ItemLike, *, transaction_id: Optional[str] = None,
                   trace_id: Optional[str] = None) -> PushResult:
        return await self._c._execute(_calls.push_one(self._spec, item, transaction_id, trace_id))

    async def push_batch(self, items: Iterable[ItemLike]) -> List[PushResult]:
        return await self._c._execute(_calls.push_batch(self._spec, items))

    async def pop(
        self,
        *,
        batch: Optional[int] = None,
        wait: bool = False,
        timeout_millis: Optional[float] = None,
        partitions: Optional[int] = None,
        auto_ack: bool = False,
    ) -> List[Message]:
        """See :meth:`queen_client.Queue.pop`: ``[]`` on 204, an exception on any failure."""
        return await self._c._execute(self._pop(batch, wait, timeout_millis, partitions, auto_ack))

    async def dlq(self, *, limit: Optional[int] = None, offset: Optional[int] = None) -> DLQPage:
        return await self._c.dlq(self._spec.name, consumer_group=self._spec.group or None, limit=limit, offset=offset)

    def producer(
        self,
        *,
        batch_size: int = 100,
        flush_interval_millis: float = 100,
        on_error: Optional[OnPushError] = None,
    ) -> "AsyncProducer":
        p = AsyncProducer(self, batch_size, flush_interval_millis, on_error)
        self._c._add_producer(p)
        return p

    async def consume(
        self,
        handler: AsyncHandler,
        *,
        concurrency: int = 1,
        batch: int = 1,
        partitions: Optional[int] = None,
        poll_timeout_millis: float = 30000,
        manual_ack: bool = False,
        auto_ack: bool = False,
        lease_renewal_millis: Optional[float] = None,
        error_backoff_millis: Optional[float] = None,
        stop: Optional[asyncio.Event] = None,
    ) -> None:
        """See :meth:`queen_client.Queue.consume`. ``handler`` may be sync or async. Setting
        ``stop`` cancels pops in flight at once; batches already received are processed and
        acknowledged before ``consume`` returns. Cancelling the ``consume`` task itself stops
        abruptly (unacknowledged messages redeliver after their lease)."""
        c = Consumer(self, handler, batch, partitions, poll_timeout_millis, manual_ack, auto_ack,
                     lease_renewal_millis, error_backoff_millis)
        stop_ev: asyncio.Event = stop or asyncio.Event()
        halt = asyncio.Event()

        async def watch() -> None:
            await stop_ev.wait()
            halt.set()

        async def worker() -> None:
            while not halt.is_set():
                pop_task = asyncio.ensure_future(self._c._execute(c.pop()))
                halt_task = asyncio.ensure_future(halt.wait())
                try:
                    await asyncio.wait({pop_task, halt_task}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    halt_task.cancel()
                    if not pop_task.done():
                        pop_task.cancel()
                        with contextlib.suppress(asyncio.CancelledError, QueenError):
                            await pop_task
                if pop_task.cancelled():
                    return
                try:
                    msgs = pop_task.result()
                except QueenError as e:
                    backoff = c.pop_failed(e)
                    if backoff is None:
                        halt.set()
                        raise
                    await self._c._pause(backoff, halt)
                    continue
                if msgs:
                    await self._process(c, c.batch(msgs))

        watcher = asyncio.ensure_future(watch())
        workers = [asyncio.ensure_future(worker()) for _ in range(max(1, concurrency))]
        try:
            results = await asyncio.gather(*workers, return_exceptions=True)
        except BaseException:
            for w in workers:
                w.cancel()
            raise
        finally:
            watcher.cancel()
        for r in results:
            if isinstance(r, BaseException):
                raise r

    async def _process(self, c: Consumer, b: Batch) -> None:
        renewal_stop = asyncio.Event()
        renewer: Optional["asyncio.Future[None]"] = None
        if c.renew_every:
            renewer = asyncio.ensure_future(self._renew(c, c.renew_every, b.leases(), renewal_stop))
        try:
            for m in b.messages():
                err: Optional[BaseException] = None
                try:
                    out = c.handler(m)
                    if inspect.isawaitable(out):
                        await out
                except Exception as e:  # noqa: BLE001 - a handler failure is a failed ack
                    err = e
                if b.handled(m, err):
                    b.failure_acked(m, await self._flush(b))
        finally:
            renewal_stop.set()
            if renewer is not None:
                await renewer
            await self._flush(b)

    async def _flush(self, b: Batch) -> List[AckResult]:
        acks = b.take()
        if not acks:
            return []
        try:
            results = await self._c.ack_batch(acks)
        except QueenError as e:
            return b.ack_failed(e)
        return b.acked(results)

    async def _renew(self, c: Consumer, every: float, leases: Set[str], stop: asyncio.Event) -> None:
        while leases:
            try:
                await asyncio.wait_for(stop.wait(), every)
                return
            except asyncio.TimeoutError:
                pass
            for lease in list(leases):
                try:
                    await self._c.extend_lease(lease, 2 * every)
                except QueenError as e:
                    c.renewal_failed(leases, lease, e)


class AsyncProducer(ProducerBase[AsyncQueue]):
    """The asyncio buffered producer; see :class:`queen_client.Producer`. Its timer task starts
    with the first ``add``."""

    def __init__(self, queue: AsyncQueue, batch_size: int, flush_interval_millis: float,
                 on_error: Optional[OnPushError]) -> None:
        super().__init__(queue, batch_size, flush_interval_millis, on_error)
        self._send_lock = asyncio.Lock()
        self._timer: Optional["asyncio.Future[None]"] = None

    async def add(self, item: ItemLike) -> None:
        full = self._buffer(item)
        if self._timer is None:
            self._timer = asyncio.ensure_future(self._loop())
        if full:
            await self.flush()

    async def flush(self) -> None:
        async with self._send_lock:
            with self._sending() as outbox:
                for call in outbox:
                    await self._q._c._execute(call)

    async def close(self) -> None:
        if not self._close():
            return
        if self._timer is not None:
            self._timer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._timer
        await self.flush()

    async def __aenter__(self) -> "AsyncProducer":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    async def _loop(self) -> None:
        while True:
            await asyncio.sleep(self._interval)
            if not self.pending():
                continue
            try:
                await self.flush()
            except QueenError as e:
                self._lost(e)


class AsyncTransaction(Transaction):
    """The asyncio transaction builder; ``commit()`` is a coroutine."""

    async def commit(self) -> TransactionResult:  # type: ignore[override]
        result: TransactionResult = await self._c._execute(self._commit_call())
        return result


class AsyncConsumerGroup(ConsumerGroupBase[AsyncQueen]):
    """Administration of one consumer group (asyncio)."""

    async def get(self) -> Dict[str, List[Dict[str, Any]]]:
        return await self._c._execute(_calls.group_get(self.name))

    async def delete(self, delete_metadata: bool = True) -> Dict[str, Any]:
        return await self._c._execute(_calls.group_delete(self.name, delete_metadata))

    async def delete_for_queue(self, queue: str, delete_metadata: bool = True) -> Dict[str, Any]:
        return await self._c._execute(_calls.group_delete_for_queue(self.name, queue, delete_metadata))

    async def set_subscription(self, t: datetime) -> Dict[str, Any]:
        return await self._c._execute(_calls.group_set_subscription(self.name, t))

    async def seek_to_end(self, queue: str) -> Dict[str, Any]:
        return await self._c._execute(_calls.group_seek_to_end(self.name, queue))

    async def seek_to(self, queue: str, t: datetime) -> Dict[str, Any]:
        return await self._c._execute(_calls.group_seek_to(self.name, queue, t))

    async def seek_partition_to_end(self, queue: str, partition: str) -> Dict[str, Any]:
        return await self._c._execute(_calls.group_seek_partition_to_end(self.name, queue, partition))
