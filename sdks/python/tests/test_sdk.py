"""Per-item result checks, transactions, leases, the buffered producer and the consume loop,
against a scripted local HTTP server, for the sync and the asyncio client."""

from __future__ import annotations

import asyncio
import threading

import pytest

from queen_client import (
    AckError,
    ForbiddenError,
    LeaseLostError,
    MalformedResponseError,
    Message,
    ProducerClosedError,
    PushItem,
    Queen,
    ServerError,
    TransactionError,
    completed,
    failed,
)

from conftest import Step
from test_retry import OK_PUSH, POP_BODY

MSG = Message(id="m1", transaction_id="t1", data=None, partition_id="p1", lease_id="L", consumer_group="g")
MSG2 = Message(id="m2", transaction_id="t2", data=None, partition_id="p1", lease_id="L", consumer_group="g")


def ack_item(i, tx, success=True, error=None, **kw):
    return {"index": i, "transactionId": tx, "success": success, "error": error, "queueName": "q",
            "partitionName": "Default", "leaseReleased": False, "dlq": False, "noop": False, **kw}


@pytest.mark.parametrize("answer,why", [
    ([ack_item(0, "t1")], "one result for two acks"),
    ([ack_item(0, "t1"), ack_item(0, "t2")], "wrong index"),
    ([ack_item(0, "t1"), ack_item(1, "tX")], "wrong transaction"),
    ([ack_item(0, "t1"), ack_item(1, "t2"), ack_item(2, "t3")], "extra result"),
    ({"results": []}, "not an array"),
])
def test_misaligned_ack_answers_fail_loudly(scripted, harness, answer, why):
    srv = scripted(Step(200, answer))
    h = harness(srv.url)
    h.raises(MalformedResponseError, lambda c: c.ack_batch([MSG, MSG2]))


def test_ack_batch_wire_and_per_item_results(scripted, harness):
    srv = scripted(Step(200, [ack_item(0, "t1"), ack_item(1, "", False, "invalid or expired lease")]))
    h = harness(srv.url)
    res = h.run(lambda c: c.ack_batch([completed(MSG), failed(MSG2, "boom")]))
    assert [r.success for r in res] == [True, False]
    assert res[1].transaction_id == "t2", "a missing id is filled from the request, by position"
    with pytest.raises(AckError) as e:
        res[1].check()
    assert e.value.reason == "invalid or expired lease" and e.value.index == 1
    body = srv.requests[0].body
    assert srv.requests[0].path == "/api/v1/ack/batch"
    assert body["consumerGroup"] == "g"
    assert body["acknowledgments"] == [
        {"transactionId": "t1", "partitionId": "p1", "leaseId": "L", "status": "completed"},
        {"transactionId": "t2", "partitionId": "p1", "leaseId": "L", "status": "failed", "error": "boom"},
    ]
    other = Message(id="m3", transaction_id="t3", data=None, partition_id="p1", consumer_group="other")
    with pytest.raises(ValueError):
        h.run(lambda c: c.ack_batch([MSG, other]))


def test_single_ack_rejection_raises_with_result(scripted, harness):
    srv = scripted(Step(200, [ack_item(0, "t1", False, "already committed: the cursor moved past this message")]))
    h = harness(srv.url)
    e = h.raises(AckError, lambda c: c.ack(MSG, "dlq", error="bad"))
    assert e.transaction_id == "t1" and e.result.success is False
    assert srv.requests[0].body == {"transactionId": "t1", "partitionId": "p1", "leaseId": "L", "status": "dlq",
                                    "consumerGroup": "g", "error": "bad"}
    srv2 = scripted(Step(200, [ack_item(0, "t1", noop=True)]))
    h2 = harness(srv2.url)
    r = h2.run(lambda c: c.ack(MSG))
    assert r.success and r.noop


