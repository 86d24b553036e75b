// Every call of the SDK against a real broker, and the 429/403/413 codes against the real proxy, started by
// test/sdkenv (a private PostgreSQL, brokers and proxies on loopback ports).

import { before, after, test } from "node:test";
import assert from "node:assert/strict";
import {
  Queen, AckError, TransactionError, LeaseLostError, ForbiddenError, PayloadTooLargeError, RateLimitedError,
  NotFoundError, UnauthorizedError, StreamsError, isTerminal, completed, deadLetter, QUEUE_MODE, QUEUE_OPTION_NAMES,
} from "../dist/index.js";
import { startSdkenv } from "./sdkenv.js";
import { deadURL } from "./scripted.js";

let env;
let stopEnv;
let client;
const uid = Date.now().toString(36);
const name = (q) => `js-${q}-${uid}`;

before(async () => {
  ({ env, stop: stopEnv } = await startSdkenv());
  client = new Queen({ url: env.broker });
});

after(async () => {
  await stopEnv?.();
});

test("configure, push, pop, ack, info, queues, delete", async () => {
  const q = client.queue(name("basic"));
  const cfg = await q.config({ leaseTime: 30, retryLimit: 2 }).create();
  assert.equal(cfg.configured, true);
  assert.equal(cfg.queue, q.name);
  assert.equal(cfg.options.leaseTime, 30);

  const res = await q.partition("p1").push([{ payload: { n: 1 }, transactionId: "t-1" }, { payload: { n: 2 } }]);
  assert.deepEqual(res.map((r) => r.status), ["queued", "queued"]);
  assert.equal(res[0].transactionId, "t-1");
  const dup = await q.partition("p1").push({ payload: { n: 1 }, transactionId: "t-1" });
  assert.equal(dup[0].status, "duplicate", "a duplicate is a result, not an error");

  const msgs = await q.partition("p1").pop({ batch: 10 });
  assert.equal(msgs.length, 2);
  assert.deepEqual(msgs.map((m) => m.data), [{ n: 1 }, { n: 2 }]);
  assert.equal(msgs[0].queue, q.name);
  assert.equal(msgs[0].partition, "p1");
  assert.equal(msgs[0].consumerGroup, QUEUE_MODE);
  assert.ok(msgs[0].leaseId);
  assert.ok(msgs[0].createdAt);

  const one = await client.ack(msgs[0]);
  assert.equal(one.success, true);
  const batch = await client.ack([msgs[1]], true);
  assert.equal(batch.length, 1);
  assert.equal(batch[0].success, true);
  assert.equal(batch[0].leaseReleased, true);

  assert.deepEqual(await q.pop(), [], "an empty queue is []");
  const info = await q.info();
  assert.equal(info.name, q.name);
  const queues = await client.admin.queues();
  assert.ok(queues.some((x) => x.name === q.name));
  assert.equal(await q.delete(), true);
  assert.equal(await q.delete(), false);
  await assert.rejects(q.info(), NotFoundError);
});

// Walks the broker's own list: configure answers with every effective option, so an option added to the
// broker and not to the SDK fails here.
test("queue options: the SDK carries every option configure accepts; a read configured again changes nothing", async () => {
  const q = client.queue(name("options"));
  const created = await q.create();
  assert.deepEqual(Object.keys(created.options).sort(), [...QUEUE_OPTION_NAMES].sort());
  const def = await q.options();
  assert.deepEqual(def, created.options, "the read carries every option, at its default");

  // Every option off its default: zero where the default is not, a distinct number where it is, booleans flipped.
  const want = {};
  QUEUE_OPTION_NAMES.forEach((k, i) => {
    const d = def[k];
    if (typeof d === "boolean") want[k] = !d;
    else if (typeof d === "number") want[k] = d === 0 ? 10 + i : 0;
    else assert.fail(`option ${k} has an unexpected type ${typeof d}`);
  });
  assert.ok(Object.values(want).includes(0), "zeros are among the values");
  const answer = await q.config(want).create();
  assert.deepEqual(answer.options, want);
  const got = await q.options();
  assert.deepEqual(got, want);
  await q.config(got).create();
  assert.deepEqual(await q.options(), got, "read → configure → read changes nothing");
  await q.config({}).create();
  assert.deepEqual(await q.options(), def, "options left out are back at their defaults");
  await assert.rejects(client.queue(name("no-such-queue")).options(), NotFoundError);
});

