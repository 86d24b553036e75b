// The SDK's interpretation of answers (per-item acks, push results, pop, transactions, leases) and its
// loops (producer, consume) against a scripted local HTTP server.

import { test } from "node:test";
import assert from "node:assert/strict";
import {
  Queen, AckError, MalformedResponseError, TransactionError, LeaseLostError, ForbiddenError, RateLimitedError,
  ProducerClosedError, QueenError, ApiError, completed, failed, deadLetter, release, isTerminal, QUEUE_MODE,
} from "../dist/index.js";
import { scripted, testClient, popBody, msg } from "./scripted.js";

test("ack batch results are checked item by item", async (t) => {
  const acks = [completed(msg("a")), failed(msg("b"), "boom")];
  const cases = {
    "too few": [{ index: 0, transactionId: "a", success: true }],
    "too many": [{ index: 0, transactionId: "a", success: true }, { index: 1, transactionId: "b", success: true }, { index: 2, transactionId: "c", success: true }],
    misaligned: [{ index: 1, transactionId: "b", success: true }, { index: 0, transactionId: "a", success: false }],
    "merged index": [{ index: 7, transactionId: "a", success: true }, { index: 8, transactionId: "b", success: true }],
    "wrong tx": [{ index: 0, transactionId: "a", success: true }, { index: 1, transactionId: "zzz", success: true }],
    "no success flag": [{ index: 0, transactionId: "a" }, { index: 1, transactionId: "b", success: true }],
    "not an array": { success: true },
  };
  for (const [name, body] of Object.entries(cases)) {
    const srv = await scripted(t, { status: 200, body });
    const { client } = testClient({}, 0.5, srv.url);
    await assert.rejects(client.ack(acks), MalformedResponseError, name);
  }
});

test("ack batch: wire shape and per-item results", async (t) => {
  const srv = await scripted(t, {
    status: 200,
    body: [
      { index: 0, transactionId: "a", success: true, error: null, leaseReleased: false, dlq: false, noop: false },
      { index: 1, transactionId: "b", success: false, error: "invalid or expired lease", leaseReleased: false, dlq: false, noop: false },
    ],
  });
  const { client } = testClient({}, 0.5, srv.url);
  const res = await client.ack([completed(msg("a")), failed(msg("b"), "boom")]);
  assert.equal(res.length, 2);
  assert.equal(res[0].success, true);
  assert.equal(res[1].success, false);
  assert.equal(res[1].error, "invalid or expired lease");
  assert.equal(res[1].transactionId, "b");
  const r = srv.reqs[0];
  assert.equal(r.path, "/api/v1/ack/batch");
  assert.deepEqual(r.body, {
    consumerGroup: "g",
    acknowledgments: [
      { transactionId: "a", partitionId: "p1", leaseId: "L", status: "completed" },
      { transactionId: "b", partitionId: "p1", leaseId: "L", status: "failed", error: "boom" },
    ],
  });
  await assert.rejects(client.ack([msg("a"), msg("x", { consumerGroup: "other" })]), /mixes consumer groups/, "mixed groups are refused client-side");
  await assert.rejects(client.ack({ transactionId: "a" }), QueenError, "partitionId is required");
  assert.deepEqual(await client.ack([]), []);
});

test("ack: messages with a status shorthand, group and error overrides", async (t) => {
  const srv = await scripted(t, (req) => ({
    status: 200,
    body: (req.body.acknowledgments ?? [req.body]).map((a, i) => ({ index: i, transactionId: a.transactionId, success: true })),
  }));
  const { client } = testClient({}, 0.5, srv.url);
  await client.ack([msg("a"), msg("b")], false, { error: "why", group: "g2" });
  assert.deepEqual(srv.reqs[0].body.acknowledgments.map((a) => [a.status, a.error]), [["failed", "why"], ["failed", "why"]]);
  assert.equal(srv.reqs[0].body.consumerGroup, "g2");
  await client.ack(msg("c"), "dlq", { error: "poison" });
  assert.deepEqual(srv.reqs[1].body, { transactionId: "c", partitionId: "p1", leaseId: "L", status: "dlq", consumerGroup: "g", error: "poison" });
  await client.ack(msg("d", { consumerGroup: QUEUE_MODE, leaseId: "" }));
  assert.deepEqual(srv.reqs[2].body, { transactionId: "d", partitionId: "p1", status: "completed", consumerGroup: QUEUE_MODE });
  assert.equal(deadLetter(msg("e"), "x").status, "dlq");
  assert.equal(release(msg("e")).status, "retry");
  await assert.rejects(client.ack(msg("f"), "maybe"), /unknown ack status/);
});

