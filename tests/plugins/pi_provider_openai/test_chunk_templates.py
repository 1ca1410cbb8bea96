"""The chat-completions parser's byte templates (``CompletionsParser.feed_raw``): decoding only
the changing string of a chunk must give exactly the events and message that decoding every
chunk whole gives, and anything that is not the same shape must be decoded whole."""

from __future__ import annotations

import json

import orjson
from pi_provider_openai.completions_stream import CompletionsParser

from pi_host.lib.llm.builder import MessageBuilder
from pi_host.protocol import Model

MODEL = Model(id="m", api="openai-completions", provider="p")
HEAD = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m"}


def chunk(delta: dict | None = None, finish: str | None = None, **extra) -> bytes:
    choices = (
        [] if delta is None else [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]
    )
    return json.dumps({**HEAD, "choices": choices, **extra}, ensure_ascii=False).encode()


def run(chunks: list[bytes], raw: bool) -> tuple[list[tuple], dict]:
    builder = MessageBuilder(MODEL)
    builder.start()
    parser = CompletionsParser(builder, {})
    events = []
    for data in chunks:
        produced = parser.feed_raw(data) if raw else parser.feed(orjson.loads(data))
        events += [(e.type, getattr(e, "delta", None), getattr(e, "content_index", None)) for e in produced]
    events += [(e.type, None, None) for e in parser.finish()]
    message = builder.message.to_json()
    for clock in ("timestamp", "durationMs"):
        message.pop(clock, None)
    return events, message


def same_either_way(chunks: list[bytes]) -> list[tuple]:
    whole, whole_message = run(chunks, raw=False)
    templated, templated_message = run(chunks, raw=True)
    assert templated == whole
    assert templated_message == whole_message
    return templated


def tool(arguments: str, **call) -> dict:
    return {
        "tool_calls": [{"index": 0, **call, "function": {"arguments": arguments, **call.pop("function", {})}}]
    }


def test_text_with_escapes_quotes_and_unicode_matches_whole_decoding():
    pieces = ["Hello", ' "quoted"', " back\\slash", " é ✓ 😀", "\n\tnext", "", " end"]
    chunks = [chunk({"role": "assistant", "content": ""})] + [chunk({"content": p}) for p in pieces]
    chunks += [chunk({}, "stop"), chunk(None, usage={"prompt_tokens": 3, "completion_tokens": 7})]
    events = same_either_way(chunks)
    assert [d for t, d, _ in events if t == "text_delta"] == [p for p in pieces if p]


def test_a_chunk_that_only_looks_like_the_template_is_decoded_whole():
    first = chunk({"content": "a"})
    head, tail = first.split(b'"a"')
    # Same bytes around, but between them two values instead of one string: a different chunk.
    sneaky = head + b'"b", "role": "assistant"' + tail
    assert orjson.loads(sneaky)["choices"][0]["delta"] == {"content": "b", "role": "assistant"}
    chunks = [chunk({"role": "assistant", "content": ""}), first, chunk({"content": "c"}), sneaky]
    same_either_way(chunks)


def test_usage_and_finish_in_a_delta_chunk_are_not_lost():
    chunks = [
        chunk({"content": "one"}),
        chunk({"content": "two"}),
        chunk({"content": "three"}, usage={"prompt_tokens": 5, "completion_tokens": 2}),
        chunk({"content": "four"}, "stop"),
    ]
    events = same_either_way(chunks)
    assert [d for t, d, _ in events if t == "text_delta"] == ["one", "two", "three", "four"]
    _, message = run(chunks, raw=True)
    assert message["usage"]["output"] == 2 and message["stopReason"] == "stop"


def test_text_then_tool_arguments_then_text_again():
    chunks = [
        chunk({"content": "Let me write"}),
        chunk({"content": " it."}),
        chunk(tool("", id="call_1", type="function", function={"name": "write"})),
        chunk(tool('{"path": ')),
        chunk(tool('"a.txt", "content": ')),
        chunk(tool('"x \\"y\\""}')),
        chunk({"content": "Done"}),
        chunk({"content": " now"}),
        chunk({}, "tool_calls"),
    ]
    events = same_either_way(chunks)
    assert [t for t, _, _ in events].count("toolcall_delta") == 4
    _, message = run(chunks, raw=True)
    call = next(b for b in message["content"] if b["type"] == "toolCall")
    assert call["arguments"] == {"path": "a.txt", "content": 'x "y"'}
    texts = [b["text"] for b in message["content"] if b["type"] == "text"]
    assert texts == ["Let me write it.", "Done now"]


def test_a_second_tool_call_is_not_appended_to_the_first():
    chunks = [
        chunk(tool("", id="c1", type="function", function={"name": "read"})),
        chunk(tool('{"path": "a"}')),
        chunk(
            {
                "tool_calls": [
                    {"index": 1, "id": "c2", "type": "function", "function": {"name": "ls", "arguments": ""}}
                ]
            }
        ),
        chunk({"tool_calls": [{"index": 1, "function": {"arguments": '{"path": "b"}'}}]}),
        chunk({}, "tool_calls"),
    ]
    same_either_way(chunks)
    _, message = run(chunks, raw=True)
    assert [b["arguments"] for b in message["content"]] == [{"path": "a"}, {"path": "b"}]


def test_the_template_is_learned_from_a_plain_text_chunk():
    builder = MessageBuilder(MODEL)
    builder.start()
    parser = CompletionsParser(builder, {})
    for piece in ("a", "b", "c"):
        parser.feed_raw(chunk({"content": piece}))
    head, tail, kind = parser._template
    assert kind == "text" and head.rstrip().endswith(b'"content":') and tail.startswith(b"}")
    assert builder.message.content[0].text == "abc"
