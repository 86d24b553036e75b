"""The I/O: the HTTP pools and the two drivers that run the sans-I/O steps of :mod:`._core`.

:func:`drive` and :func:`adrive` are the only place where the sync and the asyncio clients differ in
how a request is made: one blocks, the other awaits. Everything they run (what to send, when to
sleep, how to read the answer) is decided by the shared generators.

The default synchronous transport sets TCP_NODELAY. Without it, a POST whose headers and body leave
in two writes waits for the server's delayed ACK (about 40 ms on Linux) before the body goes out:
every push and ack would pay that. httpx >= 0.24 takes socket options directly; older httpcore sync
backends do not set the option, so the backend is wrapped. The asyncio stack (anyio) already sets
TCP_NODELAY.
"""

from __future__ import annotations

import inspect
import socket
from typing import Any, Awaitable, Callable, Generator, Generic, Iterator, TypeVar, Union

import httpx

from ._core import Command, Reply, Response, Send, Sleep
from .errors import TransportError

_NODELAY = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
_LIMITS = httpx.Limits(max_keepalive_connections=64, keepalive_expiry=9.0)

T = TypeVar("T")


def sync_transport() -> httpx.HTTPTransport:
    if "socket_options" in inspect.signature(httpx.HTTPTransport.__init__).parameters:
        return httpx.HTTPTransport(limits=_LIMITS, socket_options=_NODELAY)  # type: ignore[call-arg]
    transport = httpx.HTTPTransport(limits=_LIMITS)
    pool: Any = getattr(transport, "_pool", None)
    backend = getattr(pool, "_network_backend", None)
    if backend is not None and hasattr(backend, "connect_tcp"):
        pool._network_backend = _NoDelayBackend(backend)
    return transport


def sync_client() -> httpx.Client:
    """The pool a sync client opens when it is given none."""
    return httpx.Client(timeout=None, transport=sync_transport())


def async_client() -> httpx.AsyncClient:
    """The pool an asyncio client opens when it is given none."""
    return httpx.AsyncClient(timeout=None, limits=_LIMITS)


class _NoDelayBackend:
    """Delegates to the wrapped httpcore backend and sets TCP_NODELAY on every new TCP stream."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def connect_tcp(self, *args: Any, **kwargs: Any) -> Any:
        stream = self._inner.connect_tcp(*args, **kwargs)
        sock = stream.get_extra_info("socket")
        if sock is not None:
            try:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except OSError:
                pass
        return stream

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _Steps(Generic[T]):
    """Iterates the commands of a sans-I/O generator: set ``reply`` (what a Send produced) before
    the next command is taken; ``result`` is the generator's return value once iteration ends."""

    result: T

    def __init__(self, gen: Generator[Command, Reply, T]) -> None:
        self._gen = gen
        self.reply: Reply = None

    def __iter__(self) -> Iterator[Command]:
        while True:
            try:
                cmd = self._gen.send(self.reply)
            except StopIteration as done:
                self.result = done.value
                return
            self.reply = None
            yield cmd


def _response(r: httpx.Response) -> Response:
    return Response(r.status_code, r.headers, r.content)


def send(http: httpx.Client, cmd: Send) -> Union[Response, TransportError]:
    try:
        return _response(http.request(cmd.method, cmd.url, content=cmd.content, headers=cmd.headers, timeout=cmd.timeout))
    except httpx.TransportError as e:
        return TransportError(cmd.method, cmd.url, e)


async def asend(http: httpx.AsyncClient, cmd: Send) -> Union[Response, TransportError]:
    try:
        return _response(await http.request(cmd.method, cmd.url, content=cmd.content, headers=cmd.headers,
                                            timeout=cmd.timeout))
    except httpx.TransportError as e:
        return TransportError(cmd.method, cmd.url, e)


def drive(gen: Generator[Command, Reply, T], http: httpx.Client, sleep: Callable[[float], None]) -> T:
    """Runs the steps with blocking I/O and returns their result."""
    steps = _Steps(gen)
    for cmd in steps:
        if isinstance(cmd, Sleep):
            sleep(cmd.seconds)
        else:
            steps.reply = send(http, cmd)
    return steps.result


async def adrive(gen: Generator[Command, Reply, T], http: httpx.AsyncClient,
                 sleep: Callable[[float], Awaitable[None]]) -> T:
    """Runs the steps with awaited I/O and returns their result."""
    steps = _Steps(gen)
    for cmd in steps:
        if isinstance(cmd, Sleep):
            await sleep(cmd.seconds)
        else:
            steps.reply = await asend(http, cmd)
    return steps.result
