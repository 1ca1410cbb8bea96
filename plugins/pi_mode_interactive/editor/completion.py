"""Editor completion: slash commands, ``@`` file mentions and path completion.

:class:`PiCompleter` is a prompt_toolkit ``Completer`` with three contexts, checked in order:

1. **Slash commands** — the first line, before the cursor, is ``/`` plus a name without spaces or
   a second ``/``. ``commands_provider()`` returns ``[(name, description), ...]`` (names without
   the slash: ``model``, ``skill:review``...). Prefix matches come first in provider order, then
   fuzzy matches, best first. Inserts ``/name `` (with the trailing space, as pi does); the
   description is the ``display_meta``. After ``/name `` the command's argument completions:
   ``arguments_provider(name)`` gives a plugin command's ``complete(prefix)`` (or None), called
   with the text typed after the space; it returns strings or ``{value, label?, description?}``
   dicts (an async one is awaited on the asynchronous path prompt_toolkit uses).
2. **File mentions** — the token before the cursor starts with ``@`` (anywhere in the text,
   after whitespace or an opening bracket/backtick), or is an unclosed ``@"...``. Candidates
   come from a :class:`FileIndex` of ``cwd``, built once (never per keystroke) and ranked
   exact-basename / basename prefix > basename substring > path substring > fuzzy
   subsequence. Inserts ``@path `` for files and ``@dir/`` for directories (no space, so the
   mention can be continued). Paths with whitespace are quoted as pi does: ``@"my file.txt" ``
   and, for directories, ``@"my dir/`` with the quote left open so typing continues the path.
3. **Paths** — a token that looks like a path (contains ``/``, or starts with ``.`` or ``~``)
   or, when completion was explicitly requested (Tab), any token: entries of that directory on
   disk whose name starts with the typed basename (case-insensitive), directories first. Hidden
   entries only when the typed basename starts with ``.``.

Wrap it in ``prompt_toolkit.completion.ThreadedCompleter`` if the first ``@`` could hit a
cold, very large tree; with :meth:`PiCompleter.start` called at startup the index is usually
warm before the first keystroke.
"""

from __future__ import annotations

import heapq
import inspect
import os
import re
import threading
import time
from collections import deque
from collections.abc import AsyncGenerator, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from .fuzzy import fuzzy_filter, fuzzy_score

if TYPE_CHECKING:
    import pathspec

DEFAULT_MAX_FILES = 20_000
DEFAULT_MAX_RESULTS = 50

CommandsProvider = Callable[[], Iterable[tuple[str, str]]]

# Characters that end a path token (pi: space, tab, quotes, "=").
_DELIMITERS = frozenset(" \t\"'=")
# Opening wrappers that may precede a path in prose: "(@src", "`@README".
_WRAPPERS = {"(": ")", "[": "]", "{": "}", "<": ">", "`": "`"}


@dataclass(frozen=True, slots=True)
class FileEntry:
    """A file or directory under the index root; ``path`` uses ``/`` and has no trailing slash."""

    path: str
    is_dir: bool
    depth: int
    lower: str = field(repr=False)
    base_lower: str = field(repr=False)

    @property
    def display(self) -> str:
        return self.path + "/" if self.is_dir else self.path


def _read_ignore(path: str) -> pathspec.PathSpec | None:
    import pathspec  # here, not at import: the interactive mode's start-up does not wait for it

    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return None
    if not any(line.strip() and not line.lstrip().startswith("#") for line in lines):
        return None
    return pathspec.GitIgnoreSpec.from_lines(lines)


_Specs = "tuple[tuple[str, pathspec.PathSpec], ...]"


def _is_ignored(rel: str, is_dir: bool, specs: _Specs) -> bool:
    ignored = False
    for base, spec in specs:
        sub = rel[len(base) + 1 :] if base else rel
        result = spec.check_file(sub + "/" if is_dir else sub)
        if result.include is not None:
            ignored = bool(result.include)
    return ignored


