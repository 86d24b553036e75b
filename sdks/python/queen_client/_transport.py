"""The default synchronous transport, with TCP_NODELAY.

Without it, a POST whose headers and body leave in two writes waits for the server's delayed ACK
(about 40 ms on Linux) before the body goes out: every push and ack would pay that. httpx >= 0.24
takes socket options directly; older httpcore sync backends do not set the option, so the backend
is wrapped. The asyncio stack (anyio) already sets TCP_NODELAY.
"""

from __future__ import annotations

import inspect
import socket
from typing import Any

import httpx

_NODELAY = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
_LIMITS = httpx.Limits(max_keepalive_connections=64, keepalive_expiry=9.0)


def sync_transport() -> httpx.HTTPTransport:
    if "socket_options" in inspect.signature(httpx.HTTPTransport.__init__).parameters:
        return httpx.HTTPTransport(limits=_LIMITS, socket_options=_NODELAY)  # type: ignore[call-arg]
    transport = httpx.HTTPTransport(limits=_LIMITS)
    pool: Any = getattr(transport, "_pool", None)
    backend = getattr(pool, "_network_backend", None)
    if backend is not None and hasattr(backend, "connect_tcp"):
        pool._network_backend = _NoDelayBackend(backend)
    return transport


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
