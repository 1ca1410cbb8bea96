"""Shared bits of the Anthropic tests: a model pointing at the loopback server, a runner."""

from __future__ import annotations

import copy
from typing import Any

from pi_provider_anthropic.stream import stream

from pi_host.protocol import (
    LlmContext,
    Model,
    StreamOptions,
    SystemMessage,
    ToolDecl,
    UserMessage,
)


def model_for(url: str, **overrides: Any) -> Model:
    data = {
        "id": "claude-sonnet-4-5",
        "name": "Claude Sonnet 4.5",
        "api": "anthropic-messages",
        "provider": "anthropic",
        "baseUrl": url,
        "reasoning": True,
        "input": ["text", "image"],
        "contextWindow": 200000,
        "maxTokens": 16384,
        "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75},
    }
    data.update(overrides)
    return Model.model_validate(data)


BASH = ToolDecl(
    name="bash",
    description="Run a command",
    parameters={"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
)
READ = ToolDecl(
    name="read",
    description="Read a file",
    parameters={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)


def simple_context(prompt: str = "Which files changed?", tools: list[ToolDecl] | None = None) -> LlmContext:
    tools = [READ, BASH] if tools is None else tools
    system = SystemMessage(content="", sections={"preamble": "You are a helper."}, tools_added=tools)
    return LlmContext(messages=[system, UserMessage(content=prompt)], tools=tools)


async def run(
    model: Model, context: LlmContext, options: StreamOptions | None = None, snapshot: bool = False
):
    """All events of one stream; with ``snapshot`` also a deep copy of the partial per event."""
    events = []
    snapshots = []
    async for event in stream(model, context, options or StreamOptions(api_key="sk-test")):
        events.append(event)
        if snapshot:
            partial = getattr(event, "partial", None)
            snapshots.append(copy.deepcopy(partial) if partial is not None else None)
    return (events, snapshots) if snapshot else events
