// The bridge's `@earendil-works/pi-agent-core`: extensions import its types only.

export let AgentMessage;
export let AgentTool;
export let AgentToolResult;
export let AgentEvent;
export let ThinkingLevel;
