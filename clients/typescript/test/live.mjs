// Runs the built services (bin/scoring, bin/forecast from `make build`; YARDSTICK_BIN names
// another directory) in dev mode on free loopback ports, for the client's tests: what a client
// meets, not handlers. Each is stopped with SIGTERM when the test process ends.
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { access } from "node:fs/promises";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const bin = process.env.YARDSTICK_BIN ?? path.join(root, "bin");
const running = new Set();
process.on("exit", () => {
  for (const child of running) child.kill("SIGTERM");
});

/** The repository's root directory. */
export const repoRoot = root;

/**
 * Starts service ("scoring" or "forecast") and resolves to {base, stop, restart}: base is its
 * http://127.0.0.1:port; restart() stops it and starts a new process on the same port (a new
 * dev-mode signing key: the old tokens are refused).
 */
export async function start(service, port = 0) {
  const exe = path.join(bin, service);
  await access(exe).catch(() => {
    throw new Error(`${exe} is missing: run 'make build' first (or set YARDSTICK_BIN)`);
  });
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("YARDSTICK_")));
  Object.assign(env, {
    YARDSTICK_DEV: "true",
    YARDSTICK_HTTP_ADDR: `127.0.0.1:${port}`,
    YARDSTICK_GRPC_ADDR: "127.0.0.1:0",
    YARDSTICK_LOG_FORMAT: "json",
    YARDSTICK_SHUTDOWN_GRACE: "1s",
  });
  const child = spawn(exe, [], { env, stdio: ["ignore", "ignore", "pipe"] });
  running.add(child);
  let log = "";
  const http = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${service} did not serve within 60 s:\n${log}`)), 60_000);
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (d) => {
      log += d;
      const m = /"msg":"serving".*?"http":"([^"]+)"/.exec(log);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${service} exited (${code}) before serving:\n${log}`));
    });
  });
  child.stderr.resume();
  const stop = () =>
    new Promise((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once("exit", () => {
        running.delete(child);
        resolve();
      });
      child.kill("SIGTERM");
    });
  return {
    base: `http://${http}`,
    stop,
    async restart() {
      await stop();
      return start(service, Number(http.split(":").pop()));
    },
  };
}
