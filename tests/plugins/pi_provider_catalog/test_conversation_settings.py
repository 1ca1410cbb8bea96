"""Settings pi 1.6.0 sends inside the conversation rather than in the request's fields, over two
turns against a loopback server in each vendor's wire format, with catalog models:

* ``supportsMidConvoEffort`` (OpenAI Responses): ``configuration_update`` items carry the level,
  one before each earlier reply of the model (with that reply's ``providerThinkingLevel``) and
  one at the end; ``reasoning.effort`` stays "medium". (Anthropic): effort-only ``system``
  messages in the same places, ``output_config.effort`` "low", adaptive thinking with
  ``block_binding``, and the two betas.
* ``supportsAdditionalTools``: tools as ``additional_tools`` input items, none in ``tools``.
* Gemini 3+: tools asking for constrained sampling go out strict with ``toolConfig`` mode
  ``VALIDATED``.

The two-turn shapes were recorded from pi 1.6.0 (``pi -p`` then ``pi -p -c`` with another
``--thinking`` level against the same kind of server)."""

from __future__ import annotations

import json

import pytest

from pi_host.config.models import ModelRegistry
from pi_host.plugins.selection import PluginRequest, load_plugins
from pi_host.protocol import AssistantMessage, SystemMessage, ToolDecl, ToolResultMessage, UserMessage
from pi_host.protocol.messages import ToolRef
from tests.support.providers.openai_google import (  # noqa: F401 - fixtures
    BASH_TOOL,
    READ_TOOL,
    collect,
    context,
    final,
    module_server_fixture,
    options,
    sse_fixture,
)
from tests.support.providers.pi_requests import environment
from tests.support.providers.sse import Reply

PREFER = {"type": "json_schema", "strict": "prefer"}
TOOLS = [t.model_copy(update={"constrained_sampling": PREFER}) for t in (READ_TOOL, BASH_TOOL)]
GREP = ToolDecl(
    name="grep",
    description="Search files",
    parameters={"type": "object", "properties": {"pattern": {"type": "string"}}, "required": ["pattern"]},
    constrained_sampling=PREFER,
)
STRICT_READ = {
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "offset": {"anyOf": [{"type": "number"}, {"type": "null"}]},
        "limit": {"anyOf": [{"type": "number"}, {"type": "null"}]},
    },
    "required": ["path", "offset", "limit"],
    "additionalProperties": False,
}
REPLY = {
    "openai-responses": "openai/responses_tools.sse",
    "anthropic-messages": "anthropic/anthropic_thinking_tool.sse",
    "google-generative-ai": "google/google_tools.sse",
}


@pytest.fixture(scope="module")
def registry(module_server, tmp_path_factory):
    agent = tmp_path_factory.mktemp("agent")
    providers = ("openai", "github-copilot", "anthropic", "opencode-go", "google")
    overrides = {name: {"baseUrl": module_server.url} for name in providers}
    (agent / "models.json").write_text(json.dumps({"providers": overrides}))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PI_CODING_AGENT_DIR", str(agent))
        return ModelRegistry.from_plugins(load_plugins(PluginRequest(cwd=str(agent))).host)


async def turn(sse, registry, monkeypatch, provider, model_id, ctx, level="high"):
    """One request: (the reply, the body sent)."""
    for name, value in environment(provider, sse.url).items():
        monkeypatch.setenv(name, value)
    model = registry.find(provider, model_id)
    sse.enqueue(Reply.from_fixture(REPLY[model.api], chunk_size=17))
    key = registry.get_api_key(provider)
    events = await collect(registry.stream_fn(model)(model, ctx, options(api_key=key, thinking_level=level)))
    message = final(events)
    assert events[-1].type == "done", message.error_message
    return message, sse.requests[-1]


def kinds(items):
    return [item.get("type") or item["role"] for item in items]


def result_for(reply: AssistantMessage) -> ToolResultMessage:
    call = reply.tool_calls()[0]
    return ToolResultMessage(
        tool_call_id=call.id, tool_name=call.name, content=[{"type": "text", "text": "ok"}]
    )


