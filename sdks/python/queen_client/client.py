"""The synchronous client: :class:`Queen`, its queue builder, transactions, consumer groups,
the buffered producer and the threaded consume loop."""

from __future__ import annotations

import logging
import random as _random
import threading
import time
from datetime import datetime
from typing import TYPE_CHECKING, TypeVar, cast, Any, Callable, Dict, Iterable, List, Optional, Sequence, Union

import httpx

from . import _calls
from ._calls import ItemLike, QueueSpec, iso
from ._core import Backends, Call, Request, Response, Send, Sleep, endpoint, headers_for, plan, seg, timeout_seconds
from ._transport import sync_transport
from .config import Config, Retry429, make_config
from .errors import APIError, LeaseLostError, ProducerClosedError, QueenError, TransportError, is_terminal
from .types import (
    QUEUE_MODE,
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

Handler = Callable[[Message], Any]

if TYPE_CHECKING:
    from .streams import StreamsClient


class _Halted(Exception):
    """A consumer was stopped while one of its requests waited between retries."""


class Queen:
    """A synchronous client for one Queen deployment (one or several broker URLs).

    Thread-safe: create one per process and share it. ``url`` may be a string or a list of URLs;
    with several, a backend that answers 5xx or fails at the network level is marked unhealthy and
    requests fail over to the next one.

    The ``sleep`` (seconds -> None), ``random`` (-> float in [0, 1)) and ``clock`` (-> epoch
    seconds) arguments are seams for tests; leave them unset in production.
    """

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
        http_client: Optional[httpx.Client] = None,
        sleep: Optional[Callable[[float], None]] = None,
        random: Optional[Callable[[], float]] = None,
        clock: Optional[Callable[[], float]] = None,
    ) -> None:
        self._cfg = make_config(
            url, urls=urls, token=token, retry_attempts=retry_attempts, retry_delay_millis=retry_delay_millis,
            retry_429=retry_429, timeout_millis=timeout_millis, health_retry_after_millis=health_retry_after_millis,
            headers=headers, logger=logger,
        )
        self._sleep = sleep or time.sleep
        self._custom_sleep = sleep is not None
        self._rand = random or _random.random
        self._clock = clock or time.time
        self._backends = Backends(list(self._cfg.urls), self._cfg.health_retry_after_millis, lambda: self._clock())
        self._own_http = http_client is None
        self._http = http_client or httpx.Client(timeout=None, transport=sync_transport())
        self._producers: List["Producer"] = []
        self._lock = threading.Lock()

    # ---- plumbing ----

    @property
    def config(self) -> Config:
        """The effective configuration, defaults applied."""
        return self._cfg

    @property
    def log(self) -> logging.Logger:
        return self._cfg.logger

    def backend_health(self) -> Dict[str, bool]:
        """Each configured URL and whether it is currently considered healthy."""
        return self._backends.health()

    def _send(self, i: int, req: Request, payload: Optional[bytes]) -> Union[Response, TransportError]:
        url = endpoint(self._backends.urls[i], req)
        try:
            r = self._http.request(
                req.method, url, content=payload, headers=headers_for(self._cfg, payload is not None),
                timeout=timeout_seconds(self._cfg, req),
            )
        except httpx.TransportError as e:
            return TransportError(req.method, url, e)
        return Response(r.status_code, r.headers, r.content)

    def _do(self, req: Request, halted: Optional[Callable[[], bool]] = None) -> Response:
        payload = req.payload()
        gen = plan(self._cfg, self._backends, req, self._rand, self._clock)
        value: Any = None
        while True:
            try:
                cmd = gen.send(value)
            except StopIteration as done:
                return cast(Response, done.value)
            if isinstance(cmd, Sleep):
                if halted is None:
                    self._sleep(cmd.seconds)
                else:
                    # A consumer's long poll may wait out 429s without bound: its stop must cut
                    # those waits short.
                    self._pause(cmd.seconds, halted)
                    if halted():
                        raise _Halted()
                value = None
            else:
                assert isinstance(cmd, Send)
                value = self._send(cmd.backend, req, payload)

    def _execute(self, call: Call[T], halted: Optional[Callable[[], bool]] = None) -> T:
        try:
            resp = self._do(call.request, halted)
        except APIError as e:
            if call.on_error is None:
                raise
            return call.on_error(e)
        return call.decode(resp)

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
        with self._lock:
            producers, self._producers = self._producers, []
        for p in producers:
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
        if not namespace and not task:
            raise ValueError("queen: matching needs a namespace or a task")
        return Queue(self, QueueSpec(namespace=namespace, task=task))

    def ack(self, target: AckTarget, status: Optional[str] = None, *, error: Optional[str] = None) -> AckResult:
        """Sends one acknowledgement (POST /api/v1/ack). ``status`` is ``completed`` (default),
        ``failed``, ``dlq`` or ``retry``. A rejection (HTTP 200 with ``success: false``) raises
        :class:`AckError` carrying the result; the message will be redelivered."""
        return self._execute(_calls.ack(to_ack(target, status, error)))

    def ack_batch(self, targets: Sequence[AckTarget], status: Optional[str] = None) -> List[AckResult]:
        """Sends many acknowledgements in one request (POST /api/v1/ack/batch) and returns one
        result per ack, in order. Per-item rejections are in the results (``result.success``,
        ``result.check()``); a response that does not line up with the request raises
        :class:`MalformedResponseError`. All acks must share one consumer group."""
        acks = [to_ack(t, status) for t in targets]
        if not acks:
            return []
        return self._execute(_calls.ack_batch(acks))

    def extend_lease(self, lease: Union[str, Message], seconds: float = 60) -> LeaseResult:
        """Extends every partition lease held under the lease id to at least now + seconds
        (POST /api/v1/lease/:id/extend). An unknown, expired or inactive lease raises :class:`LeaseLostError`."""
        lease_id = lease.lease_id if isinstance(lease, Message) else lease
        if not lease_id:
            raise ValueError("queen: extend_lease needs a lease id")
        return self._execute(_calls.extend_lease(lease_id, seconds))

    renew = extend_lease

    def streams(self, *, retries: int = 3) -> "StreamsClient":
        """A client of the stream-cycle routes (``/streams/v1``) on the first URL, with the same token
        and HTTP pool and the streams runtime's own retry policy (see :mod:`queen_client.streams`)."""
        from .streams import StreamsClient

        return StreamsClient(self._cfg.urls[0], token=self._cfg.token, retries=retries,
                             timeout_millis=self._cfg.timeout_millis, http_client=self._http,
                             sleep=self._sleep, random=self._rand)

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
        self._execute(_calls.send("DELETE", _calls.dlq_path(partition_id, transaction_id)))

    def retry_dlq_message(self, partition_id: str, transaction_id: str) -> None:
        """Puts a dead letter back in front of its consumer group."""
        self._execute(_calls.send("POST", _calls.dlq_path(partition_id, transaction_id) + "/retry", {}))

    # ---- administration ----

    def queues(self) -> List[Dict[str, Any]]:
        """Lists the queues with counts (GET /api/v1/resources/queues)."""
        return (self._execute(_calls.get_dict("/api/v1/resources/queues"))).get("queues") or []

    def consumer_groups(self) -> List[Dict[str, Any]]:
        """Lists consumer groups per queue, queue mode included (GET /api/v1/consumer-groups)."""
        return self._execute(_calls.get_list("/api/v1/consumer-groups"))

    def lagging_partitions(self, min_lag_seconds: int = 60) -> List[Dict[str, Any]]:
        """Partitions whose oldest unconsumed message is older than min_lag_seconds."""
        return self._execute(_calls.get_list("/api/v1/consumer-groups/lagging", {"minLagSeconds": int(min_lag_seconds)}))

    def consumer_group(self, name: str) -> "ConsumerGroup":
        """A handle for administering one consumer group."""
        return ConsumerGroup(self, name)

    def delete_consumer_group(self, name: str, delete_metadata: bool = True) -> Dict[str, Any]:
        return self.consumer_group(name).delete(delete_metadata)

    def maintenance(self) -> Dict[str, Any]:
        """Push-maintenance state (pushes diverted to the broker's disk spool)."""
        return self._execute(_calls.get_dict("/api/v1/system/maintenance"))

    def set_maintenance(self, enabled: bool) -> Dict[str, Any]:
        return self._execute(_calls.send("POST", "/api/v1/system/maintenance", {"enabled": bool(enabled)}))

    def pop_maintenance(self) -> Dict[str, Any]:
        """Pop-maintenance state (every pop answers 204)."""
        return self._execute(_calls.get_dict("/api/v1/system/maintenance/pop"))

    def set_pop_maintenance(self, enabled: bool) -> Dict[str, Any]:
        return self._execute(_calls.send("POST", "/api/v1/system/maintenance/pop", {"enabled": bool(enabled)}))

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
        q = {"from": iso(from_) if from_ else None, "to": iso(to) if to else None,
             "queue": queue, "namespace": namespace, "task": task}
        return self._execute(_calls.get_dict("/api/v1/status", q))

    def status_queues(self) -> Any:
        return self._execute(_calls.get("/api/v1/status/queues"))

    def status_queue(self, queue: str) -> Dict[str, Any]:
        return self._execute(_calls.get_dict("/api/v1/status/queues/" + seg(queue)))

    def status_queue_messages(self, queue: str, limit: Optional[int] = None, offset: Optional[int] = None) -> Any:
        return self._execute(_calls.get("/api/v1/status/queues/" + seg(queue) + "/messages",
                                        {"limit": limit, "offset": offset}))

    def health(self) -> Dict[str, Any]:
        """GET /health (a database round-trip); a 503 surfaces as :class:`ServerError` after retries."""
        return self._execute(_calls.get_dict("/health"))

    def get_raw(self, path: str, query: Optional[Dict[str, Any]] = None) -> Any:
        """A GET on any read route, with both retry layers, returning the decoded JSON."""
        return self._execute(_calls.get(path, query))


