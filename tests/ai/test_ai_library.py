"""pi_host.ai on its own: the catalog (from the plugins or given), keys from arguments and the
environment with no agent dir, the unified events, tools, images, abort and continue, usage and
cost over a loopback OpenAI-compatible server."""

from __future__ import annotations

import asyncio
import json

import pi_provider_faux
import pytest
from pydantic import BaseModel

from pi_host import ai
from tests.support.loopback import LoopbackServer, Reply


def run(coroutine):
    return asyncio.run(coroutine)


def test_stream_yields_the_unified_events_and_the_result():
    model = ai.get_model("faux", "faux-1")
    pi_provider_faux.set_responses([{"thinking": "hmm", "text": "hello there", "chunkSize": 4}])

    async def main():
        s = ai.stream(model, ai.Context(system_prompt="Be brief.", messages=[ai.UserMessage(content="hi")]))
        kinds = [event.type async for event in s]
        return kinds, await s.result()

    kinds, message = run(main())
    assert kinds[0] == "start" and kinds[-1] == "done"
    assert {"thinking_start", "thinking_delta", "thinking_end", "text_delta", "text_end"} <= set(kinds)
    assert message.text() == "hello there" and message.stop_reason == "stop"
    assert message.usage.input > 0 and message.usage.output > 0
    sent = pi_provider_faux.requests[0]["messages"]
    assert sent[0].role == "system" and sent[0].content == "Be brief."


def test_an_explicit_catalog_holds_only_what_it_is_given():
    models = ai.create_models(pi_provider_faux.register_providers(), pi_provider_faux.register_models())
    assert models.get_providers() == ["faux"]
    assert models.get_model("anthropic", "claude-sonnet-4-5") is None
    assert {m.id for m in models.get_models("faux")} >= {"faux-1", "faux-reasoner"}
    answer = run(models.complete(models.get_model("faux", "faux-1"), [ai.UserMessage(content="x")]))
    assert answer.text() == "faux: x"


def test_no_agent_dir_file_is_read(isolated_environment):
    (isolated_environment["agent"] / "models.json").write_text(
        json.dumps(
            {
                "providers": {
                    "ghost": {"baseUrl": "http://x", "api": "openai-completions", "models": [{"id": "g"}]}
                }
            }
        )
    )
    (isolated_environment["agent"] / "auth.json").write_text(
        json.dumps({"anthropic": {"type": "api_key", "key": "sk-x"}})
    )
    models = ai.builtin_models()
    assert "ghost" not in models.get_providers()
    assert models.get_api_key("anthropic") is None


def test_a_missing_key_is_an_error_event_naming_the_variable():
    model = ai.get_model("anthropic", "claude-sonnet-4-5")
    answer = run(ai.complete(model, [ai.UserMessage(content="x")]))
    assert answer.stop_reason == "error" and "ANTHROPIC_API_KEY" in answer.error_message


def loop_provider(url: str, **model) -> ai.ProviderInfo:
    return ai.ProviderInfo(
        id="loop",
        api="openai-completions",
        base_url=url,
        env_keys=["LOOP_TEST_KEY"],
        models=[{"id": "loop-1", **model}],
    )


def test_key_from_the_environment_or_the_call_and_cost_from_the_catalog(monkeypatch):
    models = ai.builtin_models()
    usage = {"prompt_tokens": 1000, "completion_tokens": 500}
    with LoopbackServer([Reply("one", usage=usage), Reply("two", usage=usage)]) as server:
        prices = {"input": 3, "output": 15, "cacheRead": 0, "cacheWrite": 0}
        models.set_provider(loop_provider(server.url, cost=prices))
        model = models.get_model("loop", "loop-1")
        monkeypatch.setenv("LOOP_TEST_KEY", "sk-from-env-123456")
        first = run(models.complete(model, [ai.UserMessage(content="a")]))
        second = run(models.complete(model, [ai.UserMessage(content="b")], api_key="sk-from-call-654321"))
        headers = [e.headers for e in server.exchanges]
    assert first.text() == "one" and second.text() == "two"
    assert "sk-from-env-123456" in str(headers[0]) and "sk-from-call-654321" in str(headers[1])
    assert first.usage.input == 1000 and first.usage.output == 500
    assert first.usage.cost.total == pytest.approx(1000 * 3 / 1e6 + 500 * 15 / 1e6)


