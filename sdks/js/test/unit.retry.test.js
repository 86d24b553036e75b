// Both retry layers against a scripted local HTTP server. Delays are measured through the injected sleep,
// jitter through the injected random draw; nothing here sleeps for real.

import { test } from "node:test";
import assert from "node:assert/strict";
import {
  Queen, ApiError, ForbiddenError, PayloadTooLargeError, RateLimitedError, NotFoundError, UnauthorizedError,
  TransportError, isTerminal, isRateLimited, jitter, retryAfterMs, DEFAULTS,
} from "../dist/index.js";
import { scripted, deadURL, testClient, okPush, popBody, pushOne } from "./scripted.js";

test("defaults are the documented ones", () => {
  const c = new Queen("http://localhost:6632/");
  assert.deepEqual(c.config.urls, ["http://localhost:6632"]);
  assert.equal(c.config.retryAttempts, 3);
  assert.equal(c.config.retryDelayMillis, 1000);
  assert.equal(c.config.retry429.baseMs, 500);
  assert.equal(c.config.retry429.capMs, 30000);
  assert.equal(c.config.timeoutMillis, 30000);
  assert.equal(DEFAULTS.retry429MaxAttempts, 10);
  assert.throws(() => new Queen({}), /no broker URL/);
  assert.throws(() => new Queen("localhost:6632"), /bad broker URL/);
  assert.throws(() => new Queen(["http://a:1", "ftp://b"]), /bad broker URL/);
});

test("layer one: 5xx gets 3 attempts with exponential backoff from 1000 ms", async (t) => {
  const srv = await scripted(t, { status: 503, body: { error: "pool" } });
  const { client, sleeps } = testClient({}, 0.5, srv.url);
  const err = await pushOne(client).catch((e) => e);
  assert.ok(err instanceof ApiError);
  assert.equal(err.status, 503);
  assert.equal(err.error, "pool");
  assert.equal(isTerminal(err), false);
  assert.equal(srv.count, 3, "retryAttempts defaults to 3 attempts");
  assert.deepEqual(sleeps, [1000, 2000], "exponential from retryDelayMillis, no jitter");
});

test("layer one: custom attempts and delay, recovery, same transactionId on every retry", async (t) => {
  const srv = await scripted(t,
    { status: 502, body: { error: "upstream", code: "bad_gateway" } },
    { status: 504, body: { error: "slow", code: "upstream_timeout" } },
    { status: 500, body: { error: "x" } },
    { status: 201, body: okPush });
  const { client, sleeps } = testClient({ retryAttempts: 5, retryDelayMillis: 100 }, 0.5, srv.url);
  const res = await pushOne(client);
  assert.equal(res[0].status, "queued");
  assert.equal(srv.count, 4);
  assert.deepEqual(sleeps, [100, 200, 400]);
  const first = srv.reqs[0].body.items[0].transactionId;
  assert.ok(first);
  assert.equal(srv.reqs[3].body.items[0].transactionId, first, "the broker can deduplicate the retried push");
  assert.equal(res[0].transactionId, first);
});

test("layer one: network failures are retried, then a TransportError", async () => {
  const dead = await deadURL();
  const { client, sleeps } = testClient({}, 0.5, dead);
  const err = await pushOne(client).catch((e) => e);
  assert.ok(err instanceof TransportError, String(err));
  assert.equal(isTerminal(err), false);
  assert.deepEqual(sleeps, [1000, 2000]);
});

test("layer one: an attempt timeout counts as a network failure", async (t) => {
  const srv = await scripted(t, { status: 201, body: okPush });
  // The first attempt's fetch never answers, so only the attempt timeout can end it.
  let n = 0;
  // The second attempt ignores the (deliberately tiny) attempt timeout so that a slow machine cannot fail it.
  const hang = (url, init) =>
    n++ === 0 ? new Promise((_, reject) => init.signal.addEventListener("abort", () => reject(init.signal.reason))) : fetch(url, { ...init, signal: undefined });
  const sleeps = [];
  const client = new Queen({ url: srv.url, timeoutMillis: 20, fetch: hang, sleep: async (ms) => { sleeps.push(ms); } });
  const res = await pushOne(client);
  assert.equal(res.length, 1);
  assert.equal(srv.count, 1, "the second attempt reached the server");
  assert.deepEqual(sleeps, [1000]);
});

