"""Drawing the interactive transcript: the context and return type of render functions, ANSI
text helpers, the theme, streaming Markdown, diffs, the views tool renderers receive, the footer
data, and the fallback renderers.

Every name is imported on first use: importing this package costs nothing, and rich, pygments
and markdown-it load only when Markdown is first rendered.

A render function returns ``str`` or :class:`Rendered`; every line fits ``rc.width`` columns.
"""

from pi_host._exports import lazy_exports

_EXPORTS = {
    "RenderContext": ".context",
    "Rendered": ".context",
    "as_rendered": ".context",
    "Theme": ".theme",
    "default_theme": ".theme",
    "color_system_from_env": ".theme",
    "RESET": ".ansi",
    "char_width": ".ansi",
    "pad": ".ansi",
    "sanitize": ".ansi",
    "safe_for_terminal": ".controls",
    "strip_controls": ".controls",
    "sgr": ".ansi",
    "strip_ansi": ".ansi",
    "style": ".ansi",
    "truncate": ".ansi",
    "visible_width": ".ansi",
    "wrap": ".ansi",
    "MarkdownStream": ".markdown",
    "render_markdown": ".markdown",
    "split_blocks": ".markdown",
    "render_diff": ".diff",
    "render_new_file": ".diff",
    "ToolCallView": ".views",
    "ToolResultView": ".views",
    "block_text": ".views",
    "compact_json": ".views",
    "content_text": ".views",
    "default_message": ".views",
    "default_tool_call": ".views",
    "default_tool_result": ".views",
    "fit": ".views",
    "get": ".views",
    "head_lines": ".views",
    "indent_lines": ".views",
    "short_path": ".views",
    "tail_lines": ".views",
    "tool_title": ".views",
    "FooterInfo": ".footer",
    "format_cost": ".footer",
    "format_tokens": ".footer",
    "git_branch": ".footer",
    "home_relative": ".footer",
}

__all__ = sorted(_EXPORTS)

__getattr__ = lazy_exports(__name__, _EXPORTS)


def __dir__() -> list[str]:
    return __all__