def test_tools_from_json_schema_or_pydantic_and_validation():
    class Refund(BaseModel):
        order: str
        amount: float
        tags: list[str] = []

    by_model = ai.tool("refund", "Refund an order", Refund)
    by_schema = ai.tool("echo", "Echo", {"type": "object", "properties": {"n": {"type": "integer"}}})
    assert by_model.parameters["required"] == ["order", "amount"] and "title" not in by_model.parameters
    call = ai.ToolCall(id="1", name="refund", arguments={"order": "A", "amount": "2.5", "tags": "x"})
    assert ai.validate_tool_call([by_model, by_schema], call) == {"order": "A", "amount": 2.5, "tags": ["x"]}
    with pytest.raises(ai.ToolArgumentsError, match="amount"):
        ai.validate_tool_arguments(by_model, ai.ToolCall(id="2", name="refund", arguments={"order": "A"}))
    with pytest.raises(ai.ToolArgumentsError, match="not found"):
        ai.validate_tool_call([by_schema], call)

    pi_provider_faux.set_responses(
        [{"toolCalls": [{"name": "refund", "arguments": {"order": "A", "amount": 3}}]}]
    )
    model = ai.get_model("faux", "faux-1")
    answer = run(
        ai.complete(model, ai.Context(messages=[ai.UserMessage(content="refund A")], tools=[by_model]))
    )
    assert answer.stop_reason == "toolUse" and answer.tool_calls()[0].arguments == {"order": "A", "amount": 3}
    assert [t.name for t in pi_provider_faux.requests[0]["tools"]] == ["refund"]


def test_images_reach_the_provider(tmp_path):
    png = tmp_path / "dot.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\nfake")
    image = ai.image_from_file(png)
    assert image.mime_type == "image/png"
    model = ai.get_model("faux", "faux-reasoner")
    message = ai.UserMessage(content=[ai.TextContent(text="what is this?"), image])
    run(ai.complete(model, [message]))
    sent = pi_provider_faux.requests[0]["messages"][0].content
    assert sent[1].data == image.data
    with pytest.raises(ValueError):
        ai.image_from_file(tmp_path / "notes.txt")


def test_simple_variants_pass_one_thinking_level():
    pi_provider_faux.set_responses([{"text": "a"}, {"text": "b"}])
    model = ai.get_model("faux", "faux-reasoner")
    run(ai.complete_simple(model, [ai.UserMessage(content="x")], reasoning="high"))
    run(ai.complete(model, [ai.UserMessage(content="x")]))
    levels = [r["options"].thinking_level for r in pi_provider_faux.requests]
    assert levels == ["high", None]


def test_abort_ends_the_stream_and_the_context_continues():
    model = ai.get_model("faux", "faux-1")
    pi_provider_faux.set_responses([{"text": "word " * 100, "delayMs": 10}, {"text": "finished"}])

    async def main():
        controller = ai.AbortController()
        context = ai.Context(messages=[ai.UserMessage(content="long")])
        s = ai.stream(model, context, signal=controller.signal)
        kinds = []
        async for event in s:
            kinds.append(event.type)
            if event.type == "text_delta" and len(kinds) > 4:
                controller.abort()
        partial = await s.result()
        context.messages += [partial, ai.UserMessage(content="go on")]
        return kinds, partial, await ai.complete(model, context)

    kinds, partial, after = run(main())
    assert kinds[-1] == "error" and partial.stop_reason == "aborted" and partial.text()
    assert after.text() == "finished"


def test_a_context_round_trips_through_json():
    context = ai.Context(
        system_prompt="p",
        messages=[
            ai.UserMessage(content="hi"),
            {"role": "assistant", "content": [{"type": "text", "text": "yo"}]},
        ],
        tools=[ai.tool("t", "d")],
    )
    again = ai.Context.from_json(json.loads(json.dumps(context.to_json())))
    assert again.to_llm().messages[0].role == "system" and again.messages[1].text() == "yo"
    assert ai.get_current_tools(again.to_llm().messages)[0].name == "t"
    assert ai.get_current_system_prompt(again.to_llm().messages) == "p"


def test_the_public_names_are_listed_and_resolve():
    assert set(ai.__all__) >= {
        "get_model",
        "stream",
        "complete",
        "stream_simple",
        "complete_simple",
        "Models",
    }
    for name in ai.__all__:
        assert getattr(ai, name) is not None
    with pytest.raises(TypeError):
        ai.stream(ai.get_model("faux", "faux-1"), [], bogus_option=1)
