"""What the sync and asyncio clients share: everything but the awaiting of I/O.

:class:`ClientBase` validates the constructor arguments, applies the defaults, holds the backends and
the test seams, and turns a :class:`Call` (:mod:`._calls`) into the steps of both retry layers
(:mod:`._core`). :class:`QueueBase`, :class:`ConsumerGroupBase` and :class:`ProducerBase` hold the
builders' and the buffered producer's state; :class:`Consumer` and :class:`Batch` make the consume
loop's decisions. The classes of :mod:`.client` and :mod:`.aio` add only the I/O: blocking there,
awaited here, with threads or with tasks.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import random as _random
import threading
import time
from datetime import datetime
from typing import Any, Callable, Dict, Generator, Generic, Iterator, List, Optional, Sequence, Set, TypeVar, Union

from . import _calls
from ._calls import ItemLike, QueueSpec, iso
from ._core import Backends, Call, Command, Reply, perform, plan
from .config import (
    DEFAULT_HEALTH_RETRY_AFTER_MILLIS,
    DEFAULT_RETRY_ATTEMPTS,
    DEFAULT_RETRY_DELAY_MILLIS,
    DEFAULT_TIMEOUT_MILLIS,
    Config,
    Retry429,
)
from .errors import APIError, LeaseLostError, ProducerClosedError, QueenError, is_terminal
from .types import Ack, AckResult, Message, PushItem, PushResult, completed, failed

T = TypeVar("T")
H = TypeVar("H")  # the HTTP pool: httpx.Client or httpx.AsyncClient
S = TypeVar("S")  # the sleep: seconds -> None, or seconds -> awaitable
Q = TypeVar("Q", bound="QueueBase[Any]")
C = TypeVar("C", bound="ClientBase[Any, Any]")

#: What a buffered producer's ``on_error`` receives after a background flush failed.
OnPushError = Callable[[BaseException, List[PushItem]], None]


class Seams(Generic[H, S]):
    """The I/O a client runs on: an HTTP pool (its own unless one is given) and a sleep; ``random``
    is a seam for tests. The subclass names its defaults."""

    _own_http: bool
    _http: H
    _custom_sleep: bool
    _sleep: S
    _rand: Callable[[], float]

    def _seams(self, http_client: Optional[H], sleep: Optional[S], random: Optional[Callable[[], float]]) -> None:
        self._own_http = http_client is None
        self._http = self._new_http() if http_client is None else http_client
        self._custom_sleep = sleep is not None
        self._sleep = self._real_sleep() if sleep is None else sleep
        self._rand = random or _random.random

    def _new_http(self) -> H:
        raise NotImplementedError

    def _real_sleep(self) -> S:
        raise NotImplementedError


class ClientBase(Seams[H, S]):
    """The state of a client for one Queen deployment; see :class:`queen_client.Queen`."""

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
        http_client: Optional[H] = None,
        sleep: Optional[S] = None,
        random: Optional[Callable[[], float]] = None,
        clock: Optional[Callable[[], float]] = None,
    ) -> None:
        # Validated and defaulted before any pool is opened.
        found: List[str] = []
        if isinstance(url, str):
            found.append(url)
        elif url is not None:
            found.extend(url)
        if urls:
            found.extend(urls)
        if not found:
            raise ValueError("queen: at least one broker URL is required")
        clean = []
        for u in found:
            u = u.strip().rstrip("/")
            if not (u.startswith("http://") or u.startswith("https://")) or len(u.split("://", 1)[1]) == 0:
                raise ValueError(f"queen: bad broker URL {u!r}")
            clean.append(u)
        if isinstance(retry_429, dict):
            retry_429 = Retry429(**retry_429)
        if retry_attempts is not None and retry_attempts < 1:
            raise ValueError("queen: retry_attempts must be at least 1")
        self._cfg = Config(
            urls=tuple(clean),
            token=token,
            retry_attempts=retry_attempts or DEFAULT_RETRY_ATTEMPTS,
            retry_delay_millis=DEFAULT_RETRY_DELAY_MILLIS if retry_delay_millis is None else retry_delay_millis,
            retry_429=retry_429 or Retry429(),
            timeout_millis=timeout_millis or DEFAULT_TIMEOUT_MILLIS,
            health_retry_after_millis=(
                DEFAULT_HEALTH_RETRY_AFTER_MILLIS if health_retry_after_millis is None else health_retry_after_millis
            ),
            headers=dict(headers or {}),
            logger=logger or logging.getLogger("queen_client"),
        )
        self._seams(http_client, sleep, random)
        self._clock = clock or time.time
        self._backends = Backends(list(self._cfg.urls), self._cfg.health_retry_after_millis, lambda: self._clock())
        self._producers: List[Any] = []
        self._lock = threading.Lock()

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

    def _steps(self, call: Call[T]) -> Generator[Command, Reply, T]:
        """The call through both retry layers, as commands for a driver of :mod:`._transport`."""
        return perform(call, lambda req: plan(self._cfg, self._backends, req, self._rand, self._clock))

    def _add_producer(self, p: Any) -> None:
        with self._lock:
            self._producers.append(p)

    def _take_producers(self) -> List[Any]:
        with self._lock:
            producers, self._producers = self._producers, []
        return producers


class QueueBase(Generic[C]):
    """The addressing half of a queue builder (:class:`queen_client.Queue`,
    :class:`queen_client.AsyncQueue`): every builder method returns a modified copy."""

    def __init__(self, client: C, spec: QueueSpec) -> None:
        self._c = client
        self._spec = spec

    def _with(self: Q, **kw: Any) -> Q:
        return type(self)(self._c, self._spec.with_(**kw))

    @property
    def name(self) -> str:
        return self._spec.name

    def partition(self: Q, name: str) -> Q:
        """Pushes go to this partition (default ``Default``) and pops read only it."""
        return self._with(partition=name)

    def group(self: Q, name: str) -> Q:
        """Consume as this consumer group (fan-out); empty means queue mode."""
        return self._with(group=name)

    def subscription_mode(self: Q, mode: str) -> Q:
        """``all`` or ``new``: where a new group starts on its first contact with a partition."""
        return self._with(subscription_mode=mode)

    def subscription_from(self: Q, t: Union[datetime, str]) -> Q:
        """A new group starts after ``t`` (a datetime, or ``"now"``)."""
        return self._with(subscription_from=t if isinstance(t, str) else iso(t))

    def namespace(self: Q, ns: str) -> Q:
        return self._with(namespace=ns)

    def task(self: Q, t: str) -> Q:
        return self._with(task=t)

    def config(self: Q, options: Optional[Dict[str, Any]] = None, **kw: Any) -> Q:
        """Options for :meth:`create` (snake_case or camelCase keys). Configure replaces the whole
        configuration: options left out reset to the broker defaults."""
        return self._with(options={**(options or {}), **kw})

    def _pop(self, batch: Optional[int], wait: bool, timeout_millis: Optional[float], partitions: Optional[int],
             auto_ack: bool) -> Call[List[Message]]:
        return _calls.pop(self._spec, batch=batch, wait=wait, timeout_millis=timeout_millis, partitions=partitions,
                          auto_ack=auto_ack, request_timeout_millis=self._c.config.timeout_millis)


class Consumer:
    """The settings of one ``consume()`` call and its decisions: what each long poll asks for, how
    long to back off after a failed one, how often to renew leases. No I/O."""

    def __init__(self, queue: QueueBase[Any], handler: Callable[[Message], Any], batch: int,
                 partitions: Optional[int], poll_timeout_millis: float, manual_ack: bool, auto_ack: bool,
                 lease_renewal_millis: Optional[float], error_backoff_millis: Optional[float]) -> None:
        cfg: Config = queue._c.config
        self.log, self.name, self.handler = cfg.logger, queue.name, handler
        self.manual_ack, self.auto_ack = manual_ack, auto_ack
        #: The long poll each worker repeats.
        self.pop = functools.partial(queue._pop, batch, True, poll_timeout_millis, partitions, auto_ack)
        self.backoff = (error_backoff_millis or cfg.retry_delay_millis) / 1000.0
        #: Seconds between lease renewals while handlers run; None for none.
        self.renew_every = lease_renewal_millis / 1000.0 if lease_renewal_millis and not auto_ack else None

    def pop_failed(self, e: QueenError) -> Optional[float]:
        """The back-off in seconds before the next poll (the 429's Retry-After when longer), or None
        for a terminal error, which stops the consumer: waiting will not fix it."""
        if is_terminal(e):
            self.log.error("queen: consumer of %s stopped on terminal error: %s", self.name, e)
            return None
        d = self.backoff
        if isinstance(e, APIError) and e.retry_after and e.retry_after > d:
            d = e.retry_after
        self.log.warning("queen: pop of %s failed, backing off %.1f s: %s", self.name, d, e)
        return d

    def batch(self, msgs: List[Message]) -> "Batch":
        return Batch(self, msgs)

    def renewal_failed(self, leases: Set[str], lease: str, e: QueenError) -> None:
        """A lost lease is renewed no more; any other failure is tried again next round."""
        if isinstance(e, LeaseLostError):
            self.log.debug("queen: lease %s no longer renewable: %s", lease, e)
            leases.discard(lease)
        else:
            self.log.warning("queen: lease %s renewal failed: %s", lease, e)


class Batch:
    """One popped batch in the consume loop: which messages go to the handler and what is acknowledged.

    By default a handler that returns acknowledges the message as completed and one that raises
    acknowledges it as failed, at once; the rest of that partition's batch is then skipped and
    redelivers in order (unless the failure sent the message to the DLQ). ``manual_ack`` and
    ``auto_ack`` send no acknowledgements. No I/O: the client sends what :meth:`take` hands out.
    """

    def __init__(self, consumer: Consumer, msgs: List[Message]) -> None:
        self._c = consumer
        self._msgs = msgs
        self._skip: Set[str] = set()
        self._pending: List[Ack] = []

    def leases(self) -> Set[str]:
        return {m.lease_id for m in self._msgs if m.lease_id}

    def messages(self) -> Iterator[Message]:
        """The messages to hand to the handler, in order, less those skipped after a failure."""
        for m in self._msgs:
            if m.partition_id not in self._skip:
                yield m

    def handled(self, m: Message, err: Optional[BaseException]) -> bool:
        """Records the handler's outcome; True when it failed and its ack must go out before the
        next message (then call :meth:`failure_acked`)."""
        if self._c.auto_ack or self._c.manual_ack:
            if err is not None:
                self._c.log.warning("queen: handler failed on %s: %s", m.transaction_id, err)
            return False
        if err is not None:
            self._pending.append(failed(m, str(err) or type(err).__name__))
            return True
        self._pending.append(completed(m))
        return False

    def failure_acked(self, m: Message, results: List[AckResult]) -> None:
        if not results or not results[-1].success or not results[-1].dlq:
            self._skip.add(m.partition_id)

    def take(self) -> List[Ack]:
        """The acknowledgements to send now."""
        acks, self._pending = self._pending, []
        return acks

    def acked(self, results: List[AckResult]) -> List[AckResult]:
        for r in results:
            if not r.success:
                self._c.log.warning("queen: ack of %s rejected; the message will redeliver: %s", r.transaction_id, r.error)
        return results

    def ack_failed(self, e: QueenError) -> List[AckResult]:
        self._c.log.error("queen: ack failed; the batch will redeliver: %s", e)
        return []


class _Outbox:
    """Items taken from a producer's buffer: their pushes, in batches. A batch leaves ``items`` once
    the next one is asked for, that is once it was sent."""

    def __init__(self, items: List[Dict[str, Any]], batch: int) -> None:
        self.items = items
        self._batch = batch

    def __iter__(self) -> Iterator[Call[List[PushResult]]]:
        while self.items:
            chunk = self.items[: self._batch]
            yield _calls.push(chunk)
            self.items = self.items[len(chunk):]


class ProducerBase(Generic[Q]):
    """Buffers pushes to one queue/partition client-side and sends them in batches, by count
    (``batch_size``) or by time (``flush_interval_millis``). Items get generated transaction ids,
    so a retried batch is deduplicated by the broker. ``close()`` flushes the rest."""

    def __init__(self, queue: Q, batch_size: int, flush_interval_millis: float, on_error: Optional[OnPushError]) -> None:
        self._q = queue
        self._batch = max(1, batch_size)
        self._interval = max(flush_interval_millis, 1) / 1000.0
        self._on_error = on_error
        self._buf: List[Dict[str, Any]] = []
        self._closed = False
        self._lock = threading.Lock()

    def pending(self) -> int:
        """Items buffered and not yet sent."""
        with self._lock:
            return len(self._buf)

    def _buffer(self, item: ItemLike) -> bool:
        """Buffers one item; True when the buffer reached ``batch_size`` and is to be sent now."""
        with self._lock:
            if self._closed:
                raise ProducerClosedError("queen: producer closed")
            self._buf.extend(_calls.wire_items(self._q._spec, [item]))
            return len(self._buf) >= self._batch

    @contextlib.contextmanager
    def _sending(self) -> Iterator[_Outbox]:
        """Everything buffered so far, to send in batches of at most ``batch_size``. When the block
        raises, the unsent items go back to the front of the buffer, in order."""
        with self._lock:
            out = _Outbox(self._buf, self._batch)
            self._buf = []
        try:
            yield out
        except BaseException:
            with self._lock:
                self._buf = out.items + self._buf
            raise

    def _close(self) -> bool:
        """Refuses later adds; False when the producer was closed already."""
        with self._lock:
            if self._closed:
                return False
            self._closed = True
            return True

    def _lost(self, e: QueenError) -> None:
        """A background flush failed: the buffer is handed to ``on_error`` (or logged), not retried forever."""
        with self._lock:
            lost, self._buf = self._buf, []
        items = [PushItem(w["payload"], w["transactionId"], w.get("traceId")) for w in lost]
        if self._on_error is not None:
            self._on_error(e, items)
        else:
            self._q._c.log.error("queen: background flush of %d items to %s failed: %s", len(items), self._q.name, e)


class ConsumerGroupBase(Generic[C]):
    """Administration of one consumer group."""

    def __init__(self, client: C, name: str) -> None:
        self._c = client
        self.name = name
