"""The asyncio client: :class:`AsyncQueen` and its builders. Same behaviour and names as the
synchronous client; every call that does I/O is a coroutine."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import random as _random
import time
from datetime import datetime
from typing import TYPE_CHECKING, TypeVar, cast, Any, Awaitable, Callable, Dict, Iterable, List, Optional, Sequence, Union

import httpx

from . import _calls
from ._calls import ItemLike, QueueSpec, iso
from ._core import Backends, Call, Request, Response, Send, Sleep, endpoint, headers_for, plan, seg, timeout_seconds
from .client import Transaction, TxQueue
from .config import Config, Retry429, make_config
from .errors import APIError, LeaseLostError, ProducerClosedError, QueenError, TransportError, is_terminal
from .types import (
    Ack,
    AckResult,
    AckTarget,
    DLQMessage,
    DLQPage,
    LeaseResult,
    Message,
    PushItem,
    PushResult,
    TransactionResult,
    completed,
    failed,
    to_ack,
)

T = TypeVar("T")

#: A handler may be a plain function or a coroutine function.
if TYPE_CHECKING:
    from .streams import AsyncStreamsClient

AsyncHandler = Callable[[Message], Union[Any, Awaitable[Any]]]


class AsyncQueen:
    """An asyncio client for one Queen deployment; see :class:`queen_client.Queen` for the
    arguments. ``sleep`` here is an async callable (seconds -> awaitable)."""

    def __init__(
        self,
        url: Union[str, Sequence[str], None] = None,
        *,
        urls: Optional[Sequence[str]] = None,
        token: Optional[str] = None,
        retry_attempts: Optional[int] = None,
        retry_delay_millis: Optional[float] = None,
        retry_429: Union[Retry429, Dict[str, Any], None] = None,
        timeout_millis: Optional[float] = None,
        health_retry_after_millis: Optional[float] = None,
        headers: Optional[Dict[str, str]] = None,
        logger: Optional[logging.Logger] = None,
        http_client: Optional[httpx.AsyncClient] = None,
        sleep: Optional[Callable[[float], Awaitable[None]]] = None,
        random: Optional[Callable[[], float]] = None,
        clock: Optional[Callable[[], float]] = None,
    ) -> None:
        self._cfg = make_config(
            url, urls=urls, token=token, retry_attempts=retry_attempts, retry_delay_millis=retry_delay_millis,
            retry_429=retry_429, timeout_millis=timeout_millis, health_retry_after_millis=health_retry_after_millis,
            headers=headers, logger=logger,
        )
        self._sleep = sleep or asyncio.sleep
        self._custom_sleep = sleep is not None
        self._rand = random or _random.random
        self._clock = clock or time.time
        self._backends = Backends(list(self._cfg.urls), self._cfg.health_retry_after_millis, lambda: self._clock())
        self._own_http = http_client is None
        self._http = http_client or httpx.AsyncClient(
            timeout=None, limits=httpx.Limits(max_keepalive_connections=64, keepalive_expiry=9.0)
        )
        self._producers: List["AsyncProducer"] = []

    # ---- plumbing ----

    @property
    def config(self) -> Config:
        return self._cfg

    @property
    def log(self) -> logging.Logger:
        return self._cfg.logger

    def backend_health(self) -> Dict[str, bool]:
        return self._backends.health()

    async def _send(self, i: int, req: Request, payload: Optional[bytes]) -> Union[Response, TransportError]:
        url = endpoint(self._backends.urls[i], req)
        try:
            r = await self._http.request(
                req.method, url, content=payload, headers=headers_for(self._cfg, payload is not None),
                timeout=timeout_seconds(self._cfg, req),
            )
        except httpx.TransportError as e:
            return TransportError(req.method, url, e)
        return Response(r.status_code, r.headers, r.content)

    async def _do(self, req: Request) -> Response:
        payload = req.payload()
        gen = plan(self._cfg, self._backends, req, self._rand, self._clock)
        value: Any = None
        while True:
            try:
                cmd = gen.send(value)
            except StopIteration as done:
                return cast(Response, done.value)
            if isinstance(cmd, Sleep):
                await self._sleep(cmd.seconds)
                value = None
            else:
                assert isinstance(cmd, Send)
                value = await self._send(cmd.backend, req, payload)

    async def _execute(self, call: Call[T]) -> T:
        try:
            resp = await self._do(call.request)
        except APIError as e:
            if call.on_error is None:
                raise
            return call.on_error(e)
        return call.decode(resp)

    async def _pause(self, seconds: float, halt: asyncio.Event) -> None:
        if self._custom_sleep:
            await self._sleep(seconds)
            return
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(halt.wait(), seconds)

    async def close(self) -> None:
        """Flushes and closes every producer created from this client, then the HTTP pool."""
        producers, self._producers = self._producers, []
        for p in producers:
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
        if not namespace and not task:
            raise ValueError("queen: matching needs a namespace or a task")
        return AsyncQueue(self, QueueSpec(namespace=namespace, task=task))

    async def ack(self, target: AckTarget, status: Optional[str] = None, *, error: Optional[str] = None) -> AckResult:
        """See :meth:`Queen.ack`: a rejection raises :class:`AckError`."""
        return await self._execute(_calls.ack(to_ack(target, status, error)))

    async def ack_batch(self, targets: Sequence[AckTarget], status: Optional[str] = None) -> List[AckResult]:
        """See :meth:`Queen.ack_batch`: per-item results, misalignment raises."""
        acks = [to_ack(t, status) for t in targets]
        if not acks:
            return []
        return await self._execute(_calls.ack_batch(acks))

    async def extend_lease(self, lease: Union[str, Message], seconds: float = 60) -> LeaseResult:
        lease_id = lease.lease_id if isinstance(lease, Message) else lease
        if not lease_id:
            raise ValueError("queen: extend_lease needs a lease id")
        return await self._execute(_calls.extend_lease(lease_id, seconds))

    renew = extend_lease

    def streams(self, *, retries: int = 3) -> "AsyncStreamsClient":
        """See :meth:`Queen.streams`."""
        from .streams import AsyncStreamsClient

        return AsyncStreamsClient(self._cfg.urls[0], token=self._cfg.token, retries=retries,
                                  timeout_millis=self._cfg.timeout_millis, http_client=self._http,
                                  sleep=self._sleep, random=self._rand)

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
        await self._execute(_calls.send("DELETE", _calls.dlq_path(partition_id, transaction_id)))

    async def retry_dlq_message(self, partition_id: str, transaction_id: str) -> None:
        await self._execute(_calls.send("POST", _calls.dlq_path(partition_id, transaction_id) + "/retry", {}))

    # ---- administration ----

    async def queues(self) -> List[Dict[str, Any]]:
        return (await self._execute(_calls.get_dict("/api/v1/resources/queues"))).get("queues") or []

    async def consumer_groups(self) -> List[Dict[str, Any]]:
        return await self._execute(_calls.get_list("/api/v1/consumer-groups"))

    async def lagging_partitions(self, min_lag_seconds: int = 60) -> List[Dict[str, Any]]:
        return await self._execute(_calls.get_list("/api/v1/consumer-groups/lagging", {"minLagSeconds": int(min_lag_seconds)}))

    def consumer_group(self, name: str) -> "AsyncConsumerGroup":
        return AsyncConsumerGroup(self, name)

    async def delete_consumer_group(self, name: str, delete_metadata: bool = True) -> Dict[str, Any]:
        return await self.consumer_group(name).delete(delete_metadata)

    async def maintenance(self) -> Dict[str, Any]:
        return await self._execute(_calls.get_dict("/api/v1/system/maintenance"))

    async def set_maintenance(self, enabled: bool) -> Dict[str, Any]:
        return await self._execute(_calls.send("POST", "/api/v1/system/maintenance", {"enabled": bool(enabled)}))

    async def pop_maintenance(self) -> Dict[str, Any]:
        return await self._execute(_calls.get_dict("/api/v1/system/maintenance/pop"))

    async def set_pop_maintenance(self, enabled: bool) -> Dict[str, Any]:
        return await self._execute(_calls.send("POST", "/api/v1/system/maintenance/pop", {"enabled": bool(enabled)}))

    async def status(
        self,
        *,
        from_: Optional[datetime] = None,
        to: Optional[datetime] = None,
        queue: Optional[str] = None,
        namespace: Optional[str] = None,
        task: Optional[str] = None,
    ) -> Dict[str, Any]:
        q = {"from": iso(from_) if from_ else None, "to": iso(to) if to else None,
             "queue": queue, "namespace": namespace, "task": task}
        return await self._execute(_calls.get_dict("/api/v1/status", q))

    async def status_queues(self) -> Any:
        return await self._execute(_calls.get("/api/v1/status/queues"))

    async def status_queue(self, queue: str) -> Dict[str, Any]:
        return await self._execute(_calls.get_dict("/api/v1/status/queues/" + seg(queue)))

    async def status_queue_messages(self, queue: str, limit: Optional[int] = None, offset: Optional[int] = None) -> Any:
        return await self._execute(_calls.get("/api/v1/status/queues/" + seg(queue) + "/messages",
                                              {"limit": limit, "offset": offset}))

    async def health(self) -> Dict[str, Any]:
        return await self._execute(_calls.get_dict("/health"))

    async def get_raw(self, path: str, query: Optional[Dict[str, Any]] = None) -> Any:
        return await self._execute(_calls.get(path, query))


class AsyncQueue:
    """The asyncio queue builder; see :class:`queen_client.Queue`."""

    def __init__(self, client: AsyncQueen, spec: QueueSpec) -> None:
        self._c = client
        self._spec = spec

    def _with(self, **kw: Any) -> "AsyncQueue":
        return AsyncQueue(self._c, self._spec.with_(**kw))

    @property
    def name(self) -> str:
        return self._spec.name

    def partition(self, name: str) -> "AsyncQueue":
        return self._with(partition=name)

    def group(self, name: str) -> "AsyncQueue":
        return self._with(group=name)

    def subscription_mode(self, mode: str) -> "AsyncQueue":
        return self._with(subscription_mode=mode)

    def subscription_from(self, t: Union[datetime, str]) -> "AsyncQueue":
        return self._with(subscription_from=t if isinstance(t, str) else iso(t))

    def namespace(self, ns: str) -> "AsyncQueue":
        return self._with(namespace=ns)

    def task(self, t: str) -> "AsyncQueue":
        return self._with(task=t)

    def config(self, options: Optional[Dict[str, Any]] = None, **kw: Any) -> "AsyncQueue":
        return self._with(options={**(options or {}), **kw})

    async def create(self) -> Dict[str, Any]:
        return await self._c._execute(_calls.configure(self._spec))

    async def delete(self) -> bool:
        return await self._c._execute(_calls.delete_queue(self._spec.name))

    async def options(self) -> Dict[str, Any]:
        return await self._c._execute(_calls.queue_options(self._spec.name))

    async def info(self) -> Dict[str, Any]:
        return await self._c._execute(_calls.get_dict("/api/v1/resources/queues/" + seg(self._spec.name)))

    async def push(self, item: ItemLike, *, transaction_id: Optional[str] = None,
                   trace_id: Optional[str] = None) -> PushResult:
        if not isinstance(item, PushItem):
            item = PushItem(item, transaction_id, trace_id)
        return (await self.push_batch([item]))[0]

    async def push_batch(self, items: Iterable[ItemLike]) -> List[PushResult]:
        if not self._spec.name:
            raise ValueError("queen: push needs a queue name")
        wire = _calls.wire_items(self._spec, items)
        if not wire:
            return []
        return await self._c._execute(_calls.push(wire))

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
        return await self._c._execute(_calls.pop(
            self._spec, batch=batch, wait=wait, timeout_millis=timeout_millis, partitions=partitions,
            auto_ack=auto_ack, request_timeout_millis=self._c.config.timeout_millis,
        ))

    async def dlq(self, *, limit: Optional[int] = None, offset: Optional[int] = None) -> DLQPage:
        return await self._c.dlq(self._spec.name, consumer_group=self._spec.group or None, limit=limit, offset=offset)

    def producer(
        self,
        *,
        batch_size: int = 100,
        flush_interval_millis: float = 100,
        on_error: Optional[Callable[[BaseException, List[PushItem]], None]] = None,
    ) -> "AsyncProducer":
        p = AsyncProducer(self, batch_size, flush_interval_millis, on_error)
        self._c._producers.append(p)
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
        stop_ev: asyncio.Event = stop or asyncio.Event()
        halt = asyncio.Event()
        backoff = (error_backoff_millis or self._c.config.retry_delay_millis) / 1000.0

        async def watch() -> None:
            await stop_ev.wait()
            halt.set()

        async def worker() -> None:
            while not halt.is_set():
                pop_task = asyncio.ensure_future(self.pop(batch=batch, wait=True, timeout_millis=poll_timeout_millis,
                                                          partitions=partitions, auto_ack=auto_ack))
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
                    if is_terminal(e):
                        self._c.log.error("queen: consumer of %s stopped on terminal error: %s", self.name, e)
                        halt.set()
                        raise
                    d = backoff
                    if isinstance(e, APIError) and e.retry_after and e.retry_after > d:
                        d = e.retry_after
                    self._c.log.warning("queen: pop of %s failed, backing off %.1f s: %s", self.name, d, e)
                    await self._c._pause(d, halt)
                    continue
                if msgs:
                    await self._process(handler, msgs, manual_ack, auto_ack, lease_renewal_millis)

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

    async def _process(self, handler: AsyncHandler, msgs: List[Message], manual_ack: bool, auto_ack: bool,
                       renewal_millis: Optional[float]) -> None:
        log = self._c.log
        renewal_stop = asyncio.Event()
        renewer: Optional["asyncio.Future[None]"] = None
        if renewal_millis and not auto_ack:
            renewer = asyncio.ensure_future(self._renew(renewal_millis / 1000.0, msgs, renewal_stop))
        pending: List[Ack] = []

        async def flush() -> List[AckResult]:
            nonlocal pending
            if not pending:
                return []
            batch, pending = pending, []
            try:
                res = await self._c.ack_batch(batch)
            except QueenError as e:
                log.error("queen: ack failed; the batch will redeliver: %s", e)
                return []
            for r in res:
                if not r.success:
                    log.warning("queen: ack of %s rejected; the message will redeliver: %s", r.transaction_id, r.error)
            return res

        try:
            skip = set()
            for m in msgs:
                if m.partition_id in skip:
                    continue
                err: Optional[BaseException] = None
                try:
                    out = handler(m)
                    if inspect.isawaitable(out):
                        await out
                except Exception as e:  # noqa: BLE001 - a handler failure is a failed ack
                    err = e
                if auto_ack or manual_ack:
                    if err is not None:
                        log.warning("queen: handler failed on %s: %s", m.transaction_id, err)
                elif err is not None:
                    pending.append(failed(m, str(err) or type(err).__name__))
                    res = await flush()
                    if not res or not res[-1].success or not res[-1].dlq:
                        skip.add(m.partition_id)
                else:
                    pending.append(completed(m))
        finally:
            renewal_stop.set()
            if renewer is not None:
                await renewer
            await flush()

    async def _renew(self, every: float, msgs: List[Message], stop: asyncio.Event) -> None:
        leases = {m.lease_id for m in msgs if m.lease_id}
        while leases:
            try:
                await asyncio.wait_for(stop.wait(), every)
                return
            except asyncio.TimeoutError:
                pass
            for lease in list(leases):
                try:
                    await self._c.extend_lease(lease, 2 * every)
                except LeaseLostError as e:
                    self._c.log.debug("queen: lease %s no longer renewable: %s", lease, e)
                    leases.discard(lease)
                except QueenError as e:
                    self._c.log.warning("queen: lease %s renewal failed: %s", lease, e)


class AsyncProducer:
    """The asyncio buffered producer; see :class:`queen_client.Producer`. Its timer task starts
    with the first ``add``."""

    def __init__(self, queue: AsyncQueue, batch_size: int, flush_interval_millis: float,
                 on_error: Optional[Callable[[BaseException, List[PushItem]], None]]) -> None:
        self._q = queue
        self._batch = max(1, batch_size)
        self._interval = max(flush_interval_millis, 1) / 1000.0
        self._on_error = on_error
        self._buf: List[Dict[str, Any]] = []
        self._closed = False
        self._send_lock = asyncio.Lock()
        self._timer: Optional["asyncio.Future[None]"] = None

    def pending(self) -> int:
        return len(self._buf)

    async def add(self, item: ItemLike) -> None:
        if self._closed:
            raise ProducerClosedError("queen: producer closed")
        self._buf.extend(_calls.wire_items(self._q._spec, [item]))
        if self._timer is None:
            self._timer = asyncio.ensure_future(self._loop())
        if len(self._buf) >= self._batch:
            await self.flush()

    async def flush(self) -> None:
        async with self._send_lock:
            items, self._buf = self._buf, []
            while items:
                chunk = items[: self._batch]
                try:
                    await self._q._c._execute(_calls.push(chunk))
                except BaseException:
                    self._buf = items + self._buf
                    raise
                items = items[len(chunk):]

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
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
            if not self._buf:
                continue
            try:
                await self.flush()
            except QueenError as e:
                lost, self._buf = self._buf, []
                items = [PushItem(w["payload"], w["transactionId"], w.get("traceId")) for w in lost]
                if self._on_error is not None:
                    self._on_error(e, items)
                else:
                    self._q._c.log.error("queen: background flush of %d items to %s failed: %s", len(items), self._q.name, e)


class AsyncTransaction(Transaction):
    """The asyncio transaction builder; ``commit()`` is a coroutine."""

    def queue(self, name: str) -> TxQueue:
        return TxQueue(self, QueueSpec(name=name))

    async def commit(self) -> TransactionResult:  # type: ignore[override]
        result: TransactionResult = await self._c._execute(self._commit_call())
        return result


class AsyncConsumerGroup:
    """Administration of one consumer group (asyncio)."""

    def __init__(self, client: AsyncQueen, name: str) -> None:
        self._c = client
        self.name = name

    def _path(self, *parts: str) -> str:
        return "/api/v1/consumer-groups/" + "/".join(seg(p) for p in (self.name,) + parts)

    async def get(self) -> Dict[str, List[Dict[str, Any]]]:
        return await self._c._execute(_calls.group_get(self.name))

    async def delete(self, delete_metadata: bool = True) -> Dict[str, Any]:
        return await self._c._execute(_calls.send("DELETE", self._path(),
                                                  query={"deleteMetadata": str(bool(delete_metadata)).lower()}))

    async def delete_for_queue(self, queue: str, delete_metadata: bool = True) -> Dict[str, Any]:
        return await self._c._execute(_calls.send("DELETE", self._path("queues", queue),
                                                  query={"deleteMetadata": str(bool(delete_metadata)).lower()}))

    async def set_subscription(self, t: datetime) -> Dict[str, Any]:
        return await self._c._execute(_calls.send("POST", self._path("subscription"), {"subscriptionTimestamp": iso(t)}))

    async def seek_to_end(self, queue: str) -> Dict[str, Any]:
        return await self._c._execute(_calls.send("POST", self._path("queues", queue, "seek"), {"toEnd": True}))

    async def seek_to(self, queue: str, t: datetime) -> Dict[str, Any]:
        return await self._c._execute(_calls.send("POST", self._path("queues", queue, "seek"), {"timestamp": iso(t)}))

    async def seek_partition_to_end(self, queue: str, partition: str) -> Dict[str, Any]:
        return await self._c._execute(_calls.send("POST", self._path("queues", queue, "partitions", partition, "seek"), {}))
