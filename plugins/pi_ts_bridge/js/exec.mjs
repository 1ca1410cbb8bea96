// pi.exec(command, args, options): a program without a shell, run here in the bridge so an
// extension's subprocess never waits on a round trip (pi's semantics: signal and timeout end it with
// SIGTERM, SIGKILL 5 s later; maxBuffer caps stdout+stderr; a signal-ended program reports
// 128 + the signal's number as its code; one that cannot start reports code 127).

import { spawn } from "node:child_process";
import { constants } from "node:os";

const KILL_GRACE_MS = 5000;
const DEFAULT_MAX_BUFFER = 256 * 1024 * 1024;

export function exec(command, args = [], options = {}, defaultCwd = process.cwd()) {
  return new Promise((resolve) => {
    const maxBuffer = options.maxBuffer ?? DEFAULT_MAX_BUFFER;
    let child;
    try {
      child = spawn(command, args, {
        cwd: options.cwd ?? defaultCwd,
        env: options.env ? { ...process.env, ...options.env } : process.env,
        stdio: ["ignore", "pipe", "pipe"],
      });
    } catch (error) {
      resolve({ stdout: "", stderr: String(error?.message ?? error), code: 127, killed: false });
      return;
    }
    const out = [];
    const err = [];
    let size = 0;
    let killed = false;
    let truncated = false;
    let graceTimer;
    const terminate = () => {
      if (killed) return;
      killed = true;
      child.kill("SIGTERM");
      graceTimer = setTimeout(() => child.kill("SIGKILL"), KILL_GRACE_MS);
    };
    const take = (chunks) => (chunk) => {
      if (truncated) return;
      if (size + chunk.length > maxBuffer) {
        chunks.push(chunk.subarray(0, maxBuffer - size));
        size = maxBuffer;
        truncated = true;
        terminate();
        return;
      }
      size += chunk.length;
      chunks.push(chunk);
    };
    child.stdout.on("data", take(out));
    child.stderr.on("data", take(err));
    const timer = options.timeout ? setTimeout(terminate, options.timeout) : undefined;
    const onAbort = () => terminate();
    if (options.signal?.aborted) terminate();
    else options.signal?.addEventListener("abort", onAbort, { once: true });
    child.on("error", (error) => {
      clearTimeout(timer);
      resolve({ stdout: "", stderr: String(error?.message ?? error), code: 127, killed: false });
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      clearTimeout(graceTimer);
      options.signal?.removeEventListener("abort", onAbort);
      const number = signal ? constants.signals[signal] : undefined;
      resolve({
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
        code: number ? 128 + number : (code ?? 1),
        killed,
        ...(truncated ? { truncated: true } : {}),
      });
    });
  });
}
