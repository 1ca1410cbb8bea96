"""End to end through the SDK: a scripted model lists, reads, edits, greps and runs bash."""

from __future__ import annotations

import pi_provider_faux
import pytest

import pi_host
from pi_host.lib.toolkit import find_ripgrep


@pytest.fixture
def small_project(tmp_path):
    root = tmp_path / "demo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text(
        'def greet(name):\n    return "Hello, " + name\n\n\nprint(greet("world"))\n'
    )
    (root / "README.md").write_text("# Demo\n")
    return root


def results_by_tool(session) -> dict[str, list]:
    out: dict[str, list] = {}
    for message in session.store.build_context().messages:
        if getattr(message, "role", None) == "toolResult":
            out.setdefault(message.tool_name, []).append(message)
    return out


def text(message) -> str:
    return "".join(block.text for block in message.content if getattr(block, "type", None) == "text")


async def test_default_active_tools_and_all_seven_selectable(small_project):
    session = await pi_host.create_session(model="faux/faux-1", cwd=str(small_project), settings={})
    try:
        assert set(session.active_tools) == {"read", "bash", "edit", "write"}
        assert {"grep", "find", "ls"} <= set(session.all_tools)
    finally:
        await session.close()
    tools = ["read", "bash", "edit", "write", "grep", "find", "ls"]
    session = await pi_host.create_session(
        model="faux/faux-1", cwd=str(small_project), settings={}, tools=tools
    )
    try:
        assert list(session.active_tools) == tools
        declared = {tool.name: tool for tool in session.active_tools.values()}
        assert declared["read"].constrained_sampling == {"type": "json_schema", "strict": "prefer"}
        assert declared["grep"].constrained_sampling is None
    finally:
        await session.close()


@pytest.mark.skipif(find_ripgrep() is None, reason="rg not installed")
async def test_list_read_edit_grep_bash_flow(small_project):
    pi_provider_faux.set_responses(
        [
            {
                "toolCalls": [
                    {"name": "ls", "arguments": {}},
                    {"name": "read", "arguments": {"path": "src/app.py"}},
                ]
            },
            {
                "toolCalls": [
                    {
                        "name": "edit",
                        "arguments": {
                            "path": "src/app.py",
                            "oldText": 'return "Hello, " + name',
                            "newText": 'return f"Hello, {name}!"',
                        },
                    }
                ]
            },
            {
                "toolCalls": [
                    {"name": "grep", "arguments": {"pattern": "Hello", "path": "src"}},
                    {"name": "bash", "arguments": {"command": "python3 src/app.py"}},
                ]
            },
            {"text": "done: {{lastToolResult}}"},
        ]
    )
    session = await pi_host.create_session(
        model="faux/faux-1", cwd=str(small_project), settings={}, tools=["ls", "read", "edit", "grep", "bash"]
    )
    events: list[dict] = []
    session.subscribe(events.append)
    try:
        await session.prompt("Tidy the greeting")
    finally:
        await session.close()
    assert (small_project / "src" / "app.py").read_text().splitlines()[1] == '    return f"Hello, {name}!"'
    results = results_by_tool(session)
    assert text(results["ls"][0]) == "README.md\nsrc/"
    assert text(results["read"][0]).startswith("def greet(name):")
    assert results["edit"][0].details["firstChangedLine"] == 2
    assert text(results["grep"][0]) == 'app.py:2:     return f"Hello, {name}!"'
    assert text(results["bash"][0]) == "Hello, world!\n"
    assert not any(m.is_error for ms in results.values() for m in ms)
    updates = [e for e in events if e["type"] == "tool_execution_update"]
    assert updates and updates[0]["toolName"] == "bash"
    assert session.last_assistant().text() == "done: Hello, world!\n"


async def test_tool_errors_reach_the_model_as_error_results(small_project):
    pi_provider_faux.set_responses(
        [
            {
                "toolCalls": [
                    {
                        "name": "edit",
                        "arguments": {"path": "src/app.py", "edits": [{"oldText": "nope", "newText": "x"}]},
                    },
                    {"name": "bash", "arguments": {"command": "exit 3"}},
                    {"name": "read", "arguments": {"path": "missing.txt"}},
                ]
            },
            {"text": "ok"},
        ]
    )
    session = await pi_host.create_session(model="faux/faux-1", cwd=str(small_project), settings={})
    try:
        await session.prompt("break things")
    finally:
        await session.close()
    results = results_by_tool(session)
    assert results["edit"][0].is_error and "Could not find" in text(results["edit"][0])
    assert results["bash"][0].is_error and "code 3" in text(results["bash"][0])
    assert results["read"][0].is_error and "missing.txt" in text(results["read"][0])
