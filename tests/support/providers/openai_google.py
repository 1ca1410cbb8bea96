"""Helpers for the OpenAI and Google provider tests: models pointing at the loopback server,
contexts, and collecting a stream's events."""

from __future__ import annotations

from typing import Any

import pytest

from pi_host.protocol import LlmContext, Model, StreamOptions, SystemMessage, ToolDecl, UserMessage
from tests.support.providers.sse import SSEServer

READ_TOOL = ToolDecl(
    name="read",
    description="Read a file",
    parameters={
        "type": "object",
        "properties": {"path": {"type": "string"}, "offset": {"type": "number"}, "limit": {"type": "number"}},
        "required": ["path"],
    },
)
BASH_TOOL = ToolDecl(
    name="bash",
    description="Run a command",
    parameters={
        "type": "object",
        "properties": {"command": {"type": "string"}, "timeout": {"type": "number"}},
        "required": ["command"],
    },
)


def make_model(
    base_url: str,
    *,
    api: str = "openai-completions",
    provider: str = "local",
    id: str = "qwen3-coder",
    **fields: Any,
) -> Model:
    data: dict[str, Any] = {
        "id": id,
        "name": id,
        "api": api,
        "provider": provider,
        "baseUrl": base_url,
        "contextWindow": 128000,
        "maxTokens": 8192,
        "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75},
    }
    data.update(fields)
    return Model.model_validate(data)


def context(
    prompt: str = "Read main.py",
    *,
    system: str = "You are a test assistant.",
    tools: list[Any] | None = None,
    messages: list[Any] | None = None,
) -> LlmContext:
    msgs: list[Any] = [SystemMessage(sections={"preamble": system})]
    msgs.extend(messages or [UserMessage(content=prompt)])
    return LlmContext(messages=msgs, tools=list(tools if tools is not None else [READ_TOOL, BASH_TOOL]))


def options(**fields: Any) -> StreamOptions:
    fields.setdefault("api_key", "sk-test-key")
    return StreamOptions(**fields)


async def collect(stream: Any) -> list[Any]:
    return [event async for event in stream]


def final(events: list[Any]) -> Any:
    last = events[-1]
    return last.message if last.type == "done" else last.error


def types(events: list[Any]) -> list[str]:
    return [event.type for event in events]


def squeeze(names: list[str]) -> list[str]:
    """Collapse runs of the same event type (``text_delta`` x 20 -> one)."""
    out: list[str] = []
    for name in names:
        if not out or out[-1] != name:
            out.append(name)
    return out


@pytest.fixture(scope="module", name="module_server")
def module_server_fixture():
    """One loopback server per test module (starting/stopping per test costs ~0.5 s of teardown)."""
    instance = SSEServer().start()
    try:
        yield instance
    finally:
        instance.stop()


@pytest.fixture(name="sse")
def sse_fixture(module_server):
    """The module's server with an empty queue and request log for this test (import
    ``module_server_fixture`` and ``sse_fixture`` into a test module to use it)."""
    server = module_server
    server.requests.clear()
    server._queue.clear()
    server._by_path.clear()
    server.default = None
    yield server
