"""Both retry layers against a scripted local HTTP server, for the sync and the asyncio client.
Delays are read from the injected sleep seam; nothing here waits for real."""

from __future__ import annotations

import random
from email.utils import format_datetime
from datetime import datetime, timedelta, timezone

import pytest

from queen_client import (
    APIError,
    BadRequestError,
    ForbiddenError,
    NotFoundError,
    PayloadTooLargeError,
    Queen,
    RateLimitedError,
    Retry429,
    ServerError,
    TransportError,
    UnauthorizedError,
    is_terminal,
)
from queen_client._core import jitter, retry_after_ms

from conftest import Step

OK_PUSH = [{"index": 0, "transaction_id": "", "status": "queued", "message_id": "m", "partition_id": "p",
            "trace_id": None, "queueName": "q"}]
POP_BODY = {
    "success": True, "queue": "q", "partition": "Default", "partitionId": "p1", "leaseId": "L",
    "consumerGroup": "__QUEUE_MODE__", "partitionsClaimed": 1,
    "messages": [{"id": "m1", "transactionId": "t1", "traceId": None, "data": {"n": 1}, "producerSub": None,
                  "createdAt": "2026-04-26T10:59:28.267966Z", "partitionId": "p1", "partition": "Default",
                  "leaseId": "L", "consumerGroup": "__QUEUE_MODE__", "queue": "q", "retryCount": 2}],
}
LIMITED = {"error": "request rate limit exceeded", "code": "rate_limited"}


def push_one(c):
    return c.queue("q").push(1)


def test_defaults():
    c = Queen("http://localhost:6632/")
    cfg = c.config
    assert cfg.urls == ("http://localhost:6632",)
    assert cfg.retry_attempts == 3
    assert cfg.retry_delay_millis == 1000
    assert cfg.retry_429.base_ms == 500
    assert cfg.retry_429.cap_ms == 30000
    assert cfg.retry_429.budget(False) == 10
    assert cfg.retry_429.budget(True) is None, "long-poll pops are unbounded by default"
    assert Retry429(max_attempts=7).budget(True) == 7, "an explicit bound applies to long polls too"
    assert Retry429(max_attempts=-1).budget(False) is None
    c.close()
    with pytest.raises(ValueError):
        Queen()
    with pytest.raises(ValueError):
        Queen("localhost:6632")
    with pytest.raises(ValueError):
        Retry429(max_attempts=0)


def test_layer_one_5xx_attempts_with_exponential_backoff(scripted, harness):
    srv = scripted(Step(503, {"error": "pool"}))
    h = harness(srv.url)
    e = h.raises(ServerError, push_one)
    assert e.status == 503 and e.message == "pool"
    assert srv.count == 3, "retry_attempts defaults to 3 attempts"
    assert h.sleeps == [1.0, 2.0], "exponential from retry_delay_millis, no jitter"


def test_layer_one_custom_attempts_and_recovery(scripted, harness):
    srv = scripted(Step(502, {"error": "upstream", "code": "bad_gateway"}),
                   Step(504, {"error": "slow", "code": "upstream_timeout"}),
                   Step(500, {"error": "x"}), Step(201, OK_PUSH))
    h = harness(srv.url, retry_attempts=5, retry_delay_millis=100)
    res = h.run(push_one)
    assert res.status == "queued"
    assert srv.count == 4
    assert h.sleeps == pytest.approx([0.1, 0.2, 0.4])
    # The retried push carried the same generated transaction id every time, so the broker can
    # deduplicate it.
    first = srv.requests[0].body["items"][0]["transactionId"]
    assert first and first == srv.requests[3].body["items"][0]["transactionId"]
    assert res.transaction_id == first


def test_layer_one_network_errors_retried_then_transport_error(dead_url, harness):
    h = harness(dead_url)
    e = h.raises(TransportError, push_one)
    assert not is_terminal(e)
    assert h.sleeps == [1.0, 2.0]


