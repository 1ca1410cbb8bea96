"""Strict tools on the Messages API (pi 1.6.0's shapes, observed on a loopback capture of its
requests): ``strict: true`` and the strict schema for tools that ask for constrained sampling on a
model with ``supportsStrictTools``, Anthropic's own schema limits, the object shape of every
``input_schema``, and the one-time fallback when Claude refuses strict tools as over its limits."""

from __future__ import annotations

import itertools

from pi_provider_anthropic import tools as strict_tools

from pi_host.protocol import StreamOptions, ToolDecl
from tests.support.providers.anthropic import model_for, run, simple_context
from tests.support.providers.sse import Reply

PREFER = {"type": "json_schema", "strict": "prefer"}
REQUIRE = {"type": "json_schema", "strict": "require"}
READ = ToolDecl(
    name="read",
    description="Read a file",
    parameters={
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Path"},
            "offset": {"type": "number", "description": "First line"},
            "limit": {"type": "number", "description": "Line count"},
        },
        "required": ["path"],
    },
    constrained_sampling=PREFER,
)
# what pi 1.6.0 sends for a schema of that form (its read tool), descriptions aside
READ_STRICT = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "Path"},
        "offset": {"anyOf": [{"type": "number", "description": "First line"}, {"type": "null"}]},
        "limit": {"anyOf": [{"type": "number", "description": "Line count"}, {"type": "null"}]},
    },
    "required": ["path", "offset", "limit"],
    "additionalProperties": False,
}
BOUNDED = ToolDecl(
    name="count",
    description="Count",
    parameters={"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}, "title": "Count"},
    constrained_sampling=PREFER,
)
LIMIT_ERROR = {
    "type": "error",
    "error": {"type": "invalid_request_error", "message": "Too many strict tools (21 > 20)"},
}
session_ids = (f"strict-session-{n}" for n in itertools.count())


async def send(sse_server, tools, model=None, **options):
    sse_server.enqueue(Reply.from_fixture("anthropic/anthropic_text.sse"))
    model = model or model_for(sse_server.url, compat={"supportsStrictTools": True})
    events = await run(
        model, simple_context(tools=tools), StreamOptions(api_key="sk-ant-api-test", **options)
    )
    return events, sse_server.last.json


async def test_a_tool_that_prefers_strict_goes_out_strict_as_pi_sends_it(sse_server):
    events, body = await send(sse_server, [READ])
    assert events[-1].type == "done"
    (tool,) = body["tools"]
    assert list(tool) == [
        "name",
        "description",
        "eager_input_streaming",
        "strict",
        "input_schema",
        "cache_control",
    ]
    assert tool["strict"] is True and tool["input_schema"] == READ_STRICT


async def test_no_strict_without_the_compat_flag_and_every_schema_gets_the_object_shape(sse_server):
    _, body = await send(sse_server, [READ, BOUNDED], model=model_for(sse_server.url))
    read, count = body["tools"]
    assert "strict" not in read and read["input_schema"] == READ.parameters
    # root keywords other than the object's own stay out; required is always there
    assert count["input_schema"] == {
        "type": "object",
        "properties": BOUNDED.parameters["properties"],
        "required": [],
    }


async def test_anthropic_limits_keep_a_preferring_tool_plain_and_fail_a_requiring_one(sse_server):
    _, body = await send(sse_server, [READ, BOUNDED])
    read, count = body["tools"]
    assert read["strict"] is True and "strict" not in count  # minimum is beyond Anthropic's strict subset
    assert strict_tools.refuses("minItems", 2) and not strict_tools.refuses("minItems", 1)
    assert strict_tools.refuses("format", "regex") and not strict_tools.refuses("format", "date-time")
    requiring = BOUNDED.model_copy(update={"constrained_sampling": REQUIRE})
    events = await run(
        model_for(sse_server.url, compat={"supportsStrictTools": True}),
        simple_context(tools=[requiring]),
        StreamOptions(api_key="sk-ant-api-test"),
    )
    assert [e.type for e in events] == ["error"]
    assert 'Tool "count" requires JSON-schema constrained sampling' in events[0].error.error_message


async def test_over_the_limits_once_then_plain_for_the_rest_of_the_session(sse_server):
    session = next(session_ids)
    sse_server.enqueue(Reply.json(400, LIMIT_ERROR))
    events, body = await send(sse_server, [READ], session_id=session)
    assert events[-1].type == "done", events[-1]
    first, second = sse_server.requests[-2:]
    assert first.json["tools"][0]["strict"] is True
    assert (
        "strict" not in second.json["tools"][0] and second.json["tools"][0]["input_schema"] == READ.parameters
    )
    (note,) = events[-1].message.diagnostics
    assert note["type"] == "anthropic_strict_tools_fallback"
    assert note["details"] == {"reason": "strict_tool_limits_exceeded"}
    assert note["error"] == {"message": "Too many strict tools (21 > 20)"}
    # the next request of that session is plain from the start; another session tries strict
    _, body = await send(sse_server, [READ], session_id=session)
    assert "strict" not in body["tools"][0]
    _, body = await send(sse_server, [READ], session_id=next(session_ids))
    assert body["tools"][0]["strict"] is True


async def test_other_400s_and_a_second_refusal_are_errors(sse_server):
    sse_server.enqueue(
        Reply.json(400, {"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}})
    )
    events = await run(
        model_for(sse_server.url, compat={"supportsStrictTools": True}),
        simple_context(tools=[READ]),
        StreamOptions(api_key="sk-ant-api-test", session_id=next(session_ids)),
    )
    assert [e.type for e in events] == ["error"] and len(sse_server.requests) == 1
    sse_server.enqueue(Reply.json(400, LIMIT_ERROR), Reply.json(400, LIMIT_ERROR))
    events = await run(
        model_for(sse_server.url, compat={"supportsStrictTools": True}),
        simple_context(tools=[READ]),
        StreamOptions(api_key="sk-ant-api-test", session_id=next(session_ids)),
    )
    assert [e.type for e in events] == ["error"] and "Too many strict tools" in events[0].error.error_message
    assert len(sse_server.requests) == 3  # the refused strict request and the refused plain one
