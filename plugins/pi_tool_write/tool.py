"""The ``write`` tool (reference §5.3): UTF-8, parents created, serialised per file."""

from __future__ import annotations

import os
from typing import Any

from pi_host.lib.toolkit import file_mutation_lock, os_error_text, resolve_path
from pi_host.lib.toolkit.file_tool import FileTool
from pi_host.loop.tools import OnUpdate, ToolContext, ToolError, ToolResult
from pi_host.protocol.abort import AbortSignal


class WriteTool(FileTool):
    name = "write"
    label = "Write"
    description = (
        "Write a file with the given content, creating missing parent directories. An existing "
        "file is replaced entirely; prefer edit for changing part of a file."
    )
    parameters = {
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "File to write, absolute or relative to the working directory",
            },
            "content": {"type": "string", "description": "The complete new content of the file"},
        },
        "required": ["path", "content"],
    }
    prompt_snippet = "Create new files or replace a file's whole content"
    prompt_guidelines = ["Use write only for new files or complete rewrites; use edit for changes."]
    constrained_sampling = {"type": "json_schema", "strict": "prefer"}
    default_active = True
    capability = "write"

    async def execute(
        self,
        tool_call_id: str,
        args: dict[str, Any],
        signal: AbortSignal,
        on_update: OnUpdate | None,
        ctx: ToolContext,
    ) -> ToolResult:
        path_arg = str(args["path"])
        content = str(args["content"])
        path = resolve_path(path_arg, ctx.cwd)
        # Take the lock before any await so parallel calls on one file keep request order.
        async with file_mutation_lock(self.fs.lock_key(path)):
            signal.throw_if_aborted()
            await self.refuse_special(path, f"Cannot write {path_arg}")
            try:
                await self.fs.make_dirs(os.path.dirname(path))
                await self.fs.write_bytes(path, content.encode("utf-8"))
            except OSError as exc:
                raise ToolError(f"Cannot write {path_arg}: {os_error_text(exc)}") from None
        return ToolResult.text(f"Wrote {path_arg}")
