"""Built-in ``edit`` tool: exact-text replacements in one file (reference §5.4).

``create_tool(fs=...)`` is this package's public API: pass a ``pi_host.lib.toolkit.FileSystem`` to
edit files somewhere else with the same matching rules.
"""

from pi_host import hookimpl


def create_tool(fs=None):
    """An ``edit`` tool using ``fs`` (default: the local disk)."""
    from pi_tool_edit.tool import EditTool

    return EditTool(fs=fs)


@hookimpl
def register_tools(ctx):
    return [create_tool()]