def test_push_results_are_checked(scripted, harness):
    srv = scripted(Step(201, [{"index": 0, "transaction_id": "other", "status": "queued"}]))
    h = harness(srv.url)
    h.raises(MalformedResponseError, lambda c: c.queue("q").push(1))
    srv2 = scripted(Step(201, OK_PUSH))
    h2 = harness(srv2.url)
    h2.raises(MalformedResponseError, lambda c: c.queue("q").push_batch([1, 2]))
    r = h2.run(lambda c: c.queue("q").partition("p").push(PushItem({"a": 1}, "my-tx", "0190b6c2-0000-7000-8000-000000000000")))
    assert r.transaction_id == "my-tx"
    assert srv2.requests[-1].body == {"items": [{"queue": "q", "partition": "p", "payload": {"a": 1},
                                                 "transactionId": "my-tx",
                                                 "traceId": "0190b6c2-0000-7000-8000-000000000000"}]}


def test_transaction_rollback_raises(scripted, harness):
    srv = scripted(Step(200, {"transactionId": "x1", "success": False, "error": "QDUP duplicate transaction id",
                              "results": []}))
    h = harness(srv.url)
    e = h.raises(TransactionError, lambda c: c.transaction().ack(MSG).queue("next").partition("p").push(1, 2).commit())
    assert e.code == "QDUP" and e.transaction_id == "x1"
    ops = srv.requests[0].body["operations"]
    assert ops[0] == {"type": "ack", "transactionId": "t1", "partitionId": "p1", "leaseId": "L",
                      "status": "completed", "consumerGroup": "g"}
    assert ops[1]["type"] == "push" and [i["payload"] for i in ops[1]["items"]] == [1, 2]
    assert ops[1]["items"][0]["queue"] == "next" and ops[1]["items"][0]["partition"] == "p"
    with pytest.raises(ValueError):
        h.run(lambda c: c.transaction().commit())
    srv2 = scripted(Step(200, {"transactionId": "x2", "success": True, "results": [{"index": 0}]}))
    h2 = harness(srv2.url)
    assert h2.run(lambda c: c.transaction().queue("q").push(1).commit()).success


def test_extend_lease(scripted, harness):
    srv = scripted(
        Step(200, [{"index": 0, "leaseId": "L", "success": True, "error": None, "expiresAt": "2026-04-26T11:04:28.267Z"}]),
        Step(200, [{"index": 0, "leaseId": "L", "success": False, "error": "Lease already expired", "expiresAt": None}]),
        Step(404, {"error": "Lease not found"}),
    )
    h = harness(srv.url)
    r = h.run(lambda c: c.extend_lease(MSG, 1.5))
    assert r.success and r.expires_at.minute == 4
    assert srv.requests[0].path == "/api/v1/lease/L/extend" and srv.requests[0].body == {"seconds": 2}
    h.raises(LeaseLostError, lambda c: c.extend_lease("L"))
    h.raises(LeaseLostError, lambda c: c.extend_lease("L"))


def test_queue_delete_absent_and_group_get_absent(scripted, harness):
    srv = scripted(Step(404, {"error": "Queue not found"}))
    h = harness(srv.url)
    assert h.run(lambda c: c.queue("q").delete()) is False
    assert h.run(lambda c: c.consumer_group("g").get()) == {}


def test_producer_flushes_by_count_and_close_and_keeps_items_on_error(scripted):
    two = [{"index": i, "transaction_id": "", "status": "queued"} for i in range(2)]
    one = two[:1]
    srv = scripted(Step(201, two), Step(500, {"error": "x"}), Step(201, one))
    c = Queen(srv.url, sleep=lambda s: None, retry_attempts=1)
    p = c.queue("q").producer(batch_size=2, flush_interval_millis=60000)
    p.add(1)
    assert srv.count == 0 and p.pending() == 1
    p.add(2)
    assert srv.count == 1 and p.pending() == 0, "a full buffer is sent by add"
    p.add(3)
    with pytest.raises(ServerError):
        p.flush()
    assert p.pending() == 1, "a failed flush keeps its items, in order"
    p.close()
    assert srv.count == 3 and [i["payload"] for i in srv.requests[2].body["items"]] == [3]
    with pytest.raises(ProducerClosedError):
        p.add(4)
    c.close()


