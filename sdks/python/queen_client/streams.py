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
import random as _random
import time
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Dict, Generator, List, Mapping, Optional, Sequence, Union

import httpx

from ._core import Response, Send, Sleep, api_error
from ._core import Request as _Request
from ._transport import sync_transport
from .errors import APIError, MalformedResponseError, QueenError, TransportError

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


StreamsPlan = Generator[Union[Send, Sleep], Union[Response, TransportError, None], Response]


def streams_plan(retries: int, base: str, req: _Request, rand: Callable[[], float],
                 clock: Callable[[], float]) -> StreamsPlan:
    """The streams retry policy for one request, as Send/Sleep commands (backend index always 0)."""
    last: Optional[QueenError] = None
    for attempt in range(max(0, retries) + 1):
        if attempt > 0:
            yield Sleep(backoff_seconds(attempt - 1, rand()))
        out = yield Send(0)
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


def _register_req(name: str, source_queue: str, config_hash: str, sink_queue: Optional[str], reset: bool) -> _Request:
    body: Dict[str, Any] = {"name": name, "source_queue": source_queue, "config_hash": config_hash, "reset": reset}
    if sink_queue:
        body["sink_queue"] = sink_queue
    return _Request("POST", "/streams/v1/queries", body=body)


def _register_result(resp: Response) -> StreamQuery:
    b = _body(resp, "register")
    if not b.get("success") or not b.get("query_id"):
        raise StreamsError(f"streams: register failed: {b.get('error')}")
    return StreamQuery(query_id=b["query_id"], name=b.get("name", ""), config_hash=b.get("config_hash", ""),
                       fresh=bool(b.get("fresh")), reset=bool(b.get("reset")))


def _cycle_req(query_id: str, partition_id: str, consumer_group: Optional[str], state_ops: Sequence[Mapping[str, Any]],
               push_items: Sequence[Mapping[str, Any]], ack: Optional[Mapping[str, Any]], release_lease: bool,
               cycle_id: Optional[str] = None) -> _Request:
    body: Dict[str, Any] = {"query_id": query_id, "partition_id": partition_id, "release_lease": release_lease,
                            "state_ops": list(state_ops), "push_items": list(push_items)}
    if cycle_id:
        body["cycle_id"] = cycle_id
    if consumer_group:
        body["consumer_group"] = consumer_group
    if ack is not None:
        body["ack"] = dict(ack)
    return _Request("POST", "/streams/v1/cycle", body=body)


def _cycle_result(resp: Response) -> CycleResult:
    b = _body(resp, "cycle")
    if not b.get("success"):
        raise CycleError(str(b.get("error") or "rolled back without an error text"), b)
    return CycleResult(query_id=b.get("query_id", ""), partition_id=b.get("partition_id", ""),
                       queue_name=b.get("queueName"), state_ops_applied=int(b.get("state_ops_applied") or 0),
                       push_results=b.get("push_results") or [], ack_result=b.get("ack_result"),
                       duplicate=b.get("duplicate") is True)


def _state_req(query_id: str, partition_id: str, keys: Optional[Sequence[str]], key_prefix: Optional[str],
               ripe_at_or_before: Optional[int]) -> _Request:
    body: Dict[str, Any] = {"query_id": query_id, "partition_id": partition_id, "keys": list(keys or [])}
    if key_prefix:
        body["key_prefix"] = key_prefix
    if ripe_at_or_before is not None:
        body["ripe_at_or_before"] = ripe_at_or_before
    return _Request("POST", "/streams/v1/state/get", body=body)


def _state_result(resp: Response) -> List[StateRow]:
    b = _body(resp, "state get")
    if not b.get("success"):
        raise StreamsError(f"streams: state get failed: {b.get('error')}")
    return [StateRow(key=r.get("key", ""), value=r.get("value"), updated_at=r.get("updated_at"))
            for r in b.get("rows") or []]


def _headers(token: Optional[str]) -> Dict[str, str]:
    h = {"Content-Type": "application/json", "Accept": "application/json"}
    if token:
        h["Authorization"] = "Bearer " + token
    return h


