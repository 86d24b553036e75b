"""Stream cycles: the streams retry policy against a scripted server, and register / cycle /
state reads against the real broker, for the sync and the asyncio client."""

from __future__ import annotations

import asyncio
import math
import os
import time
import uuid
from datetime import datetime, timezone
from typing import Any, Dict, List

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
from queen_client.aio import AsyncQueen
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

    # With a cycle_id, a repeat of a committed cycle (a retry whose answer was lost) applies nothing.
    cid = str(uuid.uuid4())

    def flush(c: Any) -> Any:
        return c.streams().cycle(sq.query_id, last.partition_id, consumer_group=group, cycle_id=cid,
                                 push_items=[{"queue": sink, "partition": "k1", "payload": {"flush": 1}}])

    assert not h.run(flush).duplicate
    assert h.run(flush).duplicate
    assert [m.data for m in h.run(lambda c: c.queue(sink).pop(batch=10, auto_ack=True))] == [{"flush": 1}]

    # A cycle whose ack cannot apply is rolled back whole: its state op is not applied either.
    e = h.raises(CycleError, lambda c: c.streams().cycle(
        sq.query_id, last.partition_id, consumer_group=group,
        state_ops=[{"type": "upsert", "key": "win:2", "value": 1}],
        ack={"transactionId": str(uuid.uuid4()), "leaseId": str(uuid.uuid4()), "status": "completed"}))
    assert e.message
    assert [r.key for r in h.run(lambda c: c.streams().state_get(sq.query_id, last.partition_id))] == ["win:1"]


# The original clients' case that once counted events twice (slidingEventsAppearInOverlappingWindows), with
# its parameters: 6 events 1 s apart, sliding windows of 4 s sliding by 2 s, a count, an idle flush every
# 1000 ms. A small copy of the original runtime runs it over this SDK's streams routes, sending what the
# original sends (no expect, no cycle id): the main loop pops, reads the shard's state, folds and commits
# with the ack, while a flush task on its own timer, interleaved with the loop at every await, closes ripe
# windows with cycles without an ack. Each event is in at most size/slide = 2 windows, so the emitted counts
# may sum to at most 12. QUEEN_STREAMS_REPEAT=n runs it n times in a row.

SEP = "\x1f"


