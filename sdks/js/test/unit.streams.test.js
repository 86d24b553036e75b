// The streams routes' client: its own retry policy (100 ms to 5 s plus 0–30 %, 5xx/network/408/429,
// Retry-After ignored, other 4xx terminal) and its reading of success:false, against a scripted server.

import { test } from "node:test";
import assert from "node:assert/strict";
import { StreamsError } from "../dist/index.js";
import { scripted, deadURL, testClient } from "./scripted.js";

const okCycle = { success: true, query_id: "Q", partition_id: "P", queueName: "src", state_ops_applied: 1, push_results: [], ack_result: { success: true, count: 2, lease_released: true, dlq: false } };

test("streams: retries 5xx, 408 and 429 with 100 ms doubling plus 0–30 %, ignoring Retry-After", async (t) => {
  const srv = await scripted(t,
    { status: 500, body: { error: "pool" } },
    { status: 408, body: { error: "timeout" } },
    { status: 429, body: { error: "slow", code: "rate_limited" }, headers: { "Retry-After": "30" } },
    { status: 200, body: okCycle });
  const { client, sleeps } = testClient({}, 0.5, srv.url);
  const res = await client.streams.cycle({ queryId: "Q", partitionId: "P", consumerGroup: "streams.q", stateOps: [{ type: "upsert", key: "k", value: { n: 1 } }], ack: { transactionId: "t", leaseId: "L", count: 2 } });
  assert.equal(res.stateOpsApplied, 1);
  assert.equal(res.ackResult.count, 2);
  assert.deepEqual(sleeps.map(Math.round), [115, 230, 460], "min(5000, 100 × 2^n) × (1 + 0.3u), no Retry-After");
  assert.deepEqual(srv.reqs[0].body, {
    query_id: "Q", partition_id: "P", consumer_group: "streams.q", release_lease: true,
    state_ops: [{ type: "upsert", key: "k", value: { n: 1 } }], push_items: [], ack: { transactionId: "t", leaseId: "L", count: 2 },
  });

  for (const [u, lo, hi] of [[0, 100, 100], [0.999999, 129.9, 130]]) {
    const s2 = await scripted(t, { status: 503 }, { status: 200, body: okCycle });
    const { client: c2, sleeps: sl2 } = testClient({}, u, s2.url);
    await c2.streams.cycle({ queryId: "Q", partitionId: "P" });
    assert.ok(sl2[0] >= lo && sl2[0] <= hi, `u=${u}: ${sl2[0]}`);
  }
});

test("streams: 3 retries (4 attempts), then the last error; network failures too", async (t) => {
  const srv = await scripted(t, { status: 502, body: { error: "bad gateway", code: "bad_gateway" } });
  const { client, sleeps } = testClient({}, 0, srv.url);
  const err = await client.streams.cycle({ queryId: "Q", partitionId: "P" }).catch((e) => e);
  assert.ok(err instanceof StreamsError);
  assert.equal(err.code, "STREAMS_HTTP");
  assert.equal(err.status, 502);
  assert.equal(srv.count, 4);
  assert.deepEqual(sleeps, [100, 200, 400]);

  const dead = await deadURL();
  const { client: c2, sleeps: sl2 } = testClient({ streamsRetryAttempts: 1 }, 0, dead);
  const e2 = await c2.streams.cycle({ queryId: "Q", partitionId: "P" }).catch((e) => e);
  assert.equal(e2.code, "STREAMS_HTTP");
  assert.equal(e2.status, undefined);
  assert.deepEqual(sl2, [100]);
});

test("streams: a cycle answered success:false throws STREAMS_CYCLE_FAILED, once", async (t) => {
  const srv = await scripted(t, { status: 200, body: { success: false, error: "Invalid or expired lease", query_id: "Q", partition_id: "P" } });
  const { client, sleeps } = testClient({}, 0.5, srv.url);
  const err = await client.streams.cycle({ queryId: "Q", partitionId: "P", ack: { transactionId: "t", leaseId: "L" } }).catch((e) => e);
  assert.ok(err instanceof StreamsError);
  assert.equal(err.code, "STREAMS_CYCLE_FAILED");
  assert.match(err.message, /Invalid or expired lease/);
  assert.equal(srv.count, 1);
  assert.deepEqual(sleeps, []);
});

test("streams: other 4xx are terminal; register 409 is a config-hash mismatch", async (t) => {
  const bad = await scripted(t, { status: 400, body: { error: "query_id is required" } });
  const { client } = testClient({}, 0.5, bad.url);
  const e1 = await client.streams.cycle({ queryId: "", partitionId: "P" }).catch((e) => e);
  assert.equal(e1.code, "STREAMS_HTTP");
  assert.equal(e1.status, 400);
  assert.equal(bad.count, 1);

  const conflict = await scripted(t, { status: 409, body: { success: false, query_id: "Q", error: "config_hash mismatch: operator chain changed" } });
  const { client: c2 } = testClient({}, 0.5, conflict.url);
  const e2 = await c2.streams.register({ name: "q", sourceQueue: "src", configHash: "sha256:x" }).catch((e) => e);
  assert.equal(e2.code, "STREAMS_CONFIG_HASH_MISMATCH");
  assert.equal(e2.status, 409);
  assert.match(e2.message, /reset: true/);
  assert.equal(conflict.count, 1);
});

test("streams: register and state/get wire shapes and failures", async (t) => {
  const srv = await scripted(t, (req) => {
    if (req.path === "/streams/v1/queries") return { status: 200, body: { success: true, query_id: "Q", name: "q", config_hash: "sha256:x", fresh: true, reset: false } };
    if (req.body.partition_id === "bad") return { status: 400, body: { success: false, error: "invalid input syntax for type uuid" } };
    return { status: 200, body: { success: true, rows: [{ key: "a", value: { n: 1 }, updated_at: "now" }] } };
  });
  const { client } = testClient({}, 0.5, srv.url);
  const reg = await client.streams.register({ name: "q", sourceQueue: "src", sinkQueue: "sink", configHash: "sha256:x" });
  assert.deepEqual(reg, { queryId: "Q", name: "q", configHash: "sha256:x", fresh: true, reset: false });
  assert.deepEqual(srv.reqs[0].body, { name: "q", source_queue: "src", sink_queue: "sink", config_hash: "sha256:x", reset: false });
  const rows = await client.streams.getState({ queryId: "Q", partitionId: "P", keyPrefix: "win:", ripeAtOrBefore: 5 });
  assert.equal(rows[0].key, "a");
  assert.deepEqual(srv.reqs[1].body, { query_id: "Q", partition_id: "P", keys: [], key_prefix: "win:", ripe_at_or_before: 5 });
  const err = await client.streams.getState({ queryId: "Q", partitionId: "bad" }).catch((e) => e);
  assert.equal(err.code, "STREAMS_STATE_GET_FAILED");
});
