"""Stream cycles: the streams retry policy against a scripted server, and register / cycle /
state reads against the real broker, for the sync and the asyncio client."""

from __future__ import annotations

import uuid

import pytest

from queen_client import (
    BadRequestError,
    ConfigMismatchError,
    CycleError,
    RateLimitedError,
    ServerError,
    StreamsError,
    TransportError,
)
from queen_client.streams import backoff_seconds

from conftest import Step

OK_CYCLE = {"success": True, "query_id": "q1", "partition_id": "p1", "queueName": "src", "state_ops_applied": 1,
            "push_results": [], "ack_result": None}


def test_backoff_schedule():
    assert [backoff_seconds(n, 0) for n in range(8)] == pytest.approx([0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 5.0, 5.0])
    assert backoff_seconds(0, 0.999999) == pytest.approx(0.13, abs=1e-6), "plus at most 30 % jitter"


def test_retries_5xx_408_429_without_reading_retry_after(scripted, harness):
    srv = scripted(Step(503, {"error": "pool"}), Step(408, {"error": "slow"}),
                   Step(429, {"error": "x", "code": "rate_limited"}, {"Retry-After": "7"}), Step(200, OK_CYCLE))
    h = harness(srv.url)
    res = h.run(lambda c: c.streams().cycle("q1", "p1", state_ops=[{"type": "upsert", "key": "k", "value": 1}]))
    assert res.state_ops_applied == 1
    assert srv.count == 4
    assert h.sleeps == pytest.approx([0.115, 0.23, 0.46]), "100 ms doubling, u=0.5 adds 15 %; Retry-After ignored"
    assert srv.requests[0].path == "/streams/v1/cycle"
    assert srv.requests[0].body == {"query_id": "q1", "partition_id": "p1", "release_lease": True,
                                    "state_ops": [{"type": "upsert", "key": "k", "value": 1}], "push_items": []}


def test_retry_budget_then_last_error(scripted, dead_url, harness):
    srv = scripted(Step(429, {"error": "x", "code": "rate_limited"}))
    h = harness(srv.url)
    e = h.raises(RateLimitedError, lambda c: c.streams().cycle("q1", "p1"))
    assert e.code == "rate_limited" and srv.count == 4, "3 retries by default"
    srv2 = scripted(Step(500, {"error": "boom"}))
    h2 = harness(srv2.url)
    h2.raises(ServerError, lambda c: c.streams(retries=1).state_get("q1", "p1"))
    assert srv2.count == 2
    h3 = harness(dead_url)
    h3.raises(TransportError, lambda c: c.streams().register_query("n", "src", "sha256:x"))
    assert len(h3.sleeps) == 3


def test_other_4xx_is_final_and_409_is_a_config_mismatch(scripted, harness):
    srv = scripted(Step(400, {"error": "query_id is required"}))
    h = harness(srv.url)
    h.raises(BadRequestError, lambda c: c.streams().cycle("", "p1"))
    assert srv.count == 1 and h.sleeps == []
    srv2 = scripted(Step(409, {"success": False, "query_id": "q", "error": "config_hash mismatch"}))
    h2 = harness(srv2.url)
    e = h2.raises(ConfigMismatchError, lambda c: c.streams().register_query("n", "src", "sha256:y"))
    assert e.status == 409 and srv2.count == 1


def test_success_false_raises(scripted, harness):
    srv = scripted(Step(200, {"success": False, "query_id": "q1", "partition_id": "p1",
                              "error": "Invalid or expired lease"}))
    h = harness(srv.url)
    e = h.raises(CycleError, lambda c: c.streams().cycle("q1", "p1", ack={"transactionId": "t", "status": "completed"}))
    assert e.message == "Invalid or expired lease" and e.result["success"] is False
    srv2 = scripted(Step(200, {"success": False, "error": "bad"}))
    h2 = harness(srv2.url)
    h2.raises(StreamsError, lambda c: c.streams().state_get("q1", "p1"))
    h2.raises(StreamsError, lambda c: c.streams().register_query("n", "src", "sha256:x"))


def test_cycles_against_the_broker(harness, sdkenv):
    h = harness(sdkenv["broker"], u=None, real_sleep=True)
    src, sink = f"py-st-src-{uuid.uuid4().hex[:6]}", f"py-st-sink-{uuid.uuid4().hex[:6]}"
    name = f"py.st.{uuid.uuid4().hex[:6]}"
    group = "streams." + name
    sq = h.run(lambda c: c.streams().register_query(name, src, "sha256:one", sink_queue=sink))
    assert sq.fresh and sq.query_id
    again = h.run(lambda c: c.streams().register_query(name, src, "sha256:one", sink_queue=sink))
    assert again.query_id == sq.query_id and not again.fresh
    h.raises(ConfigMismatchError, lambda c: c.streams().register_query(name, src, "sha256:two"))

    h.run(lambda c: c.queue(src).partition("k1").push_batch([{"v": 1}, {"v": 2}]))
    msgs = h.run(lambda c: c.queue(src).partition("k1").group(group).pop(batch=10))
    assert len(msgs) == 2
    last = msgs[-1]
    res = h.run(lambda c: c.streams().cycle(
        sq.query_id, last.partition_id, consumer_group=group,
        state_ops=[{"type": "upsert", "key": "win:1", "value": {"sum": 3}}],
        push_items=[{"queue": sink, "partition": "k1", "payload": {"sum": 3}, "transactionId": "sum-1"}],
        ack={"transactionId": last.transaction_id, "leaseId": last.lease_id, "status": "completed", "count": 2}))
    assert res.state_ops_applied == 1 and res.ack_result and res.ack_result["success"]
    rows = h.run(lambda c: c.streams().state_get(sq.query_id, last.partition_id))
    assert [(r.key, r.value) for r in rows] == [("win:1", {"sum": 3})]
    assert h.run(lambda c: c.streams().state_get(sq.query_id, last.partition_id, ["nope"])) == []
    [out] = h.run(lambda c: c.queue(sink).pop(auto_ack=True))
    assert out.data == {"sum": 3}
    assert h.run(lambda c: c.queue(src).group(group).pop()) == [], "the cycle acknowledged the source"

    # A cycle whose ack cannot apply is rolled back whole: its state op is not applied either.
    e = h.raises(CycleError, lambda c: c.streams().cycle(
        sq.query_id, last.partition_id, consumer_group=group,
        state_ops=[{"type": "upsert", "key": "win:2", "value": 1}],
        ack={"transactionId": str(uuid.uuid4()), "leaseId": str(uuid.uuid4()), "status": "completed"}))
    assert e.message
    assert [r.key for r in h.run(lambda c: c.streams().state_get(sq.query_id, last.partition_id))] == ["win:1"]
