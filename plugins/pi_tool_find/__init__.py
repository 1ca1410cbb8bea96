"""Built-in ``find`` tool: glob search honouring .gitignore (reference §5.7).

``create_tool(fs=...)`` is this package's public API: pass a ``pi_host.lib.toolkit.FileSystem`` to
search a tree somewhere else with the same rules.
"""

from pi_host import hookimpl


def create_tool(fs=None):
    """A ``find`` tool using ``fs`` (default: the local disk)."""
    from pi_tool_find.tool import FindTool

    return FindTool(fs=fs)


@hookimpl
def register_tools(ctx):
    return [create_tool()]