def test_layer_one_5xx_fails_over_to_next_url(scripted, harness):
    a = scripted(Step(500, {"error": "push failed: boom"}))
    b = scripted(Step(201, OK_PUSH))
    now = [1000.0]
    h = harness(a.url, b.url, clock=lambda: now[0])
    h.run(push_one)
    assert (a.count, b.count) == (1, 1)
    assert h.sleeps == [1.0]
    assert h.client.backend_health() == {a.url: False, b.url: True}
    # While A is quarantined, requests go straight to B.
    h.run(push_one)
    assert (a.count, b.count) == (1, 2)
    # After health_retry_after_millis (5 s) A counts as healthy again.
    now[0] += 5.0
    assert h.client.backend_health() == {a.url: True, b.url: True}


def test_layer_one_network_failure_fails_over(dead_url, scripted, harness):
    b = scripted(Step(201, OK_PUSH))
    h = harness(dead_url, b.url)
    h.run(push_one)
    assert b.count == 1
    assert h.client.backend_health()[dead_url] is False


def test_failover_rotates_through_three_urls(scripted, harness):
    a, b, c = scripted(Step(502)), scripted(Step(503)), scripted(Step(201, OK_PUSH))
    h = harness(a.url, b.url, c.url)
    h.run(push_one)
    assert (a.count, b.count, c.count) == (1, 1, 1)
    assert h.sleeps == [1.0, 2.0]
    assert h.client.backend_health() == {a.url: False, b.url: False, c.url: True}


@pytest.mark.parametrize("status,body,code,cls", [
    (400, {"error": "bad body: unexpected EOF"}, None, BadRequestError),
    (401, {"error": "Authentication required", "code": "unauthorized"}, "unauthorized", UnauthorizedError),
    (403, {"error": "monthly quota", "code": "quota_exceeded"}, "quota_exceeded", ForbiddenError),
    (404, {"error": "Not Found", "code": "no_such_route"}, "no_such_route", NotFoundError),
    (409, {"error": "conflict", "success": False}, None, APIError),
    (413, {"error": "batch of 20000 items exceeds max_batch_items (10000)", "code": "payload_too_large"},
     "payload_too_large", PayloadTooLargeError),
    (421, {"error": "unknown host", "code": "cluster_unknown"}, "cluster_unknown", APIError),
])
def test_any_4xx_short_circuits(scripted, harness, status, body, code, cls):
    a = scripted(Step(status, body))
    b = scripted(Step(201, OK_PUSH))
    h = harness(a.url, b.url)
    e = h.raises(cls, push_one)
    assert e.status == status and e.code == code
    assert e.terminal and is_terminal(e)
    assert not isinstance(e, RateLimitedError)
    assert a.count == 1, "a 4xx is never retried"
    assert b.count == 0, "a 4xx never fails over"
    assert h.sleeps == []
    assert h.client.backend_health()[a.url], "a 4xx is not a health signal"


def test_non_json_error_body(scripted, harness):
    srv = scripted(Step(413, "request body exceeds cap"))
    h = harness(srv.url)
    e = h.raises(PayloadTooLargeError, push_one)
    assert e.message == "request body exceeds cap" and e.code is None


def test_layer_two_honours_retry_after(scripted, harness):
    limited = Step(429, LIMITED, {"Retry-After": "7"})
    srv = scripted(limited, limited, Step(201, OK_PUSH))
    h = harness(srv.url)  # u=0.5: jitter factor exactly 1.0
    h.run(push_one)
    assert srv.count == 3
    assert h.sleeps == pytest.approx([7.0, 7.0]), "Retry-After x 1000 ms, not the computed backoff"


def test_layer_two_retry_after_is_not_capped(scripted, harness):
    srv = scripted(Step(429, None, {"Retry-After": "60"}), Step(201, OK_PUSH))
    h = harness(srv.url, retry_429=Retry429(cap_ms=1000))
    h.run(push_one)
    assert h.sleeps == pytest.approx([60.0])


def test_layer_two_exponential_with_cap(scripted, harness):
    limited = Step(429, {"error": "slow down", "code": "rate_limited"})
    srv = scripted(*[limited] * 6, Step(201, OK_PUSH))
    h = harness(srv.url, retry_429={"base_ms": 500, "cap_ms": 5000})
    h.run(push_one)
    assert srv.count == 7
    assert h.sleeps == pytest.approx([0.5, 1, 2, 4, 5, 5]), "min(cap_ms, base_ms * 2**attempt)"


