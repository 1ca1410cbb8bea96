"""The ``mcp_servers`` system-prompt section (pi's rules: sorted, summaries, 4,096-char cap)."""

from __future__ import annotations

from pi_mcp.prompt_section import MAX_CHARS, ListedServer, render, section


def test_servers_are_listed_sorted_with_their_summaries():
    text = render(
        [
            ListedServer("time-zone", instructions="Converts times.\nMore detail."),
            ListedServer("docs", description="  Search the product docs  ", instructions="ignored"),
            ListedServer("bare"),
        ]
    )
    assert text.splitlines() == [
        "MCP servers whose tools are not declared to you. "
        "Load the tools of `tool_search` servers with `tool_search`.",
        "- mcp__bare (tool_search)",
        "- mcp__docs (tool_search): Search the product docs",
        "- mcp__time_zone (tool_search): Converts times.",
    ]


def test_no_listed_server_removes_the_section():
    assert render([]) is None
    assert section([]) == {"mcp_servers": None}
    wrapped = section([ListedServer("a")])["mcp_servers"]
    assert wrapped.startswith("<mcp_servers>\n") and wrapped.endswith("\n</mcp_servers>")


def test_long_summaries_shrink_and_many_servers_are_counted_not_listed():
    one = render([ListedServer("a", description="x" * 1000)])
    assert one.splitlines()[1] == "- mcp__a (tool_search): " + "x" * 249 + "\u2026"
    many = [ListedServer(f"server-{i:03}", description="d" * 300) for i in range(200)]
    text = render(many)
    assert len(text) <= MAX_CHARS
    lines = text.splitlines()
    assert lines[-1].startswith("- \u2026 ") and "more servers" in lines[-1]
    shown = [line for line in lines if line.startswith("- mcp__")]
    assert 0 < len(shown) < 200 and shown == sorted(shown)
    assert int(lines[-1].split()[2]) == 200 - len(shown)
