"""Tool capabilities: what the built-in tools declare, and MCP annotations mapped to one."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from pi_host.lib.toolkit.capabilities import capability_from_annotations
from pi_host.loop.tools import Tool


@pytest.mark.parametrize(
    ("module", "expected"),
    [("pi_tool_read", "read"), ("pi_tool_ls", "read"), ("pi_tool_find", "read"), ("pi_tool_grep", "read"),
     ("pi_tool_write", "write"), ("pi_tool_edit", "write"), ("pi_tool_bash", "exec")],
)  # fmt: skip
def test_the_built_in_tools_declare_what_they_do(module, expected):
    tool = __import__(module).create_tool()
    assert tool.capability == expected


def test_a_tool_that_declares_nothing_is_unknown():
    assert Tool().capability == "unknown"


@pytest.mark.parametrize(
    ("annotations", "expected"),
    [
        (None, "unknown"),
        ({}, "unknown"),
        ({"readOnlyHint": True}, "read"),
        ({"readOnlyHint": True, "openWorldHint": True}, "read"),
        ({"readOnlyHint": False}, "network"),
        ({"destructiveHint": True, "openWorldHint": False}, "write"),
        ({"openWorldHint": True}, "network"),
    ],
)
def test_mcp_annotations(annotations, expected):
    assert capability_from_annotations(annotations) == expected


def test_mcp_tools_take_their_capability_from_the_server():
    from pi_mcp.manager import McpTool, ToolSearch

    def tool(annotations):
        info = SimpleNamespace(name="t", description="", input_schema={}, annotations=annotations)
        connection = SimpleNamespace(config=SimpleNamespace(name="srv"))
        return McpTool(connection, info, "mcp__srv__t", "direct")

    hints = SimpleNamespace(model_dump=lambda **_: {"readOnlyHint": True})
    assert tool(hints).capability == "read"
    assert tool(None).capability == "unknown"
    assert ToolSearch.capability == "read"
