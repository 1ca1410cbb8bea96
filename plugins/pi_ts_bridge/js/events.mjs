// One extension's handlers of one event, run in registration order with pi's return rules
// (docs/extensions.md "Handler Composition"). pi-host applies the same rules across extensions
// (each extension is one plugin in load order), so folding inside the extension here and across
// plugins there gives pi's order: load order, then registration order.
//
// emit() returns { v, m }: v is the extension's combined result (what pi-host's rule for the
// event receives from one plugin), m the event fields handlers mutate in place (tool_call.input,
// before_provider_headers.headers), which pi-host copies back into its own event.

const MUTABLE = { tool_call: ["input"], before_provider_headers: ["headers"] };

const STOPS = {
  tool_call: (r) => Boolean(r?.block),
  input: (r) => r?.action === "handled",
  session_before_switch: (r) => Boolean(r?.cancel),
  session_before_fork: (r) => Boolean(r?.cancel),
  session_before_compact: (r) => Boolean(r?.cancel),
  session_before_tree: (r) => Boolean(r?.cancel),
  user_bash: (r) => Boolean(r?.result),
  project_trust: (r) => r?.trusted === "yes" || r?.trusted === "no",
};

const TREE_OVERRIDES = ["customInstructions", "replaceInstructions", "label"];
const PATCH_KEYS = ["content", "details", "structuredContent", "isError", "usage", "terminate"];

/** Fold one handler's return into the event and the running result; returns the new result. */
function fold(name, event, result, acc) {
  switch (name) {
    case "input":
      if (result?.action === "transform") {
        if (typeof result.text === "string") event.text = result.text;
        if ("images" in result) event.images = result.images;
        return { action: "transform", text: event.text, ...(event.images ? { images: event.images } : {}) };
      }
      return acc;
    case "context":
    case "context_with_system":
      if (Array.isArray(result?.messages)) {
        event.messages = result.messages;
        return { messages: result.messages };
      }
      return acc;
    case "message_end":
      if (result?.message) {
        event.message = result.message;
        return { message: result.message };
      }
      return acc;
    case "tool_result": {
      if (!result || typeof result !== "object") return acc;
      const patch = { ...(acc ?? {}) };
      if ("content" in result && !("structuredContent" in result)) {
        event.structuredContent = undefined;
        patch.structuredContent = null;
      }
      for (const key of PATCH_KEYS) {
        if (key in result) {
          event[key] = result[key];
          patch[key] = result[key] === undefined ? null : result[key];
        }
      }
      return patch;
    }
    case "before_provider_request":
      if (result !== undefined && result !== null) {
        event.payload = result;
        return result;
      }
      return acc;
    case "turn_end":
    case "agent_before_settle": {
      if (!result || typeof result !== "object") return acc;
      const proposal = { ...(acc ?? {}) };
      if (Array.isArray(result.entries)) proposal.entries = event.entries = result.entries;
      if ("continue" in result) proposal.continue = event.continue = Boolean(result.continue);
      return proposal;
    }
    case "before_agent_start": {
      if (!result || typeof result !== "object") return acc;
      const combined = { ...(acc ?? {}) };
      if (result.message) (combined.messages ??= []).push(result.message);
      if (typeof result.systemPrompt === "string") combined.systemPrompt = event.systemPrompt = result.systemPrompt;
      return combined;
    }
    case "session_before_compact":
      return result?.compaction ? { compaction: result.compaction } : acc;
    case "session_before_tree": {
      if (!result || typeof result !== "object") return acc;
      const combined = { ...(acc ?? {}) };
      for (const key of TREE_OVERRIDES) {
        if (key in result) {
          combined[key] = result[key];
          if (event.preparation) event.preparation[key] = result[key];
        }
      }
      if (result.summary) combined.summary = result.summary;
      return combined;
    }
    case "resources_discover": {
      if (!result || typeof result !== "object") return acc;
      const paths = { ...(acc ?? {}) };
      for (const key of ["skillPaths", "promptPaths", "themePaths"]) {
        if (Array.isArray(result[key])) paths[key] = [...(paths[key] ?? []), ...result[key]];
      }
      return paths;
    }
    case "project_trust":
      return result?.trusted ? { trusted: result.trusted, ...(result.remember ? { remember: true } : {}) } : acc;
    default:
      return acc; // notifications: returns are ignored
  }
}

function blockReason(error) {
  if (error instanceof Error) return error.message || error.name;
  return `Extension failed, blocking execution: ${String(error)}`;
}

/**
 * Run `handlers` for event `name`. `report(error)` names a failed handler (pi-host reports it under
 * the extension's name); a throwing tool_call or user_bash handler blocks, as in pi.
 */
export async function emit(name, handlers, event, ctx, report) {
  const stop = STOPS[name];
  let acc;
  const options = name === "before_agent_start" ? snapshotOptions(event) : undefined;
  for (const handler of handlers) {
    let result;
    try {
      result = await handler(event, ctx);
    } catch (error) {
      if (name === "tool_call") return done(name, event, { block: true, reason: blockReason(error) });
      if (name === "user_bash") return done(name, event, { result: { output: blockReason(error), exitCode: 1 } });
      report(error);
      continue;
    }
    if (result === undefined || result === null) continue;
    if (stop?.(result)) return done(name, event, result);
    acc = fold(name, event, result, acc);
  }
  if (options) acc = applyOptions(event, options, acc);
  return done(name, event, acc);
}

// before_agent_start's systemPromptOptions: pi rebuilds its prompt from them. pi-host builds its
// prompt elsewhere, so edited sections become XML-wrapped sections appended to the prompt (as pi
// renders custom sections) and an edited tool selection becomes the active tools.
function snapshotOptions(event) {
  const options = event.systemPromptOptions;
  if (!options || typeof options !== "object") return undefined;
  return { sections: JSON.stringify(options.sections ?? {}), tools: JSON.stringify(options.selectedTools ?? []) };
}

function applyOptions(event, before, acc) {
  const options = event.systemPromptOptions ?? {};
  let result = acc;
  if (JSON.stringify(options.sections ?? {}) !== before.sections) {
    const old = JSON.parse(before.sections);
    const added = Object.entries(options.sections ?? {}).filter(([key, text]) => typeof text === "string" && text && old[key] !== text);
    if (added.length) {
      const prompt = result?.systemPrompt ?? event.systemPrompt ?? "";
      const rendered = added.map(([key, text]) => `<${key}>\n${text}\n</${key}>`).join("\n\n");
      result = { ...(result ?? {}), systemPrompt: prompt ? `${prompt}\n\n${rendered}` : rendered };
    }
  }
  if (JSON.stringify(options.selectedTools ?? []) !== before.tools) {
    result = { ...(result ?? {}), selectedTools: options.selectedTools };
  }
  return result;
}

function done(name, event, value) {
  let result = value;
  if (name === "before_agent_start" && value) {
    // pi-host takes one message per plugin and return: the first, the others follow it as
    // extra messages (see typescript-extensions.md)
    const { messages, ...rest } = value;
    result = { ...rest, ...(messages?.length ? { message: messages[0], extraMessages: messages.slice(1) } : {}) };
  }
  const keys = MUTABLE[name];
  if (!keys) return { v: result ?? null };
  const mutated = {};
  for (const key of keys) mutated[key] = event[key];
  return { v: result ?? null, m: mutated };
}
