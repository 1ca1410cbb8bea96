"""Built-in ``bash`` tool: shell commands with streamed, bounded output (reference §5.5).

``create_tool(shell=...)`` is this package's public API: pass a ``pi_host.lib.toolkit.Shell`` to run
commands somewhere else (over SSH, in a container) with the same output handling.
"""

from pi_host import hookimpl


def create_tool(shell=None):
    """A ``bash`` tool using ``shell`` (default: this machine)."""
    from pi_tool_bash.tool import BashTool

    return BashTool(shell=shell)


@hookimpl
def register_tools(ctx):
    return [create_tool()]