test("single ack: a rejection throws AckError with the result; a noop is success", async (t) => {
  const srv = await scripted(t, { status: 200, body: [{ index: 0, transactionId: "a", success: false, error: "already committed: the cursor moved past this message before this ack" }] });
  const { client } = testClient({}, 0.5, srv.url);
  const err = await client.ack(msg("a")).catch((e) => e);
  assert.ok(err instanceof AckError);
  assert.equal(err.transactionId, "a");
  assert.match(err.reason, /already committed/);
  assert.equal(err.result.success, false);
  assert.equal(srv.reqs[0].path, "/api/v1/ack");

  const noop = await scripted(t, { status: 200, body: [{ index: 0, transactionId: "a", success: true, noop: true }] });
  const { client: c2 } = testClient({}, 0.5, noop.url);
  const r = await c2.ack(msg("a"));
  assert.equal(r.success, true);
  assert.equal(r.noop, true);

  const truncated = await scripted(t, { status: 200, body: [] });
  const { client: c3 } = testClient({}, 0.5, truncated.url);
  await assert.rejects(c3.ack(msg("a")), MalformedResponseError, "a truncated answer fails loudly");
});

test("push results are checked against the request", async (t) => {
  for (const body of [
    [{ index: 0, status: "queued" }, { index: 0, status: "queued" }],
    [{ index: 0, status: "queued" }],
    [{ index: 0, transaction_id: "x", status: "queued" }, { index: 1, transaction_id: "zzz", status: "queued" }],
  ]) {
    const srv = await scripted(t, { status: 201, body });
    const { client } = testClient({}, 0.5, srv.url);
    await assert.rejects(client.queue("q").push([{ payload: 1, transactionId: "x" }, { payload: 2, transactionId: "y" }]), MalformedResponseError);
  }
});

test("push: item shapes, generated ids, partition, result fields", async (t) => {
  const srv = await scripted(t, (req) => ({
    status: 201,
    body: req.body.items.map((it, i) => ({ index: i, transaction_id: it.transactionId, status: i === 1 ? "duplicate" : "queued", message_id: "m" + i, partition_id: "p", trace_id: null, queueName: "q" })),
  }));
  const { client } = testClient({}, 0.5, srv.url);
  const tr = "019dc9b7-cb4f-7c1a-9b21-7e8a5c3a40e1";
  const res = await client.queue("q").partition("u1").push([{ payload: { a: 1 }, transactionId: "t1", traceId: tr }, { data: "d" }, 42, { other: true }]);
  const items = srv.reqs[0].body.items;
  assert.deepEqual(items[0], { queue: "q", partition: "u1", payload: { a: 1 }, transactionId: "t1", traceId: tr });
  assert.equal(items[1].payload, "d");
  assert.equal(items[2].payload, 42);
  assert.deepEqual(items[3].payload, { other: true }, "an object without payload/data is the payload");
  assert.match(items[1].transactionId, /^[0-9a-f-]{36}$/);
  assert.notEqual(items[1].transactionId, items[2].transactionId);
  assert.deepEqual(res.map((r) => r.status), ["queued", "duplicate", "queued", "queued"]);
  assert.equal(res[0].messageId, "m0");
  assert.equal(res[1].transactionId, items[1].transactionId);
  assert.deepEqual(await client.queue("q").push([]), [], "an empty push makes no request");
  assert.equal(srv.count, 1);
  await assert.rejects(client.queue("").push(1), /empty queue name/);
});

