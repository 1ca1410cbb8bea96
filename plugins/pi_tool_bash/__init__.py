"""Built-in ``bash`` tool: shell commands with streamed, bounded output (reference §5.5).

``create_tool(shell=...)`` is this package's public API: pass a ``pi_host.lib.toolkit.Shell`` to run
commands somewhere else (over SSH, in a container) with the same output handling.
"""

from pi_host.lib.toolkit.plugin import tool_plugin

create_tool, register_tools = tool_plugin("pi_tool_bash.tool:BashTool")