test("layer one: a 5xx marks the backend unhealthy and fails over", async (t) => {
  const a = await scripted(t, { status: 500, body: { error: "push failed: boom" } });
  const b = await scripted(t, { status: 201, body: okPush });
  let now = 1_000_000;
  const sleeps = [];
  const client = new Queen({ urls: [a.url, b.url], random: () => 0.5, now: () => now, sleep: async (ms) => { sleeps.push(ms); } });
  await pushOne(client);
  assert.equal(a.count, 1);
  assert.equal(b.count, 1);
  assert.deepEqual(sleeps, [1000]);
  assert.deepEqual(client.backendHealth(), { [a.url]: false, [b.url]: true });
  // While A is quarantined, requests go straight to B.
  await pushOne(client);
  assert.equal(a.count, 1);
  assert.equal(b.count, 2);
  // After healthRetryAfterMillis (5000) A counts as healthy again.
  now += 5000;
  assert.deepEqual(client.backendHealth(), { [a.url]: true, [b.url]: true });
});

test("layer one: a network failure fails over", async (t) => {
  const dead = await deadURL();
  const b = await scripted(t, { status: 201, body: okPush });
  const { client } = testClient({}, 0.5, dead, b.url);
  await pushOne(client);
  assert.equal(b.count, 1);
  assert.equal(client.backendHealth()[dead], false);
});

test("layer one: rotates through three URLs", async (t) => {
  const a = await scripted(t, { status: 502 });
  const b = await scripted(t, { status: 503 });
  const c = await scripted(t, { status: 201, body: okPush });
  const { client, sleeps } = testClient({}, 0.5, a.url, b.url, c.url);
  await pushOne(client);
  assert.deepEqual([a.count, b.count, c.count], [1, 1, 1]);
  assert.deepEqual(sleeps, [1000, 2000]);
  assert.deepEqual(client.backendHealth(), { [a.url]: false, [b.url]: false, [c.url]: true });
});

test("any 4xx short-circuits: no retry, no failover, typed, with the envelope's code", async (t) => {
  const cases = [
    [400, { error: "bad body: unexpected EOF" }, undefined, ApiError],
    [401, { error: "Authentication required", code: "unauthorized" }, "unauthorized", UnauthorizedError],
    [403, { error: "monthly quota", code: "quota_exceeded" }, "quota_exceeded", ForbiddenError],
    [404, { error: "Not Found", code: "no_such_route" }, "no_such_route", NotFoundError],
    [409, { error: "conflict", success: false }, undefined, ApiError],
    [413, { error: "batch of 20000 items exceeds max_batch_items (10000)", code: "payload_too_large" }, "payload_too_large", PayloadTooLargeError],
    [421, { error: "unknown host", code: "cluster_unknown" }, "cluster_unknown", ApiError],
  ];
  for (const [status, body, code, cls] of cases) {
    const a = await scripted(t, { status, body });
    const b = await scripted(t, { status: 201, body: okPush });
    const { client, sleeps } = testClient({}, 0.5, a.url, b.url);
    const err = await pushOne(client).catch((e) => e);
    assert.ok(err instanceof cls, `${status}: ${err}`);
    assert.equal(err.status, status);
    assert.equal(err.code, code);
    assert.equal(err.error, body.error);
    assert.ok(err.message.includes(String(status)));
    assert.equal(isTerminal(err), true);
    assert.equal(isRateLimited(err), false);
    // Node's fetch (undici) itself repeats a request once on 421 Misdirected Request, on a fresh
    // connection, as RFC 9110 allows; the SDK's own layers never do (no sleep, no failover).
    assert.equal(a.count, status === 421 ? 2 : 1, `${status} is never retried`);
    assert.equal(b.count, 0, `${status} never fails over`);
    assert.deepEqual(sleeps, []);
    assert.equal(client.backendHealth()[a.url], true, "a 4xx is not a health signal");
  }
});

