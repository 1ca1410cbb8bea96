"""The ``grep`` tool (reference §5.6): ripgrep's JSON output turned into compact lines.

ripgrep comes from the ``ripgrep`` wheel (``rg`` next to the Python executable); nothing is
downloaded. The search stops as soon as one match past the limit proves there are more.
"""

from __future__ import annotations

import base64
import math
import os
import posixpath
import signal as signals
from collections.abc import Callable
from typing import Any

from pi_host.lib.toolkit import (
    DEFAULT_MAX_BYTES,
    FileSystem,
    LocalSearcher,
    Searcher,
    agent_dir,
    format_size,
    not_regular_text,
    resolve_path,
    truncate_head,
    truncate_line,
    with_notices,
)
from pi_host.lib.toolkit.file_tool import FileTool
from pi_host.loop.tools import OnUpdate, ToolContext, ToolError, ToolResult
from pi_host.protocol.abort import AbortSignal

DEFAULT_LIMIT = 100


class GrepTool(FileTool):
    name = "grep"
    label = "Grep"
    description = (
        "Search file contents with a regular expression (ripgrep). Honours .gitignore, includes "
        "hidden files. Prints `path:line: text` for matches and `path-line- text` for context "
        f"lines; at most {DEFAULT_LIMIT} matches by default, long lines cut at 500 characters."
    )
    parameters = {
        "type": "object",
        "properties": {
            "pattern": {
                "type": "string",
                "description": "Regular expression (or plain text with literal=true)",
            },
            "path": {
                "type": "string",
                "description": "Directory or file to search (default: the working directory)",
            },
            "glob": {
                "type": "string",
                "description": "Only files matching this glob, e.g. '*.py' or 'src/**/*.ts'",
            },
            "ignoreCase": {"type": "boolean", "description": "Match case-insensitively"},
            "literal": {"type": "boolean", "description": "Treat the pattern as plain text"},
            "context": {"type": "number", "description": "Lines of context around each match (default 0)"},
            "limit": {"type": "number", "description": f"Most matches to return (default {DEFAULT_LIMIT})"},
        },
        "required": ["pattern"],
    }
    prompt_snippet = "Search file contents by regex, respecting .gitignore"
    prompt_guidelines = ["Use grep to locate code before reading whole files."]
    default_active = False
    capability = "read"

    def __init__(self, fs: FileSystem | None = None, searcher: Searcher | None = None) -> None:
        super().__init__(fs)
        self.searcher = searcher

    async def execute(
        self,
        tool_call_id: str,
        args: dict[str, Any],
        signal: AbortSignal,
        on_update: OnUpdate | None,
        ctx: ToolContext,
    ) -> ToolResult:
        pattern = str(args["pattern"])
        path_arg = str(args.get("path") or ".")
        limit = max(1, math.floor(args["limit"])) if args.get("limit") is not None else DEFAULT_LIMIT
        context = max(0, math.floor(args.get("context") or 0))
        path = resolve_path(path_arg, ctx.cwd)
        try:
            info = await self.fs.stat(path)
        except FileNotFoundError:
            raise ToolError(f"Path not found: {path_arg}") from None
        except OSError as exc:
            raise ToolError(f"Cannot search {path_arg}: {exc}") from None
        if info.kind == "other":
            # ripgrep would read a FIFO given by name until a writer closes it (forever).
            raise ToolError(f"Cannot search {path_arg}: {not_regular_text(info.special)}")
        is_dir = info.kind == "dir"
        argv = ["--no-config", "--json", "--line-number", "--color=never", "--hidden"]
        if args.get("ignoreCase"):
            argv.append("--ignore-case")
        if args.get("literal"):
            argv.append("--fixed-strings")
        glob = args.get("glob")
        if glob:
            glob = str(glob)
            argv += ["--glob", glob[2:] if glob.startswith("./") else glob]
        # Git's own directory is never interesting and can be huge.
        argv += ["--glob", "!.git"]
        if context:
            argv += ["--context", str(context)]
        run_dir = path if is_dir else os.path.dirname(path)
        if not await _inside_git_repo(self.fs, run_dir):
            argv.append("--no-require-git")  # .gitignore applies in plain directories too
        argv += ["--", pattern, "." if is_dir else path]

        from pi_tool_grep.events import parse_event  # (only when grep runs: start-up imports)

        collector = _Collector(limit, context, None if is_dir else os.path.basename(path), parse_event)
        searcher = self.searcher or LocalSearcher(agent_dir=agent_dir(ctx))
        try:
            outcome = await searcher.ripgrep(argv, cwd=run_dir, on_line=collector.feed, signal=signal)
        except FileNotFoundError as exc:
            raise ToolError(str(exc)) from None
        notices: list[str] = []
        if not outcome.stopped and outcome.exit_code is not None and outcome.exit_code < 0:
            # Killed (out of memory, a signal from outside): what it found so far is not the
            # answer, and "No matches found" would be a lie.
            raise ToolError(_killed_text(-outcome.exit_code, outcome.stderr))
        if not outcome.stopped and outcome.exit_code is not None and outcome.exit_code >= 2:
            if not collector.lines:
                raise ToolError(outcome.stderr or f"ripgrep failed with exit code {outcome.exit_code}")
            first = outcome.stderr.splitlines()[0] if outcome.stderr else "some files could not be searched"
            notices.append(f"ripgrep reported: {first}")
        if not collector.lines:
            return ToolResult.text("No matches found")
        truncation = truncate_head("\n".join(collector.lines), max_lines=1 << 62, max_bytes=DEFAULT_MAX_BYTES)
        details: dict[str, Any] = {}
        if collector.limit_reached:
            details["matchLimitReached"] = limit
            notices.insert(
                0,
                f"{limit} {'match' if limit == 1 else 'matches'} limit reached. Use limit={limit * 2} for more, or refine the pattern",
            )
        if truncation.truncated:
            details["truncation"] = truncation.to_details()
            notices.append(f"{format_size(DEFAULT_MAX_BYTES)} output limit reached")
        if collector.lines_truncated:
            details["linesTruncated"] = True
            notices.append("Some lines were cut to 500 characters; use read to see them whole")
        return ToolResult.text(with_notices(truncation.content, notices), details=details or None)