test("compatibility: a named group's pop with subscriptionMode=from_beginning is accepted and reads from the start", async () => {
  const q = client.queue(name("frombeg"));
  await q.push(["old-1", "old-2"]);
  const got = await q.group("g").subscriptionMode("from_beginning").pop({ batch: 10, autoAck: true, wait: false });
  assert.deepEqual(got.map((m) => m.data), ["old-1", "old-2"]);
});

test("ack rejections are reported per item", async () => {
  const q = client.queue(name("rej"));
  await q.push([1, 2]);
  const msgs = await q.pop({ batch: 2 });
  assert.equal(msgs.length, 2);
  const bad = { ...completed(msgs[0]), leaseId: "019dc9b7-cb4f-7c1a-9b21-7e8a5c3a40e1" };
  const unknown = { ...completed(msgs[1]), transactionId: "never-pushed" };
  const res = await client.ack([bad, unknown, msgs[0]]);
  assert.equal(res.length, 3);
  assert.equal(res[0].success, false);
  assert.equal(res[0].error, "invalid or expired lease");
  assert.equal(res[0].transactionId, msgs[0].transactionId);
  assert.equal(res[1].success, false);
  assert.match(res[1].error, /unresolvable/);
  assert.equal(res[2].success, true);
  // msgs[0] is committed now, so the single ack is rejected as well (already committed), and thrown.
  await assert.rejects(client.ack(bad), (e) => e instanceof AckError && e.transactionId === msgs[0].transactionId && !e.result.success);
});

test("a failed ack redelivers with retryCount; consume acks the retry", async () => {
  const q = client.queue(name("retry"));
  await q.push({ payload: 1, transactionId: "r-1" });
  const deliveries = [];
  const ctl = new AbortController();
  await q.consume((m) => {
    deliveries.push(m);
    if (deliveries.length === 1) throw new Error("transient");
    ctl.abort();
  }, { signal: ctl.signal, pollTimeoutMillis: 1000 });
  assert.equal(deliveries.length, 2);
  assert.equal(deliveries[1].transactionId, "r-1");
  assert.equal(deliveries[0].retryCount, 0);
  assert.equal(deliveries[1].retryCount, 1);
  assert.deepEqual(await q.pop(), [], "the successful retry was acknowledged");
});

test("fan-out groups, autoAck, subscription modes", async () => {
  const q = client.queue(name("events"));
  await q.push(["old-1", "old-2"]);
  for (const g of ["a", "b"]) {
    const got = await q.group(g).pop({ batch: 10 });
    assert.deepEqual(got.map((m) => m.data), ["old-1", "old-2"], `group ${g} sees every message`);
    assert.equal(got[0].consumerGroup, g);
    assert.ok((await client.ack(got)).every((r) => r.success));
  }
  const auto = await q.pop({ batch: 10, autoAck: true });
  assert.equal(auto.length, 2);
  assert.equal(auto[0].leaseId, "", "autoAck takes no lease");
  assert.deepEqual(await q.pop(), [], "autoAck advanced the cursor");

  assert.deepEqual(await q.group("fresh").subscriptionMode("new").pop({ batch: 10 }), [], "mode new skips history");
  assert.deepEqual(await q.group("fresh2").subscriptionFrom("now").pop({ batch: 10 }), []);
  await q.push("new-1");
  const got = await q.group("fresh").pop({ batch: 10, autoAck: true });
  assert.deepEqual(got.map((m) => m.data), ["new-1"]);
});

