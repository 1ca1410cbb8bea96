// The bridge's `@earendil-works/pi-tui`: components that draw themselves as lines of text
// (render(width) -> string[]), and the text and key helpers. There is no terminal in the bridge:
// what a component draws is what pi-host can show (widgets, and notices in place of renderers).

const ANSI = /\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[PX^_][^\x1b]*\x1b\\/g;
const WIDE = /[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]|[\u{1f300}-\u{1faff}\u{20000}-\u{3fffd}]/u;

export const CURSOR_MARKER = "\x1b_pi:c\x07";

export function stripAnsi(text) {
  return String(text).replace(ANSI, "");
}

export function visibleWidth(text) {
  let width = 0;
  for (const char of stripAnsi(text)) width += WIDE.test(char) ? 2 : char === "\t" ? 3 : 1;
  return width;
}

export function truncateToWidth(text, width, ellipsis = "...", pad = false) {
  text = String(text);
  if (visibleWidth(text) <= width) return pad ? text + " ".repeat(width - visibleWidth(text)) : text;
  const room = Math.max(0, width - visibleWidth(ellipsis));
  let out = "";
  let used = 0;
  for (const char of stripAnsi(text)) {
    const w = WIDE.test(char) ? 2 : 1;
    if (used + w > room) break;
    out += char;
    used += w;
  }
  return out + (width >= visibleWidth(ellipsis) ? ellipsis : "");
}

export function wrapTextWithAnsi(text, width) {
  const lines = [];
  for (const paragraph of String(text).split("\n")) {
    let line = "";
    for (const word of paragraph.split(" ")) {
      const candidate = line ? `${line} ${word}` : word;
      if (visibleWidth(candidate) > width && line) {
        lines.push(line);
        line = word;
      } else line = candidate;
    }
    lines.push(line);
  }
  return lines;
}

export class Text {
  constructor(text = "", paddingX = 1, paddingY = 1, background) {
    this.text = text;
    this.paddingX = paddingX;
    this.paddingY = paddingY;
    this.background = background;
  }
  setText(text) {
    this.text = text;
  }
  render(width = 80) {
    const pad = " ".repeat(this.paddingX);
    const inner = Math.max(1, width - 2 * this.paddingX);
    const body = String(this.text)
      .split("\n")
      .flatMap((line) => wrapTextWithAnsi(line, inner))
      .map((line) => pad + line);
    const blank = Array.from({ length: this.paddingY }, () => "");
    const lines = [...blank, ...body, ...blank];
    return this.background ? lines.map((line) => this.background(line)) : lines;
  }
  invalidate() {}
}

export class Container {
  constructor() {
    this.children = [];
  }
  addChild(child) {
    this.children.push(child);
  }
  removeChild(child) {
    this.children = this.children.filter((c) => c !== child);
  }
  clear() {
    this.children = [];
  }
  render(width = 80) {
    return this.children.flatMap((child) => child?.render?.(width) ?? []);
  }
  invalidate() {}
}

export class Box extends Container {
  constructor(paddingX = 1, paddingY = 1, background) {
    super();
    this.paddingX = paddingX;
    this.paddingY = paddingY;
    this.background = background;
  }
  render(width = 80) {
    const pad = " ".repeat(this.paddingX);
    const blank = Array.from({ length: this.paddingY }, () => "");
    const lines = [...blank, ...super.render(width - 2 * this.paddingX).map((l) => pad + l), ...blank];
    return this.background ? lines.map((line) => this.background(line)) : lines;
  }
}

export class Spacer {
  constructor(lines = 1) {
    this.lines = lines;
  }
  render() {
    return Array.from({ length: this.lines }, () => "");
  }
  invalidate() {}
}

export class Markdown extends Text {
  constructor(text = "", paddingX = 1, paddingY = 0) {
    super(text, paddingX, paddingY);
  }
}

export class Loader extends Text {
  constructor(_tui, _spinner, _message, text = "") {
    super(text, 0, 0);
  }
  start() {}
  stop() {}
  setMessage(message) {
    this.setText(message);
  }
}

export class Input {
  constructor() {
    this.value = "";
  }
  getValue() {
    return this.value;
  }
  setValue(value) {
    this.value = value;
  }
  handleInput() {}
  render() {
    return [this.value];
  }
  invalidate() {}
}

export class SelectList {
  constructor(items = [], maxVisible = 10) {
    this.items = items;
    this.maxVisible = maxVisible;
    this.selected = 0;
  }
  setFilter() {}
  getSelectedItem() {
    return this.items[this.selected];
  }
  handleInput() {}
  render() {
    return this.items.slice(0, this.maxVisible).map((item, index) => `${index === this.selected ? ">" : " "} ${item.label ?? item.value}`);
  }
  invalidate() {}
}

export class SettingsList extends SelectList {}

export function renderFakeCursor(text) {
  return text;
}

// --- keys -----------------------------------------------------------------------------------------

const NAMED = {
  escape: "\x1b", esc: "\x1b", enter: "\r", return: "\r", tab: "\t", space: " ", backspace: "\x7f",
  up: "\x1b[A", down: "\x1b[B", right: "\x1b[C", left: "\x1b[D", home: "\x1b[H", end: "\x1b[F",
  delete: "\x1b[3~", pageup: "\x1b[5~", pagedown: "\x1b[6~",
};

export function parseKey(data) {
  for (const [name, sequence] of Object.entries(NAMED)) if (data === sequence) return name;
  if (data.length === 1 && data.charCodeAt(0) < 27) return `ctrl+${String.fromCharCode(data.charCodeAt(0) + 96)}`;
  if (data.length === 2 && data[0] === "\x1b") return `alt+${data[1]}`;
  return data;
}

export function matchesKey(data, key) {
  return parseKey(data) === String(key).toLowerCase() || data === key;
}

export function isKeyRelease() {
  return false;
}

export const Key = new Proxy(
  {},
  {
    get: (_target, name) => (typeof name === "string" ? name.replace(/([a-z])([A-Z])/g, "$1+$2").toLowerCase() : undefined),
  },
);

export let Component;
export let TUI;
export let Focusable;
export let AutocompleteItem;
export let OverlayHandle;
export let OverlayOptions;
export let KeyId;
