"""Stream cycles: the ``/streams/v1`` routes a stream processor commits through.

A cycle applies state changes, pushes sink items and acknowledges the source in one PostgreSQL
transaction. This module is the wire layer the Go runtime (``client/streams``) uses, with that
runtime's own retry policy, which differs from the main client's on purpose: up to ``retries``
(default 3) retries with exponential backoff from 100 ms doubling to at most 5 s plus 0-30 % jitter,
on network failures, 5xx, 408 and 429; every other 4xx is final; ``Retry-After`` is not read.
Retrying a cycle is safe because the whole call is one transaction.

A cycle (or a registration or state read) answered 200 with ``success: false`` raises
:class:`CycleError` (or :class:`StreamsError`): everything in it was rolled back.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Dict, Generator, List, Mapping, Optional, Sequence, Type, TypeVar

import httpx

from ._base import H, S, Seams
from ._core import Call, Command, Reply, Response, Send, Sleep, api_error, perform
from ._core import Request as _Request
from ._transport import adrive, drive, sync_client
from .errors import APIError, MalformedResponseError, QueenError, TransportError

if TYPE_CHECKING:
    from ._base import ClientBase

DEFAULT_STREAMS_RETRIES = 3


class StreamsError(QueenError):
    """A streams call the broker answered with ``success: false``."""


class CycleError(StreamsError):
    """A cycle the broker rolled back (HTTP 200 with ``success: false``); nothing in it was applied."""

    def __init__(self, message: str, result: Optional[Dict[str, Any]] = None) -> None:
        self.message = message
        self.result = result
        super().__init__(f"streams: cycle rolled back: {message}")


class ConfigMismatchError(APIError):
    """409: the query was registered with another operator chain (config hash). Register again with
    ``reset=True`` to wipe its state, or use a new name."""


@dataclass
class StreamQuery:
    """A registered stream query."""

    query_id: str
    name: str
    config_hash: str
    fresh: bool = False
    reset: bool = False


@dataclass
class CycleResult:
    """The answer to a committed cycle."""

    query_id: str
    partition_id: str
    queue_name: Optional[str] = None
    state_ops_applied: int = 0
    push_results: List[Dict[str, Any]] = field(default_factory=list)
    ack_result: Optional[Dict[str, Any]] = None
    #: The ``cycle_id`` was committed before (a retry whose answer was lost): nothing was applied.
    duplicate: bool = False


@dataclass
class StateRow:
    """One state row of a stream shard."""

    key: str
    value: Any
    updated_at: Optional[str] = None


def backoff_seconds(n: int, u: float) -> float:
    """The delay before retry n (0-based): 100 ms doubling, capped at 5 s, plus 0-30 % jitter."""
    base = 5000.0 if n >= 6 else min(5000.0, 100.0 * (1 << n))
    return base * (1 + 0.3 * u) / 1000.0


def _retryable(status: int) -> bool:
    return status >= 500 or status in (408, 429)


StreamsPlan = Generator[Command, Reply, Response]


def streams_plan(retries: int, base: str, token: Optional[str], timeout: float, req: _Request,
                 rand: Callable[[], float], clock: Callable[[], float]) -> StreamsPlan:
    """The streams retry policy for one POST, as Send/Sleep commands (always to ``base``)."""
    last: Optional[QueenError] = None
    payload = json.dumps(req.body).encode()
    for attempt in range(max(0, retries) + 1):
        if attempt > 0:
            yield Sleep(backoff_seconds(attempt - 1, rand()))
        out = yield Send("POST", base + req.path, payload, _headers(token), timeout)
        if isinstance(out, TransportError):
            last = out
            continue
        assert isinstance(out, Response)
        if 200 <= out.status < 300:
            return out
        err = api_error(base + req.path, req, out, clock())
        if out.status == 409:
            err = ConfigMismatchError(err.status, err.message, code=err.code, method=err.method, url=err.url,
                                      body=err.body)
        if not _retryable(out.status):
            raise err
        last = err
    assert last is not None
    raise last


def _body(resp: Response, what: str) -> Dict[str, Any]:
    try:
        b = resp.json()
    except ValueError as e:
        raise MalformedResponseError(f"streams: {what}: {e}") from None
    if not isinstance(b, dict):
        raise MalformedResponseError(f"streams: {what}: expected a JSON object")
    return b


def _register(name: str, source_queue: str, config_hash: str, sink_queue: Optional[str], reset: bool) -> Call[StreamQuery]:
    body: Dict[str, Any] = {"name": name, "source_queue": source_queue, "config_hash": config_hash, "reset": reset}
    if sink_queue:
        body["sink_queue"] = sink_queue

    def decode(resp: Response) -> StreamQuery:
        b = _body(resp, "register")
        if not b.get("success") or not b.get("query_id"):
            raise StreamsError(f"streams: register failed: {b.get('error')}")
        return StreamQuery(query_id=b["query_id"], name=b.get("name", ""), config_hash=b.get("config_hash", ""),
                           fresh=bool(b.get("fresh")), reset=bool(b.get("reset")))

    return Call(_Request("POST", "/streams/v1/queries", body=body), decode)


def _cycle(query_id: str, partition_id: str, consumer_group: Optional[str], state_ops: Sequence[Mapping[str, Any]],
           push_items: Sequence[Mapping[str, Any]], ack: Optional[Mapping[str, Any]], release_lease: bool,
           cycle_id: Optional[str] = None) -> Call[CycleResult]:
    body: Dict[str, Any] = {"query_id": query_id, "partition_id": partition_id, "release_lease": release_lease,
                            "state_ops": list(state_ops), "push_items": list(push_items)}
    if cycle_id:
        body["cycle_id"] = cycle_id
    if consumer_group:
        body["consumer_group"] = consumer_group
    if ack is not None:
        body["ack"] = dict(ack)

    def decode(resp: Response) -> CycleResult:
        b = _body(resp, "cycle")
        if not b.get("success"):
            raise CycleError(str(b.get("error") or "rolled back without an error text"), b)
        return CycleResult(query_id=b.get("query_id", ""), partition_id=b.get("partition_id", ""),
                           queue_name=b.get("queueName"), state_ops_applied=int(b.get("state_ops_applied") or 0),
                           push_results=b.get("push_results") or [], ack_result=b.get("ack_result"),
                           duplicate=b.get("duplicate") is True)

    return Call(_Request("POST", "/streams/v1/cycle", body=body), decode)


def _state_get(query_id: str, partition_id: str, keys: Optional[Sequence[str]], key_prefix: Optional[str],
               ripe_at_or_before: Optional[int]) -> Call[List[StateRow]]:
    body: Dict[str, Any] = {"query_id": query_id, "partition_id": partition_id, "keys": list(keys or [])}
    if key_prefix:
        body["key_prefix"] = key_prefix
    if ripe_at_or_before is not None:
        body["ripe_at_or_before"] = ripe_at_or_before

    def decode(resp: Response) -> List[StateRow]:
        b = _body(resp, "state get")
        if not b.get("success"):
            raise StreamsError(f"streams: state get failed: {b.get('error')}")
        return [StateRow(key=r.get("key", ""), value=r.get("value"), updated_at=r.get("updated_at"))
                for r in b.get("rows") or []]

    return Call(_Request("POST", "/streams/v1/state/get", body=body), decode)


def _headers(token: Optional[str]) -> Dict[str, str]:
    h = {"Content-Type": "application/json", "Accept": "application/json"}
    if token:
        h["Authorization"] = "Bearer " + token
    return h


T = TypeVar("T")
SC = TypeVar("SC", bound="_StreamsBase[Any, Any]")


class _StreamsBase(Seams[H, S]):
    """What both streams clients share: their settings, and each call as sans-I/O steps."""

    def __init__(self, url: str, *, token: Optional[str] = None, retries: int = DEFAULT_STREAMS_RETRIES,
                 timeout_millis: float = 30000, http_client: Optional[H] = None, sleep: Optional[S] = None,
                 random: Optional[Callable[[], float]] = None) -> None:
        self.url = url.rstrip("/")
        self._token = token
        self._retries = retries
        self._timeout = timeout_millis / 1000.0
        self._seams(http_client, sleep, random)

    @classmethod
    def _of(cls: Type[SC], client: "ClientBase[Any, Any]", retries: int) -> SC:
        """The streams client of a main client: its first URL, token, timeout, HTTP pool and seams."""
        cfg = client.config
        return cls(cfg.urls[0], token=cfg.token, retries=retries, timeout_millis=cfg.timeout_millis,
                   http_client=client._http, sleep=client._sleep, random=client._rand)

    def _steps(self, call: Call[T]) -> Generator[Command, Reply, T]:
        return perform(call, lambda req: streams_plan(self._retries, self.url, self._token, self._timeout, req,
                                                      self._rand, time.time))


class StreamsClient(_StreamsBase[httpx.Client, Callable[[float], None]]):
    """Synchronous client of the ``/streams/v1`` routes on one broker URL."""

    def _new_http(self) -> httpx.Client:
        return sync_client()

    def _real_sleep(self) -> Callable[[float], None]:
        return time.sleep

    def _execute(self, call: Call[T]) -> T:
        return drive(self._steps(call), self._http, self._sleep)

    def register_query(self, name: str, source_queue: str, config_hash: str, *, sink_queue: Optional[str] = None,
                       reset: bool = False) -> StreamQuery:
        """Registers (or resumes) a query; :class:`ConfigMismatchError` when its chain changed."""
        return self._execute(_register(name, source_queue, config_hash, sink_queue, reset))

    def cycle(self, query_id: str, partition_id: str, *, consumer_group: Optional[str] = None,
              state_ops: Sequence[Mapping[str, Any]] = (), push_items: Sequence[Mapping[str, Any]] = (),
              ack: Optional[Mapping[str, Any]] = None, release_lease: bool = True,
              cycle_id: Optional[str] = None) -> CycleResult:
        """Commits one cycle; raises :class:`CycleError` when the broker rolled it back. ``cycle_id``
        (one per computed cycle) makes a repeat of a committed cycle answer ``duplicate`` and apply
        nothing."""
        return self._execute(_cycle(query_id, partition_id, consumer_group, state_ops, push_items, ack,
                                    release_lease, cycle_id))

    def state_get(self, query_id: str, partition_id: str, keys: Optional[Sequence[str]] = None, *,
                  key_prefix: Optional[str] = None, ripe_at_or_before: Optional[int] = None) -> List[StateRow]:
        """Reads a shard's state rows, ordered by key (all rows when ``keys`` is empty)."""
        return self._execute(_state_get(query_id, partition_id, keys, key_prefix, ripe_at_or_before))

    def close(self) -> None:
        if self._own_http:
            self._http.close()


