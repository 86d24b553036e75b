"""Every call of both clients against a real broker, and the proxy's 429, 403 and 413 through the
retry layers. The environment (PostgreSQL, brokers, proxies) comes from ``test/sdkenv``."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from datetime import datetime, timedelta, timezone

import pytest

from queen_client import (
    AckError,
    BadRequestError,
    ForbiddenError,
    LeaseLostError,
    NotFoundError,
    PayloadTooLargeError,
    QUEUE_OPTIONS,
    PushItem,
    RateLimitedError,
    Retry429,
    TransactionError,
    UnauthorizedError,
    completed,
    dead_letter,
    failed,
)


def qname(tag: str) -> str:
    return f"py-{tag}-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def live(harness, sdkenv):
    """A client of the open broker: real sleeps, real jitter, short layer-one back-off."""

    def make(*urls, **kw):
        kw.setdefault("retry_delay_millis", 50)
        return harness(*(urls or (sdkenv["broker"],)), u=None, real_sleep=True, **kw)

    return make


def test_configure_push_pop_ack(live):
    h = live()
    q = qname("basic")
    created = h.run(lambda c: c.queue(q).config(lease_time=30, retry_limit=2).create())
    assert created["configured"] is True
    r = h.run(lambda c: c.queue(q).push({"n": 1}, transaction_id="tx-1"))
    assert r.status == "queued" and r.transaction_id == "tx-1" and r.message_id
    dup = h.run(lambda c: c.queue(q).push({"n": 1}, transaction_id="tx-1"))
    assert dup.status == "duplicate", "the transaction id is the idempotency key"
    rs = h.run(lambda c: c.queue(q).push_batch([{"n": 2}, PushItem({"n": 3}, "tx-3")]))
    assert [x.status for x in rs] == ["queued", "queued"] and rs[1].transaction_id == "tx-3"

    msgs = h.run(lambda c: c.queue(q).pop(batch=10))
    assert [m.data["n"] for m in msgs] == [1, 2, 3]
    assert all(m.lease_id and m.partition_id and m.queue == q for m in msgs)
    assert msgs[0].created_at is not None
    res = h.run(lambda c: c.ack_batch(msgs[:2]))
    assert [x.success for x in res] == [True, True]
    one = h.run(lambda c: c.ack(msgs[2]))
    assert one.success
    assert h.run(lambda c: c.queue(q).pop(wait=True, timeout_millis=100)) == [], "an empty pop is [] (204)"


def test_queue_options_cover_configure_and_round_trip(live):
    """Walks the broker's own list (configure answers with every effective option), so an option added
    to the broker and not to the SDK fails here. Then every option off its default, zeros included,
    reads back as sent, and a read configured again changes nothing."""
    h = live()
    q = qname("options")
    created = h.run(lambda c: c.queue(q).create())
    assert sorted(created["options"]) == sorted(QUEUE_OPTIONS.values())
    default = h.run(lambda c: c.queue(q).options())
    assert default == {snake: created["options"][wire] for snake, wire in QUEUE_OPTIONS.items()}

    want = {}
    for i, (k, d) in enumerate(default.items()):
        if isinstance(d, bool):
            want[k] = not d
        elif isinstance(d, int):
            want[k] = 10 + i if d == 0 else 0
        else:
            pytest.fail(f"option {k} has an unexpected type {type(d).__name__}")
    assert 0 in want.values(), "zeros are among the values"
    answer = h.run(lambda c: c.queue(q).config(want).create())
    assert answer["options"] == {QUEUE_OPTIONS[k]: v for k, v in want.items()}
    got = h.run(lambda c: c.queue(q).options())
    assert got == want
    h.run(lambda c: c.queue(q).config(got).create())
    assert h.run(lambda c: c.queue(q).options()) == got, "read, configure, read changes nothing"
    h.run(lambda c: c.queue(q).config({}).create())
    assert h.run(lambda c: c.queue(q).options()) == default, "options left out are back at their defaults"
    h.raises(NotFoundError, lambda c: c.queue(qname("nope")).options())


def test_zero_options_are_sent(live):
    h = live()
    q = qname("zero")
    res = h.run(lambda c: c.queue(q).config(retry_limit=0, retryDelay=0, dead_letter_queue=False).create())
    assert res["options"]["retryLimit"] == 0 and res["options"]["retryDelay"] == 0
    got = h.run(lambda c: c.queue(q).options())
    assert got["retry_limit"] == 0 and got["retry_delay"] == 0 and got["lease_time"] == 300


def test_compat_subscription_mode_from_beginning_is_all(live):
    """The original clients send ``subscriptionMode=from_beginning``; the broker takes it as ``all``."""
    h = live()
    q = qname("frombeg")
    h.run(lambda c: c.queue(q).push_batch(["old-1", "old-2"]))
    got = h.run(lambda c: c.queue(q).group("g").subscription_mode("from_beginning").pop(batch=10, auto_ack=True))
    assert [m.data for m in got] == ["old-1", "old-2"]


def test_compat_subscription_mode_typo_is_refused(live):
    """Only the known spellings are accepted: a typo must not replay history silently."""
    h = live()
    q = qname("typo")
    h.run(lambda c: c.queue(q).push("x"))
    e = h.raises(BadRequestError, lambda c: c.queue(q).group("g").subscription_mode("from_begining").pop())
    assert "subscriptionMode" in str(e)


def test_compat_raw_status_config_configured_again(live):
    """An original client sends back the ``config`` it read, ``maxQueueSize`` included: accepted, and
    nothing changes."""
    h = live()
    q = qname("rawcfg")
    h.run(lambda c: c.queue(q).config(retry_limit=0, max_size=7, dead_letter_queue=True).create())
    raw = h.run(lambda c: c.status_queue(q))["queue"]["config"]
    assert raw["maxQueueSize"] == raw["maxSize"] == 7
    assert h.run(lambda c: c.queue(q).config(raw).create())["configured"] is True
    assert h.run(lambda c: c.status_queue(q))["queue"]["config"] == raw


def test_compat_configure_with_an_empty_queue_name(live):
    """``POST /api/v1/configure`` with ``"queue": ""`` answers ``configured: true``, as the original does."""
    h = live()
    res = h.run(lambda c: c.queue("").namespace("ns-" + uuid.uuid4().hex[:6]).create())
    assert res["configured"] is True and res["queue"] == ""


def test_compat_eviction_sweeps_a_partition_nobody_read(live):
    """``maxWaitTimeSeconds`` expires waiting messages of a partition no consumer has touched: a
    never-read partition is before its first message, for eviction as for seeks and lag."""
    h = live()
    q = qname("evict")
    h.run(lambda c: c.queue(q).config(retention_enabled=True, max_wait_time_seconds=1).create())
    h.run(lambda c: c.queue(q).partition("untouched").push("stale"))
    deadline = time.monotonic() + 30
    dead = []
    while not dead and time.monotonic() < deadline:
        time.sleep(0.2)  # the broker sweeps every 500 ms once the message is a second old
        dead = h.run(lambda c: c.dlq(q)).messages
    assert [(d.transaction_id is not None, d.error_message) for d in dead] == [(True, "max wait time exceeded")]
    assert h.run(lambda c: c.queue(q).pop(batch=10)) == [], "the expired message is not delivered"


def test_ack_rejections_are_reported_per_item(live):
    h = live()
    q = qname("rej")
    h.run(lambda c: c.queue(q).push_batch([1, 2]))
    msgs = h.run(lambda c: c.queue(q).pop(batch=2))
    assert h.run(lambda c: c.ack(msgs[0])).success
    again = h.run(lambda c: c.ack(msgs[0]))
    assert again.success and again.noop, "a harmless duplicate completion"
    bad = completed(msgs[1])
    bad.lease_id = str(uuid.uuid4())
    e = h.raises(AckError, lambda c: c.ack(bad))
    assert "lease" in e.reason and e.result.success is False
    res = h.run(lambda c: c.ack_batch([bad]))
    assert res[0].success is False and res[0].transaction_id == msgs[1].transaction_id


def test_failed_ack_redelivers(live):
    h = live()
    q = qname("redeliver")
    h.run(lambda c: c.queue(q).config(retry_limit=3, retry_delay=0).create())
    h.run(lambda c: c.queue(q).push("x", transaction_id="r-1"))
    [m] = h.run(lambda c: c.queue(q).pop())
    assert h.run(lambda c: c.ack(failed(m, "try again"))).success
    [m2] = h.run(lambda c: c.queue(q).pop(wait=True, timeout_millis=5000))
    assert m2.transaction_id == "r-1" and m2.retry_count == 1


def test_fan_out_groups_and_subscription_modes(live):
    h = live()
    q = qname("fan")
    h.run(lambda c: c.queue(q).push_batch(["old-1", "old-2"]))
    for g in ("a", "b"):
        got = h.run(lambda c: c.queue(q).group(g).pop(batch=10, auto_ack=True))
        assert [m.data for m in got] == ["old-1", "old-2"], "every group sees every message"
    assert h.run(lambda c: c.queue(q).group("fresh").subscription_mode("new").pop(batch=10)) == []
    assert h.run(lambda c: c.queue(q).group("fresh2").subscription_from("now").pop(batch=10)) == []
    cut = datetime.now(timezone.utc)
    time.sleep(0.02)
    h.run(lambda c: c.queue(q).push("new-1"))
    since = h.run(lambda c: c.queue(q).group("since").subscription_from(cut).pop(batch=10, auto_ack=True))
    assert [m.data for m in since] == ["new-1"]
    got = h.run(lambda c: c.queue(q).group("fresh").pop(batch=10, auto_ack=True))
    assert [m.data for m in got] == ["new-1"]


def test_buffered_producer(live, flavor):
    h = live()
    q = qname("producer")
    if flavor == "sync":
        p = h.client.queue(q).producer(batch_size=3, flush_interval_millis=60000)
        for i in range(4):
            p.add(i)
        assert p.pending() == 1, "three were sent when the buffer filled"
        p.flush()
        p.add(4)
        p.close()
    else:
        async def go(c):
            p = c.queue(q).producer(batch_size=3, flush_interval_millis=60000)
            for i in range(4):
                await p.add(i)
            assert p.pending() == 1
            await p.flush()
            await p.add(4)
            await p.close()
        h.run(go)
    msgs = h.run(lambda c: c.queue(q).pop(batch=10, auto_ack=True))
    assert [m.data for m in msgs] == [0, 1, 2, 3, 4]


def consume(h, flavor, q, handler, stop_when, **kw):
    """Runs consume until stop_when() is true after a handled message; returns when it stopped."""
    if flavor == "sync":
        stop = threading.Event()

        def wrapped(m):
            handler(m)
            if stop_when():
                stop.set()

        h.run(lambda c: c.queue(q).consume(wrapped, stop=stop, poll_timeout_millis=500, **kw))
        return

    async def go(c):
        stop = asyncio.Event()

        async def wrapped(m):
            out = handler(m)
            if asyncio.iscoroutine(out):
                await out
            if stop_when():
                stop.set()

        await asyncio.wait_for(c.queue(q).consume(wrapped, stop=stop, poll_timeout_millis=500, **kw), 60)

    h.run(go)


def test_consume_concurrency_exactly_once_and_graceful_stop(live, flavor):
    h = live()
    q = qname("consume")
    n = 200
    for part in range(4):
        h.run(lambda c: c.queue(q).partition(f"p{part}").push_batch(
            [PushItem(i, f"c-{part}-{i}") for i in range(n // 4)]))
    seen = []
    lock = threading.Lock()

    def handler(m):
        with lock:
            seen.append(m.transaction_id)

    consume(h, flavor, q, handler, lambda: len(seen) >= n, concurrency=4, batch=10)
    assert sorted(seen) == sorted(f"c-{p}-{i}" for p in range(4) for i in range(n // 4)), "each message once"
    assert h.run(lambda c: c.queue(q).pop(wait=True, timeout_millis=200)) == [], "everything was acknowledged"


def test_consume_poison_message_is_dead_lettered_and_rest_continues(live, flavor):
    h = live()
    q = qname("poison")
    h.run(lambda c: c.queue(q).config(retry_limit=1, retry_delay=10).create())
    h.run(lambda c: c.queue(q).push_batch([PushItem(1, "a"), PushItem(2, "b"), PushItem(3, "c")]))
    seen = []

    def handler(m):
        seen.append(m.transaction_id)
        if m.transaction_id == "b":
            raise RuntimeError("poison")

    consume(h, flavor, q, handler, lambda: "c" in seen, batch=10)
    assert seen == ["a", "b", "b", "c"], "b is retried once, dead-lettered, then c is processed"
    page = h.run(lambda c: c.dlq(q))
    assert [(d.transaction_id, d.error_message) for d in page.messages] == [("b", "poison")]


def test_consume_renews_leases(live, flavor):
    h = live()
    q = qname("renew")
    h.run(lambda c: c.queue(q).config(lease_time=1).create())
    h.run(lambda c: c.queue(q).push("slow", transaction_id="slow-1"))
    seen = []

    def slow(m):
        seen.append(m.transaction_id)
        time.sleep(2.2)  # twice the lease: only the renewal keeps it

    async def slow_async(m):
        seen.append(m.transaction_id)
        await asyncio.sleep(2.2)

    consume(h, flavor, q, slow if flavor == "sync" else slow_async, lambda: True, lease_renewal_millis=300)
    assert seen == ["slow-1"]
    assert h.run(lambda c: c.queue(q).pop(wait=True, timeout_millis=1500)) == [], \
        "the renewed lease held, so the ack was accepted and nothing redelivers"


def test_transactions(live):
    h = live()
    src, dst = qname("tx-src"), qname("tx-dst")
    h.run(lambda c: c.queue(src).push("in", transaction_id="in-1"))
    [m] = h.run(lambda c: c.queue(src).pop())
    res = h.run(lambda c: c.transaction().ack(m).queue(dst).partition("p").push(PushItem("out", "out-1")).commit())
    assert res.success and res.transaction_id
    [o] = h.run(lambda c: c.queue(dst).pop(auto_ack=True))
    assert o.data == "out" and o.partition == "p"
    assert h.run(lambda c: c.queue(src).pop()) == [], "the input was acknowledged atomically"

    e = h.raises(TransactionError, lambda c: c.transaction().queue(dst).partition("p").push(PushItem("again", "out-1")).commit())
    assert e.code == "QDUP", "a duplicate push rolls the whole transaction back"


def test_extend_lease(live):
    h = live()
    q = qname("lease")
    h.run(lambda c: c.queue(q).push(1))
    [m] = h.run(lambda c: c.queue(q).pop())
    r = h.run(lambda c: c.extend_lease(m, 120))
    assert r.success and r.expires_at > datetime.now(timezone.utc) + timedelta(seconds=60)
    h.run(lambda c: c.ack(m))
    h.raises(LeaseLostError, lambda c: c.extend_lease(m, 10))
    h.raises(LeaseLostError, lambda c: c.extend_lease(str(uuid.uuid4()), 10))


def test_dead_letter_queue(live):
    h = live()
    q = qname("dlq")
    h.run(lambda c: c.queue(q).push({"k": "v"}, transaction_id="d-1"))
    [m] = h.run(lambda c: c.queue(q).pop())
    assert h.run(lambda c: c.ack(dead_letter(m, "poison"))).dlq
    page = h.run(lambda c: c.dlq(q, limit=10))
    assert page.total == 1 and page.messages[0].transaction_id == "d-1"
    dl = page.messages[0]
    assert dl.error_message == "poison" and dl.data == {"k": "v"}
    assert h.run(lambda c: c.queue(q).dlq()).total == 1
    assert h.run(lambda c: c.dlq_message(dl.partition_id, dl.transaction_id)).transaction_id == "d-1"
    h.run(lambda c: c.retry_dlq_message(dl.partition_id, dl.transaction_id))
    [again] = h.run(lambda c: c.queue(q).pop())
    assert again.transaction_id == "d-1", "a retried dead letter is delivered again"
    h.run(lambda c: c.ack(dead_letter(again, "still poison")))
    h.run(lambda c: c.delete_dlq_message(dl.partition_id, dl.transaction_id))
    h.raises(NotFoundError, lambda c: c.dlq_message(dl.partition_id, dl.transaction_id))


def test_consumer_groups_admin(live):
    h = live()
    q, q2 = qname("cg"), qname("cg2")
    g = "workers-" + uuid.uuid4().hex[:6]
    h.run(lambda c: c.queue(q).push_batch([1, 2, 3]))
    msgs = h.run(lambda c: c.queue(q).group(g).pop(batch=3))
    assert all(r.success for r in h.run(lambda c: c.ack_batch(msgs)))
    assert g in {x["name"] for x in h.run(lambda c: c.consumer_groups())}
    assert q in h.run(lambda c: c.consumer_group(g).get())
    assert isinstance(h.run(lambda c: c.lagging_partitions(3600)), list)

    sr = h.run(lambda c: c.consumer_group(g).seek_to(q, datetime.now(timezone.utc) - timedelta(hours=1)))
    assert sr["success"] and sr["partitionsUpdated"] == 1
    assert len(h.run(lambda c: c.queue(q).group(g).pop(batch=10, auto_ack=True))) == 3, "replay"
    h.run(lambda c: c.queue(q).push_batch([4, 5]))
    assert h.run(lambda c: c.consumer_group(g).seek_to_end(q))["seekToEnd"]
    assert h.run(lambda c: c.queue(q).group(g).pop()) == []
    h.run(lambda c: c.queue(q).push(6))
    assert h.run(lambda c: c.consumer_group(g).seek_partition_to_end(q, "Default"))["success"]
    assert h.run(lambda c: c.queue(q).group(g).pop()) == []
    assert h.run(lambda c: c.consumer_group(g).set_subscription(datetime.now(timezone.utc)))["success"]

    h.run(lambda c: c.queue(q2).push(1))
    h.run(lambda c: c.queue(q2).group(g).pop(auto_ack=True))
    d = h.run(lambda c: c.consumer_group(g).delete_for_queue(q))
    assert d["success"] and d["queueName"] == q
    left = h.run(lambda c: c.consumer_group(g).get())
    assert q not in left and q2 in left
    assert h.run(lambda c: c.delete_consumer_group(g))["success"]
    h.raises(NotFoundError, lambda c: c.consumer_group(g).delete())


def test_queue_resources_and_delete(live):
    h = live()
    q = qname("res")
    ns = "ns-" + uuid.uuid4().hex[:6]
    h.run(lambda c: c.queue(q).namespace(ns).task("tk").create())
    h.run(lambda c: c.queue(q).partition("a").push_batch([1, 2]))
    found = [x for x in h.run(lambda c: c.queues()) if x["name"] == q]
    assert found and found[0]["namespace"] == ns
    info = h.run(lambda c: c.queue(q).info())
    assert info["name"] == q and "a" in [p["name"] for p in info["partitions"]]
    h.raises(NotFoundError, lambda c: c.queue(qname("nope")).info())
    assert h.run(lambda c: c.queue(q).delete()) is True
    assert h.run(lambda c: c.queue(q).delete()) is False
    h.raises(NotFoundError, lambda c: c.queue(q).info())


def test_pop_by_namespace_and_task(live):
    h = live()
    shop, bank = "shop-" + uuid.uuid4().hex[:6], "bank-" + uuid.uuid4().hex[:6]
    low, high, other = qname("low"), qname("high"), qname("other")
    h.run(lambda c: c.queue(low).namespace(shop).task("mail").config(priority=1).create())
    h.run(lambda c: c.queue(high).namespace(shop).task("mail").config({"priority": 9}).create())
    h.run(lambda c: c.queue(other).namespace(bank).create())
    for name in (low, high, other):
        h.run(lambda c: c.queue(name).push(name))
    [m] = h.run(lambda c: c.matching(shop).pop(auto_ack=True))
    assert m.queue == high, "highest priority first"
    [m] = h.run(lambda c: c.matching(shop, "mail").pop())
    assert m.queue == low
    h.run(lambda c: c.ack(m))
    assert h.run(lambda c: c.matching(shop, "mail").pop(wait=True, timeout_millis=100)) == []


def test_status_health_and_raw(live):
    h = live()
    q = qname("st")
    h.run(lambda c: c.queue(q).push(1))
    assert isinstance(h.run(lambda c: c.health()), dict)
    assert isinstance(h.run(lambda c: c.status(queue=q)), dict)
    assert h.run(lambda c: c.status_queues()) is not None
    assert isinstance(h.run(lambda c: c.status_queue(q)), dict)
    assert h.run(lambda c: c.status_queue_messages(q, limit=10)) is not None
    assert h.run(lambda c: c.get_raw("/api/v1/status/buffers")) is not None
    h.raises(NotFoundError, lambda c: c.status_queue(qname("missing")))
    e = h.raises(NotFoundError, lambda c: c.get_raw("/api/v1/no-such-thing"))
    assert e.code == "no_such_route"


def test_maintenance_modes(live):
    h = live()
    q = qname("maint")
    assert h.run(lambda c: c.maintenance())["maintenanceMode"] is False
    try:
        assert h.run(lambda c: c.set_maintenance(True))["maintenanceMode"] is True
        assert h.run(lambda c: c.queue(q).push(1)).status == "buffered"
    finally:
        h.run(lambda c: c.set_maintenance(False))
    try:
        assert h.run(lambda c: c.set_pop_maintenance(True))["popMaintenanceMode"] is True
        assert h.run(lambda c: c.pop_maintenance())["popMaintenanceMode"] is True
        assert h.run(lambda c: c.queue(q).pop()) == [], "pop maintenance answers 204"
    finally:
        h.run(lambda c: c.set_pop_maintenance(False))
    deadline = time.monotonic() + 30
    got = []
    while not got and time.monotonic() < deadline:
        got = h.run(lambda c: c.queue(q).pop(wait=True, timeout_millis=500, auto_ack=True))
    assert [m.data for m in got] == [1], "the buffered push is replayed once the spool drains"


def test_auth_broker_requires_a_token(live, sdkenv):
    q = qname("auth")
    anon = live(sdkenv["authBroker"])
    e = anon.raises(UnauthorizedError, lambda c: c.queue(q).push(1))
    assert e.terminal
    admin = live(sdkenv["authBroker"], token=sdkenv["adminToken"])
    assert admin.run(lambda c: c.queue(q).push(1)).status == "queued"


# ---- through the proxy ----


def test_proxy_read_write_key_works_and_read_only_key_is_403(live, sdkenv):
    q = qname("proxy")
    rw = live(sdkenv["proxy"], token=sdkenv["keys"]["readWrite"])
    assert rw.run(lambda c: c.queue(q).push(1)).status == "queued"
    [m] = rw.run(lambda c: c.queue(q).pop(wait=True, timeout_millis=1000))
    assert rw.run(lambda c: c.ack(m)).success

    ro = live(sdkenv["proxy"], token=sdkenv["keys"]["readOnly"])
    e = ro.raises(ForbiddenError, lambda c: c.queue(q).push(2))
    assert e.status == 403 and e.terminal
    # An empty pop and a terminal 403 are told apart by pop() itself.
    assert rw.run(lambda c: c.queue(q).pop(wait=True, timeout_millis=100)) == []
    e = ro.raises(ForbiddenError, lambda c: c.queue(q).pop(wait=True, timeout_millis=100))
    assert e.status == 403
    assert ro.sleeps == [], "a 403 is never retried"


def test_proxy_own_403_carries_its_code(live, sdkenv):
    q = qname("exhausted")
    ex = live(sdkenv["proxyExhausted"], token=sdkenv["keys"]["exhausted"])
    e = ex.raises(ForbiddenError, lambda c: c.queue(q).push(1))
    assert e.status == 403 and e.code == "quota_exceeded" and e.terminal
    assert ex.sleeps == [], "a 403 is never retried"
    # The quota gates pushes only: the same key still pops.
    assert ex.run(lambda c: c.queue(q).pop(wait=True, timeout_millis=100)) == []


def test_proxy_413_is_terminal_and_typed(live, sdkenv):
    q = qname("big")
    rw = live(sdkenv["proxy"], token=sdkenv["keys"]["readWrite"])
    e = rw.raises(PayloadTooLargeError, lambda c: c.queue(q).push("x" * (sdkenv["maxPayloadBytes"] + 1)))
    assert e.status == 413 and e.code == "payload_too_large" and e.terminal
    assert rw.sleeps == []
    assert rw.run(lambda c: c.queue(q).push("small")).status == "queued"


def test_proxy_429_is_retried_in_place_with_retry_after(live, sdkenv, flavor):
    url, key = sdkenv["proxyThrottled"], sdkenv["keys"]["throttled"]
    q = qname("throttle")
    # With a budget of one attempt, the burst runs out and the 429 surfaces with its code.
    strict = live(url, token=key, retry_429=Retry429(max_attempts=1))
    err = None
    for i in range(int(sdkenv["requestBurst"]) + 3):
        try:
            strict.run(lambda c: c.queue(q).push(i))
        except RateLimitedError as e:
            err = e
            break
    assert err is not None, "the throttled plan answers 429 past its burst"
    assert err.code == "rate_limited" and err.retry_after and err.retry_after >= 1 and not err.terminal
    # The default policy waits Retry-After (jittered +/-20%) in place and succeeds, without failover.
    patient = live(url, sdkenv["proxy"], token=key)
    for i in range(int(sdkenv["requestBurst"]) + 1):
        assert patient.run(lambda c: c.queue(q).push(i)).status in ("queued", "duplicate")
    assert patient.sleeps, "at least one 429 was waited out"
    for d in patient.sleeps:
        # At 1 request/s the deficit is at most one token, so Retry-After is 1 s: +/-20% of 1000 ms.
        assert 0.8 <= d <= 1.2
    assert all(patient.client.backend_health().values()), "a 429 never marks a backend unhealthy"
