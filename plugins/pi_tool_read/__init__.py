"""Built-in ``read`` tool: file contents for the model, text or image (reference §5.2).

``create_tool(fs=...)`` is this package's public API: pass a ``pi_host.lib.toolkit.FileSystem`` to
read files somewhere else (over SSH, in a container) with the same behaviour.
"""

from pi_host.lib.toolkit.plugin import tool_plugin

create_tool, register_tools = tool_plugin("pi_tool_read.tool:ReadTool")