class AsyncStreamsClient(_StreamsBase[httpx.AsyncClient, Callable[[float], Awaitable[None]]]):
    """Asyncio client of the ``/streams/v1`` routes; same behaviour as :class:`StreamsClient`."""

    def _new_http(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(timeout=None)

    def _real_sleep(self) -> Callable[[float], Awaitable[None]]:
        return asyncio.sleep

    async def _execute(self, call: Call[T]) -> T:
        return await adrive(self._steps(call), self._http, self._sleep)

    async def register_query(self, name: str, source_queue: str, config_hash: str, *,
                             sink_queue: Optional[str] = None, reset: bool = False) -> StreamQuery:
        return await self._execute(_register(name, source_queue, config_hash, sink_queue, reset))

    async def cycle(self, query_id: str, partition_id: str, *, consumer_group: Optional[str] = None,
                    state_ops: Sequence[Mapping[str, Any]] = (), push_items: Sequence[Mapping[str, Any]] = (),
                    ack: Optional[Mapping[str, Any]] = None, release_lease: bool = True,
                    cycle_id: Optional[str] = None) -> CycleResult:
        return await self._execute(_cycle(query_id, partition_id, consumer_group, state_ops, push_items, ack,
                                          release_lease, cycle_id))

    async def state_get(self, query_id: str, partition_id: str, keys: Optional[Sequence[str]] = None, *,
                        key_prefix: Optional[str] = None, ripe_at_or_before: Optional[int] = None) -> List[StateRow]:
        return await self._execute(_state_get(query_id, partition_id, keys, key_prefix, ripe_at_or_before))

    async def close(self) -> None:
        if self._own_http:
            await self._http.aclose()