async def _original_sliding(c: AsyncQueen, query: str, src: str, sink: str, size_s: int, slide_s: int,
                            idle_flush_ms: int, stop: asyncio.Event) -> List[Exception]:
    tag = f"slide:{size_s}:{slide_s}"
    size, slide = size_s * 1000, slide_s * 1000
    group = "streams." + query
    st = c.streams()
    reg = await st.register_query(query, src, "sha256:" + tag, sink_queue=sink)
    touched: Dict[str, str] = {}
    errors: List[Exception] = []

    def key_of(start: int, user: str) -> str:
        iso = datetime.fromtimestamp(start / 1000, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{start % 1000:03d}Z"
        return f"{tag}{SEP}{iso}{SEP}{user}"

    def emit(partition: str, w: Dict[str, Any]) -> Dict[str, Any]:
        return {"queue": sink, "partition": partition, "payload": {"count": w["acc"]["count"], "windowStart": w["windowStart"]}}

    async def flush_loop() -> None:
        while not stop.is_set():
            await asyncio.sleep(idle_flush_ms / 1000)
            for pid, pname in list(touched.items()):
                try:
                    rows = await st.state_get(reg.query_id, pid, key_prefix=tag + SEP, ripe_at_or_before=int(time.time() * 1000))
                    if rows:
                        await st.cycle(reg.query_id, pid, consumer_group=group,
                                       state_ops=[{"type": "delete", "key": r.key} for r in rows],
                                       push_items=[emit(pname, r.value) for r in rows])
                except CycleError as e:
                    errors.append(e)

    flusher = asyncio.create_task(flush_loop())
    try:
        while not stop.is_set():
            msgs = await c.queue(src).group(group).pop(batch=200, partitions=4, wait=True, timeout_millis=1000)
            if not msgs:
                await asyncio.sleep(0.1)
                continue
            by_part: Dict[str, List[Any]] = {}
            for m in msgs:
                by_part.setdefault(m.partition_id, []).append(m)
            for pid, group_msgs in by_part.items():
                group_msgs.sort(key=lambda m: (m.created_at, m.id))
                touched[pid] = group_msgs[0].partition
                rows = await st.state_get(reg.query_id, pid)
                open_: Dict[str, Dict[str, Any]] = {r.key: dict(r.value, seeded=True) for r in rows if r.key.startswith(tag + SEP)}
                clock = 0
                for m in group_msgs:
                    t = int(m.created_at.timestamp() * 1000)
                    clock = max(clock, t)
                    for i in range(size // slide):
                        start = math.floor(t / slide) * slide - i * slide
                        if not (start <= t < start + size):
                            continue
                        k = key_of(start, pid)
                        w = open_.setdefault(k, {"acc": {"count": 0}, "windowStart": start, "windowEnd": start + size})
                        w["acc"] = {"count": w["acc"]["count"] + 1}
                        w["touched"] = True
                state_ops, push_items = [], []
                for k, w in open_.items():
                    if w["windowEnd"] <= clock:
                        push_items.append(emit(group_msgs[0].partition, w))
                        if w.get("seeded"):
                            state_ops.append({"type": "delete", "key": k})
                    elif w.get("touched"):
                        state_ops.append({"type": "upsert", "key": k, "value": {
                            "acc": w["acc"], "windowStart": w["windowStart"], "windowEnd": w["windowEnd"]}})
                last = group_msgs[-1]
                try:
                    await st.cycle(reg.query_id, pid, consumer_group=group, state_ops=state_ops, push_items=push_items,
                                   ack={"transactionId": last.transaction_id, "leaseId": last.lease_id,
                                        "status": "completed", "count": len(group_msgs)})
                except CycleError as e:
                    errors.append(e)
    finally:
        flusher.cancel()
        try:
            await flusher
        except asyncio.CancelledError:
            pass
    return errors


@pytest.mark.parametrize("run", range(1, max(1, int(os.environ.get("QUEEN_STREAMS_REPEAT", "1"))) + 1))
def test_sliding_events_appear_in_overlapping_windows_original_wire(sdkenv, run):
    tag = uuid.uuid4().hex[:6]
    src, sink, query = f"py-sl-src-{tag}", f"py-sl-out-{tag}", f"py-sl-{tag}"

    async def scenario() -> None:
        c = AsyncQueen(sdkenv["broker"])
        try:
            stop = asyncio.Event()
            runner = asyncio.create_task(_original_sliding(c, query, src, sink, 4, 2, 1000, stop))
            for i in range(6):
                await c.queue(src).partition("p").push({"i": i})
                if i < 5:
                    await asyncio.sleep(1)
            counts: List[int] = []
            deadline = time.monotonic() + 8
            while time.monotonic() < deadline and sum(counts) < 12:
                got = await c.queue(sink).group("check").pop(batch=100, partitions=10, wait=True, timeout_millis=500, auto_ack=True)
                counts += [m.data["count"] for m in got]
            # Anything emitted twice would come now.
            got = await c.queue(sink).group("check").pop(batch=100, partitions=10, wait=True, timeout_millis=1500, auto_ack=True)
            counts += [m.data["count"] for m in got]
            stop.set()
            errors = await runner
            print(f"run {run}: window counts {counts}, sum {sum(counts)}; refused cycles: "
                  f"{'; '.join(e.message for e in errors) or 'none'}")
            assert sum(counts) <= 12, f"an event counted twice: counts {counts} sum to {sum(counts)} > 12"
            assert sum(counts) > 0, "no window was emitted"
        finally:
            await c.close()

    asyncio.run(scenario())
