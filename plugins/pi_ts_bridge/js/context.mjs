// The `ctx` extensions receive (pi's ExtensionContext, ExtensionCommandContext and the tool
// context), forwarded to pi-host's own ctx: getters are synchronous calls (pi's API is
// synchronous there), actions asynchronous ones, fire-and-forget ones keep their order.

import { call, syncCall } from "./channel.mjs";
import { plainTheme, uiFor } from "./ui.mjs";

/** What pi-host said about the session the bridge serves (a `bind` frame). */
export const session = { mode: "print", hasUI: false, cwd: process.cwd() };

// --- abort signals ---------------------------------------------------------------------------

const hostSignals = new Map(); // pi-host's signals, by the id pi-host gave them
let nextLocal = 0;

/** The AbortSignal mirroring pi-host's signal `id` (aborted by an `abort` frame). */
export function signalFromHost(id) {
  if (id === undefined || id === null) return undefined;
  let controller = hostSignals.get(id);
  if (!controller) {
    controller = new AbortController();
    hostSignals.set(id, controller);
  }
  return controller.signal;
}

export function abortFromHost(id, reason) {
  const controller = hostSignals.get(id);
  if (controller) controller.abort(new Error(reason || "Operation aborted"));
  else {
    const aborted = new AbortController();
    aborted.abort(new Error(reason || "Operation aborted"));
    hostSignals.set(id, aborted);
  }
}

export function releaseHostSignal(id) {
  hostSignals.delete(id);
}

/** An id pi-host can wait on for an extension's own AbortSignal (dialogs' `signal` option). */
export function signalToHost(signal, ext) {
  if (!signal) return undefined;
  const id = `n${++nextLocal}`;
  if (signal.aborted) call("signal.abort", [id], ext, false);
  else signal.addEventListener("abort", () => call("signal.abort", [id], ext, false), { once: true });
  return id;
}

/** A JSON reviver: pi-host sends its signals inside events as {"$signal": id}. */
export function revive(_key, value) {
  if (value && typeof value === "object" && "$signal" in value && Object.keys(value).length === 1) {
    return signalFromHost(value.$signal);
  }
  return value;
}

// --- ctx -------------------------------------------------------------------------------------

function sessionManager(ext) {
  const get = (op) => (...args) => syncCall(`sm.${op}`, args, ext);
  return {
    getCwd: () => session.cwd,
    getSessionDir: get("getSessionDir"),
    getSessionId: get("getSessionId"),
    getSessionFile: get("getSessionFile"),
    getSessionName: get("getSessionName"),
    getHeader: get("getHeader"),
    getEntries: get("getEntries"),
    getEntry: get("getEntry"),
    getBranch: get("getBranch"),
    getTree: get("getTree"),
    getLeafId: get("getLeafId"),
    getLeafEntry: get("getLeafEntry"),
    getLabel: get("getLabel"),
    getChildren: get("getChildren"),
    buildContextEntries: get("buildContextEntries"),
    buildSessionProjection: get("buildSessionProjection"),
    buildSessionContext: get("buildSessionContext"),
  };
}

function modelKey(model) {
  return typeof model === "string" ? model : `${model?.provider}/${model?.id}`;
}

function modelRegistry(ext) {
  const complete = (model, context, options = {}) => {
    const { signal, onPayload: _onPayload, ...rest } = options;
    return call("llm.complete", [modelKey(model), context, rest, signalToHost(signal, ext)], ext);
  };
  return {
    find: (provider, id) => syncCall("models.find", [provider, id], ext) ?? undefined,
    getAll: () => syncCall("models.all", [], ext),
    getAvailable: () => syncCall("models.available", [], ext),
    hasConfiguredAuth: (model) => syncCall("models.hasAuth", [modelKey(model)], ext),
    complete,
    completeSimple: complete,
    streamSimple(model, context, options) {
      const result = complete(model, context, options);
      return {
        async *[Symbol.asyncIterator]() {
          const message = await result;
          yield { type: "done", reason: message.stopReason, message };
        },
        result: () => result,
      };
    },
  };
}

const UNAVAILABLE_IN_TOOLS = "ctx.executeTool (calling other tools from a tool) is not supported by pi-host's bridge";

/**
 * A ctx for one call into extension `ext`. `info.sig`: pi-host's run signal (ctx.signal);
 * `info.kind`: "command" adds the command-only methods, "tool" the tool-only ones.
 */
export function makeContext(ext, info = {}) {
  const ctx = {
    get ui() {
      return uiFor(ext);
    },
    get mode() {
      return session.mode === "interactive" ? "tui" : session.mode;
    },
    get hasUI() {
      return session.hasUI;
    },
    get cwd() {
      return session.cwd;
    },
    get sessionManager() {
      return sessionManager(ext);
    },
    get modelRegistry() {
      return modelRegistry(ext);
    },
    get model() {
      return syncCall("ctx.model", [], ext) ?? undefined;
    },
    get thinkingLevel() {
      return syncCall("pi.getThinkingLevel", [], ext);
    },
    scopedModels: [],
    get signal() {
      return signalFromHost(info.sig);
    },
    isIdle: () => syncCall("ctx.isIdle", [], ext),
    abort: () => call("ctx.abort", [], ext, false),
    hasPendingMessages: () => syncCall("ctx.hasPendingMessages", [], ext),
    shutdown: () => call("ctx.shutdown", [], ext, false),
    getContextUsage: () => syncCall("ctx.getContextUsage", [], ext) ?? undefined,
    getSystemPrompt: () => syncCall("ctx.getSystemPrompt", [], ext),
    isProjectTrusted: () => syncCall("ctx.isProjectTrusted", [], ext),
    compact(options = {}) {
      call("ctx.compact", [options.customInstructions ?? null], ext).then(
        (result) => options.onComplete?.(result),
        (error) => (options.onError ? options.onError(error) : undefined),
      );
    },
  };
  if (info.kind === "command") Object.assign(ctx, commandMethods(ext));
  if (info.kind === "tool") {
    ctx.tools = [];
    ctx.executeTool = async () => {
      throw new Error(UNAVAILABLE_IN_TOOLS);
    };
  }
  return ctx;
}

async function afterSwitch(result, options, ext) {
  if (!result?.cancelled && typeof options?.withSession === "function") {
    const fresh = makeContext(ext, { kind: "command" });
    fresh.sendMessage = (message, opts) => call("pi.sendMessage", [message, opts ?? {}], ext);
    fresh.sendUserMessage = (content, opts) => call("pi.sendUserMessage", [content, opts ?? {}], ext);
    await options.withSession(fresh);
  }
  return result;
}

function commandMethods(ext) {
  return {
    waitForIdle: () => call("ctx.waitForIdle", [], ext),
    getSystemPromptOptions: () => syncCall("ctx.getSystemPromptOptions", [], ext),
    async newSession(options = {}) {
      if (options.setup) throw new Error("ctx.newSession({setup}) is not supported by pi-host's bridge");
      return afterSwitch(await call("ctx.newSession", [], ext), options, ext);
    },
    async fork(entryId, options = {}) {
      return afterSwitch(await call("ctx.fork", [entryId, options.position ?? "before"], ext), options, ext);
    },
    async switchSession(path, options = {}) {
      return afterSwitch(await call("ctx.switchSession", [path], ext), options, ext);
    },
    navigateTree: (targetId, options = {}) => call("ctx.navigateTree", [targetId, options], ext),
    reload: () => call("ctx.reload", [], ext),
  };
}

export { plainTheme };