class FileIndex:
    """A cached list of the files and directories under ``root``.

    The tree is walked breadth-first (shallow entries first, names sorted within a directory),
    following symlinks without looping, skipping ``.git`` and everything matched by
    ``.gitignore`` files (nested ones apply to their own subtree) and ``.git/info/exclude``.
    Hidden files are included, as in pi. At most ``max_files`` entries are kept.

    The walk happens once: on :meth:`start` (in a background thread) or on the first
    :meth:`entries` call. It is repeated only by :meth:`refresh`, or, when ``max_age`` seconds
    are set, in a background thread once the list is older than that (the stale list keeps being
    served until the new one is ready). ``walk_count`` counts walks.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        max_files: int = DEFAULT_MAX_FILES,
        max_age: float | None = None,
    ) -> None:
        self.root = os.path.abspath(os.fspath(root))
        self.max_files = max(1, int(max_files))
        self.max_age = max_age
        self.walk_count = 0
        self.truncated = False
        self._entries: list[FileEntry] | None = None
        self._built_at = 0.0
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    # -- building --------------------------------------------------------------------------------

    def _walk(self) -> list[FileEntry]:
        self.walk_count += 1
        entries: list[FileEntry] = []
        root_specs: list[tuple[str, pathspec.PathSpec]] = []
        exclude = _read_ignore(os.path.join(self.root, ".git", "info", "exclude"))
        if exclude is not None:
            root_specs.append(("", exclude))
        queue: deque[tuple[str, int, _Specs]] = deque([("", 0, tuple(root_specs))])
        visited: set[tuple[int, int]] = set()
        truncated = False
        while queue:
            rel_dir, depth, specs = queue.popleft()
            abs_dir = os.path.join(self.root, rel_dir) if rel_dir else self.root
            try:
                stat = os.stat(abs_dir)
                with os.scandir(abs_dir) as iterator:
                    items = sorted(iterator, key=lambda item: item.name)
            except OSError:
                continue
            identity = (stat.st_dev, stat.st_ino)
            if identity in visited:
                continue
            visited.add(identity)
            local = _read_ignore(os.path.join(abs_dir, ".gitignore"))
            if local is not None:
                specs = (*specs, (rel_dir, local))
            for item in items:
                name = item.name
                if name == ".git":
                    continue
                try:
                    is_dir = item.is_dir()
                except OSError:
                    continue
                rel = f"{rel_dir}/{name}" if rel_dir else name
                if specs and _is_ignored(rel, is_dir, specs):
                    continue
                if len(entries) >= self.max_files:
                    truncated = True
                    break
                entries.append(FileEntry(rel, is_dir, depth, rel.lower(), name.lower()))
                if is_dir:
                    queue.append((rel, depth + 1, specs))
            if truncated:
                break
        self.truncated = truncated
        return entries

    def _build(self) -> None:
        try:
            entries = self._walk()
        except Exception:  # never let a walk failure kill completion
            entries = self._entries or []
        with self._lock:
            self._entries = entries
            self._built_at = time.monotonic()
            self._thread = None

    def refresh(self, *, wait: bool = False) -> None:
        """Rebuild in a background thread (one at a time); ``wait=True`` blocks until done."""
        with self._lock:
            thread = self._thread
            if thread is None:
                thread = threading.Thread(target=self._build, name="pi-file-index", daemon=True)
                self._thread = thread
                thread.start()
        if wait:
            thread.join()

    def start(self) -> None:
        """Build in the background if nothing was built yet (call once at app start)."""
        if self._entries is None:
            self.refresh()

    def entries(self) -> list[FileEntry]:
        """The cached list; built (blocking) on first use."""
        if self._entries is None:
            with self._lock:
                running = self._thread
            if running is not None:  # the start-up walk: wait for it rather than walk again
                running.join()
            if self._entries is None:
                self.refresh(wait=True)
        elif self.max_age is not None and time.monotonic() - self._built_at > self.max_age:
            self.refresh()
        return self._entries or []

    # -- searching -------------------------------------------------------------------------------

    def search(self, query: str, limit: int = DEFAULT_MAX_RESULTS) -> list[FileEntry]:
        """Entries matching ``query``, best first (see the module docstring for the ranking)."""
        entries = self.entries()
        query = query.replace("\\", "/")
        if not query:
            return entries[:limit]
        q = query.lower()
        subsequence = re.compile(".*?".join(re.escape(char) for char in q))
        by_path = "/" in q
        prefix: list[FileEntry] = []
        substring: list[FileEntry] = []
        in_path: list[FileEntry] = []
        fuzzy: list[FileEntry] = []
        for entry in entries:
            if by_path:
                if entry.lower.startswith(q):
                    prefix.append(entry)
                elif q in entry.lower:
                    substring.append(entry)
                elif subsequence.search(entry.lower):
                    fuzzy.append(entry)
            else:
                base = entry.base_lower
                if base.startswith(q):
                    prefix.append(entry)
                elif q in base:
                    substring.append(entry)
                elif q in entry.lower:
                    in_path.append(entry)
                elif subsequence.search(entry.lower):
                    fuzzy.append(entry)
        results: list[FileEntry] = []

        def take(group: list[FileEntry], key: Callable[[FileEntry], object]) -> bool:
            needed = limit - len(results)
            if needed <= 0:
                return False
            results.extend(heapq.nsmallest(needed, group, key=key))
            return len(results) < limit

        if by_path:
            tie = lambda e: (len(e.lower), not e.is_dir, e.lower)  # noqa: E731
        else:
            tie = lambda e: (e.base_lower != q, len(e.base_lower), e.depth, not e.is_dir, e.lower)  # noqa: E731
        if (
            take(prefix, tie)
            and take(substring, tie)
            and take(in_path, lambda e: (e.depth, len(e.lower), e.lower))
            and fuzzy
        ):
            take(fuzzy, lambda e: (-(fuzzy_score(q, e.lower) or 0.0), len(e.lower), e.lower))
        return results


# -- token extraction ----------------------------------------------------------------------------


def _is_token_start(text: str, index: int) -> bool:
    start = index
    while start > 0 and text[start - 1] in _WRAPPERS:
        start -= 1
    return start == 0 or text[start - 1] in _DELIMITERS or text[start - 1].isspace()


def _unclosed_quote(text: str) -> int | None:
    index = None
    inside = False
    for position, char in enumerate(text):
        if char == '"':
            inside = not inside
            if inside:
                index = position
    return index if inside else None


def _last_token(text: str) -> str:
    start = 0
    for position, char in enumerate(text):
        if char in _DELIMITERS or char.isspace():
            start = position + 1
    token = text[start:]
    while token and token[0] in _WRAPPERS and _WRAPPERS[token[0]] not in token[1:]:
        token = token[1:]
    return token


@dataclass(frozen=True, slots=True)
class PathToken:
    """A path being typed: ``token`` is replaced; ``raw`` is the path without ``@``/quote."""

    token: str
    raw: str
    at: bool
    quoted: bool


def extract_mention(text_before_cursor: str) -> PathToken | None:
    """The ``@`` mention ending at the cursor, if any."""
    quote = _unclosed_quote(text_before_cursor)
    if quote is not None and quote > 0 and text_before_cursor[quote - 1] == "@":
        if _is_token_start(text_before_cursor, quote - 1):
            token = text_before_cursor[quote - 1 :]
            return PathToken(token, token[2:], at=True, quoted=True)
    token = _last_token(text_before_cursor)
    if token.startswith("@"):
        return PathToken(token, token[1:], at=True, quoted=False)
    return None


def extract_path(text_before_cursor: str, *, forced: bool = False) -> PathToken | None:
    """The path-like token ending at the cursor (any token when ``forced``, i.e. Tab)."""
    quote = _unclosed_quote(text_before_cursor)
    if quote is not None and _is_token_start(text_before_cursor, quote):
        token = text_before_cursor[quote:]
        return PathToken(token, token[1:], at=False, quoted=True)
    token = _last_token(text_before_cursor)
    if token.startswith("@"):
        return None
    if forced or "/" in token or token.startswith(".") or token.startswith("~"):
        return PathToken(token, token, at=False, quoted=False)
    return None


def _format(path: str, is_dir: bool, *, at: bool, quoted: bool) -> str:
    prefix = "@" if at else ""
    if quoted or any(char.isspace() for char in path):
        # Leave a directory's quote open so the user can keep typing inside it.
        return f'{prefix}"{path}' if is_dir else f'{prefix}"{path}"'
    return prefix + path


# -- the completer -------------------------------------------------------------------------------


class PiCompleter(Completer):
    """Slash-command, ``@`` mention and path completion for the main editor."""

    def __init__(
        self,
        commands_provider: CommandsProvider,
        cwd: str | os.PathLike[str],
        *,
        file_index: FileIndex | None = None,
        max_results: int = DEFAULT_MAX_RESULTS,
        max_files: int = DEFAULT_MAX_FILES,
        refresh_interval: float | None = None,
        arguments_provider: Callable[[str], Any] | None = None,
    ) -> None:
        self.commands_provider = commands_provider
        self.arguments_provider = arguments_provider
        self.cwd = os.path.abspath(os.fspath(cwd))
        self.max_results = max_results
        self.file_index = file_index or FileIndex(self.cwd, max_files=max_files, max_age=refresh_interval)

    def start(self) -> None:
        """Warm the file index in the background."""
        self.file_index.start()

    def refresh(self, *, wait: bool = False) -> None:
        """Re-walk the tree (e.g. after the agent wrote files, or on ``/reload``)."""
        self.file_index.refresh(wait=wait)

    def _argument_request(self, document: Document) -> tuple[Any, str] | None:
        """``(complete, prefix)`` when the cursor is in a plugin command's argument."""
        if self.arguments_provider is None or document.cursor_position_row != 0:
            return None
        stripped = document.current_line_before_cursor.lstrip()
        name, space, prefix = stripped[1:].partition(" ")
        if not stripped.startswith("/") or not space or not name:
            return None
        try:
            complete = self.arguments_provider(name)
        except Exception:
            return None
        return (complete, prefix) if callable(complete) else None

    @staticmethod
    def _argument_items(items: Any, prefix: str) -> Iterator[Completion]:
        for item in items or ():
            if isinstance(item, dict):
                value = str(item.get("value", ""))
                label, meta = str(item.get("label") or value), str(item.get("description") or "")
            else:
                value = label = str(item)
                meta = ""
            if value:
                yield Completion(value, start_position=-len(prefix), display=label, display_meta=meta)

    async def get_completions_async(
        self, document: Document, complete_event: CompleteEvent
    ) -> AsyncGenerator[Completion, None]:
        request = self._argument_request(document)
        if request is None:
            for completion in self.get_completions(document, complete_event):
                yield completion
            return
        complete, prefix = request
        try:
            items = complete(prefix)
            if inspect.isawaitable(items):
                items = await items
            found = list(self._argument_items(items, prefix))
        except Exception:  # a broken completer must not break the editor
            return
        for completion in found:
            yield completion

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterator[Completion]:
        request = self._argument_request(document)
        if request is not None:
            complete, prefix = request
            try:
                items = complete(prefix)
                if inspect.isawaitable(items):  # only the asynchronous path can wait for it
                    getattr(items, "close", lambda: None)()
                    return
                found = list(self._argument_items(items, prefix))
            except Exception:
                return
            yield from found
            return
        before = document.current_line_before_cursor
        if document.cursor_position_row == 0:
            stripped = before.lstrip()
            if (
                stripped.startswith("/")
                and "/" not in stripped[1:]
                and not any(c.isspace() for c in stripped)
            ):
                yield from self._command_completions(stripped)
                return
        mention = extract_mention(before)
        if mention is not None:
            yield from self._mention_completions(mention)
            return
        path = extract_path(before, forced=complete_event.completion_requested)
        if path is not None:
            yield from self._path_completions(path)

    # -- slash commands --------------------------------------------------------------------------

    def _commands(self) -> list[tuple[str, str]]:
        try:
            raw = list(self.commands_provider())
        except Exception:
            return []
        seen: set[str] = set()
        commands: list[tuple[str, str]] = []
        for item in raw:
            try:
                name, description = item
            except (TypeError, ValueError):
                continue
            name = str(name).lstrip("/")
            if name and name not in seen:
                seen.add(name)
                commands.append((name, str(description or "")))
        return commands

    def match_commands(self, query: str) -> list[tuple[str, str]]:
        """Commands for ``/query``: prefix matches in provider order, then fuzzy matches."""
        commands = self._commands()
        lower = query.lower()
        prefixed = [command for command in commands if command[0].lower().startswith(lower)]
        names = {name for name, _ in prefixed}
        others = [command for command in commands if command[0] not in names]
        return (prefixed + fuzzy_filter(query, others, key=lambda command: command[0]))[: self.max_results]

    def _command_completions(self, token: str) -> Iterator[Completion]:
        for name, description in self.match_commands(token[1:]):
            yield Completion(
                f"/{name} ",
                start_position=-len(token),
                display=f"/{name}",
                display_meta=description,
            )

    # -- @ mentions ------------------------------------------------------------------------------

    def _mention_completions(self, mention: PathToken) -> Iterator[Completion]:
        for entry in self.file_index.search(mention.raw, self.max_results):
            text = _format(entry.display, entry.is_dir, at=True, quoted=mention.quoted)
            if not entry.is_dir:
                text += " "
            yield Completion(text, start_position=-len(mention.token), display=entry.display)

    # -- filesystem paths ------------------------------------------------------------------------

    def _path_completions(self, path: PathToken) -> Iterator[Completion]:
        raw = path.raw.replace("\\", "/")
        if raw == "~":
            raw = "~/"
        slash = raw.rfind("/")
        display_dir, base = (raw[: slash + 1], raw[slash + 1 :]) if slash >= 0 else ("", raw)
        directory = os.path.expanduser(display_dir) if display_dir else "."
        if not os.path.isabs(directory):
            directory = os.path.join(self.cwd, directory)
        try:
            with os.scandir(directory) as iterator:
                items = list(iterator)
        except OSError:
            return
        lower = base.lower()
        matches: list[tuple[bool, str]] = []
        for item in items:
            name = item.name
            if not name.lower().startswith(lower):
                continue
            if name.startswith(".") and not base.startswith("."):
                continue
            try:
                is_dir = item.is_dir()
            except OSError:
                is_dir = False
            matches.append((is_dir, name))
        matches.sort(key=lambda match: (not match[0], match[1].lower()))
        for is_dir, name in matches[: self.max_results]:
            full = display_dir + name + ("/" if is_dir else "")
            yield Completion(
                _format(full, is_dir, at=False, quoted=path.quoted),
                start_position=-len(path.token),
                display=name + ("/" if is_dir else ""),
            )


def commands_from(entries: Sequence[tuple[str, str]]) -> CommandsProvider:
    """A ``commands_provider`` returning a fixed list (handy for tests and simple wiring)."""
    frozen = list(entries)
    return lambda: frozen


__all__ = [
    "FileEntry",
    "FileIndex",
    "PathToken",
    "PiCompleter",
    "commands_from",
    "extract_mention",
    "extract_path",
]