def test_producer_flushes_by_time(scripted):
    srv = scripted(Step(201, OK_PUSH))
    with Queen(srv.url) as c:
        p = c.queue("q").producer(batch_size=100, flush_interval_millis=20)
        p.add(1)
        for _ in range(200):
            if srv.count:
                break
            threading.Event().wait(0.01)
        assert srv.count == 1


def test_async_producer(scripted):
    two = [{"index": i, "transaction_id": "", "status": "queued"} for i in range(2)]
    srv = scripted(Step(201, two), Step(201, two[:1]))

    async def main():
        from queen_client import AsyncQueen
        async with AsyncQueen(srv.url) as c:
            async with c.queue("q").producer(batch_size=2, flush_interval_millis=60000) as p:
                await p.add(1)
                await p.add(2)
                assert srv.count == 1
                await p.add(3)
            assert srv.count == 2

    asyncio.run(main())


def pop_of(*txs, partition="p1"):
    msgs = [{**POP_BODY["messages"][0], "id": "m-" + t, "transactionId": t, "partitionId": partition} for t in txs]
    return {**POP_BODY, "messages": msgs}


def run_consume(flavor, url, handler, steps_done, client_kw=None, **kw):
    """Runs consume until steps_done(stop) calls stop (it runs in a helper thread); re-raises what
    consume raised."""
    client_kw = client_kw or {}
    if flavor == "sync":
        c = Queen(url, sleep=lambda s: None, **client_kw)
        stop = threading.Event()
        err = []

        def go():
            try:
                c.queue("q").consume(handler, stop=stop, poll_timeout_millis=100, **kw)
            except BaseException as e:
                err.append(e)

        t = threading.Thread(target=go)
        t.start()
        helper = threading.Thread(target=steps_done, args=(stop.set,), daemon=True)
        helper.start()
        t.join(10)
        stop.set()
        assert not t.is_alive()
        c.close()
        if err:
            raise err[0]
        return
    from queen_client import AsyncQueen

    async def main():
        async def sleep(s):
            await asyncio.sleep(0)

        async with AsyncQueen(url, sleep=sleep, **client_kw) as c:
            stop = asyncio.Event()
            loop = asyncio.get_running_loop()
            helper = threading.Thread(target=steps_done, args=(lambda: loop.call_soon_threadsafe(stop.set),),
                                      daemon=True)
            helper.start()
            try:
                await asyncio.wait_for(c.queue("q").consume(handler, stop=stop, poll_timeout_millis=100, **kw), 10)
            finally:
                stop.set()

    asyncio.run(main())


def until(srv, n):
    def wait(stop):
        for _ in range(500):
            if srv.count >= n:
                break
            threading.Event().wait(0.01)
        stop()
    return wait


def test_consume_stops_on_terminal_error(scripted, flavor):
    srv = scripted(Step(403, {"error": "Storage quota reached", "code": "storage_quota_exceeded"}))
    with pytest.raises(ForbiddenError) as e:
        run_consume(flavor, srv.url, lambda m: None, lambda stop: None, concurrency=3)
    assert e.value.code == "storage_quota_exceeded"
    assert srv.count <= 3, "each worker stops at its first terminal answer"


def test_consume_backs_off_on_exhausted_429_then_processes_and_acks(scripted, flavor):
    seen = []
    srv = scripted(Step(429, {"error": "slow", "code": "rate_limited"}, {"Retry-After": "1"}),
                   Step(200, pop_of("a", "b")), Step(200, [ack_item(0, "a"), ack_item(1, "b")]), Step(204))
    # A 429 budget of 1 makes the exhausted 429 reach the loop, which backs off and polls again.
    run_consume(flavor, srv.url, lambda m: seen.append(m.transaction_id), until(srv, 4),
                client_kw={"retry_429": {"max_attempts": 1}}, batch=2)
    assert seen == ["a", "b"]
    ack = srv.requests[2]
    assert ack.path == "/api/v1/ack/batch"
    assert [a["status"] for a in ack.body["acknowledgments"]] == ["completed", "completed"]
    assert srv.requests[1].query["wait"] == "true" and srv.requests[1].query["batch"] == "2"


