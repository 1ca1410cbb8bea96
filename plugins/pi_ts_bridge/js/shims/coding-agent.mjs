// The bridge's `@earendil-works/pi-coding-agent`: the helpers extensions import (defineTool, the
// tool-event guards, truncation, frontmatter, convertToLlm...), written for the bridge. Type-only
// names are exported as undefined values, so an import that forgot `type` still links.

import os from "node:os";
import path from "node:path";
import { Container, Text, truncateToWidth, visibleWidth } from "./tui.mjs";

export const VERSION = "1.6.0";
export const CONFIG_DIR_NAME = ".pi";
export const DEFAULT_MAX_BYTES = 50 * 1024;
export const DEFAULT_MAX_LINES = 2000;

export function getAgentDir() {
  return process.env.PI_CODING_AGENT_DIR || path.join(os.homedir(), ".pi", "agent");
}

export const defineTool = (definition) => definition;

export function isToolCallEventType(name, event) {
  return event?.toolName === name;
}

const resultOf = (name) => (event) => event?.toolName === name;
export const isBashToolResult = resultOf("bash");
export const isReadToolResult = resultOf("read");
export const isEditToolResult = resultOf("edit");
export const isWriteToolResult = resultOf("write");
export const isGrepToolResult = resultOf("grep");
export const isFindToolResult = resultOf("find");
export const isLsToolResult = resultOf("ls");

// --- truncation ----------------------------------------------------------------------------------

export function formatSize(bytes) {
  if (bytes < 1024) return `${bytes}B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1).replace(/\.0$/, "")}KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1).replace(/\.0$/, "")}MB`;
}

function truncateLines(text, options, fromEnd) {
  const maxLines = options?.maxLines ?? DEFAULT_MAX_LINES;
  const maxBytes = options?.maxBytes ?? DEFAULT_MAX_BYTES;
  const lines = String(text).split("\n");
  const totalBytes = Buffer.byteLength(String(text), "utf8");
  const kept = [];
  let bytes = 0;
  const order = fromEnd ? [...lines].reverse() : lines;
  for (const line of order) {
    const size = Buffer.byteLength(line, "utf8") + (kept.length ? 1 : 0);
    if (kept.length >= maxLines || bytes + size > maxBytes) break;
    kept.push(line);
    bytes += size;
  }
  if (fromEnd) kept.reverse();
  const truncated = kept.length < lines.length;
  return {
    content: kept.join("\n"),
    truncated,
    truncatedBy: truncated ? (kept.length >= maxLines ? "lines" : "bytes") : null,
    totalLines: lines.length,
    totalBytes,
    outputLines: kept.length,
    outputBytes: bytes,
    maxLines,
    maxBytes,
  };
}

export const truncateHead = (text, options) => truncateLines(text, options, false);
export const truncateTail = (text, options) => truncateLines(text, options, true);

export function truncateLine(text, maxChars = 500) {
  const value = String(text);
  return value.length <= maxChars
    ? { text: value, wasTruncated: false }
    : { text: `${value.slice(0, maxChars)}... [truncated]`, wasTruncated: true };
}

// --- files ---------------------------------------------------------------------------------------

const queues = new Map();

/** Serialise mutations of one file among the bridge's tools (pi-host's own edit and write tools
 * run in another process and have their own queue). */
export async function withFileMutationQueue(file, work) {
  const key = path.resolve(file);
  const previous = queues.get(key) ?? Promise.resolve();
  const next = previous.then(work, work);
  queues.set(key, next.catch(() => {}));
  try {
    return await next;
  } finally {
    if (queues.get(key) === next) queues.delete(key);
  }
}

