"""Turning the CLI's session flags into an open store (reference §6.8)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

from pi_host.lib.sessions.store import (
    MemoryStore,
    SessionOpenError,
    StoreOptions,
    TreeStore,
    check_session_id,
    normalize_session_name,
)
from pi_session_jsonl.paths import OnceWarn, resolve_session_dir

# ``pi_session_jsonl.store`` (the file reader and writer, with shutil) and ``listing`` are
# imported by the functions that open or find files: a ``--no-session`` run needs neither.


def _conflicts(options: StoreOptions) -> None:
    resume = bool(options.resume)
    common = (("--session", options.session), ("--continue", options.continue_recent), ("--resume", resume))
    if options.fork:
        _refuse_with("--fork", (*common, ("--no-session", options.no_session)))
    if options.session_id is not None:
        _refuse_with("--session-id", common)
        check_session_id(options.session_id)


def _refuse_with(option: str, others: tuple[tuple[str, Any], ...]) -> None:
    """One error naming every flag in ``others`` that is set alongside ``option``."""
    flags = [flag for flag, on in others if on]
    if flags:
        raise SessionOpenError(f"{option} cannot be combined with {', '.join(flags)}")


def _looks_like_path(arg: str) -> bool:
    return "/" in arg or "\\" in arg or arg.endswith(".jsonl")


def _resolve(
    arg: str, options: StoreOptions, session_dir: str, custom: bool, warn: Callable[[str], None]
) -> tuple[str, str, str | None]:
    """``(kind, path, other_cwd)`` with kind ``path``, ``local`` or ``global``."""
    from pi_session_jsonl import listing

    if _looks_like_path(arg):
        return "path", os.path.abspath(os.path.join(options.cwd, os.path.expanduser(arg))), None
    cwd_filter = os.path.abspath(options.cwd) if custom else None
    exact = listing.find_by_id(session_dir, arg, cwd_filter, warn)
    if exact:
        return "local", exact, None
    local = listing.find_by_prefix([session_dir], arg, cwd_filter, warn)
    if local:
        return "local", local[0], None
    others = [session_dir] if custom else listing.all_session_dirs(options.agent_dir)
    found = listing.find_by_prefix(others, arg, warn=warn)
    if found:
        path, header = found
        cwd = header.get("cwd") if isinstance(header.get("cwd"), str) else ""
        if os.path.normpath(cwd or "") == os.path.normpath(os.path.abspath(options.cwd)):
            return "local", path, None
        return "global", path, cwd
    raise SessionOpenError(f"No session found matching '{arg}'")


def _confirm(question: str, interactive: bool) -> bool:
    if not interactive:
        return False
    sys.stderr.write(f"{question} [y/N] ")
    sys.stderr.flush()
    answer = sys.stdin.readline().strip().lower()
    return answer in ("y", "yes")


def open_store(options: StoreOptions) -> TreeStore:
    """Open the session the flags ask for; raises :class:`SessionOpenError` with one line."""
    _conflicts(options)
    # Lookups scan a folder several times: a bad file there is named once.
    warn: Callable[[str], None] = OnceWarn(options.warn)
    cwd = os.path.abspath(options.cwd)
    interactive = bool(options.interactive)
    if options.no_session:
        store: TreeStore = MemoryStore(cwd, session_id=options.session_id, warn=warn)
        _apply_name(store, options)
        return store
    session_dir, custom = resolve_session_dir(
        options.agent_dir, cwd, options.session_dir, options.session_dir_setting
    )
    cwd_filter = cwd if custom else None
    store = _open(options, cwd, session_dir, custom, cwd_filter, interactive, warn)
    _apply_name(store, options)
    if store.tree.leaf is not None:
        store.close_interrupted_tool_calls()
    return store


def _open(
    options: StoreOptions,
    cwd: str,
    session_dir: str,
    custom: bool,
    cwd_filter: str | None,
    interactive: bool,
    warn: Callable[[str], None],
) -> TreeStore:
    from pi_session_jsonl.store import JsonlStore, fork_file

    if options.fork or options.resume or options.continue_recent or options.session_id:
        from pi_session_jsonl import listing  # a new session (the common start) needs no listing
    if options.fork:
        if options.session_id and listing.find_by_id(session_dir, options.session_id, cwd_filter, warn):
            raise SessionOpenError(f"Session already exists with id '{options.session_id}'")
        _kind, path, _other = _resolve(options.fork, options, session_dir, custom, warn)
        if not os.path.exists(path):
            raise SessionOpenError(f"No session found matching '{options.fork}'")
        return fork_file(path, cwd, session_dir, options.session_id, warn)
    if options.session:
        kind, path, other_cwd = _resolve(options.session, options, session_dir, custom, warn)
        if kind == "global":
            question = (
                f"Session found in a different project: {other_cwd}. Fork it into the current directory?"
            )
            if not _confirm(question, interactive):
                raise SessionOpenError(
                    f"Session '{options.session}' belongs to another project ({other_cwd}); "
                    f"use --fork {options.session} to copy it here"
                )
            return fork_file(path, cwd, session_dir, None, warn)
        return JsonlStore.open_file(
            path, cwd, None if kind == "path" and not options.session_dir else session_dir, warn
        )
    if options.resume:
        from pi_session_jsonl.quick_rows import quick_list

        # The picker's rows: the title and counts, without every message's text in memory.
        sessions = quick_list(cwd, options.agent_dir, options.session_dir, warn=warn)
        chosen = listing.pick_session(sessions, interactive=interactive)
        return JsonlStore.open_file(chosen.path, cwd, session_dir, warn)
    if options.continue_recent:
        recent = listing.find_most_recent(session_dir, cwd_filter, warn)
        if recent:
            return JsonlStore.open_file(recent, cwd, session_dir, warn)
        return JsonlStore.create(cwd, session_dir, warn=warn)
    if options.session_id:
        existing = listing.find_by_id(session_dir, options.session_id, cwd_filter, warn)
        if existing:
            return JsonlStore.open_file(existing, cwd, session_dir, warn)
        warn(f"No project session found with id '{options.session_id}'; creating a new session with that id.")
    return JsonlStore.create(cwd, session_dir, session_id=options.session_id, warn=warn)


def _apply_name(store: TreeStore, options: StoreOptions) -> None:
    if options.name is None:
        return
    name = normalize_session_name(options.name)
    if name:
        store.set_name(name)


def list_sessions(
    cwd: str,
    agent_dir: str,
    session_dir: str | None = None,
    all_dirs: bool = False,
    *,
    quick: bool = False,
    progress: Any = None,
    warn: Any = None,
) -> list[Any]:
    """:class:`pi_session_jsonl.listing.SessionInfo` items, newest first (``quick``: the picker's
    rows, see :func:`pi_session_jsonl.quick_rows.quick_list`)."""
    if quick:
        from pi_session_jsonl.quick_rows import quick_list

        return quick_list(cwd, agent_dir, session_dir, all_dirs, warn=warn, progress=progress)
    from pi_session_jsonl import listing

    return listing.list_sessions(cwd, agent_dir, session_dir, all_dirs, warn=warn)