class Queue:
    """An immutable builder addressing a queue, optionally a partition and a consumer group.
    Every builder method returns a modified copy, so a base handle can be shared."""

    def __init__(self, client: Queen, spec: QueueSpec) -> None:
        self._c = client
        self._spec = spec

    def _with(self, **kw: Any) -> "Queue":
        return Queue(self._c, self._spec.with_(**kw))

    @property
    def name(self) -> str:
        return self._spec.name

    def partition(self, name: str) -> "Queue":
        """Pushes go to this partition (default ``Default``) and pops read only it."""
        return self._with(partition=name)

    def group(self, name: str) -> "Queue":
        """Consume as this consumer group (fan-out); empty means queue mode."""
        return self._with(group=name)

    def subscription_mode(self, mode: str) -> "Queue":
        """``all`` or ``new``: where a new group starts on its first contact with a partition."""
        return self._with(subscription_mode=mode)

    def subscription_from(self, t: Union[datetime, str]) -> "Queue":
        """A new group starts after ``t`` (a datetime, or ``"now"``)."""
        return self._with(subscription_from=t if isinstance(t, str) else iso(t))

    def namespace(self, ns: str) -> "Queue":
        return self._with(namespace=ns)

    def task(self, t: str) -> "Queue":
        return self._with(task=t)

    def config(self, options: Optional[Dict[str, Any]] = None, **kw: Any) -> "Queue":
        """Options for :meth:`create` (snake_case or camelCase keys). Configure replaces the whole
        configuration: options left out reset to the broker defaults."""
        return self._with(options={**(options or {}), **kw})

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
        return self._c._execute(_calls.get_dict("/api/v1/resources/queues/" + seg(self._spec.name)))

    def push(self, item: ItemLike, *, transaction_id: Optional[str] = None, trace_id: Optional[str] = None) -> PushResult:
        """Pushes one message (a payload or a :class:`PushItem`). A duplicate is not an error: check ``status``."""
        if not isinstance(item, PushItem):
            item = PushItem(item, transaction_id, trace_id)
        return self.push_batch([item])[0]

    def push_batch(self, items: Iterable[ItemLike]) -> List[PushResult]:
        """Pushes many messages in one request; one result per item, in order."""
        if not self._spec.name:
            raise ValueError("queen: push needs a queue name")
        wire = _calls.wire_items(self._spec, items)
        if not wire:
            return []
        return self._c._execute(_calls.push(wire))

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
        return self._c._execute(_calls.pop(
            self._spec, batch=batch, wait=wait, timeout_millis=timeout_millis, partitions=partitions,
            auto_ack=auto_ack, request_timeout_millis=self._c.config.timeout_millis,
        ))

    def dlq(self, *, limit: Optional[int] = None, offset: Optional[int] = None) -> DLQPage:
        """This queue's dead letters (for this builder's consumer group, if any)."""
        return self._c.dlq(self._spec.name, consumer_group=self._spec.group or None, limit=limit, offset=offset)

    def producer(
        self,
        *,
        batch_size: int = 100,
        flush_interval_millis: float = 100,
        on_error: Optional[Callable[[BaseException, List[PushItem]], None]] = None,
    ) -> "Producer":
        """A buffered producer for this queue/partition; see :class:`Producer`."""
        p = Producer(self, batch_size, flush_interval_millis, on_error)
        with self._c._lock:
            self._c._producers.append(p)
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
        stop_ev: threading.Event = stop or threading.Event()
        halt = threading.Event()
        failures: List[BaseException] = []
        backoff = (error_backoff_millis or self._c.config.retry_delay_millis) / 1000.0

        def halted() -> bool:
            return stop_ev.is_set() or halt.is_set()

        def worker() -> None:
            try:
                while not halted():
                    try:
                        msgs = self._c._execute(_calls.pop(
                            self._spec, batch=batch, wait=True, timeout_millis=poll_timeout_millis,
                            partitions=partitions, auto_ack=auto_ack,
                            request_timeout_millis=self._c.config.timeout_millis), halted)
                    except _Halted:
                        return
                    except QueenError as e:
                        if is_terminal(e):
                            self._c.log.error("queen: consumer of %s stopped on terminal error: %s", self.name, e)
                            raise
                        d = backoff
                        if isinstance(e, APIError) and e.retry_after and e.retry_after > d:
                            d = e.retry_after
                        self._c.log.warning("queen: pop of %s failed, backing off %.1f s: %s", self.name, d, e)
                        self._c._pause(d, halted)
                        continue
                    if msgs:
                        self._process(handler, msgs, manual_ack, auto_ack, lease_renewal_millis)
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

    def _process(self, handler: Handler, msgs: List[Message], manual_ack: bool, auto_ack: bool,
                 renewal_millis: Optional[float]) -> None:
        log = self._c.log
        renewal_stop = threading.Event()
        renewer: Optional[threading.Thread] = None
        if renewal_millis and not auto_ack:
            renewer = threading.Thread(target=self._renew, args=(renewal_millis / 1000.0, msgs, renewal_stop), daemon=True)
            renewer.start()
        pending: List[Ack] = []

        def flush() -> List[AckResult]:
            nonlocal pending
            if not pending:
                return []
            batch, pending = pending, []
            try:
                res = self._c.ack_batch(batch)
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
                    handler(m)
                except Exception as e:  # noqa: BLE001 - a handler failure is a failed ack
                    err = e
                if auto_ack or manual_ack:
                    if err is not None:
                        log.warning("queen: handler failed on %s: %s", m.transaction_id, err)
                elif err is not None:
                    pending.append(failed(m, str(err) or type(err).__name__))
                    res = flush()
                    if not res or not res[-1].success or not res[-1].dlq:
                        skip.add(m.partition_id)
                else:
                    pending.append(completed(m))
        finally:
            renewal_stop.set()
            if renewer is not None:
                renewer.join()
            flush()

    def _renew(self, every: float, msgs: List[Message], stop: threading.Event) -> None:
        leases = {m.lease_id for m in msgs if m.lease_id}
        while leases and not stop.wait(every):
            for lease in list(leases):
                try:
                    self._c.extend_lease(lease, 2 * every)
                except LeaseLostError as e:
                    self._c.log.debug("queen: lease %s no longer renewable: %s", lease, e)
                    leases.discard(lease)
                except QueenError as e:
                    self._c.log.warning("queen: lease %s renewal failed: %s", lease, e)


