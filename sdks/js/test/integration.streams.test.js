// The original clients' streams case that once counted events twice (slidingEventsAppearInOverlappingWindows),
// with its parameters: 6 events 1 s apart, sliding windows of 4 s sliding by 2 s, a count, an idle flush every
// 1000 ms. It is run by a small copy of the original runtime's loop over this SDK's streams routes, sending
// what the original sends (no expect, no cycle id): pop, read the shard's state, fold, commit with the ack;
// and, on its own timer, interleaved with that loop at every await, the idle flush that closes ripe windows
// with a cycle without an ack. Each event is in at most size/slide = 2 windows: the emitted counts may sum to
// at most 12, whatever the order the two writers commit in.
//
// QUEEN_STREAMS_REPEAT=n runs the case n times in a row (each with its own queues and query).

import { before, after, test } from "node:test";
import assert from "node:assert/strict";
import { Queen, StreamsError } from "../dist/index.js";
import { startSdkenv } from "./sdkenv.js";

let env;
let stopEnv;
let client;
const uid = Date.now().toString(36);

before(async () => {
  ({ env, stop: stopEnv } = await startSdkenv());
  client = new Queen({ url: env.broker });
});

after(async () => {
  await stopEnv?.();
});

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const SEP = "\x1f";

/** The original runtime's sliding window + count, one source partition, processing time. */
async function runOriginal({ queryId, src, sink, sizeS, slideS, idleFlushMs, stop }) {
  const tag = `slide:${sizeS}:${slideS}`;
  const size = sizeS * 1000, slide = slideS * 1000;
  const group = `streams.${queryId}`;
  const reg = await client.streams.register({ name: queryId, sourceQueue: src, sinkQueue: sink, configHash: `sha256:${tag}` });
  const touched = new Map(); // partition id → name
  const errors = [];
  const windowsOf = (t) => {
    const out = [];
    for (let i = 0; i < size / slide; i++) {
      const start = Math.floor(t / slide) * slide - i * slide;
      if (start <= t && t < start + size) out.push(start);
    }
    return out;
  };
  const keyOf = (start, user) => `${tag}${SEP}${new Date(start).toISOString()}${SEP}${user}`;
  const emit = (partition, row) => ({ queue: sink, partition, payload: { count: row.acc.count, windowStart: row.windowStart } });

  const flush = async () => {
    for (const [pid, pname] of touched) {
      const rows = await client.streams.getState({ queryId: reg.queryId, partitionId: pid, keyPrefix: `${tag}${SEP}`, ripeAtOrBefore: Date.now() });
      if (rows.length === 0) continue;
      await client.streams.cycle({
        queryId: reg.queryId, partitionId: pid, consumerGroup: group,
        stateOps: rows.map((r) => ({ type: "delete", key: r.key })),
        pushItems: rows.map((r) => emit(pname, r.value)),
      });
    }
  };
  let flushing = false;
  const timer = setInterval(() => {
    if (flushing) return;
    flushing = true;
    flush().catch((e) => errors.push(e)).finally(() => { flushing = false; });
  }, idleFlushMs);

  try {
    while (!stop()) {
      const msgs = await client.queue(src).group(group).pop({ batch: 200, partitions: 4, wait: true, timeoutMillis: 1000 });
      if (msgs.length === 0) {
        await sleep(100);
        continue;
      }
      const byPart = new Map();
      for (const m of msgs) byPart.set(m.partitionId, [...(byPart.get(m.partitionId) ?? []), m]);
      for (const [pid, group_] of byPart) {
        group_.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
        touched.set(pid, group_[0].partition);
        const rows = await client.streams.getState({ queryId: reg.queryId, partitionId: pid });
        const open = new Map(rows.filter((r) => r.key.startsWith(`${tag}${SEP}`)).map((r) => [r.key, { ...r.value, seeded: true }]));
        let clock = 0;
        for (const m of group_) {
          const t = Date.parse(m.createdAt);
          clock = Math.max(clock, t);
          for (const start of windowsOf(t)) {
            const k = keyOf(start, pid);
            const w = open.get(k) ?? { acc: { count: 0 }, windowStart: start, windowEnd: start + size };
            w.acc = { count: w.acc.count + 1 };
            w.touched = true;
            open.set(k, w);
          }
        }
        const stateOps = [];
        const pushItems = [];
        for (const [k, w] of open) {
          if (w.windowEnd <= clock) {
            pushItems.push(emit(group_[0].partition, w));
            if (w.seeded) stateOps.push({ type: "delete", key: k });
          } else if (w.touched) {
            stateOps.push({ type: "upsert", key: k, value: { acc: w.acc, windowStart: w.windowStart, windowEnd: w.windowEnd } });
          }
        }
        const last = group_[group_.length - 1];
        try {
          await client.streams.cycle({
            queryId: reg.queryId, partitionId: pid, consumerGroup: group, stateOps, pushItems,
            ack: { transactionId: last.transactionId, leaseId: last.leaseId, status: "completed", count: group_.length },
          });
        } catch (e) {
          errors.push(e);
        }
      }
    }
  } finally {
    clearInterval(timer);
    while (flushing) await sleep(10);
  }
  return errors;
}

const repeat = Math.max(1, Number(process.env.QUEEN_STREAMS_REPEAT ?? 1));

for (let run = 1; run <= repeat; run++) {
  test(`streams: slidingEventsAppearInOverlappingWindows, original wire (run ${run} of ${repeat})`, async () => {
    const src = `js-sl-src-${uid}-${run}`;
    const sink = `js-sl-out-${uid}-${run}`;
    let done = false;
    const runner = runOriginal({ queryId: `js-sl-${uid}-${run}`, src, sink, sizeS: 4, slideS: 2, idleFlushMs: 1000, stop: () => done });
    for (let i = 0; i < 6; i++) {
      await client.queue(src).partition("p").push({ payload: { i } });
      if (i < 5) await sleep(1000);
    }
    // The last windows close by the idle flush once the wall clock passes their end (at most 4 s on).
    const counts = [];
    const deadline = Date.now() + 8000;
    while (Date.now() < deadline) {
      const got = await client.queue(sink).group("check").pop({ batch: 100, partitions: 10, wait: true, timeoutMillis: 500, autoAck: true });
      for (const m of got) counts.push(m.data.count);
      if (counts.reduce((a, b) => a + b, 0) >= 12) break;
    }
    // Anything emitted twice would come now.
    for (const m of await client.queue(sink).group("check").pop({ batch: 100, partitions: 10, wait: true, timeoutMillis: 1500, autoAck: true })) {
      counts.push(m.data.count);
    }
    done = true;
    const errors = await runner;
    const sum = counts.reduce((a, b) => a + b, 0);
    console.log(`# run ${run}: window counts ${JSON.stringify(counts)}, sum ${sum}; refused cycles: ${errors.map((e) => e.message.replace(/^.*rolled back: /, "")).join("; ") || "none"}`);
    for (const e of errors) assert.ok(e instanceof StreamsError && e.code === "STREAMS_CYCLE_FAILED", String(e));
    assert.ok(sum <= 12, `an event counted twice: counts ${JSON.stringify(counts)} sum to ${sum} > 12`);
    assert.ok(sum > 0, "no window was emitted");
  });
}
