// pi's ExtensionAPI for one extension: what it registers is kept here (handlers, tools, commands,
// flags, shortcuts) and described to pi-host; actions are forwarded to pi-host's ctx.

import { call, syncCall } from "./channel.mjs";
import { session } from "./context.mjs";
import { exec } from "./exec.mjs";
import { unsupported } from "./ui.mjs";

/** Every loaded extension by the id pi-host gave it. */
export const extensions = new Map();

// pi.events: one bus for every extension of the process, bridged to pi-host's own bus.
const bus = new Map();
const forwarded = new Set();

export function busDeliver(name, data) {
  for (const handler of [...(bus.get(name) ?? [])]) {
    try {
      const result = handler.fn(data);
      if (result && typeof result.then === "function") {
        result.catch((error) => call("ext.report", [`events:${name}`, describe(error)], handler.ext, false));
      }
    } catch (error) {
      call("ext.report", [`events:${name}`, describe(error)], handler.ext, false);
    }
  }
}

export function describe(error) {
  if (error instanceof Error) return error.stack || `${error.name}: ${error.message}`;
  return String(error);
}

function events(ext) {
  return {
    on(name, fn) {
      const entry = { fn, ext: ext.id };
      const list = bus.get(name) ?? [];
      list.push(entry);
      bus.set(name, list);
      if (!forwarded.has(name)) {
        forwarded.add(name);
        call("bus.listen", [name], ext.id, false); // pi-host's plugins' emits reach us too
      }
      return () => {
        const current = bus.get(name) ?? [];
        const index = current.indexOf(entry);
        if (index >= 0) current.splice(index, 1);
      };
    },
    emit(name, data) {
      busDeliver(name, data);
      call("bus.emit", [name, data ?? null], ext.id, false);
    },
  };
}

export class Extension {
  constructor(id, path) {
    this.id = id;
    this.path = path;
    this.handlers = new Map();
    this.tools = new Map();
    this.commands = new Map();
    this.shortcuts = new Map();
    this.flags = new Map();
    this.providers = [];
    this.unsupported = new Set();
    this.loaded = false;
  }

  /** What pi-host registers for this extension once its factory returned. */
  describe() {
    return {
      events: [...this.handlers.keys()],
      tools: [...this.tools.values()].map(toolInfo),
      commands: [...this.commands.entries()].map(([name, c]) => commandInfo(name, c)),
      shortcuts: [...this.shortcuts.entries()].map(([key, s]) => ({ key, description: s.description ?? "" })),
      flags: [...this.flags.entries()].map(([name, f]) => flagInfo(name, f)),
      providers: this.providers,
      unsupported: [...this.unsupported],
    };
  }
}

function toolInfo(tool) {
  return {
    name: tool.name,
    label: tool.label ?? tool.name,
    description: tool.description ?? "",
    parameters: tool.parameters ?? { type: "object", properties: {} },
    promptSnippet: tool.promptSnippet ?? null,
    promptGuidelines: tool.promptGuidelines ?? [],
    executionMode: tool.executionMode ?? null,
    defaultActive: tool.defaultActive !== false && (tool.exposure ?? "direct") === "direct",
    hasPrepare: typeof tool.prepareArguments === "function",
  };
}

function commandInfo(name, command) {
  return { name, description: command.description ?? "", completes: typeof command.getArgumentCompletions === "function" };
}

function flagInfo(name, flag) {
  return { name, description: flag.description ?? "", type: flag.type ?? "boolean", default: flag.default ?? null };
}

function later(ext, op, args) {
  // after the factory returned, registrations reach the running session at once
  if (ext.loaded) call(op, args, ext.id, false);
}

/** The `pi` object handed to the extension's factory. */
export function makeApi(ext) {
  const pi = {
    on(event, handler) {
      const list = ext.handlers.get(event) ?? [];
      list.push(handler);
      const fresh = !ext.handlers.has(event);
      ext.handlers.set(event, list);
      if (fresh) later(ext, "ext.on", [event]);
      return () => {
        const current = ext.handlers.get(event) ?? [];
        const index = current.indexOf(handler);
        if (index >= 0) current.splice(index, 1);
      };
    },
    registerTool(tool) {
      if (!tool?.name) throw new Error("registerTool: a tool needs a name");
      ext.tools.set(tool.name, tool);
      later(ext, "tool.register", [toolInfo(tool)]);
    },
    registerCommand(name, options) {
      ext.commands.set(name, options);
      later(ext, "command.register", [commandInfo(name, options)]);
    },
    registerShortcut(key, options) {
      ext.shortcuts.set(key, options);
      if (ext.loaded) unsupported(ext.id, "registerShortcut after start-up");
    },
    registerFlag(name, options = {}) {
      ext.flags.set(name, options);
    },
    getFlag(name) {
      const value = ext.loaded ? syncCall("pi.getFlag", [name], ext.id) : undefined;
      return value ?? ext.flags.get(name)?.default;
    },
    registerMessageRenderer: () => ext.unsupported.add("registerMessageRenderer"),
    registerEntryRenderer: () => ext.unsupported.add("registerEntryRenderer"),
    registerToolRenderer: () => ext.unsupported.add("registerToolRenderer"),
    registerMarkdownTransformer: () => ext.unsupported.add("registerMarkdownTransformer"),
    registerVirtualModel() {
      throw new Error("registerVirtualModel is not supported by pi-host's bridge");
    },
    unregisterVirtualModel() {},
    registerMcpServer() {
      throw new Error("registerMcpServer is not supported by pi-host's bridge (use pi-host's mcp.json)");
    },
    unregisterMcpServer() {},
    getMcpServers: () => [],
    sendMessage: (message, options) => call("pi.sendMessage", [message, options ?? {}], ext.id, false),
    sendUserMessage: (content, options) => call("pi.sendUserMessage", [content, options ?? {}], ext.id, false),
    appendEntry: (customType, data) => call("pi.appendEntry", [customType, data ?? null], ext.id, false),
    setSessionName: (name) => call("pi.setSessionName", [name], ext.id, false),
    getSessionName: () => syncCall("pi.getSessionName", [], ext.id) ?? undefined,
    setLabel: (entryId, label) => call("pi.setLabel", [entryId, label ?? null], ext.id, false),
    exec: (command, args, options) => exec(command, args, options, session.cwd),
    getActiveTools: () => (ext.loaded ? syncCall("pi.getActiveTools", [], ext.id) : []),
    getAllTools: () => (ext.loaded ? syncCall("pi.getAllTools", [], ext.id) : []),
    setActiveTools: (names) => call("pi.setActiveTools", [names], ext.id, false),
    setModel: (model) => call("pi.setModel", [typeof model === "string" ? model : `${model?.provider}/${model?.id}`], ext.id),
    getThinkingLevel: () => syncCall("pi.getThinkingLevel", [], ext.id),
    setThinkingLevel: (level) => call("pi.setThinkingLevel", [level], ext.id, false),
    getCommands: () => syncCall("pi.getCommands", [], ext.id),
    getSettings: () => syncCall("pi.getSettings", [], ext.id),
    registerProvider(name, config) {
      if (typeof name !== "string") throw new Error("registerProvider: pass (name, config); provider objects are not supported by pi-host's bridge");
      const plain = JSON.parse(JSON.stringify(config ?? {})); // functions (oauth, streamSimple) cannot cross
      if (ext.loaded) call("pi.registerProvider", [name, plain], ext.id, false);
      else ext.providers.push([name, plain]);
    },
    unregisterProvider: (name) => call("pi.unregisterProvider", [name], ext.id, false),
    events: events(ext),
  };
  return pi;
}
