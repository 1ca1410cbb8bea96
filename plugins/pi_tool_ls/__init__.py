"""Built-in ``ls`` tool: directory listing (reference §5.8).

``create_tool(fs=...)`` is this package's public API: pass a ``pi_host.lib.toolkit.FileSystem`` to
list directories somewhere else.
"""

from pi_host import hookimpl


def create_tool(fs=None):
    """An ``ls`` tool using ``fs`` (default: the local disk)."""
    from pi_tool_ls.tool import LsTool

    return LsTool(fs=fs)


@hookimpl
def register_tools(ctx):
    return [create_tool()]
