"""The ``find`` tool (reference §5.7): glob search over a tree, honouring ignore files.

pi runs fd; pi-host walks the tree itself (no binary to download) with fd's rules: hidden files
included, ``.gitignore``/``.ignore``/``.fdignore`` applied hierarchically through pathspec (also
outside git repositories), nested repositories start fresh, symlinked directories are listed but
not entered, ``.git`` is skipped. Directories are walked breadth-first in name order, so results
are stable and shallow paths come first.
"""

from __future__ import annotations

import math
import os
from collections import deque
from typing import Any

from pi_host.lib.toolkit import (
    DEFAULT_MAX_BYTES,
    IGNORE_FILES,
    IgnoreStack,
    compile_glob,
    format_size,
    resolve_path,
    truncate_head,
    with_notices,
)
from pi_host.lib.toolkit.file_tool import FileTool
from pi_host.loop.tools import OnUpdate, ToolContext, ToolError, ToolResult
from pi_host.protocol.abort import AbortSignal

DEFAULT_LIMIT = 1000


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


class FindTool(FileTool):
    name = "find"
    label = "Find"
    description = (
        "Find files and directories by glob pattern. A pattern without '/' matches names at any "
        "depth ('*.py'); a pattern with '/' is matched from the search directory ('src/*.ts'; use "
        "'**/src/*.ts' for any depth). Honours .gitignore, includes hidden files; directories end "
        f"with '/'. At most {DEFAULT_LIMIT} results by default."
    )
    parameters = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Glob pattern, e.g. '*.py', 'src/**/*.ts'"},
            "path": {"type": "string", "description": "Directory to search (default: the working directory)"},
            "limit": {"type": "number", "description": f"Most results to return (default {DEFAULT_LIMIT})"},
        },
        "required": ["pattern"],
    }
    prompt_snippet = "Find files by glob pattern, respecting .gitignore"
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
        pattern = str(args["pattern"])
        while pattern.startswith("./"):
            pattern = pattern[2:]
        path_arg = str(args.get("path") or ".")
        limit = max(1, math.floor(args["limit"])) if args.get("limit") is not None else DEFAULT_LIMIT
        root = resolve_path(path_arg, ctx.cwd)
        try:
            info = await self.fs.stat(root)
        except FileNotFoundError:
            raise ToolError(f"Path not found: {path_arg}") from None
        except OSError as exc:
            raise ToolError(f"Cannot search {path_arg}: {exc}") from None
        if info.kind != "dir":
            raise ToolError(f"Not a directory: {path_arg}")
        # Smart case, as fd: an all-lowercase pattern matches either case.
        matcher = compile_glob(pattern, ignore_case=pattern == pattern.lower())
        full_path = "/" in pattern
        results = await self._walk(root, matcher, full_path, limit, signal)
        if not results:
            return ToolResult.text("No files found matching the pattern")
        more = len(results) > limit
        results = results[:limit]
        truncation = truncate_head("\n".join(results), max_lines=1 << 62, max_bytes=DEFAULT_MAX_BYTES)
        notices: list[str] = []
        details: dict[str, Any] = {}
        if more:
            details["resultLimitReached"] = limit
            notices.append(
                f"{limit} results limit reached. Use limit={limit * 2} for more, or refine the pattern"
            )
        if truncation.truncated:
            details["truncation"] = truncation.to_details()
            notices.append(f"{format_size(DEFAULT_MAX_BYTES)} output limit reached")
        return ToolResult.text(with_notices(truncation.content, notices), details=details or None)

    async def _walk(
        self, root: str, matcher: Any, full_path: bool, limit: int, signal: AbortSignal
    ) -> list[str]:
        root = root.replace(os.sep, "/").rstrip("/") or "/"
        results: list[str] = []
        queue: deque[tuple[str, str, IgnoreStack]] = deque([(root, "", await self._initial_rules(root))])
        first = True
        while queue:
            signal.throw_if_aborted()
            directory, rel_dir, rules = queue.popleft()
            try:
                entries = await self.fs.list_dir(directory)
            except OSError:
                if first:
                    raise
                continue
            names = {entry.name for entry in entries}
            if not first:
                rules = await self._rules_for(directory, names, rules)
            first = False
            for entry in sorted(entries, key=lambda e: e.name):
                if entry.name == ".git":
                    continue
                full = f"{directory.rstrip('/')}/{entry.name}"
                is_dir = entry.kind == "dir" and not entry.is_symlink
                if rules and rules.is_ignored(full, entry.kind == "dir"):
                    continue
                rel = f"{rel_dir}{entry.name}"
                if matcher.match(rel if full_path else entry.name):
                    shown = shown_name(rel)
                    results.append(shown + "/" if entry.kind == "dir" else shown)
                    if len(results) > limit:
                        return results
                if is_dir:
                    queue.append((full, rel + "/", rules))
        return results

    async def _rules_for(self, directory: str, names: set[str], parent: IgnoreStack) -> IgnoreStack:
        texts = [await self._read_text(f"{directory}/{name}") for name in IGNORE_FILES if name in names]
        new_repo = ".git" in names
        if new_repo:
            texts.insert(0, await self._read_text(f"{directory}/.git/info/exclude"))
        return parent.child(directory, texts, new_repo=new_repo)

    async def _initial_rules(self, root: str) -> IgnoreStack:
        """Rules from the repository root down to ``root`` (only ``root`` outside a repository)."""
        chain = [root]
        current = root
        repo_found = await self._exists(f"{current}/.git")
        while not repo_found:
            parent = os.path.dirname(current)
            if parent == current:
                chain = [root]  # not inside a repository: parents' ignore files do not apply
                break
            current = parent
            chain.insert(0, current)
            repo_found = await self._exists(f"{current}/.git")
        rules = IgnoreStack()
        for directory in chain:
            try:
                names = {entry.name for entry in await self.fs.list_dir(directory)}
            except OSError:
                continue
            rules = await self._rules_for(directory, names, rules)
        return rules

    async def _exists(self, path: str) -> bool:
        try:
            await self.fs.stat(path)
        except OSError:
            return False
        return True

    async def _read_text(self, path: str) -> str:
        try:
            return (await self.fs.read_bytes(path)).decode("utf-8", errors="replace")
        except OSError:
            return ""