test("pop: 204 is [] and nothing else is; a 403 is a typed error", async (t) => {
  const empty = await scripted(t, { status: 204 });
  const { client, sleeps } = testClient({}, 0.5, empty.url);
  const msgs = await client.queue("q").partition("p").group("g").subscriptionMode("new").pop({ batch: 5, wait: true, timeoutMillis: 2000, autoAck: true });
  assert.deepEqual(msgs, []);
  assert.deepEqual(sleeps, []);
  assert.equal(empty.reqs[0].path, "/api/v1/pop/queue/q/partition/p");
  assert.equal(empty.reqs[0].query, "autoAck=true&batch=5&consumerGroup=g&subscriptionMode=new&timeout=2000&wait=true");

  for (const [status, code] of [[401, "unauthorized"], [403, "cluster_suspended"], [403, undefined]]) {
    const srv = await scripted(t, { status, body: { error: "Insufficient permissions", ...(code ? { code } : {}) } });
    const logged = [];
    const c = new Queen({ url: srv.url, logger: { warn: (m, f) => logged.push(f) } });
    const err = await c.queue("q").pop({ wait: true }).catch((e) => e);
    assert.ok(err instanceof ApiError, "never disguised as no messages");
    assert.equal(err.status, status);
    assert.equal(err.code, code);
    assert.equal(isTerminal(err), true);
    if (status === 403) assert.ok(err instanceof ForbiddenError);
    assert.equal(srv.count, 1);
    assert.deepEqual([logged[0].status, logged[0].code], [status, code], "logged with its code, and thrown");
  }
});

test("pop decodes messages", async (t) => {
  const srv = await scripted(t, { status: 200, body: popBody });
  const { client } = testClient({}, 0.5, srv.url);
  const [m] = await client.queue("q").pop();
  assert.equal(m.id, "m1");
  assert.equal(m.transactionId, "t1");
  assert.equal(m.leaseId, "L");
  assert.equal(m.partitionId, "p1");
  assert.equal(m.consumerGroup, QUEUE_MODE);
  assert.equal(m.retryCount, 2);
  assert.equal(m.queue, "q");
  assert.deepEqual(m.data, { n: 1 });
  assert.equal(m.createdAt, "2026-04-26T10:59:28.267966Z");
  assert.equal(srv.reqs[0].query, "");
});

test("pop: a snapshot-style stored-procedure failure in a 200 is an error, the empty reasons are not", async (t) => {
  const bad = await scripted(t, { status: 200, body: { success: false, error: "ERROR: boom", messages: [] } });
  const { client } = testClient({}, 0.5, bad.url);
  await assert.rejects(client.queue("q").pop(), /ERROR: boom/);
  const held = await scripted(t, { status: 200, body: { success: false, error: "lease_held", messages: [] } });
  const { client: c2 } = testClient({}, 0.5, held.url);
  assert.deepEqual(await c2.queue("q").pop(), []);
});

test("matching pops by namespace and task, subscriptionFrom is sent", async (t) => {
  const srv = await scripted(t, { status: 204 });
  const { client } = testClient({}, 0.5, srv.url);
  assert.deepEqual(await client.matching("billing", "invoice").pop({ batch: 3 }), []);
  assert.equal(srv.reqs[0].path, "/api/v1/pop");
  assert.equal(srv.reqs[0].query, "batch=3&namespace=billing&task=invoice");
  await client.queue("a/b").group("g").subscriptionFrom(new Date(Date.UTC(2026, 0, 2))).pop();
  assert.equal(srv.reqs[1].path, "/api/v1/pop/queue/a%2Fb");
  assert.equal(srv.reqs[1].query, "consumerGroup=g&subscriptionFrom=2026-01-02T00%3A00%3A00.000Z");
  assert.throws(() => client.matching("", ""), /namespace or a task/);
});

test("transaction: rollback throws TransactionError with its code; wire shape", async (t) => {
  const srv = await scripted(t, { status: 200, body: { transactionId: "T", success: false, error: "QDUP duplicate transactionId x in next/p", results: [] } });
  const { client } = testClient({}, 0.5, srv.url);
  const err = await client.transaction().ack(msg("a")).queue("next").partition("p").push({ payload: 1, transactionId: "x" }).commit().catch((e) => e);
  assert.ok(err instanceof TransactionError);
  assert.equal(err.code, "QDUP");
  assert.equal(err.transactionId, "T");
  assert.deepEqual(srv.reqs[0].body, {
    operations: [
      { type: "ack", transactionId: "a", partitionId: "p1", leaseId: "L", status: "completed", consumerGroup: "g" },
      { type: "push", items: [{ queue: "next", partition: "p", payload: 1, transactionId: "x" }] },
    ],
  });

  const ok = await scripted(t, { status: 200, body: { transactionId: "T", success: true, results: [{ index: 0, type: "ack", success: true }] } });
  const { client: c2 } = testClient({}, 0.5, ok.url);
  const res = await c2.transaction().ack(msg("a", { consumerGroup: "" })).commit();
  assert.equal(res.success, true);
  assert.equal(ok.reqs[0].body.operations[0].consumerGroup, QUEUE_MODE);
  await assert.rejects(c2.transaction().commit(), /empty transaction/);
  await assert.rejects(c2.transaction().ack({ transactionId: "x" }).commit(), /partitionId/);

  const qtxn = await scripted(t, { status: 200, body: { transactionId: "T2", success: false, error: "QTXN ack rejected: invalid or expired lease", results: [] } });
  const { client: c3 } = testClient({}, 0.5, qtxn.url);
  const e3 = await c3.transaction().ack(msg("a")).commit().catch((e) => e);
  assert.equal(e3.code, "QTXN");
});

