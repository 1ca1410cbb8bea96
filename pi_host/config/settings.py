"""settings.json: reading, validating, merging and writing (reference §8.6).

Two files: ``<agent dir>/settings.json`` (user) and ``<cwd>/.pi/settings.json`` (project, only
when the project is trusted). Each file is validated on its own with the models of
:mod:`pi_host.config.settings_schema`; a value of the wrong type is reported as
``<file>: <key>: <problem>`` and left out, so one typo never stops pi-host or silently changes
another key. Unknown keys are kept (pi shares these files).

Merge rules: objects merge recursively and the project wins; arrays and scalars replace; a
project ``defaultTools`` made only of ``+name``/``-name`` entries edits the inherited list; the
resource lists (``packages``, ``extensions``, ``skills``, ``prompts``, ``themes``) of both files
all apply, each path resolved against its own file's directory.

Writes (:func:`update_settings_file`) take a lock file, re-read the file, change only the given
keys and replace the file atomically, so keys written by pi or other programs survive.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from typing import Any

from pi_host.config import paths

DELETE = object()
"""Pass as a value to :func:`update_settings_file` to remove a key."""


# --- reading ---------------------------------------------------------------------------------


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Objects merge recursively (``override`` wins); arrays and scalars replace."""
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def read_json_object(path: str) -> tuple[dict[str, Any], str | None]:
    """The object in ``path`` (empty when missing) and an error line when it is unreadable."""
    try:
        with open(path, encoding="utf-8-sig") as handle:
            text = handle.read()
    except FileNotFoundError:
        return {}, None
    except OSError as exc:
        return {}, f"{path}: {exc.strerror or exc}"
    if not text.strip():
        return {}, None
    try:
        data = json.loads(text)
    except ValueError as exc:
        return {}, f"{path}: invalid JSON: {exc}"
    if not isinstance(data, dict):
        return {}, f"{path}: expected a JSON object"
    return data, None


def user_settings_path() -> str:
    return os.path.join(paths.agent_dir(), "settings.json")


def project_settings_path(cwd: str) -> str:
    return os.path.join(cwd, ".pi", "settings.json")


def _dotted(loc: tuple[Any, ...]) -> str:
    parts: list[str] = []
    for part in loc:
        if isinstance(part, int):
            parts.append(f"[{part}]")
        else:
            parts.append(("." if parts else "") + str(part))
    return "".join(parts)


def _data_path(data: Any, loc: tuple[Any, ...]) -> tuple[Any, ...]:
    """The part of a pydantic error location that exists in ``data`` (drops union tags)."""
    found: list[Any] = []
    node = data
    for part in loc:
        if isinstance(node, dict) and isinstance(part, str) and part in node:
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
        else:
            break
        found.append(part)
    return tuple(found)


def _remove(data: Any, path: tuple[Any, ...]) -> None:
    node = data
    for part in path[:-1]:
        node = node[part]
    del node[path[-1]]


def validate_settings(data: dict[str, Any], source: str) -> tuple[dict[str, Any], list[str]]:
    """``data`` without the invalid values, and one problem line per invalid value.

    The returned dict is the file's own JSON (unknown keys included), never defaults.
    """
    if not data:
        return {}, []  # nothing to check; spares the pydantic import for commands without settings
    from pydantic import ValidationError

    from pi_host.config.settings_schema import Settings

    cleaned = json.loads(json.dumps(data))  # a deep copy we may prune
    problems: list[str] = []
    for _attempt in range(8):  # pruning one value can reveal no new errors; 8 is plenty
        try:
            Settings.model_validate(cleaned)
            break
        except ValidationError as exc:
            removals: set[tuple[Any, ...]] = set()
            for error in exc.errors():
                path = _data_path(cleaned, tuple(error["loc"]))
                if not path:
                    continue
                if path not in removals:
                    value = json.dumps(error.get("input"), default=str)
                    if len(value) > 60:
                        value = value[:57] + "..."
                    problems.append(f"{source}: {_dotted(path)}: {error['msg']} (got {value}); ignored")
                removals.add(path)
            if not removals:
                break
            # Deepest and highest list indices first, so earlier removals do not shift later ones.
            for path in sorted(
                removals, key=lambda p: (len(p), p[-1] if isinstance(p[-1], int) else -1), reverse=True
            ):
                with contextlib.suppress(KeyError, IndexError, TypeError):
                    _remove(cleaned, path)
    return cleaned, problems


