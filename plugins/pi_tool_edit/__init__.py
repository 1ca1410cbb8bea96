"""Built-in ``edit`` tool: exact-text replacements in one file (reference §5.4).

``create_tool(fs=...)`` is this package's public API: pass a ``pi_host.lib.toolkit.FileSystem`` to
edit files somewhere else with the same matching rules.
"""

from pi_host.lib.toolkit.plugin import tool_plugin

create_tool, register_tools = tool_plugin("pi_tool_edit.tool:EditTool")