test("long-poll pop wakes on a push", async () => {
  const q = client.queue(name("longpoll"));
  const waiting = q.pop({ wait: true, timeoutMillis: 5000 });
  await new Promise((r) => setTimeout(r, 100));
  await q.push("wake");
  const got = await waiting;
  assert.deepEqual(got.map((m) => m.data), ["wake"]);
  const empty = await q.pop({ wait: true, timeoutMillis: 200 });
  assert.deepEqual(empty, [], "an expired long poll is 204 = []");
});

test("producer buffers and flushes in order", async () => {
  const q = client.queue(name("bulk")).partition("p");
  const p = q.producer({ batchSize: 64, flushIntervalMillis: 10 });
  for (let i = 0; i < 1000; i++) await p.add(i);
  await p.close();
  const got = [];
  while (got.length < 1000) {
    const msgs = await q.pop({ batch: 500, autoAck: true });
    assert.ok(msgs.length > 0);
    got.push(...msgs.map((m) => m.data));
  }
  assert.deepEqual(got, Array.from({ length: 1000 }, (_, i) => i), "one partition keeps push order");
});

test("consume with concurrency delivers every message exactly once", async () => {
  const q = client.queue(name("many"));
  const total = 2000;
  const partitions = 8;
  await Promise.all(Array.from({ length: partitions }, (_, p) => {
    const items = [];
    for (let i = p; i < total; i += partitions) items.push({ payload: i, transactionId: `tx-${i}` });
    return q.partition(`p${p}`).push(items);
  }));
  const seen = new Map();
  const ctl = new AbortController();
  await q.consume((m) => {
    seen.set(m.data, (seen.get(m.data) ?? 0) + 1);
    if (seen.size === total) ctl.abort();
  }, { signal: ctl.signal, concurrency: 4, batch: 50, pollTimeoutMillis: 1000 });
  assert.equal(seen.size, total);
  assert.ok([...seen.values()].every((n) => n === 1), "no redelivery");
  assert.deepEqual(await q.pop({ batch: 10 }), [], "everything was acknowledged");
});

test("consume stops gracefully and finishes the batch in flight", async () => {
  const q = client.queue(name("graceful"));
  await q.push([1, 2, 3, 4, 5]);
  const ctl = new AbortController();
  let handled = 0;
  await q.consume(async () => {
    if (++handled === 1) ctl.abort();
    await new Promise((r) => setTimeout(r, 5));
  }, { signal: ctl.signal, batch: 5, pollTimeoutMillis: 1000 });
  assert.equal(handled, 5, "the received batch is finished");
  assert.deepEqual(await q.pop(), [], "and acknowledged");
});

test("consume renews the lease of a slow handler", async () => {
  const q = client.queue(name("slow"));
  await q.config({ leaseTime: 1 }).create();
  await q.push(1);
  const ctl = new AbortController();
  let calls = 0;
  await q.consume(async () => {
    calls++;
    await new Promise((r) => setTimeout(r, 2500)); // well past the 1 s lease
    ctl.abort();
  }, { signal: ctl.signal, renewLeaseMillis: 700, pollTimeoutMillis: 1000 }); // each renewal: +2 s
  assert.equal(calls, 1);
  assert.deepEqual(await q.pop(), [], "the renewed lease let the ack through");
});

test("renew extends a lease; an unknown lease is LeaseLostError", async () => {
  const q = client.queue(name("lease"));
  await q.push(1);
  const [m] = await q.pop();
  const r = await client.renew(m, 120);
  assert.equal(r.success, true);
  assert.ok(Date.parse(r.expiresAt) > Date.now() + 60000);
  await client.ack(m);
  await assert.rejects(client.renew(m), LeaseLostError, "an acked lease is released");
  await assert.rejects(client.renew("019dc9b7-cb4f-7c1a-9b21-7e8a5c3a40e1"), LeaseLostError);
});

