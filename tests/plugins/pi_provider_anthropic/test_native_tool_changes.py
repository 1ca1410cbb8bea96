"""System messages inside the conversation and native tool changes (pi 1.6.0's
``supportsMidConvoSystemMessages`` and ``supportsMidConvoToolChanges``).

The expected bodies are the ones pi 1.6.0 builds for the same transcripts: its own
``anthropic-messages`` ``streamSimple`` was given them (:func:`record`), and
:func:`test_requests_match_pi` compares whole bodies and betas with that recording."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from pi_host.protocol import (
    AssistantMessage,
    LlmContext,
    Model,
    StreamOptions,
    SystemMessage,
    TextContent,
    ToolCall,
    ToolDecl,
    ToolResultMessage,
    UserMessage,
)
from pi_host.protocol.messages import ToolRef
from tests.support.paths import REPO
from tests.support.providers.anthropic import BASH, READ, model_for, run
from tests.support.providers.sse import Reply

NATIVE = {"supportsMidConvoSystemMessages": True, "supportsMidConvoToolChanges": True}
GREP = ToolDecl(
    name="grep",
    description="Search files",
    parameters={"type": "object", "properties": {"pattern": {"type": "string"}}, "required": ["pattern"]},
)
BASH_V2 = ToolDecl(
    name="bash",
    description="Run a command (v2)",
    parameters={"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]},
)
PLACEHOLDER = {
    "name": "__pi_deferred_placeholder__",
    "description": "Reserved placeholder. Never available. Never call this.",
    "input_schema": {"type": "object", "properties": {}, "required": []},
    "defer_loading": True,
}
EPHEMERAL = {"type": "ephemeral"}
INLINE_TOOLS = "inline-tools-2026-09-15"


def wire(decl: ToolDecl, **extra) -> dict:
    return {
        "name": decl.name,
        "description": decl.description,
        "eager_input_streaming": True,
        "input_schema": decl.parameters,
        **extra,
    }


def addition(decl: ToolDecl) -> dict:
    return {"type": "tool_addition", "tool": {"type": "tool_definition", "definition": wire(decl)}}


def removal(name: str) -> dict:
    return {"type": "tool_removal", "tool": {"type": "tool_reference", "name": name}}


def called_read() -> list:
    """A reply calling read, and its result."""
    reply = AssistantMessage(
        content=[ToolCall(id="toolu_1", name="read", arguments={"path": "main.py"})],
        api="anthropic-messages",
        provider="anthropic",
        model="claude-sonnet-4-5",
        stop_reason="toolUse",
    )
    result = ToolResultMessage(tool_call_id="toolu_1", tool_name="read", content=[TextContent(text="ok")])
    return [reply, result]


def transcript(*later) -> list:
    head = SystemMessage(sections={"preamble": "You are a helper."}, tools_added=[READ, BASH])
    return [head, UserMessage(content="Read main.py"), *called_read(), *later]


READ_TURN = [
    {"role": "user", "content": "Read main.py"},
    {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "main.py"}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok", "is_error": False}]},
]  # fmt: skip


async def send(sse_server, model: Model, messages: list, tools: list, **options):
    sse_server.enqueue(Reply.from_fixture("anthropic/anthropic_text.sse"))
    options.setdefault("api_key", "sk-ant-api-test")
    options.setdefault("thinking_level", "medium")
    events = await run(model, LlmContext(messages=messages, tools=tools), StreamOptions(**options))
    assert events[-1].type == "done", events[-1]
    return sse_server.last


async def test_a_tool_added_and_one_withdrawn_mid_conversation(sse_server):
    model = model_for(sse_server.url, compat=NATIVE)
    patch = SystemMessage(tools_added=[GREP], tools_removed=[ToolRef(name="bash")])
    request = await send(
        sse_server, model, transcript(patch, UserMessage(content="Now search")), [READ, GREP]
    )
    body = request.json
    # the request's tools stay the initial ones (cache mark on the last) plus the placeholder
    assert body["tools"] == [wire(READ), wire(BASH, cache_control=EPHEMERAL), PLACEHOLDER]
    # the change is held back to the end (before the next reply, if there were one): it follows
    # the user message it preceded in the transcript, and carries the conversation's cache mark
    assert body["messages"] == [
        *READ_TURN,
        {"role": "user", "content": "Now search"},
        {"role": "system", "content": [removal("bash"), {**addition(GREP), "cache_control": EPHEMERAL}]},
    ]
    assert body["system"] == [{"type": "text", "text": "You are a helper.", "cache_control": EPHEMERAL}]
    assert request.headers["anthropic-beta"] == f"interleaved-thinking-2025-05-14,{INLINE_TOOLS}"


async def test_changes_before_a_reply_are_sent_before_it_and_a_redefinition_needs_no_removal(sse_server):
    model = model_for(sse_server.url, compat=NATIVE)
    patch = SystemMessage(
        content="Mind the tests.",
        sections={"rules": "<rules>\nbe brief\n</rules>", "old": None},
        tools_added=[BASH_V2],
        tools_removed=[ToolRef(name="bash"), ToolRef(name="read")],
    )
    answer = AssistantMessage(content=[TextContent(text="Done.")], api="anthropic-messages", provider="x")
    messages = transcript(patch, UserMessage(content="Go on"), answer, UserMessage(content="Thanks"))
    body = (await send(sse_server, model, messages, [BASH_V2])).json
    text = (
        "Mind the tests.\n\n"
        'Section "rules" of the system prompt changed to:\n\n<rules>\nbe brief\n</rules>\n\n'
        'Section "old" of the system prompt no longer applies.'
    )
    assert body["messages"] == [
        *READ_TURN,
        {"role": "user", "content": "Go on"},
        {"role": "system", "content": [{"type": "text", "text": text}, removal("read"), addition(BASH_V2)]},
        {"role": "assistant", "content": [{"type": "text", "text": "Done."}]},
        {"role": "user", "content": [{"type": "text", "text": "Thanks", "cache_control": EPHEMERAL}]},
    ]
    assert body["tools"][-1] == PLACEHOLDER and len(body["tools"]) == 3


async def test_without_tools_declared_with_the_prompt_changes_are_not_native(sse_server):
    # Anthropic refuses a tool list whose every tool is deferred: no initial tool, no placeholder
    model = model_for(sse_server.url, compat=NATIVE)
    messages = [
        SystemMessage(sections={"preamble": "You are a helper."}),
        UserMessage(content="Hi"),
        SystemMessage(tools_added=[GREP]),
    ]
    request = await send(sse_server, model, messages, [GREP])
    body = request.json
    assert body["tools"] == [wire(GREP, cache_control=EPHEMERAL)]
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Hi", "cache_control": EPHEMERAL}]}
    ]  # a tool change alone says nothing in place
    assert INLINE_TOOLS not in request.headers["anthropic-beta"]


async def test_system_messages_in_place_without_native_tool_changes(sse_server):
    # Copilot's and OpenCode's Claude models: later system messages in place, current tools
    model = model_for(sse_server.url, compat={"supportsMidConvoSystemMessages": True})
    patch = SystemMessage(content="Also: be brief.", tools_added=[GREP], tools_removed=[ToolRef(name="bash")])
    request = await send(sse_server, model, transcript(patch), [READ, GREP])
    body = request.json
    assert [t["name"] for t in body["tools"]] == ["read", "grep"]
    assert body["messages"][-1] == {
        "role": "system",
        "content": [{"type": "text", "text": "Also: be brief.", "cache_control": EPHEMERAL}],
    }
    assert body["system"][0]["text"] == "You are a helper."  # the patch is not folded in
    assert INLINE_TOOLS not in request.headers["anthropic-beta"]


async def test_oauth_names_tools_in_changes_as_claude_code_does(sse_server):
    model = model_for(sse_server.url, compat=NATIVE)
    patch = SystemMessage(tools_added=[GREP], tools_removed=[ToolRef(name="bash")])
    request = await send(
        sse_server,
        model,
        transcript(patch),
        [READ, GREP],
        api_key="sk-ant-oat01-test",
        cache_retention="none",
    )
    body = request.json
    assert [t["name"] for t in body["tools"]] == ["Read", "Bash", PLACEHOLDER["name"]]
    grep = {**wire(GREP), "name": "Grep"}
    assert body["messages"][-1] == {
        "role": "system",
        "content": [
            removal("Bash"),
            {"type": "tool_addition", "tool": {"type": "tool_definition", "definition": grep}},
        ],
    }
    assert "cache_control" not in json.dumps(body)
    betas = request.headers["anthropic-beta"].split(",")
    assert betas[:2] == ["claude-code-20250219", "oauth-2025-04-20"] and betas[-1] == INLINE_TOOLS


async def test_tools_given_only_in_the_context_are_declared_with_the_prompt(sse_server):
    """A context built by hand (no system message declares tools): its tools are the initial
    ones, as pi folds ``Context.tools`` into the leading system message."""
    model = model_for(sse_server.url, compat=NATIVE)
    messages = [SystemMessage(sections={"preamble": "P"}), UserMessage(content="Hi")]
    request = await send(sse_server, model, messages, [READ, BASH])
    assert [t["name"] for t in request.json["tools"]] == ["read", "bash", PLACEHOLDER["name"]]
    assert request.headers["anthropic-beta"].endswith(INLINE_TOOLS)


# --- against pi 1.6.0's own request builder ------------------------------------------------------------------

ORACLE = """
const [module] = process.argv.slice(1);
const { streamSimple } = await import(module);
let input = "";
for await (const chunk of process.stdin) input += chunk;
const out = [];
for (const { model, context, options } of JSON.parse(input)) {
  let params = null;
  const stream = streamSimple(model, context, {
    ...options,
    onPayload: (p) => { params = p; throw new Error("captured"); },
  });
  for await (const _ of stream) {}
  out.push(params);
}
process.stdout.write(JSON.stringify(out));
"""


def catalog_model(provider: str, model_id: str) -> dict:
    data = json.loads((REPO / f"plugins/pi_provider_catalog/catalog/{provider}.json").read_text())
    entry = next(m for m in data["models"] if m["id"] == model_id)
    return {"api": data["api"], "provider": provider, "baseUrl": "http://127.0.0.1:9", **entry}


def oracle_cases() -> list[tuple[str, str, str, str, list]]:
    """(provider, model, level, key, transcript): pi-host's transcripts, pi's levels (its agent
    clamps a level before the provider sees it, so each level is one the model supports)."""
    effort_reply = AssistantMessage(
        content=[TextContent(text="Done.")],
        api="anthropic-messages",
        provider="anthropic",
        model="claude-opus-5-5",
        provider_thinking_level="high",
    )
    changes = [
        SystemMessage(
            content="Note.", sections={"rules": "<rules>y</rules>", "gone": None}, tools_added=[GREP, BASH_V2],
            tools_removed=[ToolRef(name="read"), ToolRef(name="bash")],
        ),
        UserMessage(content="Go on"),
        effort_reply,
        SystemMessage(tools_removed=[ToolRef(name="grep")]),
        UserMessage(content="Thanks"),
    ]  # fmt: skip
    strict_read = READ.model_copy(
        update={"constrained_sampling": {"type": "json_schema", "strict": "prefer"}}
    )
    head = SystemMessage(
        sections={"preamble": "P", "rules": "<rules>x</rules>"}, tools_added=[strict_read, BASH]
    )
    tail = [UserMessage(content="Read main.py"), *called_read(), *changes]
    no_initial = [SystemMessage(sections={"preamble": "P"}), UserMessage(content="Hi"), *changes]
    cases = []
    for provider, model_id, level in [
        ("anthropic", "claude-opus-5-5", "high"),
        ("anthropic", "claude-opus-5-5", "low"),
        ("anthropic", "claude-opus-4-8", "off"),
        ("anthropic", "claude-opus-4-8", "medium"),
        ("opencode", "claude-opus-5-5", "xhigh"),
        ("github-copilot", "claude-opus-5", "high"),
        ("opencode-go", "claude-haiku-5-5", "off"),
    ]:
        cases.append((provider, model_id, level, "sk-ant-api-test", [head, *tail]))
    cases.append(("anthropic", "claude-opus-5-5", "high", "sk-ant-oat01-test", [head, *tail]))
    cases.append(("anthropic", "claude-opus-4-8", "high", "sk-ant-api-test", no_initial))
    return cases


RECORDED = Path(__file__).with_name("pi_native_tool_changes_1.6.0.json")


def record() -> list[dict]:
    """pi 1.6.0's request params for :func:`oracle_cases`, from its own ``anthropic-messages``
    (``python -m tests.plugins.pi_provider_anthropic.test_native_tool_changes`` rewrites
    :data:`RECORDED`; tests never start Node outside tests/e2e/)."""
    from tests.support.pi_node import find_pi

    found = find_pi()
    assert found is not None, "pi 1.6.0 is not installed under .tools/ (tests/support/pi_node.py)"
    node, cli = found
    module = Path(cli).parents[2] / "pi-ai/dist/api/anthropic-messages.js"
    payload = [
        {
            "model": catalog_model(provider, model_id),
            "context": {"messages": [m.to_json() for m in messages]},
            "options": {"apiKey": key, "reasoning": None if level == "off" else level},
        }
        for provider, model_id, level, key, messages in oracle_cases()
    ]
    done = subprocess.run(
        [node, "--input-type=module", "-e", ORACLE, module.as_uri()],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_requests_match_pi():
    from pi_provider_anthropic.convert import build_request

    cases = oracle_cases()
    expected = json.loads(RECORDED.read_text(encoding="utf-8"))
    assert len(expected) == len(cases)
    for (provider, model_id, level, key, messages), pi in zip(cases, expected, strict=True):
        model = Model.model_validate(catalog_model(provider, model_id))
        options = StreamOptions(api_key=key, thinking_level=level)
        body, headers = build_request(model, LlmContext(messages=messages, tools=[]), options, key)
        betas = [b for b in headers.get("anthropic-beta", "").split(",") if b]
        case = f"{provider}/{model_id}:{level} {key[:10]}"
        assert betas == pi.pop("betas", []), case
        assert _words_apart(body, messages) == _words_apart(pi, messages), case


def _words_apart(body: dict, messages: list) -> dict:
    """``body`` with the text of each system message sent in place checked and set aside: pi-host
    words section changes its own way, so only their content must match (the added text, every
    changed section's name and new value); every other byte must be pi's."""
    patches = iter(m for m in messages[1:] if m.role == "system" and (m.content or m.sections))
    body = json.loads(json.dumps(body))
    for message in body["messages"]:
        first = message["content"][0] if message["role"] == "system" and message["content"] else None
        if first is None or first["type"] != "text":
            continue
        patch = next(patches)
        wanted = [patch.content, *patch.sections, *(v for v in patch.sections.values() if v)]
        assert all(part in first["text"] for part in wanted if part), first["text"]
        first["text"] = "(section changes)"
    return body


if __name__ == "__main__":
    RECORDED.write_text(json.dumps(record(), indent=1) + "\n", encoding="utf-8")
    print("recorded", RECORDED)