def test_consume_failed_handler_acks_failed_and_skips_rest_of_partition(scripted, flavor):
    seen = []
    srv = scripted(Step(200, pop_of("a", "b", "c")), Step(200, [ack_item(0, "a")]),
                   Step(200, [ack_item(0, "b", leaseReleased=True)]), Step(204))

    def handler(m):
        seen.append(m.transaction_id)
        if m.transaction_id == "b":
            raise RuntimeError("boom")

    run_consume(flavor, srv.url, handler, until(srv, 4), batch=3)
    assert seen == ["a", "b"], "the rest of the partition's batch redelivers in order"
    acks = [r.body["acknowledgments"] for r in srv.requests if r.path == "/api/v1/ack/batch"]
    assert [[(a["transactionId"], a["status"]) for a in b] for b in acks] == [[("a", "completed"), ("b", "failed")]]
    assert acks[0][1]["error"] == "boom"


def test_consume_continues_after_dead_lettered_failure(scripted, flavor):
    seen = []
    srv = scripted(Step(200, pop_of("a", "b")), Step(200, [ack_item(0, "a", dlq=True)]),
                   Step(200, [ack_item(0, "b")]), Step(204))

    def handler(m):
        seen.append(m.transaction_id)
        if m.transaction_id == "a":
            raise RuntimeError("poison")

    run_consume(flavor, srv.url, handler, until(srv, 4), batch=2)
    assert seen == ["a", "b"]


def test_consume_async_handler(scripted):
    seen = []
    srv = scripted(Step(200, pop_of("a")), Step(200, [ack_item(0, "a")]), Step(204))

    async def handler(m):
        await asyncio.sleep(0)
        seen.append(m.transaction_id)

    run_consume("async", srv.url, handler, until(srv, 3))
    assert seen == ["a"]


def test_consume_stop_is_graceful_the_received_batch_is_finished_and_acked(scripted, flavor):
    seen = []
    srv = scripted(Step(200, pop_of("a", "b", "c")),
                   Step(200, [ack_item(0, "a"), ack_item(1, "b"), ack_item(2, "c")]), Step(204))
    stop_now = []

    def handler(m):
        seen.append(m.transaction_id)
        if m.transaction_id == "a":
            stop_now[0]()  # the stop arrives while the batch is being handled

    def steps(stop):
        stop_now.append(stop)

    def wrapped(m):
        while not stop_now:
            threading.Event().wait(0.005)
        handler(m)

    run_consume(flavor, srv.url, wrapped, steps, batch=3)
    assert seen == ["a", "b", "c"], "a received batch is processed to the end"
    assert [r.path for r in srv.requests] == ["/api/v1/pop/queue/q", "/api/v1/ack/batch"], "and no new pop starts"


@pytest.mark.parametrize("mode", ["manual_ack", "auto_ack"])
def test_consume_manual_and_auto_ack_send_no_acks(scripted, flavor, mode):
    seen = []
    srv = scripted(Step(200, pop_of("a", "b")), Step(204))

    def handler(m):
        seen.append(m.transaction_id)
        raise RuntimeError("only logged in this mode")

    run_consume(flavor, srv.url, handler, until(srv, 3), batch=2, **{mode: True})
    assert seen == ["a", "b"], "a failure does not skip the rest when the consumer does not ack"
    assert all(r.path.startswith("/api/v1/pop/") for r in srv.requests)
    assert ("autoAck" in srv.requests[0].query) == (mode == "auto_ack")


def test_consume_stop_cuts_short_unbounded_429_waits(scripted, flavor):
    # A long-poll pop waits out 429s without bound; stopping the consumer must still end it.
    srv = scripted(Step(429, {"error": "parked", "code": "rate_limited"}, {"Retry-After": "5"}))
    run_consume(flavor, srv.url, lambda m: None, until(srv, 3))
    assert srv.count >= 3
