"""The ``mcp_servers`` system-prompt section (pi's rules: sorted, summaries, 4,096-char cap)."""

from __future__ import annotations


def _system_sections(stdout: str) -> dict:
    import json

    events = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    return next(
        e["message"]["sections"]
        for e in events
        if e["type"] == "message_start" and e["message"]["role"] == "system"
    )


def test_the_cli_lists_deferred_servers_in_the_system_prompt(isolated_environment):
    from tests.e2e.mcp.helpers import TEST_STDIO, TIME, pi, write_config

    write_config(
        isolated_environment["agent"] / "mcp.json",
        {
            # waited for (a direct tool), so its instructions are known at the first request
            "docs": {**TEST_STDIO, "exposure": "direct", "toolExposure": {"echo": "deferred"}},
            "time": {**TIME, "description": "Current time and time zones\nsecond line"},
            "clock": {**TIME, "exposure": "direct"},  # nothing deferred: not listed
        },
    )
    done = pi("--mode", "json", "--model", "faux/faux-1", "--no-session", "hi", script=[{"text": "ok"}])
    assert done.returncode == 0, done.stderr
    section = _system_sections(done.stdout)["mcp_servers"]
    assert section.splitlines() == [
        "<mcp_servers>",
        "MCP servers whose tools are not declared to you. "
        "Load the tools of `tool_search` servers with `tool_search`.",
        "- mcp__docs (tool_search): Test tools for pi-host",
        "- mcp__time (tool_search): Current time and time zones",
        "</mcp_servers>",
    ]


def test_no_deferred_server_means_no_section_and_deferred_resource_tools_are_searchable(
    isolated_environment,
):
    from tests.e2e.mcp.helpers import TEST_STDIO, pi, prompt, write_config

    write_config(isolated_environment["agent"] / "mcp.json", {"docs": {**TEST_STDIO, "exposure": "direct"}})
    done = pi("--mode", "json", "--model", "faux/faux-1", "--no-session", "hi", script=[{"text": "ok"}])
    assert "mcp_servers" not in _system_sections(done.stdout)

    write_config(isolated_environment["agent"] / "mcp.json", {"docs": {**TEST_STDIO, "exposure": "deferred"}})
    script = [
        {"toolCalls": [{"name": "tool_search", "arguments": {"query": "list resources"}}]},
        {"toolCalls": [{"name": "list_mcp_resources", "arguments": {"server": "docs"}}]},
        {"text": "got: {{lastToolResult}}"},
    ]
    done = prompt("resources via search", script)
    assert done.returncode == 0, done.stderr
    assert '"uri": "docs://readme"' in done.stdout
