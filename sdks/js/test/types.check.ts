// Compiled with `tsc --noEmit -p test/tsconfig.json` by scripts/test-js.sh: the published declarations
// (dist/*.d.ts) must type-check a consumer's code. Never run.

import {
  Queen, ForbiddenError, RateLimitedError, StreamsError, completed, isTerminal,
  type Message, type PushResult, type AckResult, type QueenConfig, type Cycle,
} from "../dist/index.js";

export async function usage(): Promise<void> {
  const cfg: QueenConfig = { urls: ["http://a:6632"], retry429: { maxAttempts: 5 }, sleep: async () => {}, random: () => 0.5 };
  const client = new Queen(cfg);
  const pushed: PushResult[] = await client.queue("q").partition("p").push([{ payload: { a: 1 }, transactionId: "t" }]);
  const msgs: Message[] = await client.queue("q").group("g").pop({ batch: 10, wait: true, timeoutMillis: 1000 });
  const one: AckResult = await client.ack(msgs[0]!);
  const many: AckResult[] = await client.ack(msgs, "failed", { error: "x" });
  await client.ack(completed(msgs[0]!));
  const ctl = new AbortController();
  await client.queue("q").consume(async (m: Message) => { void m.data; }, { concurrency: 2, signal: ctl.signal });
  const p = client.queue("q").producer({ batchSize: 10 });
  await p.add(1);
  await p.close();
  await client.transaction().ack(msgs[0]!).queue("out").partition("p").push({ payload: 1 }).commit();
  await client.admin.consumerGroup("g").seekToEnd("q");
  const cycle: Cycle = { queryId: "q", partitionId: "p", stateOps: [{ type: "delete", key: "k" }] };
  await client.streams.cycle(cycle);
  try {
    await client.queue("q").pop();
  } catch (e) {
    if (e instanceof ForbiddenError || e instanceof RateLimitedError) console.log(e.status, e.code, e.retryAfterMs);
    if (e instanceof StreamsError) console.log(e.code);
    console.log(isTerminal(e));
  }
  void pushed; void one; void many;
}