class Producer:
    """Buffers pushes to one queue/partition client-side and sends them in batches, by count
    (``batch_size``) or by time (``flush_interval_millis``). Items get generated transaction ids,
    so a retried batch is deduplicated by the broker. Thread-safe; ``close()`` flushes the rest.
    Usable as a context manager."""

    def __init__(self, queue: Queue, batch_size: int, flush_interval_millis: float,
                 on_error: Optional[Callable[[BaseException, List[PushItem]], None]]) -> None:
        self._q = queue
        self._batch = max(1, batch_size)
        self._interval = max(flush_interval_millis, 1) / 1000.0
        self._on_error = on_error
        self._buf: List[Dict[str, Any]] = []
        self._closed = False
        self._lock = threading.Lock()
        self._send_lock = threading.Lock()  # batches leave in add order
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"queen-producer-{queue.name}", daemon=True)
        self._thread.start()

    def add(self, item: ItemLike) -> None:
        """Buffers one item; when the buffer reaches ``batch_size`` it is sent before returning
        (the caller feels the broker's pace) and that push's error is raised."""
        with self._lock:
            if self._closed:
                raise ProducerClosedError("queen: producer closed")
            self._buf.extend(_calls.wire_items(self._q._spec, [item]))
            full = len(self._buf) >= self._batch
        if full:
            self.flush()

    def pending(self) -> int:
        """Items buffered and not yet sent."""
        with self._lock:
            return len(self._buf)

    def flush(self) -> None:
        """Sends everything buffered so far, in batches of at most ``batch_size``. On failure the
        unsent items stay buffered, in order, and the error is raised."""
        with self._send_lock:
            with self._lock:
                items, self._buf = self._buf, []
            while items:
                chunk = items[: self._batch]
                try:
                    self._q._c._execute(_calls.push(chunk))
                except BaseException:
                    with self._lock:
                        self._buf = items + self._buf
                    raise
                items = items[len(chunk):]

    def close(self) -> None:
        """Stops the timer and flushes the buffer. Later adds raise :class:`ProducerClosedError`."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
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
                with self._lock:
                    lost, self._buf = self._buf, []  # handed to on_error; not retried forever
                items = [PushItem(w["payload"], w["transactionId"], w.get("traceId")) for w in lost]
                if self._on_error is not None:
                    self._on_error(e, items)
                else:
                    self._q._c.log.error("queen: background flush of %d items to %s failed: %s", len(items), self._q.name, e)


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


class ConsumerGroup:
    """Administration of one consumer group."""

    def __init__(self, client: Queen, name: str) -> None:
        self._c = client
        self.name = name

    def _path(self, *parts: str) -> str:
        return "/api/v1/consumer-groups/" + "/".join(seg(p) for p in (self.name,) + parts)

    def get(self) -> Dict[str, List[Dict[str, Any]]]:
        """The group's cursors keyed by queue name; ``{}`` for an unknown group."""
        return self._c._execute(_calls.group_get(self.name))

    def delete(self, delete_metadata: bool = True) -> Dict[str, Any]:
        """Removes the group's cursors on every queue (and its subscription record with ``delete_metadata``)."""
        return self._c._execute(_calls.send("DELETE", self._path(), query={"deleteMetadata": str(bool(delete_metadata)).lower()}))

    def delete_for_queue(self, queue: str, delete_metadata: bool = True) -> Dict[str, Any]:
        return self._c._execute(_calls.send("DELETE", self._path("queues", queue),
                                            query={"deleteMetadata": str(bool(delete_metadata)).lower()}))

    def set_subscription(self, t: datetime) -> Dict[str, Any]:
        """Rewrites the subscription timestamp (only partitions the group has not consumed yet)."""
        return self._c._execute(_calls.send("POST", self._path("subscription"), {"subscriptionTimestamp": iso(t)}))

    def seek_to_end(self, queue: str) -> Dict[str, Any]:
        """Moves every cursor of the group on ``queue`` to the newest message."""
        return self._c._execute(_calls.send("POST", self._path("queues", queue, "seek"), {"toEnd": True}))

    def seek_to(self, queue: str, t: datetime) -> Dict[str, Any]:
        """Moves every cursor on ``queue`` to the last message at or before ``t`` (replay)."""
        return self._c._execute(_calls.send("POST", self._path("queues", queue, "seek"), {"timestamp": iso(t)}))

    def seek_partition_to_end(self, queue: str, partition: str) -> Dict[str, Any]:
        return self._c._execute(_calls.send("POST", self._path("queues", queue, "partitions", partition, "seek"), {}))