test("renew: wire shape, LeaseLostError on success:false and on 404", async (t) => {
  const srv = await scripted(t, { status: 200, body: [{ index: 0, leaseId: "L", success: true, error: null, expiresAt: "2026-04-26T11:04:28.267Z" }] });
  const { client } = testClient({}, 0.5, srv.url);
  const r = await client.renew(msg("a"), 1.5);
  assert.equal(r.expiresAt, "2026-04-26T11:04:28.267Z");
  assert.equal(srv.reqs[0].path, "/api/v1/lease/L/extend");
  assert.deepEqual(srv.reqs[0].body, { seconds: 2 });

  const bad = await scripted(t, { status: 200, body: [{ index: 0, leaseId: "L", success: false, error: "Lease already expired", expiresAt: null }] });
  const { client: c2 } = testClient({}, 0.5, bad.url);
  const err = await c2.renew("L").catch((e) => e);
  assert.ok(err instanceof LeaseLostError);
  assert.match(err.message, /Lease already expired/);

  const missing = await scripted(t, { status: 404, body: { error: "Lease not found" } });
  const { client: c3 } = testClient({}, 0.5, missing.url);
  await assert.rejects(c3.renew("L"), LeaseLostError);
});

function pushCounter(t) {
  const batches = [];
  const txs = new Set();
  return scripted(t, (req) => {
    batches.push(req.body.items.length);
    for (const it of req.body.items) txs.add(it.transactionId);
    return { status: 201, body: req.body.items.map((it, i) => ({ index: i, transaction_id: it.transactionId, status: "queued" })) };
  }).then((srv) => ({ srv, batches, txs }));
}

test("producer flushes by count, by time and on close", async (t) => {
  const { srv, batches, txs } = await pushCounter(t);
  const client = new Queen(srv.url);
  const p = client.queue("q").producer({ batchSize: 10, flushIntervalMillis: 3_600_000 });
  for (let i = 0; i < 25; i++) await p.add({ payload: i });
  assert.deepEqual(batches, [10, 10]);
  assert.equal(p.buffered, 5);
  await p.close();
  assert.deepEqual(batches, [10, 10, 5], "close flushes the rest");
  assert.equal(txs.size, 25, "every item got its own transaction id");
  await assert.rejects(p.add(1), ProducerClosedError);
  const order = srv.reqs.flatMap((r) => r.body.items.map((it) => it.payload));
  assert.deepEqual(order, Array.from({ length: 25 }, (_, i) => i), "batches leave in add order");

  // By time: the timer is armed by the first buffered item.
  const p2 = client.queue("q").producer({ batchSize: 1000, flushIntervalMillis: 5 });
  const sent = new Promise((resolve) => {
    const iv = setInterval(() => { if (txs.size === 28) { clearInterval(iv); resolve(); } }, 2);
  });
  await p2.add([1, 2, 3]);
  await sent;
  assert.equal(p2.buffered, 0);
  await p2.close();
});