test("a non-JSON error body becomes the message", async (t) => {
  const srv = await scripted(t, { status: 413, body: "request body exceeds cap" });
  const { client } = testClient({}, 0.5, srv.url);
  const err = await pushOne(client).catch((e) => e);
  assert.ok(err instanceof PayloadTooLargeError);
  assert.equal(err.error, "request body exceeds cap");
  assert.equal(err.code, undefined);
});

const limited = (retryAfter) => ({
  status: 429,
  body: { error: "request rate limit exceeded", code: "rate_limited" },
  headers: retryAfter === undefined ? {} : { "Retry-After": String(retryAfter) },
});

test("layer two: honours Retry-After × 1000", async (t) => {
  const srv = await scripted(t, limited(7), limited(7), { status: 201, body: okPush });
  const { client, sleeps } = testClient({}, 0.5, srv.url); // u = 0.5: jitter factor exactly 1
  await pushOne(client);
  assert.equal(srv.count, 3);
  assert.deepEqual(sleeps, [7000, 7000], "Retry-After, not the computed backoff");
});

test("layer two: Retry-After is not capped by capMs", async (t) => {
  const srv = await scripted(t, limited(60), { status: 201, body: okPush });
  const { client, sleeps } = testClient({ retry429: { capMs: 1000 } }, 0.5, srv.url);
  await pushOne(client);
  assert.deepEqual(sleeps, [60000]);
});

test("layer two: min(capMs, baseMs × 2^attempt) without Retry-After", async (t) => {
  const l = limited();
  const srv = await scripted(t, l, l, l, l, l, l, { status: 201, body: okPush });
  const { client, sleeps } = testClient({ retry429: { baseMs: 500, capMs: 5000 } }, 0.5, srv.url);
  await pushOne(client);
  assert.equal(srv.count, 7);
  assert.deepEqual(sleeps, [500, 1000, 2000, 4000, 5000, 5000]);
});