export function parseFrontmatter(text) {
  const match = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?/.exec(String(text));
  if (!match) return { frontmatter: {}, body: String(text) };
  const frontmatter = {};
  for (const line of match[1].split(/\r?\n/)) {
    const pair = /^([\w.-]+)\s*:\s*(.*)$/.exec(line);
    if (!pair) continue;
    let value = pair[2].trim();
    if (/^["'].*["']$/.test(value)) value = value.slice(1, -1);
    else if (value === "true" || value === "false") value = value === "true";
    else if (/^-?\d+(\.\d+)?$/.test(value)) value = Number(value);
    frontmatter[pair[1]] = value;
  }
  return { frontmatter, body: String(text).slice(match[0].length) };
}

// --- messages ------------------------------------------------------------------------------------

function blocks(content) {
  return typeof content === "string" ? [{ type: "text", text: content }] : (content ?? []);
}

function textOf(content) {
  return blocks(content)
    .filter((b) => b.type === "text")
    .map((b) => b.text)
    .join("\n");
}

/** The model's view of session messages (pi §1.6): coding-agent roles become user messages. */
export function convertToLlm(messages) {
  const out = [];
  for (const message of messages ?? []) {
    const timestamp = message.timestamp ?? Date.now();
    switch (message.role) {
      case "bashExecution": {
        if (message.excludeFromContext) break;
        let text = `Ran \`${message.command}\`\n\`\`\`\n${message.output || "(no output)"}\n\`\`\``;
        if (message.cancelled) text += "\n\n(command cancelled)";
        else if (message.exitCode) text += `\n\nCommand exited with code ${message.exitCode}`;
        if (message.truncated && message.fullOutputPath) text += `\n\n[Output truncated. Full output: ${message.fullOutputPath}]`;
        out.push({ role: "user", content: [{ type: "text", text }], timestamp });
        break;
      }
      case "custom":
        out.push({ role: "user", content: blocks(message.content), timestamp });
        break;
      case "branchSummary":
        out.push({ role: "user", content: [{ type: "text", text: `The following is a summary of a branch that this conversation came back from:\n\n<summary>\n${message.summary}</summary>` }], timestamp });
        break;
      case "compactionSummary":
        out.push({ role: "user", content: [{ type: "text", text: `The conversation history before this point was compacted into the following summary:\n\n<summary>\n${message.summary}\n</summary>` }], timestamp });
        break;
      default:
        out.push(message);
    }
  }
  return out;
}

/** A plain-text transcript for summarisation prompts. */
export function serializeConversation(messages) {
  const parts = [];
  for (const message of messages ?? []) {
    if (message.role === "user") parts.push(`[User]: ${textOf(message.content)}`);
    else if (message.role === "assistant") {
      const text = textOf(message.content);
      if (text) parts.push(`[Assistant]: ${text}`);
      const calls = blocks(message.content).filter((b) => b.type === "toolCall");
      for (const c of calls) parts.push(`[Assistant tool call]: ${c.name}(${JSON.stringify(c.arguments ?? {})})`);
    } else if (message.role === "toolResult") parts.push(`[Tool result]: ${textOf(message.content)}`);
  }
  return parts.join("\n\n");
}

// --- display helpers (drawn as lines) -------------------------------------------------------------

export function rawKeyHint(key, description) {
  return `${key} ${description}`;
}
export const keyText = (id) => String(id).split(".").pop();
export const keyHint = (id, description) => rawKeyHint(keyText(id), description);

const plainTheme = () => new Proxy({}, { get: () => (text) => text });
export const getMarkdownTheme = plainTheme;
export const getSettingsListTheme = plainTheme;
export const getSelectListTheme = plainTheme;

export function highlightCode(code) {
  return String(code).split("\n");
}

const LANGUAGES = { ts: "typescript", tsx: "typescript", js: "javascript", mjs: "javascript", py: "python", rs: "rust", go: "go", md: "markdown", json: "json", sh: "bash", rb: "ruby", java: "java", c: "c", cpp: "cpp" };
export function getLanguageFromPath(file) {
  return LANGUAGES[path.extname(String(file)).slice(1).toLowerCase()];
}

export class DynamicBorder {
  constructor(color = (text) => text) {
    this.color = color;
  }
  render(width = 80) {
    return [this.color("─".repeat(Math.max(1, width)))];
  }
  invalidate() {}
}

export class BorderedLoader extends Container {
  constructor(_tui, _theme, message = "") {
    super();
    this.signal = new AbortController().signal;
    this.addChild(new Text(message, 0, 0));
  }
  onAbort() {}
}

export class CustomEditor {
  constructor() {
    this.text = "";
  }
  getText() {
    return this.text;
  }
  setText(text) {
    this.text = text;
  }
  handleInput() {}
  render(width = 80) {
    return [truncateToWidth(this.text, width)];
  }
  invalidate() {}
}

export function copyToClipboard() {
  throw new Error("copyToClipboard is not available in pi-host's TypeScript bridge");
}

function unavailable(name) {
  return () => {
    throw new Error(`${name} (pi's built-in tool objects) is not available in pi-host's TypeScript bridge`);
  };
}
export const createReadTool = unavailable("createReadTool");
export const createBashTool = unavailable("createBashTool");
export const createEditTool = unavailable("createEditTool");
export const createWriteTool = unavailable("createWriteTool");
export const createGrepTool = unavailable("createGrepTool");
export const createFindTool = unavailable("createFindTool");
export const createLsTool = unavailable("createLsTool");
export const createReadToolDefinition = unavailable("createReadToolDefinition");
export const createBashToolDefinition = unavailable("createBashToolDefinition");
export const createLocalBashOperations = unavailable("createLocalBashOperations");

export const SessionManager = {
  list: unavailable("SessionManager.list"),
  listAll: unavailable("SessionManager.listAll"),
};

export { visibleWidth };

export let ExtensionAPI;
export let ExtensionContext;
export let ExtensionCommandContext;
export let ExtensionUIContext;
export let Theme;
export let ToolInfo;
export let AgentToolResult;
export let AgentToolUpdateCallback;
export let SessionEntry;
export let SessionMessageEntry;
export let BuildSystemPromptOptions;
export let ToolDefinition;
