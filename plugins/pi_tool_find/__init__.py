"""Built-in ``find`` tool: glob search honouring .gitignore (reference §5.7).

``create_tool(fs=...)`` is this package's public API: pass a ``pi_host.lib.toolkit.FileSystem`` to
search a tree somewhere else with the same rules.
"""

from pi_host.lib.toolkit.plugin import tool_plugin

create_tool, register_tools = tool_plugin("pi_tool_find.tool:FindTool")
