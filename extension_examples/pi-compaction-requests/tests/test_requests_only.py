"""The strategy on its own, and inside a session with pi-host's scripted faux provider."""

from __future__ import annotations

import pi_compaction_requests
import pi_provider_faux as faux
from pi_compaction_requests.summary import compaction_summary, user_requests

import pi_host
from pi_host.lib.compaction import CompactionSettings, prepare_compaction
from pi_host.lib.sessions.store import MemoryStore
from pi_host.protocol import TextContent, UserMessage


def entry(n, message):
    return {
        "type": "message",
        "id": f"e{n}",
        "parentId": f"e{n - 1}" if n > 1 else None,
        "timestamp": "2026-12-02T09:00:00.000Z",
        "message": {"timestamp": 1, **message},
    }


def user(n, text):
    return entry(n, {"role": "user", "content": [{"type": "text", "text": text}]})


def assistant(n, text="", path=None):
    content = [{"type": "text", "text": text}] if text else []
    if path:
        content.append({"type": "toolCall", "id": f"c{n}", "name": "edit", "arguments": {"path": path}})
    return entry(n, {"role": "assistant", "content": content, "stopReason": "toolUse" if path else "stop"})


def result(n, text):
    return entry(
        n,
        {
            "role": "toolResult",
            "toolCallId": f"c{n - 1}",
            "toolName": "edit",
            "content": [{"type": "text", "text": text}],
            "isError": False,
        },
    )


def test_requests_are_listed_in_order_and_shortened():
    long = "x" * 900
    messages = [UserMessage(content="fix   the\nbug"), UserMessage(content=[TextContent(text=long)])]
    first, second = user_requests(messages)
    assert first == "fix the bug"
    assert len(second) == 500 and second.endswith("…")


def test_summary_keeps_requests_file_lists_and_the_previous_summary():
    entries = [
        user(1, "rename the config loader"),
        assistant(2, path="src/config.py"),
        result(3, "ok " * 1000),
        assistant(4, "renamed"),
        user(5, "now add tests " + "t" * 2000),
        assistant(6, "done"),
    ]
    prepared = prepare_compaction(entries, CompactionSettings(keep_recent_tokens=100), 0)
    prepared.previous_summary = "## User requests\n1. set up the project"
    prepared.custom_instructions = "naming"
    out = compaction_summary(prepared)
    assert out["summary"] == (
        "## Earlier summary\n## User requests\n1. set up the project\n\n"
        "## User requests\n1. rename the config loader\n\n## Focus\nnaming"
        "\n\n<modified-files>\nsrc/config.py\n</modified-files>"
    )
    assert out["details"] == {"readFiles": [], "modifiedFiles": ["src/config.py"]}


async def test_installed_strategy_replaces_the_default_in_a_session():
    faux.set_responses(
        [{"text": "first answer " + "a" * 4000}, {"text": "second answer"}]
    )  # no model call is scripted for a summary: none must happen
    session = await pi_host.create_session(
        model="faux/faux-1",
        plugins=[pi_compaction_requests],
        settings={"compaction": {"keepRecentTokens": 10}},
        store=MemoryStore("."),
        no_tools=True,
    )
    assert session.compactor.strategy().name == "requests-only"
    await session.prompt("explain the build")
    await session.prompt("and the release " + "r" * 100)
    before = len(faux.requests)
    outcome = await session.compact()
    assert len(faux.requests) == before
    assert outcome["summary"] == "## User requests\n1. explain the build"
    assert [m.role for m in session.messages][:3] == ["system", "compactionSummary", "user"]
