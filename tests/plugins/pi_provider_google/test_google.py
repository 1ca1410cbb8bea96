"""google-generative-ai over a real loopback server: thought parts, signatures, function calls,
per-block ends, usage, finish reasons, request JSON and replay."""

from __future__ import annotations

import base64
import json

import pytest
from pi_provider_google.stream import stream_google

from pi_host.protocol import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolDecl,
    ToolResultMessage,
    UserMessage,
)
from tests.support.providers.openai_google import (  # noqa: F401 - fixtures
    collect,
    context,
    final,
    make_model,
    module_server_fixture,
    options,
    squeeze,
    sse_fixture,
    types,
)
from tests.support.providers.sse import Reply

ARGS_A = {"path": "src/ünï/main.py", "limit": 40}
SIG_A = base64.b64encode(b"signature-for-the-read-call-0001").decode()
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\nfake").decode()


def gemini(sse, id="gemini-2.5-flash", **fields):
    fields.setdefault("reasoning", True)
    fields.setdefault("input", ["text", "image"])
    return make_model(sse.url + "/v1beta", api="google-generative-ai", provider="google", id=id, **fields)


async def run(sse, fixture="google_tools.sse", model=None, ctx=None, chunk_size=13, **opts):
    sse.enqueue(Reply.from_fixture(f"google/{fixture}", chunk_size=chunk_size))
    return await collect(stream_google(model or gemini(sse), ctx or context(), options(**opts)))


async def test_thinking_text_and_function_calls(sse):
    events = await run(sse, thinking_level="medium")
    # Blocks end as the stream moves on (not all at the end).
    assert squeeze(types(events)) == [
        "start",
        "thinking_start",
        "thinking_delta",
        "thinking_end",
        "text_start",
        "text_delta",
        "text_end",
        "toolcall_start",
        "toolcall_delta",
        "toolcall_end",
        "toolcall_start",
        "toolcall_delta",
        "toolcall_end",
        "done",
    ]
    message = final(events)
    thinking, text, read, bash = message.content
    assert thinking.thinking == "**Looking at files** I should read main.py first — then list."
    assert text.text == "I'll read the file — «ünï» and list the folder 📁."
    assert (read.name, read.arguments, read.thought_signature) == ("read", ARGS_A, SIG_A)
    assert (bash.name, bash.arguments, bash.thought_signature) == (
        "bash",
        {"command": "ls -la", "timeout": 5},
        None,
    )
    assert read.id and bash.id and read.id != bash.id
    # One toolcall_delta per call, carrying the complete arguments (reference §2.3).
    deltas = [e.delta for e in events if e.type == "toolcall_delta"]
    assert len(deltas) == 2 and '"src/ünï/main.py"' in deltas[0]
    assert message.stop_reason == "toolUse" and message.raw_stop_reason == "STOP"
    assert message.response_id == "gfx-1" and message.response_model == "gemini-2.5-flash"
    usage = message.usage
    assert (usage.input, usage.output, usage.cache_read, usage.reasoning) == (300, 100, 200, 40)
    assert usage.total_tokens == 600

    request = sse.last
    assert request.path == "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    assert request.headers["x-goog-api-key"] == "sk-test-key"
    body = request.json
    assert body["systemInstruction"] == {"parts": [{"text": "You are a test assistant."}]}
    assert body["contents"] == [{"role": "user", "parts": [{"text": "Read main.py"}]}]
    declaration = body["tools"][0]["functionDeclarations"][0]
    assert declaration["name"] == "read" and declaration["parametersJsonSchema"]["required"] == ["path"]
    assert body["generationConfig"]["thinkingConfig"] == {"includeThoughts": True, "thinkingBudget": 8192}
    assert body["generationConfig"]["maxOutputTokens"] == 8192


async def test_signature_on_trailing_empty_part_lands_on_the_text(sse):
    model = gemini(sse, id="gemini-3-pro-preview")
    message = final(await run(sse, "google_gemini3_text.sse", model=model, thinking_level="high"))
    assert message.text() == "Plain answer, finished."
    assert message.content[0].text_signature == base64.b64encode(b"gemini3-text-signature!").decode()
    assert message.stop_reason == "stop"
    assert sse.last.json["generationConfig"]["thinkingConfig"] == {
        "includeThoughts": True,
        "thinkingLevel": "HIGH",
    }


@pytest.mark.parametrize(
    ("fixture", "stop", "needle"),
    [("google_max_tokens.sse", "length", None), ("google_safety.sse", "error", "SAFETY")],
)
async def test_finish_reasons(sse, fixture, stop, needle):
    message = final(await run(sse, fixture))
    assert message.stop_reason == stop
    assert message.text() == "Some text more"
    if needle:
        assert needle in message.error_message


async def test_stream_without_finish_reason_is_an_error(sse):
    raw = Reply.from_fixture("google/google_tools.sse").parts[0]
    cut = raw[: raw.rindex(b"data: ")]
    sse.enqueue(Reply.sse(cut, chunk_size=50))
    message = final(await collect(stream_google(gemini(sse), context(), options())))
    assert message.stop_reason == "error" and "finish reason" in message.error_message
    assert len(message.tool_calls()) == 2


async def test_http_error_is_reported(sse):
    sse.enqueue(
        Reply.json(
            400,
            [
                {
                    "error": {
                        "code": 400,
                        "message": "API key not valid. Please pass a valid API key.",
                        "status": "INVALID_ARGUMENT",
                    }
                }
            ],
        )
    )
    message = final(await collect(stream_google(gemini(sse), context(), options())))
    assert message.stop_reason == "error"
    assert "API key not valid" in message.error_message and "400" in message.error_message


