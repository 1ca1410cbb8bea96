"""Built-in ``write`` tool: create or overwrite a file (reference §5.3).

``create_tool(fs=...)`` is this package's public API: pass a ``pi_host.lib.toolkit.FileSystem`` to
write files somewhere else with the same behaviour.
"""

from pi_host.lib.toolkit.plugin import tool_plugin

create_tool, register_tools = tool_plugin("pi_tool_write.tool:WriteTool")