test("producer: a failed flush keeps the items in order; a failed background flush goes to onError", async (t) => {
  let fail = true;
  const srv = await scripted(t, (req) =>
    fail ? { status: 403, body: { error: "blocked", code: "push_blocked" } } : { status: 201, body: req.body.items.map((it, i) => ({ index: i, transaction_id: it.transactionId, status: "queued" })) });
  const client = new Queen(srv.url);
  const p = client.queue("q").producer({ batchSize: 2, flushIntervalMillis: 3_600_000 });
  await assert.rejects(p.add([1, 2]), ForbiddenError);
  assert.equal(p.buffered, 2);
  fail = false;
  const res = await p.flush();
  assert.deepEqual(res.map((r) => r.status), ["queued", "queued"]);
  assert.deepEqual(srv.reqs[1].body.items.map((i) => i.payload), [1, 2]);
  assert.equal(srv.reqs[1].body.items[0].transactionId, srv.reqs[0].body.items[0].transactionId, "the retry keeps the ids");
  await p.close();

  fail = true;
  const got = await new Promise((resolve) => {
    const p3 = client.queue("q").producer({ batchSize: 100, flushIntervalMillis: 1, onError: (err, items) => resolve({ err, items }) });
    p3.add([{ payload: 7, transactionId: "seven" }]);
  });
  assert.ok(got.err instanceof ForbiddenError);
  assert.equal(got.err.code, "push_blocked");
  assert.deepEqual(got.items, [{ payload: 7, transactionId: "seven" }]);
});

test("consume: a terminal 403 stops every worker and rejects; the code is logged", async (t) => {
  const srv = await scripted(t, { status: 403, body: { error: "Insufficient permissions", code: "quota_exceeded" } });
  const logs = [];
  const client = new Queen({ url: srv.url, logger: { error: (m, f) => logs.push([m, f]) } });
  const err = await client.queue("q").consume(() => {}, { concurrency: 3 }).catch((e) => e);
  assert.ok(err instanceof ForbiddenError);
  assert.equal(err.code, "quota_exceeded");
  assert.ok(srv.count >= 1 && srv.count <= 3, "each worker stops after its first terminal answer");
  assert.equal(logs[0][1].code, "quota_exceeded");
  assert.equal(logs[0][1].status, 403);
});

test("consume: an exhausted 429 budget backs off by Retry-After and keeps polling", async (t) => {
  const ctl = new AbortController();
  const srv = await scripted(t, (req, n) => {
    if (n < 2) return { status: 429, body: { error: "slow down", code: "rate_limited" }, headers: { "Retry-After": "3" } };
    ctl.abort();
    return { status: 204 };
  });
  const sleeps = [];
  const warns = [];
  const client = new Queen({
    url: srv.url, retry429: { maxAttempts: 1 }, random: () => 0.5,
    logger: { warn: (m, f) => warns.push(f) },
    sleep: async (ms, signal) => { sleeps.push(ms); if (signal?.aborted) throw signal.reason; },
  });
  await client.queue("q").consume(() => {}, { signal: ctl.signal, errorBackoffMillis: 10 });
  assert.deepEqual(sleeps, [3000, 3000], "Retry-After beats the shorter error backoff");
  assert.equal(warns[0].code, "rate_limited");
  assert.ok(srv.count >= 3);
});

/** Serves one pop of three messages (a, b, c) of one partition, then 204 (and stops the consumer), recording ack batches. */
async function consumeFixture(t, dlqOnFail, ctl) {
  const batches = [];
  let pops = 0;
  const srv = await scripted(t, (req) => {
    if (req.path === "/api/v1/pop/queue/q") {
      if (++pops > 1) {
        ctl.abort();
        return { status: 204 };
      }
      const m = (id, tx) => ({ id, transactionId: tx, data: Number(id), partitionId: "p1", partition: "P", leaseId: "L", consumerGroup: QUEUE_MODE, createdAt: "2026-04-26T10:59:28.267966Z" });
      return { status: 200, body: { success: true, leaseId: "L", messages: [m("1", "a"), m("2", "b"), m("3", "c")] } };
    }
    if (req.path === "/api/v1/ack/batch") {
      batches.push(req.body.acknowledgments);
      return { status: 200, body: req.body.acknowledgments.map((a, i) => ({ index: i, transactionId: a.transactionId, success: true, dlq: a.status === "failed" && dlqOnFail })) };
    }
    return { status: 404, body: { error: "Not Found", code: "no_such_route" } };
  });
  return { client: new Queen(srv.url), batches };
}

async function consumeFailing(t, dlqOnFail, fail) {
  const ctl = new AbortController();
  const { client, batches } = await consumeFixture(t, dlqOnFail, ctl);
  const seen = [];
  await client.queue("q").consume((m) => {
    seen.push(m.transactionId);
    if (m.transactionId === fail) throw new Error("bad " + fail);
  }, { signal: ctl.signal, pollTimeoutMillis: 10 });
  return { seen, batches };
}