def test_layer_two_default_base_and_cap(scripted, harness):
    srv = scripted(*[Step(429)] * 9, Step(201, OK_PUSH))
    h = harness(srv.url)
    h.run(push_one)
    assert h.sleeps == pytest.approx([0.5, 1, 2, 4, 8, 16, 30, 30, 30])


@pytest.mark.parametrize("u,retry_after,lo,hi", [
    (0.0, "10", 8.0, 8.0),              # -20%
    (0.999999, "10", 11.999, 12.0),     # just under +20%
    (0.25, "10", 9.0, 9.0),             # -10%
    (0.5, "10", 10.0, 10.0),            # exact
    (0.0, None, 0.4, 0.4),              # the computed 500 ms delay is jittered too
    (0.999999, None, 0.599, 0.6),
])
def test_layer_two_jitter_bounds(scripted, harness, u, retry_after, lo, hi):
    headers = {"Retry-After": retry_after} if retry_after else {}
    srv = scripted(Step(429, None, headers), Step(201, OK_PUSH))
    h = harness(srv.url, u=u)
    h.run(push_one)
    assert len(h.sleeps) == 1
    assert lo - 1e-9 <= h.sleeps[0] <= hi + 1e-9


def test_jitter_with_real_randomness_stays_within_20_percent():
    for _ in range(2000):
        d = jitter(10000, random.random())
        assert 8000 <= d < 12000


def test_real_random_seam_used_by_default(scripted):
    srv = scripted(Step(429, None, {"Retry-After": "10"}), Step(201, OK_PUSH))
    sleeps = []
    c = Queen(srv.url, sleep=sleeps.append)
    c.queue("q").push(1)
    c.close()
    assert len(sleeps) == 1 and 8.0 <= sleeps[0] < 12.0


def test_layer_two_budget_ten_for_ordinary_requests(scripted, harness):
    srv = scripted(Step(429, LIMITED, {"Retry-After": "2"}))
    h = harness(srv.url)
    e = h.raises(RateLimitedError, push_one)
    assert not e.terminal and not is_terminal(e)
    assert e.status == 429 and e.code == "rate_limited" and e.retry_after == 2.0
    assert srv.count == 10, "10 attempts"
    assert len(h.sleeps) == 9, "9 waits between them"


def test_layer_two_never_fails_over(scripted, harness):
    a = scripted(Step(429, None, {"Retry-After": "1"}))
    b = scripted(Step(201, OK_PUSH))
    h = harness(a.url, b.url)
    h.raises(RateLimitedError, push_one)
    assert a.count == 10
    assert b.count == 0, "429 never fails over, even when exhausted"
    assert h.client.backend_health()[a.url], "429 does not mark the backend unhealthy"

    a2 = scripted(Step(429), Step(429), Step(201, OK_PUSH))
    h2 = harness(a2.url, b.url)
    h2.run(push_one)
    assert a2.count == 3 and b.count == 0


def test_long_poll_429_waited_out_past_ten(scripted, harness):
    parked = Step(429, {"error": "parked consumers", "code": "rate_limited"}, {"Retry-After": "5"})
    srv = scripted(*[parked] * 25, Step(200, POP_BODY))
    h = harness(srv.url)
    msgs = h.run(lambda c: c.queue("q").pop(wait=True, timeout_millis=1000))
    assert len(msgs) == 1
    assert srv.count == 26
    assert h.sleeps == pytest.approx([5.0] * 25)

    # A non-waiting pop gets the ordinary budget of 10.
    srv2 = scripted(Step(429))
    h2 = harness(srv2.url)
    h2.raises(RateLimitedError, lambda c: c.queue("q").pop())
    assert srv2.count == 10


def test_explicit_max_attempts_bounds_both_kinds(scripted, harness):
    srv = scripted(Step(429, {"error": "x", "code": "rate_limited"}))
    h = harness(srv.url, retry_429=Retry429(max_attempts=4))
    e = h.raises(RateLimitedError, lambda c: c.queue("q").pop(wait=True))
    assert e.code == "rate_limited", "a long-poll pop surfaces the 429, it does not report no messages"
    assert srv.count == 4
    h.raises(RateLimitedError, push_one)
    assert srv.count == 8


