"""An independent peer: the PyPI package ``llm-mock-api`` (a fake OpenAI server no one on the
team wrote), started in-process on 127.0.0.1, talking chat completions and Responses.

Besides single streams, a full agent round trip runs through the SDK: a models.json provider points
at the mock server, the model calls a tool, the tool runs, the result goes back and the model
answers.
"""

from __future__ import annotations

import json

import pytest
from pi_provider_openai.completions import stream_completions
from pi_provider_openai.responses import stream_responses

from pi_host.loop.tools import Tool, ToolResult
from tests.support.lazy import LazyModule
from tests.support.providers.openai_google import collect, context, final, make_model, options

mock_api = LazyModule("llm_mock_api")


@pytest.fixture
async def mock():
    server = mock_api.MockServer(mock_api.MockServerOptions(default_latency=0, default_chunk_size=4))
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


async def test_completions_text_and_reasoning(mock):
    mock.when("hello").reply(mock_api.ReplyObject(text="Hi there, ünïcode ✓!", reasoning="Greeting back."))
    model = make_model(mock.url + "/v1", reasoning=True)
    events = await collect(stream_completions(model, context("hello"), options(thinking_level="low")))
    message = final(events)
    assert events[-1].type == "done", message.error_message
    assert message.text() == "Hi there, ünïcode ✓!"
    assert message.stop_reason == "stop"
    deltas = [e for e in events if e.type == "text_delta"]
    assert len(deltas) > 1  # really streamed in pieces
    request = mock.history.last().request
    assert request.model == "qwen3-coder" and request.streaming
    assert request.system_message == "You are a test assistant." and request.tool_names == ("read", "bash")


async def test_completions_tool_call(mock):
    mock.when("list").reply(
        mock_api.ReplyObject(tools=[mock_api.ToolCall(id="call_m1", name="bash", args={"command": "ls -la"})])
    )
    events = await collect(stream_completions(make_model(mock.url + "/v1"), context("list files"), options()))
    message = final(events)
    assert message.stop_reason == "toolUse", message.error_message
    assert [(c.id, c.name, c.arguments) for c in message.tool_calls()] == [
        ("call_m1", "bash", {"command": "ls -la"})
    ]


async def test_completions_http_error(mock):
    mock.next_error(429, "Rate limit exceeded for requests")
    message = final(await collect(stream_completions(make_model(mock.url + "/v1"), context("x"), options())))
    assert message.stop_reason == "error"
    assert "429" in message.error_message and "Rate limit exceeded" in message.error_message


async def test_responses_text_and_tool_call(mock):
    mock.when("weather").reply(
        mock_api.ReplyObject(
            text="Checking.", tools=[mock_api.ToolCall(name="get_weather", args={"city": "Zürich"})]
        )
    )
    model = make_model(mock.url + "/v1", api="openai-responses", provider="openai", id="gpt-5-mini")
    message = final(await collect(stream_responses(model, context("weather please"), options())))
    assert message.stop_reason == "toolUse", message.error_message
    assert message.text() == "Checking."
    (call,) = message.tool_calls()
    assert call.name == "get_weather" and call.arguments == {"city": "Zürich"}
    assert "|" in call.id or call.id  # call_id|item_id when the server sends an item id


class EchoTool(Tool):
    name = "echo_file"
    description = "Return a fixed file listing"
    parameters = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}

    async def execute(self, tool_call_id, args, signal=None, on_update=None, ctx=None):
        return ToolResult.text(f"listing of {args['path']}: a.py b.py")


class EchoPlugin:
    @staticmethod
    def register_tools(ctx):
        return [EchoTool()]


@pytest.mark.parametrize("api", ["openai-completions", "openai-responses"])
async def test_agent_round_trip_through_models_json(mock, isolated_environment, api):
    import pi_host
    from pi_host import hookimpl

    plugin = EchoPlugin()
    plugin.register_tools = hookimpl(EchoPlugin.register_tools)
    agent_dir = isolated_environment["agent"]
    (agent_dir / "models.json").write_text(
        json.dumps(
            {
                "providers": {
                    "mock": {
                        "baseUrl": mock.url + "/v1",
                        "api": api,
                        "apiKey": "unused",
                        "models": [{"id": "mock-model", "contextWindow": 32000, "maxTokens": 2048}],
                    }
                }
            }
        )
    )
    mock.when_tool_result("call_r1").reply("The folder has a.py and b.py.")
    # The session sends user content as a part list, which llm-mock-api 0.1.2 does not read as text
    # (it expects dict parts), so the first turn is matched by "no tool result yet" instead.
    mock.when(lambda req: not req.last_tool_call_id).reply(
        mock_api.ReplyObject(tools=[mock_api.ToolCall(id="call_r1", name="echo_file", args={"path": "src"})])
    )

    session = await pi_host.create_session(
        model="mock/mock-model", plugins=[plugin], cwd=str(isolated_environment["work"])
    )
    await session.prompt("what is in src?")
    await session.wait_for_idle()
    roles = [m.role for m in session.messages if m.role != "system"]
    assert roles == ["user", "assistant", "toolResult", "assistant"]
    result = next(m for m in session.messages if m.role == "toolResult")
    assert result.content[0].text == "listing of src: a.py b.py" and not result.is_error
    assert session.last_assistant().text() == "The folder has a.py and b.py."
    assert mock.history.count() == 2
