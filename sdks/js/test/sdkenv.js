// Starts the repository's SDK test environment (test/sdkenv: a private PostgreSQL, brokers and proxies on
// loopback ports) and reads the one JSON line that describes it. The environment ends when its stdin closes.

import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import path from "node:path";
import readline from "node:readline";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

/**
 * Resolves {env, stop}. QUEEN_SDKENV names a prebuilt sdkenv binary (scripts/test-js.sh builds one);
 * otherwise `go run ./test/sdkenv` runs from the repository root.
 */
export function startSdkenv() {
  const bin = process.env.QUEEN_SDKENV;
  const child = bin
    ? spawn(bin, [], { stdio: ["pipe", "pipe", "inherit"] })
    : spawn("go", ["run", "./test/sdkenv"], { cwd: repoRoot, stdio: ["pipe", "pipe", "inherit"], env: { ...process.env, GOTOOLCHAIN: "local" } });
  const stop = () =>
    new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once("exit", () => resolve());
      child.stdin.end();
      // A wedged environment must not hold the test run: SIGTERM after a grace period.
      setTimeout(() => child.kill("SIGTERM"), 20000).unref();
    });
  return new Promise((resolve, reject) => {
    const lines = readline.createInterface({ input: child.stdout });
    const timer = setTimeout(() => {
      stop();
      reject(new Error("sdkenv did not describe itself within 180 s"));
    }, 180000);
    child.once("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`sdkenv exited with ${code} before describing itself`));
    });
    lines.once("line", (line) => {
      clearTimeout(timer);
      child.removeAllListeners("exit");
      try {
        resolve({ env: JSON.parse(line), stop });
      } catch (e) {
        stop();
        reject(new Error(`sdkenv printed ${JSON.stringify(line)}: ${e.message}`));
      }
    });
  });
}
