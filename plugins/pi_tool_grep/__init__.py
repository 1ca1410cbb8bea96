"""Built-in ``grep`` tool: content search with ripgrep (reference §5.6).

``create_tool(fs=..., searcher=...)`` is this package's public API: pass a
``pi_host.lib.toolkit.Searcher`` (and ``FileSystem``) to search somewhere else.
"""

from pi_host.lib.toolkit.plugin import tool_plugin

create_tool, register_tools = tool_plugin("pi_tool_grep.tool:GrepTool")
