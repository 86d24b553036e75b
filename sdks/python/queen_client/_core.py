"""The I/O-free heart shared by the sync and asyncio clients: backend health, and both retry
layers written once as a generator that yields "send this HTTP request" and "sleep d" commands.

Each client drives the generator with its own transport and its own sleep (:mod:`._transport`), so
the two clients cannot drift apart in retry behaviour.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any, Callable, Dict, Generator, Generic, List, Mapping, Optional, TypeVar, Union
from urllib.parse import quote, urlencode

from .config import Config
from .errors import APIError, QueenError, TransportError, api_error_class


@dataclass
class Request:
    """One logical API call; the retry layers turn it into as many HTTP attempts as they allow."""

    method: str
    path: str  # already escaped, starting with "/"
    query: Optional[Dict[str, str]] = None
    body: Any = None  # JSON-encoded when not None
    long_poll: bool = False  # a pop with wait=true: unbounded 429 budget by default
    timeout_millis: Optional[float] = None

    def payload(self) -> Optional[bytes]:
        if self.body is None:
            return None
        return json.dumps(self.body, separators=(",", ":")).encode()


@dataclass
class Response:
    status: int
    headers: Mapping[str, str]
    content: bytes

    def json(self) -> Any:
        return json.loads(self.content) if self.content else None


@dataclass
class Send:
    """Command: make one HTTP attempt; resume with a Response or a TransportError instance."""

    method: str
    url: str
    content: Optional[bytes]
    headers: Dict[str, str]
    timeout: float  # seconds


@dataclass
class Sleep:
    """Command: wait ``seconds``; resume with None."""

    seconds: float


Command = Union[Send, Sleep]
Reply = Union[Response, TransportError, None]

T = TypeVar("T")
U = TypeVar("U")


@dataclass
class Call(Generic[T]):
    """A request plus how to turn its 2xx answer into a result.

    ``on_error`` may turn an :class:`APIError` into a result (a 404 meaning "absent") or into another
    exception; it re-raises what it does not handle. A call without a request (see :func:`done`)
    is answered without I/O.
    """

    request: Optional[Request]
    decode: Callable[[Response], T]
    on_error: Optional[Callable[[APIError], T]] = None

    def then(self, f: Callable[[T], U]) -> "Call[U]":
        """This call with its result passed through ``f``."""
        decode, on_error = self.decode, self.on_error

        def mapped_error(e: APIError) -> U:
            assert on_error is not None
            return f(on_error(e))

        return Call(self.request, lambda r: f(decode(r)), None if on_error is None else mapped_error)


def done(value: T) -> Call[T]:
    """A call whose result is known without asking the broker (an empty batch)."""
    return Call(None, lambda _r: value)


_NO_RESPONSE = Response(204, {}, b"")


def perform(call: Call[T], attempts: Callable[[Request], "Plan"]) -> Generator[Command, Reply, T]:
    """The steps of one call: its request through a retry policy (``attempts``), then its decoded
    answer, or ``on_error``'s verdict on an :class:`APIError`."""
    if call.request is None:
        return call.decode(_NO_RESPONSE)
    try:
        resp = yield from attempts(call.request)
    except APIError as e:
        if call.on_error is None:
            raise
        return call.on_error(e)
    return call.decode(resp)


def seg(s: str) -> str:
    """Escapes one path segment."""
    if not s:
        raise ValueError("queen: empty name")
    return quote(s, safe="")


def jitter(delay_ms: float, u: float) -> float:
    """Spreads delay_ms uniformly over [0.8 d, 1.2 d) given u in [0, 1)."""
    return delay_ms * (0.8 + 0.4 * u)


def retry_after_ms(headers: Mapping[str, str], now: float) -> Optional[float]:
    """Parses Retry-After: delay-seconds (the proxy's form) or an HTTP date. ``now`` is epoch seconds."""
    raw = headers.get("retry-after") or headers.get("Retry-After")
    if raw is None:
        return None
    v = raw.strip()
    if not v:
        return None
    try:
        secs = float(v)
        if secs >= 0:
            return secs * 1000.0
        return None
    except ValueError:
        pass
    try:
        t = parsedate_to_datetime(v)
    except (TypeError, ValueError, IndexError):
        return None
    if t is None:
        return None
    return max((t.timestamp() - now) * 1000.0, 0.0)