def test_layer_two_inside_layer_one(scripted, harness):
    # A 429 is retried in place; a following 5xx is a layer-one failure that fails over.
    a = scripted(Step(429), Step(500, {"error": "x"}))
    b = scripted(Step(201, OK_PUSH))
    h = harness(a.url, b.url)
    h.run(push_one)
    assert (a.count, b.count) == (2, 1)
    assert h.sleeps == pytest.approx([0.5, 1.0])


def test_timeout_counts_as_network_failure(harness):
    import socket
    import threading

    # A listener that accepts and never answers: every attempt times out.
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    conns = []
    stop = threading.Event()

    def accept():
        srv.settimeout(0.1)
        while not stop.is_set():
            try:
                conns.append(srv.accept()[0])
            except OSError:
                pass

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    try:
        h = harness(f"http://127.0.0.1:{srv.getsockname()[1]}", timeout_millis=50, retry_attempts=2)
        h.raises(TransportError, push_one)
        assert h.sleeps == [1.0]
    finally:
        stop.set()
        t.join()
        for c in conns:
            c.close()
        srv.close()


def test_pop_204_is_empty_not_error(scripted, harness):
    srv = scripted(Step(204))
    h = harness(srv.url)
    msgs = h.run(lambda c: c.queue("q").partition("p").group("g").subscription_mode("new")
                 .pop(batch=5, wait=True, timeout_millis=2000, auto_ack=True))
    assert msgs == []
    assert h.sleeps == []
    r = srv.requests[0]
    assert r.path == "/api/v1/pop/queue/q/partition/p"
    assert r.query == {"autoAck": "true", "batch": "5", "consumerGroup": "g", "subscriptionMode": "new",
                       "timeout": "2000", "wait": "true"}


@pytest.mark.parametrize("status,cls", [(401, UnauthorizedError), (403, ForbiddenError)])
def test_pop_terminal_error_is_never_empty(scripted, harness, status, cls):
    srv = scripted(Step(status, {"error": "Insufficient permissions", "code": "cluster_suspended"}))
    h = harness(srv.url)
    e = h.raises(cls, lambda c: c.queue("q").pop(wait=True))
    assert e.status == status and e.code == "cluster_suspended" and e.terminal
    assert srv.count == 1


def test_pop_decodes_messages(scripted, harness):
    srv = scripted(Step(200, POP_BODY))
    h = harness(srv.url)
    [m] = h.run(lambda c: c.queue("q").pop())
    assert (m.id, m.transaction_id, m.lease_id, m.partition_id) == ("m1", "t1", "L", "p1")
    assert m.consumer_group == "__QUEUE_MODE__" and m.retry_count == 2
    assert m.data == {"n": 1}
    assert m.created_at == datetime(2026, 4, 26, 10, 59, 28, 267966, tzinfo=timezone.utc)


def test_pop_matching_namespace_task(scripted, harness):
    srv = scripted(Step(204))
    h = harness(srv.url)
    assert h.run(lambda c: c.matching("billing", "invoice").pop(batch=3)) == []
    r = srv.requests[0]
    assert r.path == "/api/v1/pop" and r.query == {"batch": "3", "namespace": "billing", "task": "invoice"}


def test_authorization_and_custom_headers(scripted, harness):
    srv = scripted(Step(204))
    h = harness(srv.url, token="tok", headers={"X-Tenant": "t1"})
    h.run(lambda c: c.queue("q").pop())
    assert srv.requests[0].headers["authorization"] == "Bearer tok"
    assert srv.requests[0].headers["x-tenant"] == "t1"


def test_retry_after_forms():
    now = datetime(2026, 1, 1, tzinfo=timezone.utc)
    date = format_datetime(now + timedelta(seconds=3), usegmt=True)
    assert retry_after_ms({"retry-after": date}, now.timestamp()) == pytest.approx(3000)
    assert retry_after_ms({"retry-after": "1.5"}, 0) == 1500
    assert retry_after_ms({}, 0) is None
    assert retry_after_ms({"retry-after": "soon"}, 0) is None
