"""Building blocks for tool authors: the parts the built-in tools share.

Public API (stable; documented in ``docs/tools.md``):

* truncation — :func:`truncate_head`, :func:`truncate_tail`, :func:`truncate_line`,
  :class:`Truncation`, :func:`format_size`, :func:`with_notices`, the ``DEFAULT_MAX_LINES`` (2000),
  ``DEFAULT_MAX_BYTES`` (50KB) and ``GREP_MAX_LINE_LENGTH`` (500) limits;
* paths — :func:`resolve_path`, :func:`read_path_candidates`, :func:`display_path`;
* file mutation — :func:`file_mutation_lock` serialises edits and writes of one file;
* operations — the :class:`FileSystem`, :class:`Shell` and :class:`Searcher` interfaces that
  let the built-in tools run elsewhere, with the local defaults :class:`LocalFileSystem`,
  :class:`LocalShell`, :class:`LocalSearcher`;
* special files — :func:`open_regular` refuses FIFOs, devices and sockets without blocking
  (:class:`NotRegularFileError`, :func:`not_regular_text`, :func:`special_kind`);
* processes — :func:`kill_process_group`, :func:`pipe_holders`;
* images — :func:`detect_image_mime`, :func:`prepare_image`;
* ignore rules and globs — :class:`IgnoreStack`, :func:`compile_glob`;
* :func:`text_result` — a ``ToolResult`` with one text block;
* plugin packaging — :func:`tool_plugin` (a one-tool plugin's ``__init__`` in one line) and
  :class:`FileTool` (the base of tools over a ``FileSystem``).

Names are imported lazily so that importing this package costs nothing until used.
"""

from __future__ import annotations

from pi_host._exports import lazy_exports

_EXPORTS = {
    "DEFAULT_MAX_BYTES": ".truncate",
    "DEFAULT_MAX_LINES": ".truncate",
    "GREP_MAX_LINE_LENGTH": ".truncate",
    "Truncation": ".truncate",
    "format_size": ".truncate",
    "split_lines": ".truncate",
    "truncate_head": ".truncate",
    "truncate_tail": ".truncate",
    "truncate_line": ".truncate",
    "head_from_sizes": ".truncate",
    "tail_of": ".truncate",
    "with_notices": ".truncate",
    "resolve_path": ".paths",
    "read_path_candidates": ".paths",
    "display_path": ".paths",
    "normalize_path_text": ".paths",
    "file_mutation_lock": ".locks",
    "FileSystem": ".operations",
    "FileInfo": ".operations",
    "DirEntry": ".operations",
    "Shell": ".operations",
    "ExecResult": ".operations",
    "Searcher": ".operations",
    "SearchResult": ".operations",
    "LocalFileSystem": ".operations",
    "LocalShell": ".local_shell",
    "command_environment": ".local_shell",
    "LocalSearcher": ".local_search",
    "find_ripgrep": ".local_search",
    "default_shell": ".local_shell",
    "kill_process_group": ".processes",
    "pipe_holders": ".processes",
    "NotRegularFileError": ".regular",
    "open_regular": ".regular",
    "not_regular_text": ".regular",
    "special_kind": ".regular",
    "detect_image_mime": ".images",
    "prepare_image": ".images",
    "PreparedImage": ".images",
    "pillow_available": ".images",
    "IgnoreStack": ".ignore",
    "IGNORE_FILES": ".ignore",
    "compile_glob": ".globs",
    "glob_to_regex": ".globs",
    "text_result": ".results",
    "setting": ".results",
    "os_error_text": ".results",
    "agent_dir": ".results",
    "tool_plugin": ".plugin",
    "FileTool": ".file_tool",
}

__all__ = sorted(_EXPORTS)
__getattr__ = lazy_exports("pi_host.lib.toolkit", _EXPORTS)