test("layer two: defaults base 500 ms and cap 30 s", async (t) => {
  const steps = Array.from({ length: 9 }, () => limited());
  const srv = await scripted(t, ...steps, { status: 201, body: okPush });
  const { client, sleeps } = testClient({}, 0.5, srv.url);
  await pushOne(client);
  assert.deepEqual(sleeps, [500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
});

test("layer two: jitter stays within ±20%", async (t) => {
  for (const [u, lo, hi, retryAfter] of [
    [0, 8000, 8000, 10], // -20%
    [0.999999, 11999, 12000, 10], // just under +20%
    [0.25, 9000, 9000, 10], // -10%
    [0.5, 10000, 10000, 10], // exact
    [0, 400, 400, undefined], // the computed delay is jittered too
    [0.999999, 599, 600, undefined],
  ]) {
    const srv = await scripted(t, limited(retryAfter), { status: 201, body: okPush });
    const { client, sleeps } = testClient({}, u, srv.url);
    await pushOne(client);
    assert.equal(sleeps.length, 1);
    assert.ok(sleeps[0] >= lo && sleeps[0] <= hi, `u=${u}: ${sleeps[0]} not in [${lo}, ${hi}]`);
  }
  // Real randomness always stays within ±20%.
  for (let i = 0; i < 1000; i++) {
    const d = jitter(10000, Math.random());
    assert.ok(d >= 8000 && d < 12000, String(d));
  }
});

test("layer two: 10 attempts for ordinary requests, then a typed RateLimitedError", async (t) => {
  const srv = await scripted(t, limited(2));
  const { client, sleeps } = testClient({}, 0.5, srv.url);
  const err = await pushOne(client).catch((e) => e);
  assert.ok(err instanceof RateLimitedError, String(err));
  assert.equal(isRateLimited(err), true);
  assert.equal(isTerminal(err), false);
  assert.equal(err.code, "rate_limited");
  assert.equal(err.retryAfterMs, 2000);
  assert.equal(srv.count, 10);
  assert.equal(sleeps.length, 9);
});

test("layer two: never fails over and never marks the backend unhealthy", async (t) => {
  const a = await scripted(t, limited(1));
  const b = await scripted(t, { status: 201, body: okPush });
  const { client } = testClient({}, 0.5, a.url, b.url);
  const err = await pushOne(client).catch((e) => e);
  assert.ok(err instanceof RateLimitedError);
  assert.equal(a.count, 10);
  assert.equal(b.count, 0, "429 never fails over, even when exhausted");
  assert.equal(client.backendHealth()[a.url], true);

  const a2 = await scripted(t, limited(), limited(), { status: 201, body: okPush });
  const { client: c2 } = testClient({}, 0.5, a2.url, b.url);
  await pushOne(c2);
  assert.equal(a2.count, 3);
  assert.equal(b.count, 0);
});

test("layer two: a long-poll pop waits out 429s past ten", async (t) => {
  const steps = Array.from({ length: 25 }, () => ({ ...limited(5), body: { error: "parked consumers", code: "rate_limited" } }));
  const srv = await scripted(t, ...steps, { status: 200, body: popBody });
  const { client, sleeps } = testClient({}, 0.5, srv.url);
  const msgs = await client.queue("q").pop({ wait: true, timeoutMillis: 1000 });
  assert.equal(msgs.length, 1);
  assert.equal(srv.count, 26);
  assert.equal(sleeps.length, 25);
  assert.ok(sleeps.every((d) => d === 5000));

  // A non-waiting pop gets the ordinary budget of 10.
  const srv2 = await scripted(t, limited());
  const { client: c2 } = testClient({}, 0.5, srv2.url);
  const err = await c2.queue("q").pop().catch((e) => e);
  assert.ok(err instanceof RateLimitedError);
  assert.equal(srv2.count, 10);
});

test("layer two: an explicit maxAttempts bounds both kinds", async (t) => {
  const srv = await scripted(t, limited());
  const { client } = testClient({ retry429: { maxAttempts: 4 } }, 0.5, srv.url);
  const err = await client.queue("q").pop({ wait: true }).catch((e) => e);
  assert.ok(err instanceof RateLimitedError, "a long-poll pop surfaces the 429, not 'no messages'");
  assert.equal(srv.count, 4);
  await assert.rejects(pushOne(client), RateLimitedError);
  assert.equal(srv.count, 8);
});

test("layer two runs inside layer one: a 429 in place, then a 5xx fails over", async (t) => {
  const a = await scripted(t, limited(), { status: 500, body: { error: "x" } });
  const b = await scripted(t, { status: 201, body: okPush });
  const { client, sleeps } = testClient({}, 0.5, a.url, b.url);
  await pushOne(client);
  assert.equal(a.count, 2);
  assert.equal(b.count, 1);
  assert.deepEqual(sleeps, [500, 1000]);
});

test("an aborted signal stops the retries with the abort reason", async (t) => {
  const srv = await scripted(t, limited());
  const client = new Queen({ url: srv.url });
  const ctl = new AbortController();
  setTimeout(() => ctl.abort(new Error("stop now")), 30);
  const err = await client.queue("q").pop({ wait: true, signal: ctl.signal }).catch((e) => e);
  assert.equal(err.message, "stop now");
  assert.equal(isRateLimited(err), false);
});

test("Retry-After parses seconds and HTTP dates", () => {
  const now = Date.UTC(2026, 0, 1);
  assert.equal(retryAfterMs("7", now), 7000);
  assert.equal(retryAfterMs(" 1.5 ", now), 1500);
  assert.equal(retryAfterMs(new Date(now + 3000).toUTCString(), now), 3000);
  assert.equal(retryAfterMs(new Date(now - 3000).toUTCString(), now), 0);
  assert.equal(retryAfterMs(null, now), undefined);
  assert.equal(retryAfterMs("soon", now), undefined);
  assert.equal(retryAfterMs("-1", now), undefined);
});

test("bearer token and extra headers are sent", async (t) => {
  const srv = await scripted(t, { status: 204 });
  const client = new Queen({ url: srv.url, bearerToken: "tok", headers: { "X-Tenant": "t1" } });
  assert.deepEqual(await client.queue("q").pop(), []);
  assert.equal(srv.reqs[0].headers.authorization, "Bearer tok");
  assert.equal(srv.reqs[0].headers["x-tenant"], "t1");
});
