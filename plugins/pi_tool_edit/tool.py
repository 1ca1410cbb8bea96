"""The ``edit`` tool (reference §5.4): argument folding, locking, BOM handling, diffs."""

from __future__ import annotations

import json
from typing import Any

from pi_host.lib.toolkit import file_mutation_lock, os_error_text, resolve_path
from pi_host.lib.toolkit.file_tool import FileTool
from pi_host.loop.tools import OnUpdate, ToolContext, ToolError, ToolResult
from pi_host.protocol.abort import AbortSignal
from pi_tool_edit.matching import Edit, EditError, apply_edits, normalize_newlines

BOM = "\ufeff"


class EditTool(FileTool):
    name = "edit"
    label = "Edit"
    description = (
        "Replace exact text in a file. Each edit's oldText must match exactly one place in the "
        "current file (whitespace and line breaks included); all edits are located in the file as "
        "it is before this call, must not overlap, and are written together."
    )
    parameters = {
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "File to edit, absolute or relative to the working directory",
            },
            "edits": {
                "type": "array",
                "description": "Replacements, each located in the original file",
                "items": {
                    "type": "object",
                    "properties": {
                        "oldText": {
                            "type": "string",
                            "description": "Exact text to find; must be unique in the file",
                        },
                        "newText": {"type": "string", "description": "Text to put in its place"},
                    },
                    "required": ["oldText", "newText"],
                },
            },
        },
        "required": ["path", "edits"],
    }
    prompt_snippet = "Make precise edits by replacing exact text (several non-overlapping edits per call)"
    prompt_guidelines = [
        "Copy oldText from the file as it is now; include enough context to make each match unique.",
        "Combine several changes to one file into one edit call with multiple edits.",
    ]
    constrained_sampling = {"type": "json_schema", "strict": "prefer"}
    default_active = True
    capability = "write"

    def prepare_arguments(self, args: dict[str, Any]) -> dict[str, Any]:
        """Accept ``edits`` as a JSON string or a single object, and the legacy top-level
        ``oldText``/``newText`` pair (appended to ``edits``)."""
        if not isinstance(args, dict):
            return args
        args = dict(args)
        edits = args.get("edits")
        if isinstance(edits, str):
            try:
                edits = json.loads(edits)
            except ValueError:
                pass  # left for validation to report
        if isinstance(edits, dict):
            edits = [edits]
        if "oldText" in args or "newText" in args:
            legacy = {"oldText": args.pop("oldText", None), "newText": args.pop("newText", None)}
            legacy = {key: value for key, value in legacy.items() if value is not None}
            edits = [*(edits if isinstance(edits, list) else []), legacy]
        if edits is not None:
            args["edits"] = edits
        return args

    async def execute(
        self,
        tool_call_id: str,
        args: dict[str, Any],
        signal: AbortSignal,
        on_update: OnUpdate | None,
        ctx: ToolContext,
    ) -> ToolResult:
        path_arg = str(args["path"])
        edits = [Edit(str(item["oldText"]), str(item["newText"])) for item in args.get("edits") or []]
        if not edits:
            raise ToolError(
                f"No edits given for {path_arg}: pass at least one {{oldText, newText}} in edits."
            )
        path = resolve_path(path_arg, ctx.cwd)
        async with file_mutation_lock(self.fs.lock_key(path)):
            signal.throw_if_aborted()
            await self.refuse_special(path, f"Cannot edit {path_arg}")
            try:
                await self.fs.check_access(path, write=True)
                raw = await self.fs.read_bytes(path)
            except OSError as exc:
                raise ToolError(f"Cannot edit {path_arg}: {os_error_text(exc)}") from None
            # surrogateescape keeps bytes that are not UTF-8 exactly as they were.
            text = raw.decode("utf-8", errors="surrogateescape")
            bom = text.startswith(BOM)
            if bom:
                text = text[1:]
            try:
                new_text = apply_edits(text, edits, path_arg)
            except EditError as exc:
                raise ToolError(str(exc)) from None
            signal.throw_if_aborted()
            data = ((BOM if bom else "") + new_text).encode("utf-8", errors="surrogateescape")
            try:
                await self.fs.write_bytes(path, data)
            except OSError as exc:
                raise ToolError(f"Cannot write {path_arg}: {os_error_text(exc)}") from None
        from pi_tool_edit.diff import (
            display_diff,
            first_changed_line,
            line_units,
            unified_patch,
        )  # difflib: on use

        old_text, new_text = normalize_newlines(text), normalize_newlines(new_text)
        old_lines, new_lines = line_units(old_text), line_units(new_text)
        # The number column is as wide as the longer text's split("\n") count, as in pi.
        width = len(str(max(old_text.count("\n"), new_text.count("\n")) + 1))
        details = {
            "diff": display_diff(old_lines, new_lines, width=width),
            "patch": unified_patch(old_lines, new_lines, path_arg),
            "firstChangedLine": first_changed_line(old_lines, new_lines),
        }
        count = len(edits)
        blocks = "1 block" if count == 1 else f"{count} blocks"
        return ToolResult.text(f"Replaced {blocks} of text in {path_arg}.", details=details)
