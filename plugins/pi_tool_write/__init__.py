"""Built-in ``write`` tool: create or overwrite a file (reference §5.3).

``create_tool(fs=...)`` is this package's public API: pass a ``pi_host.lib.toolkit.FileSystem`` to
write files somewhere else with the same behaviour.
"""

from pi_host import hookimpl


def create_tool(fs=None):
    """A ``write`` tool using ``fs`` (default: the local disk)."""
    from pi_tool_write.tool import WriteTool

    return WriteTool(fs=fs)


@hookimpl
def register_tools(ctx):
    return [create_tool()]