def _is_modifier_list(value: Any) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(v, str) and len(v) > 1 and v[0] in "+-" for v in value)
    )


def apply_tool_modifiers(base: list[str], modifiers: list[str]) -> list[str]:
    """``+name`` appends (once), ``-name`` removes, in order."""
    result = list(base)
    for entry in modifiers:
        name = entry[1:]
        if entry[0] == "+":
            if name not in result:
                result.append(name)
        else:
            result = [tool for tool in result if tool != name]
    return result


def resolve_resource_entry(entry: Any, base_dir: str) -> Any:
    """A resource entry with its path made absolute against ``base_dir``.

    ``!glob`` patterns stay as written; ``+path``/``-path`` keep their sign; objects (package
    specs) are returned unchanged.
    """
    if not isinstance(entry, str) or not entry:
        return entry
    if entry.startswith("!"):
        return entry
    sign = ""
    if entry[0] in "+-":
        sign, entry = entry[0], entry[1:]
    if ":" in entry.split("/", 1)[0] and not os.path.isabs(entry):  # npm:pkg, git:host/repo
        return sign + entry
    path = os.path.expanduser(entry)
    if not os.path.isabs(path):
        path = os.path.normpath(os.path.join(base_dir, path))
    return sign + path


def merge_settings(
    user: dict[str, Any], project: dict[str, Any], user_dir: str = "", project_dir: str = ""
) -> dict[str, Any]:
    """The effective settings from the user file and the project file (already validated)."""
    project = dict(project)
    for key in ("defaultProjectTrust",):
        project.pop(key, None)  # only the user may decide how projects are trusted
    merged = deep_merge(user, project)
    if _is_modifier_list(project.get("defaultTools")):
        from pi_host.config.settings_schema import DEFAULTS

        inherited = user.get("defaultTools")
        if not isinstance(inherited, list) or _is_modifier_list(inherited):
            inherited_base = list(DEFAULTS["defaultTools"])
            if _is_modifier_list(inherited):
                inherited_base = apply_tool_modifiers(inherited_base, inherited)
            inherited = inherited_base
        merged["defaultTools"] = apply_tool_modifiers(inherited, project["defaultTools"])
    elif _is_modifier_list(user.get("defaultTools")) and "defaultTools" not in project:
        from pi_host.config.settings_schema import DEFAULTS

        merged["defaultTools"] = apply_tool_modifiers(list(DEFAULTS["defaultTools"]), user["defaultTools"])
    from pi_host.config.settings_schema import RESOURCE_KEYS

    for key in RESOURCE_KEYS:
        entries: list[Any] = []
        for values, base in ((user.get(key), user_dir), (project.get(key), project_dir)):
            if isinstance(values, list):
                entries.extend(resolve_resource_entry(v, base) if base else v for v in values)
        if entries or key in merged:
            merged[key] = entries
    return merged


def load_settings(cwd: str, project_trusted: bool = True) -> tuple[dict[str, Any], list[str]]:
    """Merged settings and the problems found (one line each; files are never rewritten here)."""
    problems: list[str] = []
    user_path = user_settings_path()
    user = _read_valid(user_path, problems)
    project: dict[str, Any] = {}
    project_path = project_settings_path(cwd)
    if project_trusted:
        project = _read_valid(project_path, problems)
        if "defaultProjectTrust" in project:
            problems.append(f"{project_path}: defaultProjectTrust: only read from the user settings; ignored")
    merged = merge_settings(user, project, os.path.dirname(user_path), os.path.dirname(project_path))
    return merged, problems


def _read_valid(path: str, problems: list[str]) -> dict[str, Any]:
    """One settings file, invalid values dropped; what was wrong goes to ``problems``."""
    data, error = read_json_object(path)
    if error:
        problems.append(error)
    data, found = validate_settings(data, path)
    problems.extend(found)
    return data


def project_session_dir(cwd: str) -> str | None:
    """The project file's ``sessionDir``, read even in an untrusted project (pi looks it up before
    trust is decided). ``~`` is expanded and a relative path is taken from ``cwd``."""
    data, _error = read_json_object(project_settings_path(cwd))
    value = data.get("sessionDir")
    if not isinstance(value, str) or not value:
        return None
    from pi_host.lib.resources import absolute_path

    return absolute_path(value, cwd)


