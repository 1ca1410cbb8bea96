"""Built-in ``ls`` tool: directory listing (reference §5.8).

``create_tool(fs=...)`` is this package's public API: pass a ``pi_host.lib.toolkit.FileSystem`` to
list directories somewhere else.
"""

from pi_host.lib.toolkit.plugin import tool_plugin

create_tool, register_tools = tool_plugin("pi_tool_ls.tool:LsTool")
