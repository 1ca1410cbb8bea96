"""``pi mcp add / remove / list`` write and read the mcp.json pi 1.6.0 writes and reads."""

from __future__ import annotations

from pi_mcp.config import tool_name
from pi_mcp.manager import truncate_middle


def test_tool_names_and_truncation_follow_pi():
    assert tool_name("my-server", "get.time") == "mcp__my_server__get_time"
    long = tool_name("s", "x" * 80)
    assert len(long) == 64 and long.startswith("mcp__s__xxx")
    assert tool_name("s", "t", {"mcp__s__t"}) != "mcp__s__t"
    assert truncate_middle("a" * 100) is None
    cut = truncate_middle("é" * 20000)
    assert cut is not None and "\u2026" in cut and len(cut.split("\u2026")[0].encode()) <= 10240
