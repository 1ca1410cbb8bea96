"""pi-host's LLM library: any model through one message and event protocol (pi's ``pi-ai``).

    import asyncio
    from pi_host.ai import Context, UserMessage, complete, get_model

    async def main():
        model = get_model("anthropic", "claude-sonnet-4-5")        # ANTHROPIC_API_KEY from the env
        answer = await complete(model, Context(system_prompt="Be brief.",
                                               messages=[UserMessage(content="Hi")]))
        print(answer.text(), answer.usage.cost.total)

    asyncio.run(main())

* the catalog: :func:`get_model`, :func:`get_models` over the installed provider plugins, or your
  own :class:`Models` (:func:`create_models` with the providers you give, :func:`builtin_models`);
* requests: :func:`stream` (an :class:`AssistantMessageStream` of the unified events; ``await
  s.result()`` for the message), :func:`complete`, and :func:`stream_simple` /
  :func:`complete_simple` with one ``reasoning`` level for every provider;
* tools: :func:`tool` (JSON Schema or a pydantic model), :func:`validate_tool_call`;
* messages, content blocks, usage and cost, stream events and abort signals: the protocol's
  types, re-exported here.

No agent dir, settings file, session or terminal code is involved, and names load on first use:
``import pi_host.ai`` costs a few milliseconds (docs/performance.md). docs/layers.md walks from
this layer up to the coding agent.
"""

from __future__ import annotations

from pi_host._exports import lazy_exports

_EXPORTS = {
    # the catalog and requests
    "Models": "pi_host.ai.models",
    "builtin_models": "pi_host.ai.models",
    "complete": "pi_host.ai.models",
    "complete_simple": "pi_host.ai.models",
    "create_models": "pi_host.ai.models",
    "default_models": "pi_host.ai.models",
    "get_model": "pi_host.ai.models",
    "get_models": "pi_host.ai.models",
    "stream": "pi_host.ai.models",
    "stream_simple": "pi_host.ai.models",
    "AssistantMessageStream": "pi_host.ai.response",
    "ProviderApi": "pi_host.config.models",
    "ProviderInfo": "pi_host.config.models",
    "THINKING_LEVELS": "pi_host.config.models",
    # contexts, tools, images
    "Context": "pi_host.ai.context",
    "ToolArgumentsError": "pi_host.ai.context",
    "image_from_bytes": "pi_host.ai.context",
    "image_from_file": "pi_host.ai.context",
    "parameters_schema": "pi_host.ai.context",
    "tool": "pi_host.ai.context",
    "validate_tool_arguments": "pi_host.ai.context",
    "validate_tool_call": "pi_host.ai.context",
    # the protocol
    "Model": "pi_host.protocol.model",
    "ModelCost": "pi_host.protocol.model",
    "LlmContext": "pi_host.protocol.model",
    "StreamOptions": "pi_host.protocol.model",
    "StreamFn": "pi_host.protocol.model",
    "AssistantMessage": "pi_host.protocol.messages",
    "Cost": "pi_host.protocol.messages",
    "ImageContent": "pi_host.protocol.messages",
    "Message": "pi_host.protocol.messages",
    "StopReason": "pi_host.protocol.messages",
    "SystemMessage": "pi_host.protocol.messages",
    "TextContent": "pi_host.protocol.messages",
    "ThinkingContent": "pi_host.protocol.messages",
    "ToolCall": "pi_host.protocol.messages",
    "ToolDecl": "pi_host.protocol.messages",
    "ToolResultMessage": "pi_host.protocol.messages",
    "Usage": "pi_host.protocol.messages",
    "UserMessage": "pi_host.protocol.messages",
    "dump_message": "pi_host.protocol.messages",
    "now_ms": "pi_host.protocol.messages",
    "parse_message": "pi_host.protocol.messages",
    "parse_messages": "pi_host.protocol.messages",
    "AssistantMessageEvent": "pi_host.protocol.stream",
    "DoneEvent": "pi_host.protocol.stream",
    "ErrorEvent": "pi_host.protocol.stream",
    "StartEvent": "pi_host.protocol.stream",
    "TextDeltaEvent": "pi_host.protocol.stream",
    "TextEndEvent": "pi_host.protocol.stream",
    "TextStartEvent": "pi_host.protocol.stream",
    "ThinkingDeltaEvent": "pi_host.protocol.stream",
    "ThinkingEndEvent": "pi_host.protocol.stream",
    "ThinkingStartEvent": "pi_host.protocol.stream",
    "ToolCallDeltaEvent": "pi_host.protocol.stream",
    "ToolCallEndEvent": "pi_host.protocol.stream",
    "ToolCallStartEvent": "pi_host.protocol.stream",
    "AbortController": "pi_host.protocol.abort",
    "AbortError": "pi_host.protocol.abort",
    "AbortSignal": "pi_host.protocol.abort",
    "get_current_system_prompt": "pi_host.ai.context",
    "get_current_tools": "pi_host.ai.context",
}

__all__ = sorted(_EXPORTS)
__getattr__ = lazy_exports("pi_host.ai", _EXPORTS)
