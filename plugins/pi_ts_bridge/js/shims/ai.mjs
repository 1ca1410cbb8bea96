// The bridge's `@earendil-works/pi-ai`: what extensions use of it. StringEnum and TypeBox's Type
// (pi's extension view re-exports it), uuidv7, the transcript helpers for context_with_system, and
// complete()/completeSimple()/streamSimple(), which run the request in pi-host with its catalog and
// keys (the model is named by provider and id).

import { randomBytes } from "node:crypto";
import { call } from "../channel.mjs";
import { Type } from "./typebox.mjs";

export { Type };
export let Static;
export let TSchema;
export let Message;
export let AssistantMessage;
export let UserMessage;
export let TextContent;
export let ImageContent;
export let Model;
export let Api;
export let Context;

export function StringEnum(values, options) {
  return { ...(options ?? {}), type: "string", enum: [...values] };
}

export function uuidv7() {
  const bytes = randomBytes(16);
  const now = BigInt(Date.now());
  for (let index = 0; index < 6; index++) bytes[index] = Number((now >> BigInt(8 * (5 - index))) & 0xffn);
  bytes[6] = (bytes[6] & 0x0f) | 0x70;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

// --- transcripts (pi §1.2: system messages are a leading state plus patches) ------------------

export function getCurrentSystemMessage(messages) {
  let content = "";
  const sections = {};
  const tools = new Map();
  let found = false;
  for (const message of messages ?? []) {
    if (message?.role !== "system") continue;
    found = true;
    const text = typeof message.content === "string" ? message.content : (message.content ?? []).map((b) => b.text ?? "").join("");
    if (text) content = content ? `${content}\n\n${text}` : text;
    for (const [name, value] of Object.entries(message.sections ?? {})) {
      if (value === null) delete sections[name];
      else sections[name] = value;
    }
    for (const tool of message.toolsAdded ?? []) tools.set(tool.name, tool);
    for (const tool of message.toolsRemoved ?? []) tools.delete(tool.name);
  }
  if (!found) return undefined;
  return { role: "system", content, sections, toolsAdded: [...tools.values()], timestamp: Date.now() };
}

export function getCurrentSystemPrompt(messages) {
  const head = getCurrentSystemMessage(messages);
  if (!head) return "";
  return [head.content, ...Object.values(head.sections)].filter(Boolean).join("\n\n");
}

export function getCurrentTools(messages) {
  return getCurrentSystemMessage(messages)?.toolsAdded ?? [];
}

// --- requests run by pi-host --------------------------------------------------------------------

function modelKey(model) {
  if (typeof model === "string") return model;
  return `${model?.provider}/${model?.id}`;
}

function portable(options) {
  const { signal: _signal, onPayload: _onPayload, ...rest } = options ?? {};
  return rest;
}

export async function complete(model, context, options) {
  const work = call("llm.complete", [modelKey(model), context, portable(options)], null);
  if (!options?.signal) return work;
  return await Promise.race([
    work,
    new Promise((_, reject) =>
      options.signal.addEventListener("abort", () => reject(new Error("Request was aborted")), { once: true }),
    ),
  ]);
}

export const completeSimple = complete;

/** A stream of the final message only: pi-host does not forward the deltas of nested requests. */
export function streamSimple(model, context, options) {
  const result = complete(model, context, options);
  return {
    async *[Symbol.asyncIterator]() {
      const message = await result;
      yield { type: "done", reason: message.stopReason, message };
    },
    result: () => result,
  };
}

export const stream = streamSimple;

export function registerApiProvider() {
  throw new Error("registerApiProvider: custom wire APIs written in TypeScript are not supported by pi-host");
}
