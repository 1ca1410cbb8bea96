"""Strict tools on Bedrock's ConverseStream, as pi 1.6.0 sends them: ``strict: true`` and the
strict schema on the tool specs of a model whose compat has ``supportsStrictMode``, the
prefer/require policy, and the one-time fallback when Bedrock refuses the strict tools as over
Claude's limits (a ``ValidationException`` before the stream starts): the request goes once more
with the preferring tools plain, a ``bedrock_strict_tools_fallback`` diagnostic is recorded and
the session stays plain."""

from __future__ import annotations

import itertools
import json

import pytest
from pi_provider_bedrock import tools as bedrock_tools
from pi_provider_bedrock.stream import stream_bedrock

from pi_host.config.models import ModelRegistry
from pi_host.lib.llm import strict_tool_limits
from pi_host.plugins.selection import PluginRequest, load_plugins
from pi_host.protocol import ToolDecl
from tests.support.providers import eventstream
from tests.support.providers.openai_google import (  # noqa: F401 - fixtures
    collect,
    context,
    make_model,
    module_server_fixture,
    options,
    sse_fixture,
)
from tests.support.providers.sse import Reply

PREFER = {"type": "json_schema", "strict": "prefer"}
REQUIRE = {"type": "json_schema", "strict": "require"}
READ = ToolDecl(
    name="read",
    description="Read a file",
    parameters={
        "type": "object",
        "properties": {"path": {"type": "string"}, "limit": {"type": "number"}},
        "required": ["path"],
    },
    constrained_sampling=PREFER,
)
READ_STRICT = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "limit": {"anyOf": [{"type": "number"}, {"type": "null"}]}},
    "required": ["path", "limit"],
    "additionalProperties": False,
}
# numeric bounds are beyond Anthropic's API's strict subset but not Bedrock's (pi passes no extra rule)
BOUNDED = ToolDecl(
    name="count",
    description="Count",
    parameters={"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}},
    constrained_sampling=PREFER,
)
REFERENCED = ToolDecl(
    name="tree",
    description="Walk a tree",
    parameters={"type": "object", "properties": {"node": {"$ref": "#/$defs/node"}}, "$defs": {"node": {}}},
    constrained_sampling=PREFER,
)
PLAIN = ToolDecl(
    name="ls", description="List", parameters={"type": "object", "properties": {"dir": {"type": "string"}}}
)
BEARER = "bedrock-api-key-strict-tools-123456"
session_ids = (f"bedrock-strict-session-{n}" for n in itertools.count())


def refusal(message: str = "Too many strict tools (21 > 20)") -> Reply:
    """Bedrock's answer to a request it rejects: a 400 naming the AWS error type in a header."""
    error_type = "ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/"
    return Reply.json(400, {"message": message}, headers={"x-amzn-ErrorType": error_type})


def answer() -> Reply:
    return Reply(
        headers={"content-type": "application/vnd.amazon.eventstream"},
        parts=[eventstream.converse_text_stream("done")],
    )


def strict_model(url: str, supports: bool = True):
    compat = {"supportsStrictMode": True} if supports else None
    return make_model(url, api="bedrock-converse-stream", provider="amazon-bedrock", id="m", compat=compat)


async def send(sse, tools, model=None, **fields):
    model = model or strict_model(sse.url)
    fields.setdefault("api_key", BEARER)
    return await collect(stream_bedrock(model, context(tools=tools), options(**fields)))


def specs(request) -> dict[str, dict]:
    return {t["toolSpec"]["name"]: t["toolSpec"] for t in request.json["toolConfig"]["tools"]}


def test_the_catalog_marks_claude_on_bedrock_as_supporting_strict_tools(isolated_environment):
    registry = ModelRegistry.from_plugins(
        load_plugins(PluginRequest(cwd=str(isolated_environment["work"]))).host
    )
    assert bedrock_tools.supports_strict(registry.find("amazon-bedrock", "us.anthropic.claude-opus-5-5"))
    assert not bedrock_tools.supports_strict(registry.find("amazon-bedrock", "amazon.nova-pro-v1:0"))


async def test_tools_that_ask_go_out_strict_with_the_strict_schema(sse):
    sse.enqueue(answer())
    events = await send(sse, [READ, BOUNDED, REFERENCED, PLAIN])
    assert events[-1].type == "done", events[-1]
    tools = specs(sse.last)
    assert list(tools["read"]) == ["name", "description", "inputSchema", "strict"]
    assert tools["read"]["strict"] is True and tools["read"]["inputSchema"] == {"json": READ_STRICT}
    assert tools["count"]["strict"] is True
    assert tools["count"]["inputSchema"]["json"]["properties"]["n"] == {
        "anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}]
    }
    # outside the strict subset a preferring tool goes plain; a tool that did not ask stays plain
    assert "strict" not in tools["tree"] and tools["tree"]["inputSchema"]["json"] == REFERENCED.parameters
    assert "strict" not in tools["ls"] and tools["ls"]["inputSchema"]["json"] == PLAIN.parameters
    assert "toolChoice" not in sse.last.json["toolConfig"]


async def test_without_the_compat_flag_tools_are_plain_and_a_requiring_tool_fails(sse):
    sse.enqueue(answer())
    events = await send(sse, [READ], model=strict_model(sse.url, supports=False))
    assert events[-1].type == "done" and "strict" not in specs(sse.last)["read"]
    assert specs(sse.last)["read"]["inputSchema"]["json"] == READ.parameters
    requiring = READ.model_copy(update={"constrained_sampling": REQUIRE})
    events = await send(sse, [requiring], model=strict_model(sse.url, supports=False))
    assert [e.type for e in events] == ["error"]
    assert "strict tools are unsupported" in events[0].error.error_message
    impossible = REFERENCED.model_copy(update={"constrained_sampling": REQUIRE})
    events = await send(sse, [impossible])
    assert [e.type for e in events] == ["error"]
    assert 'Tool "tree" requires JSON-schema constrained sampling' in events[0].error.error_message
    assert len(sse.requests) == 1  # neither failing request was sent


async def test_refused_as_over_the_limits_once_then_plain_for_the_rest_of_the_session(sse):
    session = next(session_ids)
    requiring = BOUNDED.model_copy(update={"constrained_sampling": REQUIRE})
    sse.enqueue(refusal(), answer())
    events = await send(sse, [READ, requiring, PLAIN], session_id=session)
    assert events[-1].type == "done", events[-1]
    assert events[-1].message.content[0].text == "done"
    first, second = sse.requests
    assert specs(first)["read"]["strict"] is True
    # the retry sends the preferring tool plain; the requiring one stays strict
    assert "strict" not in specs(second)["read"]
    assert specs(second)["read"]["inputSchema"]["json"] == READ.parameters
    assert specs(second)["count"]["strict"] is True
    assert second.headers["authorization"] == f"Bearer {BEARER}"
    (note,) = events[-1].message.diagnostics
    assert note["type"] == "bedrock_strict_tools_fallback"
    assert note["details"] == {"reason": "strict_tool_limits_exceeded"}
    assert note["error"] == {"message": "Too many strict tools (21 > 20)"}
    assert isinstance(note["timestamp"], int)
    # the session's next request is plain from the start, with no refusal to wait for
    sse.enqueue(answer())
    events = await send(sse, [READ], session_id=session)
    assert events[-1].type == "done" and len(sse.requests) == 3
    assert "strict" not in specs(sse.last)["read"] and not events[-1].message.diagnostics
    # another session tries strict again
    sse.enqueue(answer())
    await send(sse, [READ], session_id=next(session_ids))
    assert specs(sse.last)["read"]["strict"] is True


async def test_the_record_is_shared_with_the_anthropic_adapter(sse):
    # pi keeps one record for both providers: both run Claude's limits
    session = next(session_ids)
    strict_tool_limits.mark_over_limits(session)  # as the Anthropic adapter marks it
    sse.enqueue(answer())
    await send(sse, [READ], session_id=session)
    assert "strict" not in specs(sse.last)["read"]


@pytest.mark.parametrize(
    "reply",
    [
        Reply.json(
            400, {"message": "Malformed input request"}, headers={"x-amzn-ErrorType": "ValidationException"}
        ),
        Reply.json(400, {"message": "Too many strict tools (21 > 20)"}),  # no AWS error type
        Reply.json(
            429,
            {"message": "Too many strict tools (21 > 20)"},
            headers={"x-amzn-ErrorType": "ThrottlingException"},
        ),
    ],
    ids=["other-validation-error", "untyped-400", "throttling"],
)
async def test_other_errors_are_not_retried(sse, reply):
    sse.enqueue(reply)
    events = await send(sse, [READ], session_id=next(session_ids))
    assert [e.type for e in events] == ["error"] and len(sse.requests) == 1


async def test_a_second_refusal_is_the_error_and_a_typed_body_counts(sse):
    body = {
        "__type": "com.amazon.coral.validate#ValidationException",
        "message": "Too many strict tools (21 > 20)",
    }
    sse.enqueue(Reply.json(400, body), refusal("The compiled grammar is too large"))
    events = await send(sse, [READ], session_id=next(session_ids))
    assert [e.type for e in events] == ["error"]
    assert "The compiled grammar is too large" in events[0].error.error_message
    assert len(sse.requests) == 2  # the refused strict request and the refused plain one


async def test_without_a_session_the_fallback_still_works_and_nothing_is_remembered(sse):
    sse.enqueue(refusal(), answer())
    events = await send(sse, [READ])
    assert events[-1].type == "done" and len(sse.requests) == 2
    assert events[-1].message.diagnostics[0]["type"] == "bedrock_strict_tools_fallback"
    assert not strict_tool_limits.over_limits(None)
    sse.enqueue(answer())
    await send(sse, [READ])
    assert specs(sse.last)["read"]["strict"] is True


def test_only_claudes_limit_messages_count():
    from pi_host.lib.llm.errors import ProviderHTTPError

    def error(message: str, status: int = 400) -> ProviderHTTPError:
        headers = {"x-amzn-errortype": "ValidationException:http://internal.amazon.com/coral/"}
        return ProviderHTTPError(status, message, json.dumps({"message": message}), headers)

    text = "Schemas contains too many parameters with union types (17 > 16)"
    assert bedrock_tools.limit_refusal(error(text)) == text
    assert bedrock_tools.limit_refusal(error("Too many strict tools (21 > 20)", 500)) is None
    assert bedrock_tools.limit_refusal(error("Input is too long")) is None
    broken = ProviderHTTPError(400, "x", "not json", {"x-amzn-errortype": "ValidationException"})
    assert bedrock_tools.limit_refusal(broken) is None
