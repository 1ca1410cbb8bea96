// pi-host's TypeScript bridge: one Node process per pi-host session runtime that loads pi
// extensions (TypeScript through ./loader.mjs) and runs what pi-host asks of them. The wire is
// described in ./channel.mjs and docs/typescript-extensions.md.

import "./loader.mjs";

import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { Extension, busDeliver, describe, extensions, makeApi } from "./api.mjs";
import { call, listen, send, settleCall } from "./channel.mjs";
import { abortFromHost, makeContext, releaseHostSignal, session, signalFromHost } from "./context.mjs";
import { emit } from "./events.mjs";

const SCRIPT = /\.(ts|mts|cts|js|mjs|cjs)$/;

/** The module files one extension source stands for (a file, or a folder laid out as pi does). */
function entries(source) {
  if (!statSync(source).isDirectory()) return [source];
  const manifest = path.join(source, "package.json");
  if (existsSync(manifest)) {
    const listed = JSON.parse(readFileSync(manifest, "utf8"))?.pi?.extensions;
    if (Array.isArray(listed) && listed.length) {
      return listed
        .filter((item) => typeof item === "string" && !item.startsWith("!"))
        .flatMap((item) => entries(path.resolve(source, item)));
    }
  }
  for (const index of ["index.ts", "index.js", "index.mts", "index.mjs"]) {
    if (existsSync(path.join(source, index))) return [path.join(source, index)];
  }
  const folder = path.join(source, "extensions");
  if (existsSync(folder)) {
    return readdirSync(folder)
      .sort()
      .filter((name) => !name.startsWith("."))
      .flatMap((name) => {
        const full = path.join(folder, name);
        if (SCRIPT.test(name) && !name.endsWith(".d.ts")) return [full];
        const index = ["index.ts", "index.js"].map((n) => path.join(full, n)).find((f) => existsSync(f));
        return index ? [index] : [];
      });
  }
  throw new Error(`${source}: no index.ts, index.js, package.json "pi.extensions" or extensions/ folder`);
}

function factoryOf(module, file) {
  let factory = module?.default;
  if (factory && typeof factory !== "function" && typeof factory.default === "function") factory = factory.default;
  if (typeof factory !== "function") throw new Error(`${file}: the module has no default export function (pi's extension factory)`);
  return factory;
}

async function load(frame) {
  const ext = new Extension(frame.x, frame.path);
  extensions.set(frame.x, ext);
  const pi = makeApi(ext);
  for (const file of entries(frame.path)) {
    const module = await import(pathToFileURL(file).href);
    await factoryOf(module, file)(pi);
  }
  ext.loaded = true;
  return ext.describe();
}

function extension(frame) {
  const ext = extensions.get(frame.x);
  if (!ext) throw new Error(`no extension ${frame.x} is loaded in the bridge`);
  return ext;
}

function reviveSignals(event) {
  for (const [key, value] of Object.entries(event)) {
    if (value && typeof value === "object" && "$signal" in value) event[key] = signalFromHost(value.$signal);
  }
  return event;
}

async function runEmit(frame) {
  const ext = extension(frame);
  const handlers = [...(ext.handlers.get(frame.ev) ?? [])];
  if (!handlers.length) return { v: null };
  const ctx = makeContext(ext.id, { sig: frame.sig });
  const report = (error) => call("ext.report", [frame.ev, describe(error)], ext.id, false);
  return emit(frame.ev, handlers, reviveSignals(frame.e ?? {}), ctx, report);
}

function normaliseResult(result) {
  if (!result || typeof result !== "object") return { content: [{ type: "text", text: String(result ?? "") }] };
  return {
    content: Array.isArray(result.content) ? result.content : [],
    details: result.details ?? null,
    ...(result.isError ? { isError: true } : {}),
    ...(result.terminate ? { terminate: true } : {}),
    ...(result.usage ? { usage: result.usage } : {}),
    ...(result.structuredContent !== undefined ? { structuredContent: result.structuredContent } : {}),
  };
}

async function runTool(frame) {
  const ext = extension(frame);
  const tool = ext.tools.get(frame.name);
  if (!tool) throw new Error(`tool ${frame.name} is not registered`);
  const onUpdate = (partial) => send({ t: "upd", id: frame.id, v: normaliseResult(partial) });
  const signal = signalFromHost(frame.sig) ?? new AbortController().signal;
  try {
    const ctx = makeContext(ext.id, { sig: frame.sig, kind: "tool" });
    return normaliseResult(await tool.execute(frame.call, frame.args ?? {}, signal, onUpdate, ctx));
  } finally {
    if (frame.sig !== undefined) releaseHostSignal(frame.sig);
  }
}

async function runCommand(frame) {
  const ext = extension(frame);
  const command = ext.commands.get(frame.name);
  if (!command) throw new Error(`command /${frame.name} is not registered`);
  await command.handler(frame.args ?? "", makeContext(ext.id, { sig: frame.sig, kind: "command" }));
  return null;
}

async function runComplete(frame) {
  const command = extension(frame).commands.get(frame.name);
  const items = await command?.getArgumentCompletions?.(frame.prefix ?? "");
  return Array.isArray(items) ? items : null;
}

async function runShortcut(frame) {
  const ext = extension(frame);
  await ext.shortcuts.get(frame.key)?.handler(makeContext(ext.id, { kind: "command" }));
  return null;
}

const WORK = { load, emit: runEmit, tool: runTool, cmd: runCommand, complete: runComplete, key: runShortcut, ping: async () => "pong" };

function reply(frame, work) {
  work.then(
    (value) => send({ t: "r", id: frame.id, ok: true, v: value ?? null }),
    (error) => send({ t: "r", id: frame.id, ok: false, e: error instanceof Error ? error.message || error.name : String(error), s: describe(error) }),
  );
}

function onFrame(frame) {
  switch (frame.t) {
    case "r":
      settleCall(frame);
      return;
    case "abort":
      abortFromHost(frame.sig, frame.reason);
      return;
    case "bind":
      Object.assign(session, frame.v);
      return;
    case "bus":
      busDeliver(frame.name, frame.data);
      return;
    default: {
      const work = WORK[frame.t];
      if (!work) {
        send({ t: "r", id: frame.id, ok: false, e: `unknown frame ${frame.t}` });
        return;
      }
      let running;
      try {
        running = Promise.resolve(work(frame));
      } catch (error) {
        running = Promise.reject(error);
      }
      reply(frame, running);
    }
  }
}

// An extension's stray error (a timer that throws, a promise nobody awaits) must not end the
// bridge: pi-host names it and the other extensions go on.
process.on("uncaughtException", (error) => call("bridge.error", [describe(error)], null, false));
process.on("unhandledRejection", (error) => call("bridge.error", [describe(error)], null, false));

listen(onFrame, () => process.exit(0));
send({ t: "ready", pid: process.pid, node: process.version });
