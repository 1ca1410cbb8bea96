"""The ``ls`` tool (reference §5.8): one directory, dotfiles included, case-insensitive order."""

from __future__ import annotations

import math
from typing import Any

from pi_host.lib.toolkit import (
    DEFAULT_MAX_BYTES,
    format_size,
    os_error_text,
    resolve_path,
    truncate_head,
    with_notices,
)
from pi_host.lib.toolkit.file_tool import FileTool
from pi_host.loop.tools import OnUpdate, ToolContext, ToolError, ToolResult
from pi_host.protocol.abort import AbortSignal

DEFAULT_LIMIT = 500


def shown_name(name: str) -> str:
    """``name`` as the model sees it. ``os.scandir`` keeps a byte that is not UTF-8 as a lone
    surrogate (``caf\\udce9.txt`` for Latin-1 ``café.txt``), which no UTF-8 encoder (JSON, the
    session file, the terminal) accepts; each bad sequence becomes U+FFFD, as Node's decoder (and
    so pi) shows it. The entry itself is still walked and matched by its real name."""
    if name.isascii():
        return name
    try:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeEncodeError:  # a surrogate no file system produced (an in-memory one)
        return "".join("\ufffd" if "\ud800" <= char <= "\udfff" else char for char in name)


class LsTool(FileTool):
    name = "ls"
    label = "ls"
    description = (
        "List a directory's entries, dotfiles included, sorted case-insensitively; directories "
        f"end with '/'. At most {DEFAULT_LIMIT} entries by default."
    )
    parameters = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Directory to list (default: the working directory)"},
            "limit": {"type": "number", "description": f"Most entries to return (default {DEFAULT_LIMIT})"},
        },
        "required": [],
    }
    prompt_snippet = "List directory contents"
    prompt_guidelines = []
    default_active = False
    capability = "read"

    async def execute(
        self,
        tool_call_id: str,
        args: dict[str, Any],
        signal: AbortSignal,
        on_update: OnUpdate | None,
        ctx: ToolContext,
    ) -> ToolResult:
        path_arg = str(args.get("path") or ".")
        limit = max(1, math.floor(args["limit"])) if args.get("limit") is not None else DEFAULT_LIMIT
        path = resolve_path(path_arg, ctx.cwd)
        try:
            info = await self.fs.stat(path)
        except FileNotFoundError:
            raise ToolError(f"Path not found: {path_arg}") from None
        except OSError as exc:
            raise ToolError(f"Cannot read directory {path_arg}: {os_error_text(exc)}") from None
        if info.kind != "dir":
            raise ToolError(f"Not a directory: {path_arg}")
        try:
            entries = await self.fs.list_dir(path)
        except OSError as exc:
            raise ToolError(f"Cannot read directory {path_arg}: {os_error_text(exc)}") from None
        if not entries:
            return ToolResult.text("(empty directory)")
        shown = sorted(((shown_name(entry.name), entry.kind) for entry in entries), key=_order)
        more = len(shown) > limit
        names = [name + ("/" if kind == "dir" else "") for name, kind in shown[:limit]]
        truncation = truncate_head("\n".join(names), max_lines=1 << 62, max_bytes=DEFAULT_MAX_BYTES)
        notices: list[str] = []
        details: dict[str, Any] = {}
        if more:
            details["entryLimitReached"] = limit
            notices.append(f"{limit} entries limit reached. Use limit={limit * 2} for more")
        if truncation.truncated:
            details["truncation"] = truncation.to_details()
            notices.append(f"{format_size(DEFAULT_MAX_BYTES)} output limit reached")
        return ToolResult.text(with_notices(truncation.content, notices), details=details or None)


def _order(item: tuple[str, str]) -> tuple[str, str]:
    return item[0].lower(), item[0]