test("a transaction acks and pushes atomically; a rollback throws TransactionError", async () => {
  const src = client.queue(name("tx-in"));
  const dst = name("tx-out");
  await src.push({ payload: "in", transactionId: "in-1" });
  const [m] = await src.pop();
  const res = await client.transaction().ack(m).queue(dst).partition("p").push({ payload: "out", transactionId: "out-1" }).commit();
  assert.equal(res.success, true);
  assert.deepEqual(await src.pop(), [], "the input was acknowledged");
  const out = await client.queue(dst).partition("p").pop();
  assert.deepEqual(out.map((x) => x.data), ["out"]);

  await src.push({ payload: "in2", transactionId: "in-2" });
  const [m2] = await src.pop();
  const err = await client.transaction().ack(m2).queue(dst).partition("p").push({ payload: "again", transactionId: "out-1" }).commit().catch((e) => e);
  assert.ok(err instanceof TransactionError, String(err));
  assert.equal(err.code, "QDUP");
  const again = await client.ack(m2);
  assert.equal(again.success, true, "the rolled-back ack did not happen, so the lease is still ours");
});

test("dead-letter queue: list, get, retry, delete", async () => {
  const q = client.queue(name("dlq"));
  await q.push({ payload: { k: "v" }, transactionId: "d-1" });
  const [m] = await q.pop();
  const r = await client.ack(deadLetter(m, "poison"));
  assert.equal(r.dlq, true);
  const page = await client.admin.dlq({ queue: q.name, limit: 10 });
  assert.equal(page.total, 1);
  const dl = page.messages[0];
  assert.equal(dl.transactionId, "d-1");
  assert.equal(dl.errorMessage, "poison");
  assert.deepEqual(dl.data, { k: "v" });
  assert.equal((await client.admin.dlqMessage(dl.partitionId, dl.transactionId)).transactionId, "d-1");
  await client.admin.retryDLQMessage(dl.partitionId, dl.transactionId);
  const redelivered = await q.pop();
  assert.equal(redelivered[0].transactionId, "d-1", "a retried dead letter is delivered again");
  await client.ack(redelivered[0], "dlq", { error: "still poison" });
  await client.admin.deleteDLQMessage(dl.partitionId, dl.transactionId);
  await assert.rejects(client.admin.dlqMessage(dl.partitionId, dl.transactionId), NotFoundError);
});

test("consumer-group administration: list, get, lagging, seek, subscription, delete", async () => {
  const qn = name("cg");
  const q = client.queue(qn);
  const g = name("workers");
  await q.push([1, 2, 3]);
  const msgs = await q.group(g).pop({ batch: 3 });
  assert.ok((await client.ack(msgs)).every((r) => r.success));
  const groups = await client.admin.consumerGroups();
  assert.ok(groups.some((x) => x.name === g));
  const admin = client.admin.consumerGroup(g);
  assert.ok(qn in (await admin.get()));
  assert.ok(Array.isArray(await client.admin.laggingPartitions(3600)));

  const sr = await admin.seekTo(qn, new Date(Date.now() - 3600_000));
  assert.equal(sr.success, true);
  assert.equal((await q.group(g).pop({ batch: 10, autoAck: true })).length, 3, "replay after seek");
  await q.push([4, 5]);
  assert.equal((await admin.seekToEnd(qn)).seekToEnd, true);
  assert.deepEqual(await q.group(g).pop(), [], "seek to end skips the backlog");
  await q.push(6);
  assert.equal((await admin.seekPartitionToEnd(qn, "Default")).success, true);
  assert.deepEqual(await q.group(g).pop(), []);
  assert.equal((await admin.setSubscription(new Date())).success, true);
  const del = await admin.deleteForQueue(qn);
  assert.equal(del.success, true);
  assert.ok(!(qn in (await admin.get())));
  await q.group(g).pop({ autoAck: true });
  assert.equal((await admin.delete()).success, true);
  assert.deepEqual(await admin.get(), {});
  await assert.rejects(admin.delete(), NotFoundError);
});