def get(settings: dict[str, Any], dotted: str, default: Any = None) -> Any:
    """A value by dotted key (``compaction.reserveTokens``), else ``default``."""
    node: Any = settings
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return default
        node = node[part]
    return node


def get_or_default(settings: dict[str, Any], dotted: str) -> Any:
    """A value by dotted key, else pi's documented default (None when there is none)."""
    from pi_host.config.settings_schema import DEFAULTS

    return get(settings, dotted, DEFAULTS.get(dotted))


# --- writing ---------------------------------------------------------------------------------


STALE_LOCK_SECONDS = 10.0


@contextlib.contextmanager
def file_lock(path: str, timeout: float = 10.0) -> Iterator[None]:
    """Hold ``<path>.lock`` while changing ``path``.

    The lock is a *directory* created with an atomic ``mkdir`` and removed afterwards, the
    convention of the ``proper-lockfile`` package pi uses, so pi and pi-host writing the same
    settings.json or trust.json exclude each other and leave nothing behind. A lock older than
    :data:`STALE_LOCK_SECONDS` belongs to a crashed writer and is taken over.
    """
    lock_path = path + ".lock"
    os.makedirs(os.path.dirname(lock_path) or ".", exist_ok=True)
    deadline = time.monotonic() + timeout
    while True:
        try:
            os.mkdir(lock_path)
            break
        except FileExistsError:
            try:
                age = time.time() - os.stat(lock_path).st_mtime
            except FileNotFoundError:
                continue  # released between our mkdir and stat
            if age > STALE_LOCK_SECONDS:
                with contextlib.suppress(OSError):
                    if os.path.isdir(lock_path):
                        os.rmdir(lock_path)
                    else:
                        os.unlink(lock_path)
                continue
            if time.monotonic() > deadline:
                raise TimeoutError(f"{path} is locked by another writer ({lock_path})") from None
            time.sleep(0.005)
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            os.rmdir(lock_path)


def write_json_atomic(path: str, data: Any) -> None:
    """Write ``data`` as indented JSON through a temporary file and an atomic rename."""
    directory = os.path.dirname(path) or "."
    os.makedirs(directory, exist_ok=True)
    mode = None
    with contextlib.suppress(OSError):
        mode = os.stat(path).st_mode & 0o777
    fd, tmp = tempfile.mkstemp(prefix=".settings-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=2, ensure_ascii=False)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _set_dotted(data: dict[str, Any], dotted: str, value: Any) -> None:
    parts = dotted.split(".")
    node = data
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            if value is DELETE:
                return
            child = node[part] = {}
        node = child
    if value is DELETE:
        node.pop(parts[-1], None)
    else:
        node[parts[-1]] = value


def update_settings_file(path: str, changes: dict[str, Any]) -> dict[str, Any]:
    """Set (or, with :data:`DELETE`, remove) dotted keys in one settings file; returns its new content.

    The file is re-read under the lock, so keys another program wrote since we last read it are
    kept; a file that is not valid JSON is left alone (raises ``ValueError``) rather than lost.
    """

    def change(data: dict[str, Any]) -> None:
        for dotted, value in changes.items():
            _set_dotted(data, dotted, value)

    return update_json_file(path, change)


def update_json_file(path: str, change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """Re-read the JSON object in ``path`` under its lock, let ``change`` edit it in place, write it
    atomically; returns the new content. A file that is not a valid JSON object is left alone
    (``ValueError``) rather than lost; a missing one starts empty."""
    with file_lock(path):
        data, error = read_json_object(path)
        if error:
            raise ValueError(f"{error}; not overwriting it")
        change(data)
        write_json_atomic(path, data)
        return data


def update_user_settings(changes: dict[str, Any]) -> dict[str, Any]:
    """:func:`update_settings_file` on ``<agent dir>/settings.json``."""
    return update_settings_file(user_settings_path(), changes)


def update_project_settings(cwd: str, changes: dict[str, Any]) -> dict[str, Any]:
    """:func:`update_settings_file` on ``<cwd>/.pi/settings.json``."""
    return update_settings_file(project_settings_path(cwd), changes)
