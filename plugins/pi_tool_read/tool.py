"""The ``read`` tool (reference §5.2): text with head truncation, images by magic bytes.

Large files are never loaded whole: one streaming pass counts lines and finds the byte offsets of
the requested range, then only the bytes that can be shown (at most 50KB + 1) are read.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from pi_host.lib.toolkit import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    FileSystem,
    detect_image_mime,
    format_size,
    head_from_sizes,
    not_regular_text,
    os_error_text,
    prepare_image,
    read_path_candidates,
    setting,
    with_notices,
)
from pi_host.lib.toolkit.file_tool import FileTool
from pi_host.loop.tools import OnUpdate, ToolContext, ToolError, ToolResult
from pi_host.protocol import ImageContent, TextContent
from pi_host.protocol.abort import AbortSignal

BINARY_SNIFF_BYTES = 8192


class ReadTool(FileTool):
    name = "read"
    label = "Read"
    description = (
        "Read a file. Text comes back as-is (no line numbers), at most "
        f"{DEFAULT_MAX_LINES} lines or {DEFAULT_MAX_BYTES // 1024}KB per call; use offset and limit "
        "to page through longer files. PNG, JPEG, GIF, WebP and BMP images are returned as images."
    )
    parameters = {
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "File to read, absolute or relative to the working directory",
            },
            "offset": {"type": "number", "description": "First line to return, counting from 1"},
            "limit": {"type": "number", "description": "How many lines to return at most"},
        },
        "required": ["path"],
    }
    prompt_snippet = "Read file contents (text or images), paging with offset/limit"
    prompt_guidelines = ["Read a file before editing it, so that edits quote its exact text."]
    constrained_sampling = {"type": "json_schema", "strict": "prefer"}
    default_active = True
    capability = "read"

    async def execute(
        self,
        tool_call_id: str,
        args: dict[str, Any],
        signal: AbortSignal,
        on_update: OnUpdate | None,
        ctx: ToolContext,
    ) -> ToolResult:
        signal.throw_if_aborted()
        path_arg = str(args["path"])
        path = await self._locate(path_arg, ctx.cwd)
        try:
            return await self._read(path, path_arg, args, signal, ctx)
        except OSError as exc:  # e.g. replaced by a FIFO since it was located
            raise ToolError(f"Cannot read {path_arg}: {os_error_text(exc)}") from None

    async def _read(
        self, path: str, path_arg: str, args: dict[str, Any], signal: AbortSignal, ctx: ToolContext
    ) -> ToolResult:
        head = await self.fs.read_bytes(path, 0, BINARY_SNIFF_BYTES)
        mime = detect_image_mime(head[:16])
        if mime is not None:
            return await self._read_image(path, mime, ctx)
        if b"\x00" in head:
            raise ToolError(
                f"{path_arg} looks like a binary file (it contains NUL bytes), so it was not read as "
                "text. Inspect it with bash instead, e.g. `file` or `xxd | head`."
            )
        offset = args.get("offset")
        limit = args.get("limit")
        return await read_text(self.fs, path, path_arg, offset, limit, signal)

    async def _locate(self, path_arg: str, cwd: str) -> str:
        candidates = read_path_candidates(path_arg, cwd)
        first_error: OSError | None = None
        for candidate in candidates:
            try:
                info = await self.fs.stat(candidate)
            except FileNotFoundError as exc:
                first_error = first_error or exc
                continue
            except OSError as exc:
                raise ToolError(f"Cannot read {path_arg}: {os_error_text(exc)}") from None
            if info.kind == "dir":
                raise ToolError(f"Cannot read {path_arg}: it is a directory (EISDIR); use ls to list it")
            if info.kind != "file":
                # Devices and pipes could block forever or never end.
                raise ToolError(f"Cannot read {path_arg}: {not_regular_text(info.special)}")
            return candidate
        reason = os_error_text(first_error) if first_error else "not found"
        # The resolved path, as pi reports it: it shows where the file was looked for.
        raise ToolError(f"Cannot read {candidates[0] if candidates else path_arg}: {reason}")

    async def _read_image(self, path: str, mime: str, ctx: ToolContext) -> ToolResult:
        data = await self.fs.read_bytes(path)
        auto_resize = setting(ctx.settings, "images.autoResize", True) is not False
        prepared = await asyncio.to_thread(prepare_image, data, mime, auto_resize=auto_resize)
        if prepared.data is None:
            note = f"The image was omitted: {prepared.note or 'it could not be prepared'}."
            text = f"Read image file [{mime}]\n{note}"
            return ToolResult(
                content=[TextContent(text=text)],
                structured_content={"type": "image", "data": "", "mimeType": mime, "note": note},
            )
        text = f"Read image file [{prepared.mime_type}]"
        note = None
        if prepared.scale is not None and prepared.original_size and prepared.final_size:
            (ow, oh), (fw, fh) = prepared.original_size, prepared.final_size
            note = (
                f"Image resized from {ow}x{oh} to {fw}x{fh}; multiply coordinates by "
                f"{prepared.scale:.2f} to map them to the original"
            )
            text += f"\n[{note}.]"
        elif prepared.mime_type != mime:
            note = f"Converted from {mime} to {prepared.mime_type}"
            text += f"\n[{note}.]"
        encoded = prepared.base64
        return ToolResult(
            content=[TextContent(text=text), ImageContent(data=encoded, mime_type=prepared.mime_type)],
            structured_content={
                "type": "image",
                "data": encoded,
                "mimeType": prepared.mime_type,
                "note": note,
            },
        )


@dataclass
class _Scan:
    """What one pass over a file found: its line count, size and where the asked-for lines
    start."""

    total_lines: int
    """Lines as split on newlines (a trailing newline gives a last empty line; an empty file has 1)."""
    size: int
    newline_at: dict[int, int]
    """Byte position of the k-th newline (1-based) for the ordinals asked for."""
    ends_with_newline: bool


async def _scan(fs: FileSystem, path: str, wanted: set[int], signal: AbortSignal) -> _Scan:
    """Count lines and locate the wanted newline ordinals in one pass over the file."""
    seen = 0
    position = 0
    found: dict[int, int] = {}
    pending = sorted(wanted)
    last = b""
    async for chunk in fs.iter_chunks(path):
        signal.throw_if_aborted()
        count = chunk.count(b"\n")
        while pending and pending[0] <= seen + count:
            target = pending.pop(0)
            if target <= seen:
                continue
            k = target - seen
            # Position of the k-th newline in this chunk, without a Python loop over lines.
            parts = chunk.split(b"\n", k)
            found[target] = position + sum(len(part) for part in parts[:k]) + k - 1
        seen += count
        position += len(chunk)
        last = chunk[-1:]
    return _Scan(total_lines=seen + 1, size=position, newline_at=found, ends_with_newline=last == b"\n")


async def read_text(
    fs: FileSystem,
    path: str,
    path_arg: str,
    offset: Any,
    limit: Any,
    signal: AbortSignal,
    max_lines: int = DEFAULT_MAX_LINES,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> ToolResult:
    start = max(0, int(offset) - 1) if offset is not None else 0
    count = max(1, int(limit)) if limit is not None else None
    # Newline ordinals we need: k-th newline ends line k-1 (0-based).
    wanted = {start, start + 1}
    if count is not None:
        wanted |= {start + count - 1, start + count}
    wanted.discard(0)
    scan = await _scan(fs, path, wanted, signal)
    # As in pi, lines are the file split on newlines: a trailing newline ends in an empty last
    # line, which counts in the totals and offsets (a 3-line file ending in "\n" has 4).
    total = scan.total_lines
    if start >= total:
        raise ToolError(f"Offset {int(offset)} is beyond the end of {path_arg}, which has {total} lines")

    def line_start(index: int) -> int:
        return 0 if index == 0 else scan.newline_at[index] + 1

    def line_end(index: int) -> int:
        return scan.newline_at.get(index + 1, scan.size) if index + 1 < scan.total_lines else scan.size

    end = min(start + count, scan.total_lines) if count is not None else scan.total_lines
    begin_byte = line_start(start)
    end_byte = line_end(end - 1)
    selected_bytes = end_byte - begin_byte
    selected_count = end - start
    if end == scan.total_lines:
        last_line_empty = scan.ends_with_newline
    else:
        last_line_empty = line_end(end - 1) == line_start(end - 1)
    if selected_count > 1 and last_line_empty:
        selected_count -= 1  # a trailing newline does not start a line of its own

    first_size = line_end(start) - begin_byte
    notices: list[str] = []
    details: dict[str, Any] | None = None
    if first_size > max_bytes:
        truncation = head_from_sizes([], [first_size], selected_count, selected_bytes, max_lines, max_bytes)
        details = {"truncation": truncation.to_details()}
        notices.append(
            f"Line {start + 1} is {format_size(first_size)}, over the {format_size(max_bytes)} read limit. "
            f"Show part of it with bash: sed -n '{start + 1}p' {path_arg} | head -c {max_bytes}"
        )
        text = with_notices("", notices).lstrip("\n")
        return ToolResult(content=[TextContent(text=text)], details=details, structured_content=text)

    window_size = min(selected_bytes, max_bytes + 1)
    window = await fs.read_bytes(path, begin_byte, window_size) if window_size else b""
    pieces = window.split(b"\n")
    ends_empty = False
    if window_size < selected_bytes:
        pieces.pop()  # cut by the window: cannot fit anyway
    elif len(pieces) > 1 and pieces[-1] == b"":
        pieces.pop()
        ends_empty = True  # the selection ends with a newline, which the text keeps
    pieces = pieces[: max_lines + 1]
    lines = [piece.decode("utf-8", errors="replace") for piece in pieces]
    sizes = [len(piece) for piece in pieces]
    truncation = head_from_sizes(lines, sizes, selected_count, selected_bytes, max_lines, max_bytes)
    text = truncation.content + ("\n" if ends_empty and not truncation.truncated else "")
    last_shown = start + truncation.output_lines
    if truncation.truncated:
        details = {"truncation": truncation.to_details()}
        limit_note = f" ({format_size(max_bytes)} limit)" if truncation.truncated_by == "bytes" else ""
        notices.append(
            f"Showing lines {start + 1}-{last_shown} of {total}{limit_note}. "
            f"Use offset={last_shown + 1} to continue"
        )
    elif count is not None and start + count < total:
        remaining = total - (start + count)
        notices.append(f"{remaining} more lines in the file. Use offset={start + count + 1} to continue")
    text = with_notices(text, notices)
    return ToolResult(content=[TextContent(text=text)], details=details, structured_content=text)