async def test_responses_level_in_configuration_updates_and_tools_in_the_input(sse, registry, monkeypatch):
    first, sent = await turn(sse, registry, monkeypatch, "openai", "gpt-6.2-sol", context(tools=TOOLS))
    body = sent.json
    assert kinds(body["input"]) == ["additional_tools", "developer", "user", "configuration_update"]
    assert "tools" not in body and body["reasoning"] == {"effort": "medium", "summary": "auto"}
    assert body["input"][-1] == {"type": "configuration_update", "reasoning": {"effort": "high"}}
    declared = body["input"][0]
    assert declared["role"] == "developer" and [t["name"] for t in declared["tools"]] == ["read", "bash"]
    assert declared["tools"][0]["strict"] is True and declared["tools"][0]["parameters"] == STRICT_READ
    assert first.provider_thinking_level == "high"  # kept with the reply, as pi's providerThinkingLevel

    history = [UserMessage(content="Read main.py"), first, result_for(first), UserMessage(content="Thanks")]
    _, sent = await turn(
        sse, registry, monkeypatch, "openai", "gpt-6.2-sol", context(tools=TOOLS, messages=history), "low"
    )
    items = sent.json["input"]
    at = kinds(items).index("reasoning")  # the earlier reply starts with its reasoning item
    assert items[at - 1] == {"type": "configuration_update", "reasoning": {"effort": "high"}}
    assert items[-1] == {"type": "configuration_update", "reasoning": {"effort": "low"}}
    assert kinds(items).count("configuration_update") == 2
    assert sent.json["reasoning"]["effort"] == "medium"  # unchanged: the prefix stays cached


async def test_responses_tools_added_and_withdrawn_later_in_the_conversation(sse, registry, monkeypatch):
    # Copilot's gpt-6.1-sol declares tools in the input but takes its effort in the request.
    history = [
        UserMessage(content="Read main.py"),
        SystemMessage(tools_added=[GREP], tools_removed=[ToolRef(name="bash")]),
        UserMessage(content="Now search"),
    ]
    ctx = context(tools=[TOOLS[0], GREP], messages=history)
    ctx.messages[0] = SystemMessage(sections={"preamble": "You are a test assistant."}, tools_added=TOOLS)
    reply, sent = await turn(sse, registry, monkeypatch, "github-copilot", "gpt-6.1-sol", ctx)
    body = sent.json
    assert "tools" not in body and body["reasoning"]["effort"] == "high"
    assert "configuration_update" not in kinds(body["input"]) and reply.provider_thinking_level is None
    assert kinds(body["input"]) == [
        "additional_tools", "developer", "user", "developer", "additional_tools", "developer", "user",
    ]  # fmt: skip
    first, note, added, removal = body["input"][0], body["input"][3], body["input"][4], body["input"][5]
    assert [t["name"] for t in first["tools"]] == ["read", "bash"]
    assert [t["name"] for t in added["tools"]] == ["grep"] and added["tools"][0]["strict"] is True
    assert "still available" in note["content"]  # a later item adds to the earlier ones
    assert "bash" in removal["content"] and "grep" not in removal["content"]


def test_sign_in_with_chatgpt_takes_the_effort_in_the_request(registry):
    """The ChatGPT backend behind api.openai.com refuses configuration_update items (pure
    request building: nothing is sent to that host)."""
    from pi_provider_openai.responses import prepare

    model = registry.find("openai", "gpt-6.2-sol").model_copy(
        update={"base_url": "https://api.openai.com/v1"}
    )
    _, body, _ = prepare(
        model, context(tools=TOOLS), options(api_key="eyJ.chatgpt.token", thinking_level="high")
    )
    assert "configuration_update" not in kinds(body["input"])
    assert body["reasoning"]["effort"] == "high" and kinds(body["input"])[0] == "additional_tools"