class Backends:
    """The configured base URLs and their health. Thread-safe."""

    def __init__(self, urls: List[str], unhealthy_ms: float, clock: Callable[[], float]) -> None:
        self.urls = list(urls)
        self._down_until = [0.0] * len(urls)
        self._next = 0
        self._unhealthy = unhealthy_ms / 1000.0
        self._clock = clock
        self._lock = threading.Lock()

    def pick(self) -> int:
        """The first healthy backend at or after the preferred one, or, when none is healthy, the
        one whose quarantine ends first."""
        with self._lock:
            now = self._clock()
            best = -1
            n = len(self.urls)
            for k in range(n):
                j = (self._next + k) % n
                if now >= self._down_until[j]:
                    return j
                if best < 0 or self._down_until[j] < self._down_until[best]:
                    best = j
            return best

    def mark_down(self, i: int) -> None:
        with self._lock:
            self._down_until[i] = self._clock() + self._unhealthy
            if self._next == i:
                self._next = (i + 1) % len(self.urls)

    def mark_up(self, i: int) -> None:
        with self._lock:
            self._down_until[i] = 0.0

    def health(self) -> Dict[str, bool]:
        with self._lock:
            now = self._clock()
            return {u: now >= d for u, d in zip(self.urls, self._down_until)}


def endpoint(base: str, req: Request) -> str:
    u = base + req.path
    if req.query:
        u += "?" + urlencode(req.query)
    return u


def api_error(url: str, req: Request, resp: Response, now: float) -> APIError:
    """Builds the typed error for a non-2xx answer from its envelope ``{"error": ..., "code": ...}``."""
    message = ""
    code = None
    body: Any = None
    try:
        body = json.loads(resp.content) if resp.content else None
    except ValueError:
        body = None
    if isinstance(body, dict) and body.get("error") is not None:
        err = body["error"]
        message = err if isinstance(err, str) else json.dumps(err)
        c = body.get("code")
        code = c if isinstance(c, str) and c else None
    else:
        message = resp.content.decode("utf-8", "replace").strip()
        if len(message) > 512:
            message = message[:512] + "..."
    retry_after = None
    if resp.status == 429:
        ms = retry_after_ms(resp.headers, now)
        retry_after = None if ms is None else ms / 1000.0
    cls = api_error_class(resp.status)
    return cls(resp.status, message, code=code, retry_after=retry_after, method=req.method, url=url, body=body)


Plan = Generator[Command, Reply, Response]


def plan(
    cfg: Config,
    backends: Backends,
    req: Request,
    rand: Callable[[], float],
    clock: Callable[[], float],
) -> Plan:
    """Both retry layers for one request.

    Layer one (the outer loop): up to ``retry_attempts`` attempts; a 5xx or a network failure marks
    the backend unhealthy, waits ``retry_delay_millis * 2**(attempt-1)`` and fails over to the next
    healthy URL. Any 4xx ends the loop. Layer two (the inner loop) runs inside each attempt and
    retries 429 in place, on the same backend, never failing over; its last 429 becomes a
    :class:`RateLimitedError`.
    """
    log = cfg.logger
    policy = cfg.retry_429
    budget = policy.budget(req.long_poll)
    payload = req.payload()
    last: Optional[QueenError] = None
    for attempt in range(cfg.retry_attempts):
        if attempt > 0:
            delay = cfg.retry_delay_millis * (2 ** (attempt - 1))
            log.warning(
                "queen: retrying %s %s after server or network failure (attempt %d, delay %.0f ms): %s",
                req.method, req.path, attempt + 1, delay, last,
            )
            yield Sleep(delay / 1000.0)
        i = backends.pick()
        url = endpoint(backends.urls[i], req)
        n = 0
        while True:
            out = yield Send(req.method, url, payload, headers_for(cfg, payload is not None), timeout_seconds(cfg, req))
            if not isinstance(out, Response) or out.status != 429:
                break
            if budget is not None and n + 1 >= budget:
                break
            d = retry_after_ms(out.headers, clock())
            if d is None:
                d = min(policy.cap_ms, policy.base_ms * (2 ** min(n, 32)))
            d = jitter(d, rand())
            log.debug("queen: rate limited on %s %s, retrying in place in %.0f ms", req.method, req.path, d)
            yield Sleep(d / 1000.0)
            n += 1
        if isinstance(out, TransportError):
            backends.mark_down(i)
            last = out
            continue
        assert isinstance(out, Response)
        if out.status >= 500:
            backends.mark_down(i)
            last = api_error(url, req, out, clock())
            continue
        if out.status >= 400:
            raise api_error(url, req, out, clock())
        backends.mark_up(i)
        return out
    assert last is not None
    raise last


def headers_for(cfg: Config, has_body: bool) -> Dict[str, str]:
    h = {"Accept": "application/json"}
    if has_body:
        h["Content-Type"] = "application/json"
    if cfg.token:
        h["Authorization"] = "Bearer " + cfg.token
    h.update(cfg.headers)
    return h


def timeout_seconds(cfg: Config, req: Request) -> float:
    ms = req.timeout_millis if req.timeout_millis and req.timeout_millis > 0 else cfg.timeout_millis
    return ms / 1000.0
