// Test helpers: a local HTTP server answering from a script and recording every request, and a client whose
// sleeps are recorded instead of slept and whose jitter draw is fixed.

import http from "node:http";
import { Queen } from "../dist/index.js";

/**
 * Starts a server on a free loopback port. Each step is {status, body?, headers?}; the last step repeats
 * forever. A step may also be a function (req, n) => step.
 */
export async function scripted(t, ...steps) {
  const reqs = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const n = reqs.length;
      const u = new URL(req.url, "http://x");
      const rec = { method: req.method, path: u.pathname, query: u.search.slice(1), headers: req.headers, text: Buffer.concat(chunks).toString() };
      rec.body = rec.text ? JSON.parse(rec.text) : undefined;
      reqs.push(rec);
      let st = steps[Math.min(n, steps.length - 1)];
      if (typeof st === "function") st = st(rec, n);
      const headers = { ...(st.headers ?? {}) };
      const body = st.body === undefined ? "" : typeof st.body === "string" ? st.body : JSON.stringify(st.body);
      if (body) headers["Content-Type"] = "application/json";
      res.writeHead(st.status, headers);
      res.end(body);
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${server.address().port}`;
  t.after(() => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }));
  return { url, reqs, get count() { return reqs.length; } };
}

/** A URL nothing listens on. */
export async function deadURL() {
  const server = http.createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${server.address().port}`;
  await new Promise((resolve) => server.close(resolve));
  return url;
}

/** A client with recorded sleeps (returned as `sleeps`) and jitter draw u. */
export function testClient(cfg, u, ...urls) {
  const sleeps = [];
  const client = new Queen({
    ...cfg,
    urls,
    random: () => u,
    sleep: async (ms, signal) => {
      sleeps.push(ms);
      if (signal?.aborted) throw signal.reason;
    },
  });
  return { client, sleeps };
}

export const okPush = [{ index: 0, transaction_id: "", status: "queued", message_id: "m", partition_id: "p", trace_id: null, queueName: "q" }];

export const popBody = {
  success: true, queue: "q", partition: "Default", partitionId: "p1", leaseId: "L", consumerGroup: "__QUEUE_MODE__", partitionsClaimed: 1,
  messages: [{ id: "m1", transactionId: "t1", traceId: null, data: { n: 1 }, producerSub: null, createdAt: "2026-04-26T10:59:28.267966Z", partitionId: "p1", partition: "Default", leaseId: "L", consumerGroup: "__QUEUE_MODE__", queue: "q", retryCount: 2 }],
};

export function pushOne(client) {
  return client.queue("q").push({ payload: 1 });
}

/** A message as the broker would deliver it. */
export function msg(tx, extra = {}) {
  return { id: "id-" + tx, transactionId: tx, traceId: null, data: null, producerSub: null, createdAt: "", queue: "q", partition: "Default", partitionId: "p1", leaseId: "L", consumerGroup: "g", retryCount: 0, ...extra };
}
