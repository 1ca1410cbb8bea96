"""Built-in ``grep`` tool: content search with ripgrep (reference §5.6).

``create_tool(fs=..., searcher=...)`` is this package's public API: pass a
``pi_host.lib.toolkit.Searcher`` (and ``FileSystem``) to search somewhere else.
"""

from pi_host import hookimpl


def create_tool(fs=None, searcher=None):
    """A ``grep`` tool (default: ripgrep on this machine)."""
    from pi_tool_grep.tool import GrepTool

    return GrepTool(fs=fs, searcher=searcher)


@hookimpl
def register_tools(ctx):
    return [create_tool()]
