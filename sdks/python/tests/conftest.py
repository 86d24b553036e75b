"""Shared fixtures: a scripted local HTTP server and a harness that runs the same scenario against
the sync and the asyncio client, with sleep and jitter seams recorded instead of waited."""

from __future__ import annotations

import asyncio
import inspect
import json
import socket
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, List, Optional
from urllib.parse import parse_qsl, urlsplit

import pytest

from queen_client import AsyncQueen, Queen


@dataclass
class Step:
    """One scripted answer; the last step of a script repeats forever."""

    status: int
    body: Any = None  # dict/list are JSON-encoded, str sent as is
    headers: Dict[str, str] = field(default_factory=dict)


@dataclass
class Recorded:
    method: str
    path: str
    query: Dict[str, str]
    body: Any
    headers: Dict[str, str]


class Scripted:
    """A real HTTP server on 127.0.0.1 answering from a script and recording every request."""

    def __init__(self, steps: List[Step]) -> None:
        self.steps = steps
        self.requests: List[Recorded] = []
        self._lock = threading.Lock()
        outer = self

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # One write per response and no Nagle: otherwise delayed ACKs add ~40 ms per request.
            wbufsize = 1 << 16
            disable_nagle_algorithm = True

            def log_message(self, *a: Any) -> None:  # keep pytest output clean
                pass

            def _handle(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n) if n else b""
                u = urlsplit(self.path)
                with outer._lock:
                    k = len(outer.requests)
                    outer.requests.append(Recorded(
                        self.command, u.path, dict(parse_qsl(u.query)),
                        json.loads(raw) if raw else None, {k.lower(): v for k, v in self.headers.items()},
                    ))
                    st = outer.steps[min(k, len(outer.steps) - 1)]
                body = st.body
                data = b"" if body is None else (body.encode() if isinstance(body, str) else json.dumps(body).encode())
                self.send_response(st.status)
                for hk, hv in st.headers.items():
                    self.send_header(hk, hv)
                if st.status != 204:
                    if body is not None and not isinstance(body, str):
                        self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if st.status != 204 and data:
                    self.wfile.write(data)

            do_GET = do_POST = do_DELETE = do_PUT = _handle

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()

    @property
    def count(self) -> int:
        with self._lock:
            return len(self.requests)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def scripted():
    servers: List[Scripted] = []

    def make(*steps: Step) -> Scripted:
        s = Scripted(list(steps))
        servers.append(s)
        return s

    yield make
    for s in servers:
        s.close()


@pytest.fixture
def dead_url() -> str:
    """A loopback URL nothing listens on: connections are refused."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}"


class Harness:
    """One client flavour with recorded sleeps. ``run(fn)`` calls ``fn(client)`` and, for the
    asyncio client, awaits the coroutine on the harness's own event loop."""

    def __init__(self, flavor: str, urls: List[str], u: Optional[float], real_sleep: bool = False, **kw: Any) -> None:
        import random
        import time

        self.flavor = flavor
        self.sleeps: List[float] = []
        self.loop: Optional[asyncio.AbstractEventLoop] = None
        rand = random.random if u is None else (lambda: u)
        if flavor == "sync":
            def sync_sleep(s: float) -> None:
                self.sleeps.append(s)
                if real_sleep:
                    time.sleep(s)

            self.client: Any = Queen(urls, sleep=sync_sleep, random=rand, **kw)
        else:
            self.loop = asyncio.new_event_loop()

            async def sleep(s: float) -> None:
                self.sleeps.append(s)
                if real_sleep:
                    await asyncio.sleep(s)

            async def build() -> AsyncQueen:
                return AsyncQueen(urls, sleep=sleep, random=rand, **kw)

            self.client = self.loop.run_until_complete(build())

    def run(self, fn: Callable[[Any], Any]) -> Any:
        out = fn(self.client)
        if inspect.isawaitable(out):
            assert self.loop is not None
            out = self.loop.run_until_complete(out)
        return out

    def raises(self, exc: Any, fn: Callable[[Any], Any]) -> Any:
        with pytest.raises(exc) as info:
            self.run(fn)
        return info.value

    def close(self) -> None:
        if self.loop is not None:
            self.loop.run_until_complete(self.client.close())
            self.loop.close()
        else:
            self.client.close()


@pytest.fixture(params=["sync", "async"])
def flavor(request) -> str:
    return request.param


@pytest.fixture
def harness(flavor):
    made: List[Harness] = []

    def make(*urls: str, u: Optional[float] = 0.5, **kw: Any) -> Harness:
        h = Harness(flavor, list(urls), u, **kw)
        made.append(h)
        return h

    yield make
    for h in made:
        h.close()


@pytest.fixture(scope="session")
def sdkenv() -> Any:
    """A real PostgreSQL, brokers and proxies from the repository's ``test/sdkenv`` (one per test
    session). ``QUEEN_SDKENV_BIN`` names a prebuilt binary; otherwise ``go run ./test/sdkenv``."""
    import os
    import select
    import subprocess
    import time
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    binary = os.environ.get("QUEEN_SDKENV_BIN")
    cmd = [binary] if binary else ["go", "run", "./test/sdkenv"]
    proc = subprocess.Popen(cmd, cwd=root, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdin is not None
    deadline = time.monotonic() + 240
    line = ""
    while time.monotonic() < deadline and proc.poll() is None:
        ready, _, _ = select.select([proc.stdout], [], [], 1.0)
        if ready:
            line = proc.stdout.readline()
            break
    if not line:
        proc.kill()
        pytest.fail(f"test/sdkenv did not start (exit {proc.poll()})")
    env = json.loads(line)
    yield env
    proc.stdin.close()  # sdkenv's normal way to end
    try:
        proc.wait(60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
