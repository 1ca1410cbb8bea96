"""Built-in ``read`` tool: file contents for the model, text or image (reference §5.2).

``create_tool(fs=...)`` is this package's public API: pass a ``pi_host.lib.toolkit.FileSystem`` to
read files somewhere else (over SSH, in a container) with the same behaviour.
"""

from pi_host import hookimpl


def create_tool(fs=None):
    """A ``read`` tool using ``fs`` (default: the local disk)."""
    from pi_tool_read.tool import ReadTool

    return ReadTool(fs=fs)


@hookimpl
def register_tools(ctx):
    return [create_tool()]