class _Collector:
    """Turns ripgrep JSON events into output lines and decides when to stop."""

    def __init__(
        self, limit: int, context: int, file_name: str | None, parse: Callable[[bytes], Any]
    ) -> None:
        self.parse = parse
        self.limit = limit
        self.context = context
        self.file_name = file_name
        self.lines: list[str] = []
        self.matches = 0
        self.limit_reached = False
        self.lines_truncated = False
        self._last_match: tuple[str, int] | None = None

    def _rel(self, data: dict[str, Any]) -> str:
        if self.file_name is not None:
            return self.file_name
        text = _text(data.get("path")) or ""
        text = text.replace(os.sep, "/")
        if text.startswith("./"):
            text = text[2:]
        return posixpath.normpath(text) if text else text

    def _line(self, data: dict[str, Any], separator: str) -> str:
        text = _text(data.get("lines")) or ""
        if text.endswith("\n"):
            text = text[:-1]
            if text.endswith("\r"):
                text = text[:-1]
        text, cut = truncate_line(text)
        self.lines_truncated |= cut
        number = data.get("line_number")
        return f"{self._rel(data)}{separator}{number}{separator} {text}"

    def feed(self, raw: bytes) -> bool:
        """Handle one JSON line; False stops the search."""
        event = self.parse(raw)
        if not isinstance(event, dict):
            return True
        kind = event.get("type")
        data = event.get("data") or {}
        if kind == "match":
            if self.matches >= self.limit:
                self.limit_reached = True
                return False
            self.matches += 1
            self.lines.append(self._line(data, ":"))
            self._last_match = (self._rel(data), int(data.get("line_number") or 0))
        elif kind == "context":
            if self.matches >= self.limit:
                # Only the trailing context of the last allowed match.
                rel, line = self._rel(data), int(data.get("line_number") or 0)
                if (
                    self._last_match is None
                    or rel != self._last_match[0]
                    or line > self._last_match[1] + self.context
                ):
                    return True
            self.lines.append(self._line(data, "-"))
        return True


def _killed_text(number: int, stderr: str) -> str:
    try:
        name = f" ({signals.Signals(number).name})"
    except ValueError:
        name = ""
    first = stderr.splitlines()[0] if stderr else ""
    return f"ripgrep was killed by signal {number}{name}" + (f": {first}" if first else "")


def _text(field: Any) -> str | None:
    if not isinstance(field, dict):
        return None
    if "text" in field:
        return str(field["text"])
    if "bytes" in field:
        return base64.b64decode(field["bytes"]).decode("utf-8", errors="replace")
    return None


async def _inside_git_repo(fs: FileSystem, directory: str) -> bool:
    current = directory
    while True:
        try:
            await fs.stat(os.path.join(current, ".git"))
            return True
        except OSError:
            pass
        parent = os.path.dirname(current)
        if parent == current:
            return False
        current = parent