test("consume: a handler failure acks it failed and leaves the rest of the partition's batch to redeliver", async (t) => {
  const { seen, batches } = await consumeFailing(t, false, "b");
  assert.deepEqual(seen, ["a", "b"]);
  assert.equal(batches.length, 1, "the failure flushes the acks so far, in order");
  assert.deepEqual(batches[0].map((a) => [a.transactionId, a.status, a.error]), [["a", "completed", undefined], ["b", "failed", "bad b"]]);
});

test("consume: after a dead-lettered failure the rest of the batch continues", async (t) => {
  const { seen, batches } = await consumeFailing(t, true, "b");
  assert.deepEqual(seen, ["a", "b", "c"]);
  assert.equal(batches.length, 2);
  assert.equal(batches[0][1].status, "failed");
  assert.deepEqual([batches[1][0].transactionId, batches[1][0].status], ["c", "completed"]);
});

test("consume: all handled messages are acked in one batch; manualAck sends none", async (t) => {
  const { seen, batches } = await consumeFailing(t, false, "none");
  assert.deepEqual(seen, ["a", "b", "c"]);
  assert.deepEqual(batches.map((b) => b.map((a) => a.transactionId)), [["a", "b", "c"]]);

  const ctl = new AbortController();
  const { client, batches: b2 } = await consumeFixture(t, false, ctl);
  let n = 0;
  await client.queue("q").consume(() => { n++; }, { signal: ctl.signal, manualAck: true, pollTimeoutMillis: 10 });
  assert.equal(n, 3);
  assert.equal(b2.length, 0);
});

test("consume: a graceful stop finishes and acks the batch in flight", async (t) => {
  const ctl = new AbortController();
  const { client, batches } = await consumeFixture(t, false, new AbortController());
  const seen = [];
  await client.queue("q").consume(async (m) => {
    seen.push(m.transactionId);
    if (seen.length === 1) ctl.abort(); // stop while the batch is in flight
    await new Promise((r) => setTimeout(r, 2));
  }, { signal: ctl.signal, concurrency: 2, pollTimeoutMillis: 10 });
  assert.deepEqual(seen, ["a", "b", "c"], "the received batch is finished");
  assert.deepEqual(batches.map((b) => b.map((a) => a.transactionId)), [["a", "b", "c"]], "and acknowledged");
});

test("consume: lease renewal extends the lease while the handler runs", async (t) => {
  const ctl = new AbortController();
  let extended;
  const extendedOnce = new Promise((r) => { extended = r; });
  const srv = await scripted(t, (req, n) => {
    if (req.path.endsWith("/extend")) {
      extended(req);
      return { status: 200, body: [{ index: 0, leaseId: "L", success: true, error: null, expiresAt: "2026-04-26T11:04:28.267Z" }] };
    }
    if (req.path === "/api/v1/ack/batch") return { status: 200, body: [{ index: 0, transactionId: "a", success: true, leaseReleased: true }] };
    if (n === 0) return { status: 200, body: { success: true, leaseId: "L", messages: [{ id: "1", transactionId: "a", partitionId: "p1", leaseId: "L", data: 1 }] } };
    ctl.abort();
    return { status: 204 };
  });
  const client = new Queen(srv.url);
  await client.queue("q").consume(async () => {
    const req = await extendedOnce; // the handler outlives several renewal intervals
    assert.deepEqual(req.body, { seconds: 1 });
  }, { signal: ctl.signal, renewLeaseMillis: 10, pollTimeoutMillis: 10 });
  const paths = srv.reqs.map((r) => r.path);
  assert.ok(paths.includes("/api/v1/lease/L/extend"));
  assert.ok(paths.lastIndexOf("/api/v1/lease/L/extend") < paths.indexOf("/api/v1/ack/batch"), "no renewal after the ack");
});

