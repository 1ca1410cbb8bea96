// The wire between the bridge and pi-host: one JSON object per line.
//
//   pi-host -> bridge   stdin (fd 0), read asynchronously
//   bridge -> pi-host   a pipe of its own (PI_TS_BRIDGE_OUT_FD), written synchronously
//   pi-host -> bridge   a second pipe (PI_TS_BRIDGE_SYNC_FD): answers to synchronous calls only,
//                       read with a blocking read
//
// Synchronous calls exist because pi's API has synchronous getters (ctx.sessionManager.getEntries(),
// pi.getActiveTools(), ctx.model...): the bridge writes {t:"sync"} and blocks on the answer pipe
// until pi-host answers. pi-host answers them as they arrive (from its event loop, or while it
// waits for a reply during loading) and never blocks writing to the bridge, so the wait cannot
// deadlock. stdout and stderr stay free for the extensions'
// own console output (pi-host passes both to its stderr).

import { readSync, writeSync } from "node:fs";

// pi-host passes the two pipes' descriptors (they keep pi-host's numbers in the child)
const OUT = Number(process.env.PI_TS_BRIDGE_OUT_FD ?? 3);
const SYNC_IN = Number(process.env.PI_TS_BRIDGE_SYNC_FD ?? 4);

function replacer(_key, value) {
  if (typeof value === "bigint") return Number(value);
  if (value instanceof Error) return { name: value.name, message: value.message };
  if (value instanceof Uint8Array) return Buffer.from(value).toString("base64");
  if (value instanceof Map) return Object.fromEntries(value);
  if (value instanceof Set) return [...value];
  return value;
}

export function encode(frame) {
  return JSON.stringify(frame, replacer) + "\n";
}

export function send(frame) {
  let text;
  try {
    text = encode(frame);
  } catch (error) {
    // a value JSON cannot hold (a cycle): the frame still goes out, with the reason
    if (frame.t !== "r" && frame.t !== "cr") throw error;
    text = encode({ t: frame.t, id: frame.id, ok: false, e: `cannot send the result: ${error.message}` });
  }
  const data = Buffer.from(text, "utf8");
  let offset = 0;
  while (offset < data.length) offset += writeSync(OUT, data, offset, data.length - offset);
}

// --- calls from the bridge to pi-host -------------------------------------------------------

let nextCall = 0;
const pending = new Map();

/** An asynchronous call; `reply: false` sends it without waiting (ordered with every other frame). */
export function call(op, args, ext, reply = true) {
  if (!reply) {
    send({ t: "call", id: 0, op, a: args, x: ext });
    return undefined;
  }
  const id = ++nextCall;
  send({ t: "call", id, op, a: args, x: ext });
  return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
}

export function settleCall(frame) {
  const waiting = pending.get(frame.id);
  if (!waiting) return;
  pending.delete(frame.id);
  if (frame.ok) waiting.resolve(frame.v);
  else waiting.reject(new Error(frame.e));
}

/** Every call still waiting, failed at once (pi-host is going away). */
export function failCalls(reason) {
  for (const waiting of pending.values()) waiting.reject(new Error(reason));
  pending.clear();
}

let nextSync = 0;
let buffered = Buffer.alloc(0);

export function syncCall(op, args, ext) {
  const id = ++nextSync;
  send({ t: "sync", id, op, a: args, x: ext });
  for (;;) {
    const newline = buffered.indexOf(10);
    if (newline >= 0) {
      const line = buffered.subarray(0, newline).toString("utf8");
      buffered = buffered.subarray(newline + 1);
      const answer = JSON.parse(line);
      if (answer.id !== id) continue; // an answer to a call abandoned by an exception
      if (answer.ok) return answer.v;
      throw new Error(answer.e);
    }
    const chunk = Buffer.allocUnsafe(65536);
    let count;
    try {
      count = readSync(SYNC_IN, chunk, 0, chunk.length, null);
    } catch (error) {
      if (error.code === "EAGAIN") continue;
      throw error;
    }
    if (count === 0) throw new Error("pi-host closed the bridge");
    buffered = Buffer.concat([buffered, chunk.subarray(0, count)]);
  }
}

// --- frames from pi-host --------------------------------------------------------------------

export function listen(onFrame, onEnd) {
  let rest = "";
  process.stdin.setEncoding("utf8");
  process.stdin.on("data", (text) => {
    rest += text;
    let newline;
    while ((newline = rest.indexOf("\n")) >= 0) {
      const line = rest.slice(0, newline);
      rest = rest.slice(newline + 1);
      if (line) onFrame(JSON.parse(line));
    }
  });
  process.stdin.on("end", onEnd);
}