@pytest.mark.parametrize(
    "provider,model_id", [("anthropic", "claude-opus-5-5"), ("opencode-go", "claude-haiku-5-5")]
)
async def test_anthropic_effort_only_system_messages(sse, registry, monkeypatch, provider, model_id):
    first, sent = await turn(sse, registry, monkeypatch, provider, model_id, context(tools=TOOLS))
    body = sent.json
    assert body["thinking"] == {
        "type": "adaptive",
        "display": "summarized",
        "block_binding": {"prefix_mismatch_behavior": "drop_block"},
    }
    assert body["output_config"] == {"effort": "low"}
    assert body["messages"][-1] == {"role": "system", "content": [], "output_config": {"effort": "high"}}
    betas = sent.headers["anthropic-beta"].split(",")
    assert {"mid-conversation-output-config-2026-07-01", "thinking-binding-controls-2026-08-01"} <= set(betas)
    assert first.provider_thinking_level == "high"

    history = [UserMessage(content="Read main.py"), first, result_for(first)]
    _, sent = await turn(
        sse, registry, monkeypatch, provider, model_id, context(tools=TOOLS, messages=history), "medium"
    )
    roles = [m["role"] for m in sent.json["messages"]]
    assert roles == ["user", "system", "assistant", "user", "system"]
    assert sent.json["messages"][1]["output_config"] == {"effort": "high"}  # the reply's own level
    assert sent.json["messages"][-1]["output_config"] == {"effort": "medium"}
    assert sent.json["output_config"] == {"effort": "low"}


async def test_anthropic_thinking_off_sends_no_effort_messages(sse, registry, monkeypatch):
    reply, sent = await turn(sse, registry, monkeypatch, "opencode-go", "claude-haiku-5-5", context(), "off")
    body = sent.json
    assert body["thinking"] == {"type": "disabled"} and "output_config" not in body
    assert all(m["role"] != "system" for m in body["messages"]) and reply.provider_thinking_level is None
    assert "thinking-binding-controls-2026-08-01" in sent.headers["anthropic-beta"]


async def test_gemini_3_strict_tools_use_the_validated_mode(sse, registry, monkeypatch):
    _, sent = await turn(sse, registry, monkeypatch, "google", "gemini-4-argon", context(tools=TOOLS))
    body = sent.json
    assert body["toolConfig"] == {"functionCallingConfig": {"mode": "VALIDATED"}}
    declarations = body["tools"][0]["functionDeclarations"]
    assert declarations[0]["parametersJsonSchema"] == STRICT_READ


@pytest.mark.parametrize(
    "model_id,tools",
    [("gemini-2.5-flash", TOOLS), ("gemini-4-argon", [READ_TOOL, BASH_TOOL])],
    ids=["gemini-2-has-no-strict-mode", "tools-not-asking"],
)
async def test_gemini_without_strict_tools_sends_no_tool_config(sse, registry, monkeypatch, model_id, tools):
    _, sent = await turn(sse, registry, monkeypatch, "google", model_id, context(tools=tools))
    assert "toolConfig" not in sent.json
    assert sent.json["tools"][0]["functionDeclarations"][0]["parametersJsonSchema"] == READ_TOOL.parameters


async def test_a_tool_requiring_strict_sampling_it_cannot_get_fails_the_request(sse, registry, monkeypatch):
    open_object = ToolDecl(
        name="anything",
        parameters={"type": "object", "properties": {}, "additionalProperties": True},
        constrained_sampling={"type": "json_schema", "strict": "require"},
    )
    for name, value in environment("google", sse.url).items():
        monkeypatch.setenv(name, value)
    model = registry.find("google", "gemini-4-argon")
    events = await collect(
        registry.stream_fn(model)(
            model, context(tools=[open_object]), options(api_key="k", thinking_level="high")
        )
    )
    assert events[-1].type == "error" and not sse.requests
    assert 'Tool "anything" requires JSON-schema constrained sampling' in final(events).error_message
