"""settings.json: reading, validating, merging and writing (reference §8.6).

Two files: ``<agent dir>/settings.json`` (user) and ``<cwd>/.pi/settings.json`` (project, only
when the project is trusted). Each file is validated on its own with the models of
:mod:`pi_host.config.settings_schema`; a value of the wrong type is reported as
``<file>: <key>: <problem>`` and left out, so one typo never stops pi-host or silently changes
another key. Unknown keys are kept (pi shares these files).

Merge rules: objects merge recursively and the project wins; arrays and scalars replace; a
project ``defaultTools`` made only of ``+name``/``-name`` entries edits the inherited list; the
resource lists (``packages``, ``extensions``, ``skills``, ``prompts``, ``themes``) of both files
all apply, each path resolved against its own file's directory; ``disabledPlugins`` of both
apply (a project can disable more plugins, never re-enable one the user disabled).

Writes (:func:`update_settings_file`) take a lock file, re-read the file, change only the given
keys and replace the file atomically, so keys written by pi or other programs survive.
"""

from __future__ import annotations

import contextlib
import json
import os
from typing import Any

from pi_host.config import paths
from pi_host.config.defaults import DEFAULTS, RESOURCE_KEYS
from pi_host.config.json_files import read_json_object, update_json_file

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
    from pi_host.config import settings_checked

    cleaned = json.loads(json.dumps(data))  # a deep copy we may prune
    key = settings_checked.digest(cleaned)
    if settings_checked.was_valid(key):  # the same contents passed before: no pydantic import
        return cleaned, []
    from pydantic import ValidationError

    from pi_host.config.settings_schema import Settings

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
    if not problems:
        settings_checked.remember_valid(key)
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
        inherited = user.get("defaultTools")
        if not isinstance(inherited, list) or _is_modifier_list(inherited):
            inherited_base = list(DEFAULTS["defaultTools"])
            if _is_modifier_list(inherited):
                inherited_base = apply_tool_modifiers(inherited_base, inherited)
            inherited = inherited_base
        merged["defaultTools"] = apply_tool_modifiers(inherited, project["defaultTools"])
    elif _is_modifier_list(user.get("defaultTools")) and "defaultTools" not in project:
        merged["defaultTools"] = apply_tool_modifiers(list(DEFAULTS["defaultTools"]), user["defaultTools"])
    if "disabledPlugins" in user or "disabledPlugins" in project:
        # the user's list always applies: a project may disable more, never re-enable
        names = list(user.get("disabledPlugins") or []) + list(project.get("disabledPlugins") or [])
        merged["disabledPlugins"] = list(dict.fromkeys(names))
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
    return paths.absolute_path(value, cwd)


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
    return get(settings, dotted, DEFAULTS.get(dotted))


# --- writing ---------------------------------------------------------------------------------


def set_dotted(data: dict[str, Any], dotted: str, value: Any) -> None:
    """Set (or, with :data:`DELETE`, remove) a dotted key in a settings dict, making the objects on
    its way (the writing counterpart of :func:`get`)."""
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
            set_dotted(data, dotted, value)

    return update_json_file(path, change)


def update_user_settings(changes: dict[str, Any]) -> dict[str, Any]:
    """:func:`update_settings_file` on ``<agent dir>/settings.json``."""
    return update_settings_file(user_settings_path(), changes)


def update_project_settings(cwd: str, changes: dict[str, Any]) -> dict[str, Any]:
    """:func:`update_settings_file` on ``<cwd>/.pi/settings.json``."""
    return update_settings_file(project_settings_path(cwd), changes)