class StreamsClient:
    """Synchronous client of the ``/streams/v1`` routes on one broker URL."""

    def __init__(self, url: str, *, token: Optional[str] = None, retries: int = DEFAULT_STREAMS_RETRIES,
                 timeout_millis: float = 30000, http_client: Optional[httpx.Client] = None,
                 sleep: Optional[Callable[[float], None]] = None, random: Optional[Callable[[], float]] = None) -> None:
        self.url = url.rstrip("/")
        self._token = token
        self._retries = retries
        self._timeout = timeout_millis / 1000.0
        self._own = http_client is None
        self._http = http_client or httpx.Client(timeout=None, transport=sync_transport())
        self._sleep = sleep or time.sleep
        self._rand = random or _random.random

    def _post(self, req: _Request) -> Response:
        gen = streams_plan(self._retries, self.url, req, self._rand, time.time)
        payload = json.dumps(req.body).encode()
        value: Any = None
        while True:
            try:
                cmd = gen.send(value)
            except StopIteration as done:
                r: Response = done.value
                return r
            if isinstance(cmd, Sleep):
                self._sleep(cmd.seconds)
                value = None
                continue
            try:
                hr = self._http.post(self.url + req.path, content=payload, headers=_headers(self._token),
                                     timeout=self._timeout)
                value = Response(hr.status_code, hr.headers, hr.content)
            except httpx.TransportError as e:
                value = TransportError("POST", self.url + req.path, e)

    def register_query(self, name: str, source_queue: str, config_hash: str, *, sink_queue: Optional[str] = None,
                       reset: bool = False) -> StreamQuery:
        """Registers (or resumes) a query; :class:`ConfigMismatchError` when its chain changed."""
        return _register_result(self._post(_register_req(name, source_queue, config_hash, sink_queue, reset)))

    def cycle(self, query_id: str, partition_id: str, *, consumer_group: Optional[str] = None,
              state_ops: Sequence[Mapping[str, Any]] = (), push_items: Sequence[Mapping[str, Any]] = (),
              ack: Optional[Mapping[str, Any]] = None, release_lease: bool = True,
              cycle_id: Optional[str] = None) -> CycleResult:
        """Commits one cycle; raises :class:`CycleError` when the broker rolled it back. ``cycle_id``
        (one per computed cycle) makes a repeat of a committed cycle answer ``duplicate`` and apply
        nothing."""
        return _cycle_result(self._post(_cycle_req(query_id, partition_id, consumer_group, state_ops, push_items,
                                                   ack, release_lease, cycle_id)))

    def state_get(self, query_id: str, partition_id: str, keys: Optional[Sequence[str]] = None, *,
                  key_prefix: Optional[str] = None, ripe_at_or_before: Optional[int] = None) -> List[StateRow]:
        """Reads a shard's state rows, ordered by key (all rows when ``keys`` is empty)."""
        return _state_result(self._post(_state_req(query_id, partition_id, keys, key_prefix, ripe_at_or_before)))

    def close(self) -> None:
        if self._own:
            self._http.close()


class AsyncStreamsClient:
    """Asyncio client of the ``/streams/v1`` routes; same behaviour as :class:`StreamsClient`."""

    def __init__(self, url: str, *, token: Optional[str] = None, retries: int = DEFAULT_STREAMS_RETRIES,
                 timeout_millis: float = 30000, http_client: Optional[httpx.AsyncClient] = None,
                 sleep: Optional[Callable[[float], Awaitable[None]]] = None,
                 random: Optional[Callable[[], float]] = None) -> None:
        self.url = url.rstrip("/")
        self._token = token
        self._retries = retries
        self._timeout = timeout_millis / 1000.0
        self._own = http_client is None
        self._http = http_client or httpx.AsyncClient(timeout=None)
        self._sleep = sleep or asyncio.sleep
        self._rand = random or _random.random

    async def _post(self, req: _Request) -> Response:
        gen = streams_plan(self._retries, self.url, req, self._rand, time.time)
        payload = json.dumps(req.body).encode()
        value: Any = None
        while True:
            try:
                cmd = gen.send(value)
            except StopIteration as done:
                r: Response = done.value
                return r
            if isinstance(cmd, Sleep):
                await self._sleep(cmd.seconds)
                value = None
                continue
            try:
                hr = await self._http.post(self.url + req.path, content=payload, headers=_headers(self._token),
                                           timeout=self._timeout)
                value = Response(hr.status_code, hr.headers, hr.content)
            except httpx.TransportError as e:
                value = TransportError("POST", self.url + req.path, e)

    async def register_query(self, name: str, source_queue: str, config_hash: str, *,
                             sink_queue: Optional[str] = None, reset: bool = False) -> StreamQuery:
        return _register_result(await self._post(_register_req(name, source_queue, config_hash, sink_queue, reset)))

    async def cycle(self, query_id: str, partition_id: str, *, consumer_group: Optional[str] = None,
                    state_ops: Sequence[Mapping[str, Any]] = (), push_items: Sequence[Mapping[str, Any]] = (),
                    ack: Optional[Mapping[str, Any]] = None, release_lease: bool = True,
                    cycle_id: Optional[str] = None) -> CycleResult:
        return _cycle_result(await self._post(_cycle_req(query_id, partition_id, consumer_group, state_ops,
                                                         push_items, ack, release_lease, cycle_id)))

    async def state_get(self, query_id: str, partition_id: str, keys: Optional[Sequence[str]] = None, *,
                        key_prefix: Optional[str] = None, ripe_at_or_before: Optional[int] = None) -> List[StateRow]:
        return _state_result(await self._post(_state_req(query_id, partition_id, keys, key_prefix,
                                                         ripe_at_or_before)))

    async def close(self) -> None:
        if self._own:
            await self._http.aclose()
