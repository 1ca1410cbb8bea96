// ctx.ui for extensions: dialogs and display calls go to pi-host's ctx.ui (so they work in every
// mode pi-host has: the terminal, RPC's extension_ui_request records, print's defaults).
// Components are drawn as lines where pi-host can show lines (widgets); what needs a live
// terminal component (custom(), footers, headers, editors) does what pi's RPC mode does (no-op
// or a default) and is named once per extension as not supported.

import { call, syncCall } from "./channel.mjs";

const IDENTITY = (text) => String(text ?? "");

/** A theme that draws no colours (pi-host themes the text it shows itself). */
export function plainTheme() {
  const styles = {
    fg: (_color, text) => IDENTITY(text),
    bg: (_color, text) => IDENTITY(text),
    bold: IDENTITY,
    italic: IDENTITY,
    underline: IDENTITY,
    strikethrough: IDENTITY,
    inverse: IDENTITY,
    dim: IDENTITY,
    style: (text) => IDENTITY(text),
    getFgAnsi: () => "",
    getBgAnsi: () => "",
    colors: {},
    appearance: "dark",
    name: "pi-host",
  };
  return new Proxy(styles, { get: (target, key) => (key in target ? target[key] : IDENTITY) });
}

const WIDTH = 80;
const noted = new Map(); // extension -> features already named as unsupported

function unsupported(ext, feature) {
  const seen = noted.get(ext) ?? new Set();
  noted.set(ext, seen);
  if (seen.has(feature)) return;
  seen.add(feature);
  call("ext.unsupported", [feature], ext, false);
}

const tuiStub = { requestRender() {}, terminal: { columns: WIDTH, rows: 24 } };

/** Lines from what setWidget accepts: a string array, or a factory of a component. */
function widgetLines(content, ext) {
  if (content === undefined || content === null) return null;
  if (Array.isArray(content)) return content.map(String);
  if (typeof content === "function") {
    try {
      const component = content(tuiStub, plainTheme());
      const lines = component?.render?.(WIDTH);
      if (Array.isArray(lines)) return lines.map(String);
    } catch (error) {
      call("ext.report", ["setWidget", String(error?.stack ?? error)], ext, false);
      return null;
    }
  }
  unsupported(ext, "ctx.ui.setWidget with this kind of content");
  return null;
}

function dialogOptions(options, ext) {
  if (!options) return {};
  const out = {};
  if (typeof options.timeout === "number") out.timeout = options.timeout;
  if (options.signal) {
    const id = `n${Math.random().toString(36).slice(2)}`;
    if (options.signal.aborted) call("signal.abort", [id], ext, false);
    else options.signal.addEventListener("abort", () => call("signal.abort", [id], ext, false), { once: true });
    out.signal = id;
  }
  return out;
}

const cache = new Map();

export function uiFor(ext) {
  let ui = cache.get(ext);
  if (ui) return ui;
  const terminalOnly = (feature, value) => () => {
    unsupported(ext, `ctx.ui.${feature}`);
    return value;
  };
  ui = {
    select: (title, options, opts) => call("ui.select", [title, options, dialogOptions(opts, ext)], ext).then((v) => v ?? undefined),
    confirm: (title, message, opts) => call("ui.confirm", [title, message ?? "", dialogOptions(opts, ext)], ext).then(Boolean),
    input: (title, placeholder, opts) => call("ui.input", [title, placeholder ?? "", dialogOptions(opts, ext)], ext).then((v) => v ?? undefined),
    editor: (title, prefill, opts) => call("ui.editor", [title, prefill ?? "", dialogOptions(opts, ext)], ext).then((v) => v ?? undefined),
    notify: (message, type = "info") => call("ui.notify", [String(message), type], ext, false),
    setStatus: (key, text) => call("ui.setStatus", [key, text ?? null], ext, false),
    setWidget: (key, content, options) =>
      call("ui.setWidget", [key, widgetLines(content, ext), options?.placement ?? "aboveEditor"], ext, false),
    setTitle: (title) => call("ui.setTitle", [String(title)], ext, false),
    setEditorText: (text) => call("ui.setEditorText", [String(text)], ext, false),
    pasteToEditor: (text) => call("ui.setEditorText", [String(text)], ext, false),
    getEditorText: () => syncCall("ui.getEditorText", [], ext) ?? "",
    custom: async () => {
      unsupported(ext, "ctx.ui.custom");
      return undefined;
    },
    setFooter: terminalOnly("setFooter"),
    setHeader: terminalOnly("setHeader"),
    setEditorComponent: terminalOnly("setEditorComponent"),
    getEditorComponent: () => undefined,
    setWorkingMessage: () => {},
    setWorkingVisible: () => {},
    setWorkingIndicator: () => {},
    setHiddenThinkingLabel: () => {},
    addAutocompleteProvider: terminalOnly("addAutocompleteProvider"),
    onTerminalInput: terminalOnly("onTerminalInput", () => {}),
    getToolsExpanded: () => false,
    setToolsExpanded: () => {},
    getAllThemes: () => [],
    getTheme: () => undefined,
    setTheme: () => ({ success: false, error: "Theme switching is not supported by pi-host's bridge" }),
    get theme() {
      return plainTheme();
    },
  };
  cache.set(ext, ui);
  return ui;
}

export { unsupported };