test("namespace/task pop, resources and status views", async () => {
  const ns = name("ns");
  const q = client.queue(name("res")).namespace(ns).task("tk");
  await q.create();
  await q.partition("a").push([1, 2]);
  const got = await client.matching(ns, "tk").pop({ batch: 10, autoAck: true });
  assert.deepEqual(got.map((m) => m.data), [1, 2]);
  assert.equal(got[0].queue, q.name);

  assert.ok(await client.admin.overview());
  assert.ok(await client.admin.namespaces());
  assert.ok(await client.admin.tasks());
  assert.ok(await client.admin.messages({ queue: q.name }));
  assert.ok(await client.admin.status({ queue: q.name }));
  assert.ok(await client.admin.statusQueues());
  assert.ok(await client.admin.statusQueue(q.name));
  assert.ok(await client.admin.statusQueueMessages(q.name, { limit: 5 }));
  assert.ok(await client.admin.health());
  assert.ok(await client.admin.getRaw("/api/v1/analytics/queue-lag"));
  await assert.rejects(client.admin.statusQueue(name("nope")), NotFoundError);

  const [pushed] = await q.partition("b").push({ payload: "addressed", transactionId: "addr-1" });
  const one = await client.admin.message(pushed.partitionId, "addr-1");
  assert.equal(one.transactionId, "addr-1");
  await client.admin.deleteMessage(pushed.partitionId, "addr-1");
  await assert.rejects(client.admin.message(pushed.partitionId, "addr-1"), NotFoundError);
  assert.deepEqual(await q.partition("b").pop(), [], "the deleted message is not delivered");
});