async def test_replay_function_responses_images_and_signatures(sse):
    first = final(await run(sse, thinking_level="low"))
    read, bash = first.tool_calls()
    results = [
        ToolResultMessage(
            tool_call_id=read.id,
            tool_name="read",
            content=[TextContent(text="print(1)"), ImageContent(data=PNG, mime_type="image/png")],
        ),
        ToolResultMessage(
            tool_call_id=bash.id, tool_name="bash", content=[TextContent(text="exit 2")], is_error=True
        ),
    ]
    ctx = context(
        messages=[UserMessage(content="Read main.py"), first, *results, UserMessage(content="thanks")]
    )
    await run(sse, "google_max_tokens.sse", ctx=ctx, thinking_level="off")
    body = sse.last.json
    contents = body["contents"]
    assert [c["role"] for c in contents] == ["user", "model", "user", "user", "user"]
    model_parts = contents[1]["parts"]
    assert model_parts[0]["thought"] is True
    assert model_parts[2] == {"functionCall": {"name": "read", "args": ARGS_A}, "thoughtSignature": SIG_A}
    assert model_parts[3] == {"functionCall": {"name": "bash", "args": {"command": "ls -la", "timeout": 5}}}
    # Consecutive results share one user turn; errors use {"error": ...}.
    assert contents[2]["parts"] == [
        {"functionResponse": {"name": "read", "response": {"output": "print(1)"}}},
        {"functionResponse": {"name": "bash", "response": {"error": "exit 2"}}},
    ]
    # Gemini 2.x: result images follow in their own captioned user turn.
    assert contents[3]["parts"][1] == {"inlineData": {"mimeType": "image/png", "data": PNG}}
    assert contents[4] == {"role": "user", "parts": [{"text": "thanks"}]}
    assert body["generationConfig"]["thinkingConfig"] == {"thinkingBudget": 0}


async def test_gemini3_nests_result_images_and_foreign_calls_get_placeholder_signature(sse):
    foreign = AssistantMessage(
        api="openai-responses",
        provider="openai",
        model="gpt-5",
        stop_reason="toolUse",
        content=[
            ThinkingContent(thinking="hidden", thinking_signature="{}"),
            ToolCall(id="call_1|fc_2", name="read", arguments={"path": "a.png"}, thought_signature="AAAA"),
        ],
    )
    result = ToolResultMessage(
        tool_call_id="call_1|fc_2", tool_name="read", content=[ImageContent(data=PNG, mime_type="image/png")]
    )
    model = gemini(sse, id="gemini-3-pro-preview")
    ctx = context(messages=[UserMessage(content="look"), foreign, result])
    await run(sse, "google_gemini3_text.sse", model=model, ctx=ctx)
    contents = sse.last.json["contents"]
    call_part = contents[1]["parts"][0]
    assert call_part["functionCall"]["name"] == "read"
    assert call_part["thoughtSignature"] == "skip_thought_signature_validator"
    assert len(contents[1]["parts"]) == 1  # foreign thinking dropped
    response = contents[2]["parts"][0]["functionResponse"]
    assert response["response"] == {"output": "(see attached image)"}
    assert response["parts"] == [{"inlineData": {"mimeType": "image/png", "data": PNG}}]
    assert len(contents) == 3


async def test_const_becomes_enum_and_text_only_models_get_placeholders(sse):
    tool = ToolDecl(
        name="mode",
        description="Set mode",
        parameters={"type": "object", "properties": {"kind": {"const": "fast"}}},
    )
    model = gemini(sse, id="gemini-2.0-flash", reasoning=False, input=["text"])
    ctx = context(
        tools=[tool],
        messages=[
            UserMessage(content=[TextContent(text="see"), ImageContent(data=PNG, mime_type="image/png")])
        ],
    )
    await run(sse, "google_max_tokens.sse", model=model, ctx=ctx, thinking_level="high")
    body = sse.last.json
    assert body["tools"][0]["functionDeclarations"][0]["parametersJsonSchema"]["properties"]["kind"] == {
        "enum": ["fast"]
    }
    parts = body["contents"][0]["parts"]
    assert parts[0] == {"text": "see"} and "image" in parts[1]["text"] and "inlineData" not in str(parts)
    assert "thinkingConfig" not in body["generationConfig"]


async def test_unpaired_surrogates_are_scrubbed(sse):
    ctx = context(messages=[UserMessage(content="bad \udc00 text 🎉")])
    await run(sse, "google_max_tokens.sse", ctx=ctx)
    assert sse.last.json["contents"][0]["parts"] == [{"text": "bad  text 🎉"}]


async def test_abort_mid_stream_is_prompt(sse):
    import asyncio
    import time

    from pi_host.protocol.abort import AbortController
    from tests.support.providers.sse import FIXTURES, STALL

    raw = (FIXTURES / "google/google_tools.sse").read_bytes()
    sse.enqueue(Reply(parts=[raw[: raw.index(b"data: ", 400)], STALL]))
    controller = AbortController()
    events = []

    async def consume():
        async for event in stream_google(gemini(sse), context(), options(signal=controller.signal)):
            events.append(event)

    task = asyncio.create_task(consume())
    while not any(e.type == "thinking_delta" for e in events):
        await asyncio.sleep(0.005)
    started = time.monotonic()
    controller.abort()
    await asyncio.wait_for(task, 2)
    assert time.monotonic() - started < 0.1
    message = final(events)
    assert message.stop_reason == "aborted" and message.content[0].thinking


async def test_blocked_prompt_is_an_error(sse):
    body = {"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}, "usageMetadata": {"promptTokenCount": 7}}
    sse.enqueue(Reply.sse("data: " + json.dumps(body) + "\r\n\r\n"))
    message = final(await collect(stream_google(gemini(sse), context(), options())))
    assert message.stop_reason == "error" and "PROHIBITED_CONTENT" in message.error_message
    assert message.usage.input == 7