test("admin calls hit the documented routes", async (t) => {
  const srv = await scripted(t, (req) => {
    if (req.path === "/api/v1/resources/queues") return { status: 200, body: { queues: [{ name: "q" }] } };
    if (req.path === "/api/v1/consumer-groups/g") return { status: 200, body: { q: { partitions: [{ partition: "P" }] } } };
    if (req.path === "/api/v1/consumer-groups/missing") return { status: 404, body: { error: "Consumer group not found" } };
    if (req.path === "/api/v1/resources/queues/gone") return { status: 404, body: { error: "Queue not found" } };
    return { status: 200, body: req.path.includes("lagging") || req.path.endsWith("consumer-groups") ? [] : { ok: true } };
  });
  const { client } = testClient({}, 0.5, srv.url);
  const a = client.admin;
  assert.deepEqual(await a.queues(), [{ name: "q" }]);
  await a.dlq({ queue: "q", consumerGroup: "g", limit: 5, from: new Date(Date.UTC(2026, 0, 1)) });
  await a.dlqMessage("p", "t");
  await a.retryDLQMessage("p", "t");
  await a.deleteDLQMessage("p", "t");
  await a.consumerGroups();
  await a.laggingPartitions(30);
  assert.deepEqual(await a.consumerGroup("g").get(), { q: [{ partition: "P" }] });
  assert.deepEqual(await a.consumerGroup("missing").get(), {});
  await a.consumerGroup("g").delete(false);
  await a.consumerGroup("g").deleteForQueue("q");
  await a.consumerGroup("g").setSubscription(new Date(Date.UTC(2026, 0, 1)));
  await a.consumerGroup("g").seekToEnd("q");
  await a.consumerGroup("g").seekTo("q", "2026-01-01T00:00:00.000Z");
  await a.consumerGroup("g").seekPartitionToEnd("q", "P");
  await a.maintenance();
  await a.setMaintenance(true);
  await a.popMaintenance();
  await a.setPopMaintenance(false);
  await a.status({ queue: "q" });
  await a.statusQueues();
  await a.statusQueue("q");
  await a.statusQueueMessages("q", { limit: 2 });
  await a.health();
  await a.getRaw("api/v1/analytics/queue-lag", { queue: "q" });
  assert.equal(await client.queue("gone").delete(), false);
  const seen = srv.reqs.map((r) => `${r.method} ${r.path}${r.query ? "?" + r.query : ""}`);
  assert.deepEqual(seen, [
    "GET /api/v1/resources/queues",
    "GET /api/v1/dlq?consumerGroup=g&from=2026-01-01T00%3A00%3A00.000Z&limit=5&queue=q",
    "GET /api/v1/dlq/p/t",
    "POST /api/v1/dlq/p/t/retry",
    "DELETE /api/v1/dlq/p/t",
    "GET /api/v1/consumer-groups",
    "GET /api/v1/consumer-groups/lagging?minLagSeconds=30",
    "GET /api/v1/consumer-groups/g",
    "GET /api/v1/consumer-groups/missing",
    "DELETE /api/v1/consumer-groups/g?deleteMetadata=false",
    "DELETE /api/v1/consumer-groups/g/queues/q?deleteMetadata=true",
    "POST /api/v1/consumer-groups/g/subscription",
    "POST /api/v1/consumer-groups/g/queues/q/seek",
    "POST /api/v1/consumer-groups/g/queues/q/seek",
    "POST /api/v1/consumer-groups/g/queues/q/partitions/P/seek",
    "GET /api/v1/system/maintenance",
    "POST /api/v1/system/maintenance",
    "GET /api/v1/system/maintenance/pop",
    "POST /api/v1/system/maintenance/pop",
    "GET /api/v1/status?queue=q",
    "GET /api/v1/status/queues",
    "GET /api/v1/status/queues/q",
    "GET /api/v1/status/queues/q/messages?limit=2",
    "GET /health",
    "GET /api/v1/analytics/queue-lag?queue=q",
    "DELETE /api/v1/resources/queues/gone",
  ]);
  assert.deepEqual(srv.reqs[11].body, { subscriptionTimestamp: "2026-01-01T00:00:00.000Z" });
  assert.deepEqual(srv.reqs[12].body, { toEnd: true });
  assert.deepEqual(srv.reqs[13].body, { timestamp: "2026-01-01T00:00:00.000Z" });
  assert.deepEqual(srv.reqs[16].body, { enabled: true });
});

test("errors carry status, code and text; RateLimitedError keeps Retry-After", () => {
  const e = ApiError.from({ status: 429, code: "rate_limited", message: "slow", method: "GET", url: "/x", retryAfterMs: 5000 });
  assert.ok(e instanceof RateLimitedError);
  assert.equal(e.terminal, false);
  assert.equal(e.retryAfterMs, 5000);
  assert.equal(e.name, "RateLimitedError");
  assert.match(e.message, /429 \[rate_limited\]: slow/);
});