test("maintenance modes: pushes are buffered, pops are empty", async () => {
  const q = client.queue(name("maint"));
  try {
    assert.equal((await client.admin.setPopMaintenance(true)).popMaintenanceMode, true);
    await q.push(1);
    assert.deepEqual(await q.pop(), [], "pop maintenance answers 204");
    assert.equal((await client.admin.popMaintenance()).popMaintenanceMode, true);
  } finally {
    await client.admin.setPopMaintenance(false);
  }
  try {
    assert.equal((await client.admin.setMaintenance(true)).maintenanceMode, true);
    const res = await q.push(2);
    assert.equal(res[0].status, "buffered");
    assert.equal((await client.admin.maintenance()).maintenanceMode, true);
  } finally {
    await client.admin.setMaintenance(false);
  }
  // The spooled push is replayed once maintenance is off; until the spool is empty later pushes follow it
  // there (to keep push order), so wait for the replay before the next test pushes.
  const got = [];
  const deadline = Date.now() + 30000;
  while (got.length < 2 && Date.now() < deadline) {
    got.push(...(await q.pop({ batch: 10, wait: true, timeoutMillis: 1000, autoAck: true })).map((m) => m.data));
  }
  assert.deepEqual(got.sort(), [1, 2], "the item pushed under pop maintenance and the replayed one");
  while ((await client.admin.maintenance()).bufferedMessages > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal((await client.admin.maintenance()).bufferedMessages, 0);
});

test("an unknown route is a NotFoundError with code no_such_route", async () => {
  const err = await client.admin.getRaw("/api/v1/nope").catch((e) => e);
  assert.ok(err instanceof NotFoundError);
  assert.equal(err.code, "no_such_route");
  assert.equal(isTerminal(err), true);
});

test("failover: a dead URL is marked unhealthy and the broker answers", async () => {
  const dead = await deadURL();
  const sleeps = [];
  const c = new Queen({ urls: [dead, env.broker], sleep: async (ms) => { sleeps.push(ms); } });
  const res = await c.queue(name("failover")).push(1);
  assert.equal(res[0].status, "queued");
  assert.deepEqual(sleeps, [1000]);
  assert.deepEqual(c.backendHealth(), { [dead]: false, [env.broker]: true });
});

test("JWT broker: a token is required, the admin token works", async () => {
  const anon = new Queen({ url: env.authBroker });
  const err = await anon.queue(name("jwt")).pop().catch((e) => e);
  assert.ok(err instanceof UnauthorizedError, String(err));
  const admin = new Queen({ url: env.authBroker, bearerToken: env.adminToken });
  const q = admin.queue(name("jwt"));
  await q.push("x");
  assert.deepEqual((await q.pop({ autoAck: true })).map((m) => m.data), ["x"]);
});

test("proxy: a read-write key pushes, pops and acks; an empty pop is []", async () => {
  const c = new Queen({ url: env.proxy, bearerToken: env.keys.readWrite });
  const q = c.queue(name("proxied"));
  assert.deepEqual(await q.pop(), []);
  await q.push({ payload: "via proxy" });
  const [m] = await q.pop();
  assert.equal(m.data, "via proxy");
  assert.equal((await c.ack(m)).success, true);
});

test("proxy: 403 is terminal and typed, and distinguishable from an empty pop", async () => {
  const ro = new Queen({ url: env.proxy, bearerToken: env.keys.readOnly });
  const q = ro.queue(name("ro"));
  const pushErr = await q.push(1).catch((e) => e);
  assert.ok(pushErr instanceof ForbiddenError, String(pushErr));
  assert.equal(pushErr.status, 403);
  assert.equal(isTerminal(pushErr), true);
  const popErr = await q.pop({ wait: true, timeoutMillis: 200 }).catch((e) => e);
  assert.ok(popErr instanceof ForbiddenError, `pop() must not report a 403 as no messages: ${popErr}`);
  // A role refusal comes from the broker behind the proxy: its envelope has no code (the proxy's own 403
  // gates, such as quota_exceeded, add one: see the next test).
  assert.equal(popErr.error, "Insufficient permissions");

  const consumeErr = await q.consume(() => {}, { pollTimeoutMillis: 200 }).catch((e) => e);
  assert.ok(consumeErr instanceof ForbiddenError, "consume stops on a 403");
});

test("proxy: its own 403 carries a code (quota_exceeded), is terminal and typed, sent once", async () => {
  const calls = [];
  const c = new Queen({ url: env.proxyExhausted, bearerToken: env.keys.exhausted, fetch: (u, i) => { calls.push(u); return fetch(u, i); } });
  const q = c.queue(name("exhausted"));
  const err = await q.push({ payload: 1 }).catch((e) => e);
  assert.ok(err instanceof ForbiddenError, String(err));
  assert.equal(err.status, 403);
  assert.equal(err.code, "quota_exceeded");
  assert.equal(err.terminal, true);
  assert.equal(isTerminal(err), true);
  assert.equal(calls.length, 1, "a 403 is never retried");
  // The quota gates pushes only: the same key still pops.
  assert.deepEqual(await q.pop(), []);
});

test("proxy: 413 payload_too_large is terminal and typed, sent once", async () => {
  const calls = [];
  const c = new Queen({ url: env.proxy, bearerToken: env.keys.readWrite, fetch: (u, i) => { calls.push(u); return fetch(u, i); } });
  const big = "x".repeat(env.maxPayloadBytes + 1024);
  const err = await c.queue(name("big")).push({ payload: big }).catch((e) => e);
  assert.ok(err instanceof PayloadTooLargeError, String(err));
  assert.equal(err.status, 413);
  assert.equal(err.code, "payload_too_large");
  assert.match(err.error, /exceeds/);
  assert.equal(calls.length, 1, "a 413 is never retried");
});

test("proxy: 429 rate_limited carries Retry-After; layer two waits it out in place", async () => {
  const sleeps = [];
  const realSleep = (ms) => { sleeps.push(ms); return new Promise((r) => setTimeout(r, ms)); };
  const strict = new Queen({ url: env.proxyThrottled, bearerToken: env.keys.throttled, retry429: { maxAttempts: 1 } });
  const q = strict.queue(name("throttled"));
  let limited;
  for (let i = 0; i < env.requestBurst + 3 && !limited; i++) {
    limited = await q.push(i).then(() => undefined, (e) => e);
  }
  assert.ok(limited instanceof RateLimitedError, `a burst past the bucket is rate limited: ${limited}`);
  assert.equal(limited.status, 429);
  assert.equal(limited.code, "rate_limited");
  assert.equal(isTerminal(limited), false);
  assert.ok(limited.retryAfterMs >= 1000 && limited.retryAfterMs <= 60000, String(limited.retryAfterMs));

  // With the default policy every push of a burst succeeds: each 429 is waited out in place, by the
  // jittered Retry-After, on the same backend.
  const calls = [];
  const patient = new Queen({
    url: env.proxyThrottled, bearerToken: env.keys.throttled, sleep: realSleep,
    fetch: (u, i) => { calls.push(u); return fetch(u, i); },
  });
  const pushes = env.requestBurst + 2;
  for (let i = 0; i < pushes; i++) {
    const res = await patient.queue(name("throttled")).push(`burst-${i}`);
    assert.equal(res[0].status, "queued");
  }
  assert.ok(calls.length > pushes, `the 429s were retried in place: ${calls.length} calls for ${pushes} pushes`);
  assert.equal(sleeps.length, calls.length - pushes);
  for (const d of sleeps) assert.ok(d >= 0.8 * 1000 && d <= 1.2 * 60000, `jittered Retry-After: ${d}`);
});

test("streams: register, commit a cycle atomically, read state; a replayed cycle fails and applies nothing", async () => {
  const qname = name("stream");
  const src = client.queue(name("stream-src"));
  const sink = name("stream-sink");
  const reg = await client.streams.register({ name: qname, sourceQueue: src.name, sinkQueue: sink, configHash: "sha256:v1" });
  assert.equal(reg.fresh, true);
  await src.partition("p").push([{ payload: 1 }, { payload: 2 }, { payload: 3 }]);
  const group = `streams.${qname}`;
  const msgs = await src.group(group).pop({ batch: 10 });
  assert.equal(msgs.length, 3);
  const last = msgs[msgs.length - 1];
  const cycle = {
    queryId: reg.queryId, partitionId: last.partitionId, consumerGroup: group,
    stateOps: [{ type: "upsert", key: "sum", value: { n: 6 } }],
    pushItems: [{ queue: sink, partition: "p", payload: { total: 6 }, transactionId: `sum-${uid}` }],
    ack: { transactionId: last.transactionId, leaseId: last.leaseId, count: msgs.length },
  };
  const res = await client.streams.cycle(cycle);
  assert.equal(res.stateOpsApplied, 1);
  assert.equal(res.ackResult.lease_released, true);
  assert.equal(res.queueName, src.name);
  assert.deepEqual((await client.streams.getState({ queryId: reg.queryId, partitionId: last.partitionId })).map((r) => [r.key, r.value]), [["sum", { n: 6 }]]);
  assert.deepEqual((await client.queue(sink).pop({ batch: 10, autoAck: true })).map((m) => m.data), [{ total: 6 }]);
  assert.deepEqual(await src.group(group).pop(), [], "the cycle's ack consumed the source");

  // The same cycle again (a retry after a lost answer): the lease is gone, so it fails whole.
  const err = await client.streams.cycle({ ...cycle, stateOps: [{ type: "upsert", key: "sum", value: { n: 12 } }], pushItems: [{ queue: sink, partition: "p", payload: { total: 12 } }] }).catch((e) => e);
  assert.ok(err instanceof StreamsError, String(err));
  assert.equal(err.code, "STREAMS_CYCLE_FAILED");
  assert.deepEqual((await client.streams.getState({ queryId: reg.queryId, partitionId: last.partitionId })).map((r) => r.value), [{ n: 6 }], "rolled back");
  assert.deepEqual(await client.queue(sink).pop(), [], "no sink message from the failed cycle");

  const mismatch = await client.streams.register({ name: qname, sourceQueue: src.name, configHash: "sha256:v2" }).catch((e) => e);
  assert.equal(mismatch.code, "STREAMS_CONFIG_HASH_MISMATCH");
  const again = await client.streams.register({ name: qname, sourceQueue: src.name, configHash: "sha256:v2", reset: true });
  assert.equal(again.reset, true);
  assert.deepEqual(await client.streams.getState({ queryId: again.queryId, partitionId: last.partitionId }), [], "reset wiped the state");
});
