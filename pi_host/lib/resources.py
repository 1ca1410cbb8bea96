"""What file-based context resources (skills, prompt templates) have in common (reference §8.4-§8.7).

Plugins must not import each other, so the pieces the skills and prompt-template sources share
live here, in the host:

* where projects keep them: :func:`walk_up`, :func:`git_root`, :func:`agents_skill_dirs` (also
  what project trust protects);
* how settings entries and flags name them: :func:`absolute_path`,
  :func:`parse_setting_entries`, :func:`string_list`, and :class:`ResourceLocations`, the common
  part of "where to look" (paths from ``resources_discover`` handlers come from
  ``ctx.discovered_paths``);
* how a command reports where it came from: :func:`source_info`;
* per-session state: :class:`PerSession` (discovered once per session, again after a reload;
  :func:`pi_host.lib.lazy.forget_on_reload` is the hook that triggers it);
* what packages ship: :func:`package_resources` (plugins' ``register_resources`` and the folders
  laid out as pi packages that ``packages`` settings name, narrowed by pi's filter objects), and
  how a ``packages`` / ``extensions`` entry is read (:func:`package_entry`, :func:`source_kind`).

Everything here is cheap to import (no YAML, no pydantic): sources import it lazily anyway.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

# Re-exported: the sources find their files with these.
from pi_host.config.paths import absolute_path, agents_skill_dirs, git_root, walk_up  # noqa: F401

T = TypeVar("T")

SCOPES = {
    "user": "user",
    "project": "project",
    "settings": "user",
    "cli": "temporary",
    "extension": "temporary",
}
"""A resource's ``source`` (which location found it) → the ``scope`` commands report."""


def _expand_entry(entry: str, base: str) -> list[str]:
    """A settings entry as paths: globs (``skills/*``) expand, sorted; plain paths stay."""
    path = absolute_path(entry, base)
    if any(ch in entry for ch in "*?["):
        import glob

        return sorted(glob.glob(path))
    return [path]


@dataclass
class SettingEntries:
    """A resource list setting (``skills``, ``prompts``) taken apart."""

    paths: list[str] = field(default_factory=list)
    """Paths to load, in order (``+path`` and plain entries; globs expanded)."""
    excluded_paths: set[str] = field(default_factory=set)
    """``-path`` entries, absolute."""
    excluded_globs: list[str] = field(default_factory=list)
    """``!pattern`` entries, as written (without the ``!``)."""


def parse_setting_entries(entries: Iterable[Any], base: str) -> SettingEntries:
    """Take a resource list setting apart; entries that are not non-empty strings are ignored.
    Relative paths resolve against ``base`` (the working directory)."""
    parsed = SettingEntries()
    for entry in entries:
        if not isinstance(entry, str) or not entry:
            continue
        if entry.startswith("!"):
            parsed.excluded_globs.append(entry[1:])
        elif entry.startswith("-"):
            parsed.excluded_paths.add(absolute_path(entry[1:], base))
        else:
            parsed.paths.extend(_expand_entry(entry.lstrip("+"), base))
    return parsed


def string_list(value: Any) -> list[str]:
    """A flag or setting value as a list of strings (None → empty, a string → one item)."""
    if value is None:
        return []
    return [value] if isinstance(value, str) else [str(v) for v in value]


@dataclass
class ResourceLocations:
    """Where a resource kind is looked for; the order of the fields is the precedence order."""

    agent_dir: str
    cwd: str
    trusted: bool = True
    """False: the project's own locations (``.pi/...``) are skipped (project trust, §8.7)."""
    include_defaults: bool = True
    """False with ``--no-skills`` / ``--no-prompt-templates``: only ``cli_paths`` load."""
    settings_entries: list[Any] = field(default_factory=list)
    packages: list[Any] = field(default_factory=list)
    """:class:`PackageResource` items, searched after the settings' paths (pi's package rank)."""
    cli_paths: list[str] = field(default_factory=list)
    extension_paths: list[str] = field(default_factory=list)

    @classmethod
    def for_session(
        cls,
        ctx: Any,
        *,
        setting: str,
        cli_flag: str,
        disabled: bool,
        extension_paths: list[str],
        **extra: Any,
    ) -> Any:
        """The locations a session's flags and settings name: the list setting ``setting``, the
        repeatable flag ``cli_flag`` and the project trust decision."""
        entries = (ctx.settings or {}).get(setting)
        agent_dir, trusted = _agent_dir(), ctx.is_project_trusted()
        host = getattr(getattr(ctx, "session", None), "host", None)
        return cls(
            agent_dir=agent_dir,
            cwd=ctx.cwd,
            trusted=trusted,
            include_defaults=not disabled,
            settings_entries=list(entries) if isinstance(entries, list) else [],
            packages=[] if disabled else package_resources(setting, host, agent_dir, ctx.cwd, trusted),
            cli_paths=string_list(ctx.get_flag(cli_flag)),
            extension_paths=extension_paths,
            **extra,
        )


def _agent_dir() -> str:
    from pi_host.config import paths

    return paths.agent_dir()


class PerSession(Generic[T]):
    """One value per session (a discovery), kept until the session's reload forgets it.
    Sessions are held weakly."""

    def __init__(self) -> None:
        self._values: weakref.WeakKeyDictionary[Any, T] = weakref.WeakKeyDictionary()

    def get(self, session: Any) -> T | None:
        return self._values.get(session)

    def put(self, session: Any, value: T) -> T:
        self._values[session] = value
        return value

    def forget(self, session: Any) -> None:
        self._values.pop(session, None)


def source_info(path: str, source: str, *, cwd: str | None = None, **extra: Any) -> dict[str, Any]:
    """A command's ``sourceInfo`` for a resource file found by location ``source``, as pi reports
    it: a resource found by looking in the agent dir or the project's ``.pi`` is ``auto`` with
    that directory as ``baseDir``; one a settings entry names is ``local``."""
    from pi_host.config.paths import agent_dir

    if source.startswith("package:"):  # a package's own: pi names the package as the source
        return {
            "path": path,
            "source": source[len("package:") :],
            "scope": "user",
            "origin": "package",
            **extra,
        }
    info: dict[str, Any] = {
        "path": path,
        "source": "auto" if source in ("user", "project") else "local",
        "scope": SCOPES.get(source, "user"),
        "origin": "top-level",
    }
    if source == "user":
        info["baseDir"] = agent_dir()
    elif source == "project" and cwd:
        info["baseDir"] = os.path.join(cwd, ".pi")
    info.update(extra)
    return info


def print_warnings(warnings: Iterable[str]) -> None:
    """Discovery warnings, one ``Warning:`` line each on stderr."""
    import sys

    for warning in warnings:
        print(f"Warning: {warning}", file=sys.stderr)


# --- packages: plugins' ``register_resources`` and the ``packages`` setting ---------------------

KINDS = ("skills", "prompts", "themes")
"""The resource kinds a package ships (pi's fourth, ``extensions``, is the plugin's code)."""
PI_PACKAGE_PARTS = ("package.json", "extensions", *KINDS)
"""What makes a folder a pi package (rather than a Python one)."""


@dataclass
class PackageEntry:
    """One entry of a ``packages`` setting (a source string, or an object with filters)."""

    source: str
    base: str
    """The settings file's folder: relative paths resolve against it."""
    scope: str
    """``user`` or ``project``."""
    filters: dict[str, list[str]] = field(default_factory=dict)
    """Patterns per kind (``skills``, ``prompts``, ``themes``, ``extensions``), only the kinds given."""
    autoload: bool = True
    """False in a project entry: its filters change the user's entry for the package instead."""

    @property
    def path(self) -> str:
        return absolute_path(self.source, self.base)


def package_entry(value: Any, base: str, scope: str) -> tuple[PackageEntry | None, str | None]:
    """A ``packages`` entry parsed (pi's string or object form), or the one-line problem with it
    (None for a value of the wrong type: the settings schema names those)."""
    if isinstance(value, str) and value.strip():
        return PackageEntry(value.strip(), base, scope), None
    if not isinstance(value, dict):  # the settings schema reports these in every session
        return None, None if not isinstance(value, str) else "an empty source; ignored"
    source = value.get("source")
    if not isinstance(source, str) or not source.strip():
        return None, f'{json_text(value)}: no "source" string; ignored'
    entry = PackageEntry(source.strip(), base, scope, autoload=value.get("autoload") is not False)
    for kind in (*KINDS, "extensions"):
        patterns = value.get(kind)
        if patterns is None:
            continue
        if not isinstance(patterns, list) or not all(isinstance(p, str) for p in patterns):
            return None, f"{source!r}: {kind!r} must be a list of patterns; entry ignored"
        entry.filters[kind] = patterns
    return entry, None


def json_text(value: Any) -> str:
    import json

    return json.dumps(value)[:80]


def settings_packages(path: str, scope: str, problems: list[str] | None = None) -> list[PackageEntry]:
    """The ``packages`` entries of the settings file ``path`` (a bad entry: one line in ``problems``)."""
    from pi_host.config.json_files import read_json_object

    value = read_json_object(path)[0].get("packages")
    if value is None:
        return []
    if not isinstance(value, list):
        return []  # reported by the settings schema
    entries = []
    for item in value:
        entry, problem = package_entry(item, os.path.dirname(path), scope)
        if entry is not None:
            entries.append(entry)
        elif problems is not None and problem:
            problems.append(f"{path}: packages: {problem}")
    return entries


def session_packages(agent_dir: str, cwd: str, trusted: bool) -> list[PackageEntry]:
    """The user's ``packages`` entries, then the trusted project's."""
    found = settings_packages(os.path.join(agent_dir, "settings.json"), "user")
    if trusted:
        found += settings_packages(os.path.join(cwd, ".pi", "settings.json"), "project")
    return found


def source_kind(source: str, base: str) -> str:
    """What a ``packages`` / ``extensions`` source names: ``npm``, ``git``, ``builtin``, ``path``
    (an existing file or folder, or a path-like string) or ``name`` (maybe a Python package)."""
    if source.startswith("npm:"):
        return "npm"
    if source.startswith("builtin:"):
        return "builtin"
    if source.startswith(("git:", "git+", "git@")) or "://" in source:
        return "git"
    if source.startswith((".", "/", "~")) or os.sep in source or os.path.exists(absolute_path(source, base)):
        return "path"
    return "name"


def pi_package_dir(path: str) -> bool:
    """A folder laid out as a pi package (``package.json``, ``skills/``...), not a Python package."""
    if os.path.isfile(os.path.join(path, "__init__.py")):
        return False
    return any(os.path.exists(os.path.join(path, part)) for part in PI_PACKAGE_PARTS)


def resource_roots(root: str, kind: str, listed: list[str] | None) -> list[str]:
    """The files and folders of one kind: ``listed`` (relative to ``root``; globs and ``!glob``
    as in pi's manifest), else the conventional ``<root>/<kind>`` when it exists."""
    if listed is None:
        conventional = os.path.join(root, kind)
        return [conventional] if os.path.exists(conventional) else []
    parsed = parse_setting_entries(listed, root)
    return [p for p in parsed.paths if not _matches(p, parsed.excluded_globs, root)]


def pi_manifest(root: str) -> dict[str, Any]:
    """``package.json``'s ``pi`` object (empty when missing or unreadable)."""
    from pi_host.config.json_files import read_json_object

    manifest = read_json_object(os.path.join(root, "package.json"))[0].get("pi")
    return manifest if isinstance(manifest, dict) else {}


def resource_files(kind: str, roots: Iterable[str]) -> list[str]:
    """The single resources under ``roots``, as pi's filters see them: skill files (``SKILL.md``
    anywhere below, ``*.md`` at the top), ``*.md`` templates and ``*.json`` themes (no recursion)."""
    suffix = ".json" if kind == "themes" else ".md"
    found: list[str] = []
    for root in roots:
        if os.path.isfile(root):
            found.append(root)
            continue
        try:
            names = sorted(os.listdir(root))
        except OSError:
            continue
        found += [
            os.path.join(root, n)
            for n in names
            if n.endswith(suffix) and os.path.isfile(os.path.join(root, n))
        ]
        if kind == "skills":
            found += [p for n in names if not n.startswith(".") for p in _skill_files(os.path.join(root, n))]
    return found


def _skill_files(directory: str) -> list[str]:
    if not os.path.isdir(directory) or os.path.basename(directory) == "node_modules":
        return []
    skill = os.path.join(directory, "SKILL.md")
    if os.path.isfile(skill):
        return [skill]
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return []
    return [p for n in names if not n.startswith(".") for p in _skill_files(os.path.join(directory, n))]


def _matches(path: str, patterns: Iterable[str], root: str, exact: bool = False) -> bool:
    """pi's pattern test: against the path relative to ``root``, the file name or the absolute
    path (and for a ``SKILL.md``, the same of its folder); ``exact`` compares instead of globbing."""
    import fnmatch

    candidates = [path]
    if os.path.basename(path) == "SKILL.md":
        candidates.append(os.path.dirname(path))
    for pattern in patterns:
        pattern = pattern[2:] if exact and pattern.startswith("./") else pattern
        pattern = os.path.normpath(pattern).replace(os.sep, "/")
        for candidate in candidates:
            forms = [os.path.relpath(candidate, root).replace(os.sep, "/"), candidate.replace(os.sep, "/")]
            if not exact:
                forms.append(os.path.basename(candidate))
            if any(form == pattern if exact else fnmatch.fnmatchcase(form, pattern) for form in forms):
                return True
    return False


def apply_patterns(files: list[str], patterns: list[str], root: str) -> list[str]:
    """pi's package filter: plain patterns include (all when none), ``!pattern`` excludes,
    ``+path`` adds back one exact path, ``-path`` removes one."""
    plain = [p for p in patterns if not p.startswith(("!", "+", "-"))]
    result = [f for f in files if not plain or _matches(f, plain, root)]
    result = [f for f in result if not _matches(f, [p[1:] for p in patterns if p[0:1] == "!"], root)]
    adds = [p[1:] for p in patterns if p[0:1] == "+"]
    result += [f for f in files if f not in result and _matches(f, adds, root, exact=True)]
    removes = [p[1:] for p in patterns if p[0:1] == "-"]
    return [f for f in result if not _matches(f, removes, root, exact=True)]


@dataclass
class PackageResource:
    """One file or folder of resources a package ships."""

    path: str
    package: str
    """The package as ``pi list`` names it: a distribution, a plugin, or a settings source."""
    root: str


def _select(
    kind: str, root: str, roots: list[str], entries: list[PackageEntry], package: str
) -> list[PackageResource]:
    """``roots`` narrowed by the filters of the matching ``packages`` entries (a project entry
    replaces the user's; with ``autoload: false`` it changes the user's result instead)."""
    project = [e for e in entries if e.scope == "project"]
    user = [e for e in entries if e.scope == "user"]
    chosen = project[-1:] if project and project[-1].autoload else user[-1:]
    patterns = chosen[0].filters.get(kind) if chosen else None
    delta = project[-1].filters.get(kind) if project and not project[-1].autoload else None
    if patterns is None and not delta:
        return [PackageResource(path, package, root) for path in roots]
    files = resource_files(kind, roots)
    enabled = files if patterns is None else apply_patterns(files, patterns, root) if patterns else []
    for pattern in delta or ():
        exact, on = pattern[0:1] in "+-", pattern[0:1] not in "-!"
        target = pattern[1:] if pattern[0:1] in "+-!" else pattern
        hits = [f for f in files if _matches(f, [target], root, exact=exact)]
        enabled = [f for f in enabled if f not in hits] + (hits if on else [])
    return [PackageResource(path, package, root) for path in files if path in enabled]


def _identities(host: Any, plugin: str) -> set[str]:
    """What a ``packages`` source may call a plugin: its name, distribution, module, file path."""
    record = host.record(plugin)
    module = getattr(host.pm.get_plugin(plugin), "__name__", "")
    names = {plugin, module, module.split(".")[0]}
    if record is not None and record.origin:
        names.add(record.origin)
        if record.source not in ("installed", "builtin"):
            names.add(os.path.splitext(os.path.basename(record.origin))[0])
    return {_normal(n) for n in names if n}


def _normal(name: str) -> str:
    return name if os.sep in name else name.lower().replace("_", "-").replace(".", "-")


def _entry_keys(entry: PackageEntry) -> set[str]:
    if source_kind(entry.source, entry.base) == "path":
        return {entry.path}
    return {_normal(entry.source)}


def package_resources(kind: str, host: Any, agent_dir: str, cwd: str, trusted: bool) -> list[PackageResource]:
    """Every resource of ``kind`` packages ship, in load order: plugins' ``register_resources``,
    then the folders laid out as pi packages that ``packages`` settings name, filtered as pi does."""
    from pi_host.plugins.registrations import Resources

    entries = session_packages(agent_dir, cwd, trusted)
    found: list[PackageResource] = []
    for plugin, item in host.collect_named("register_resources") if host is not None else ():
        if not isinstance(item, Resources) or not isinstance(item.root, (str, os.PathLike)):
            continue
        root = os.path.abspath(os.fspath(item.root))
        ids = _identities(host, plugin)
        record = host.record(plugin)
        name = record.origin if record is not None and record.source == "installed" else plugin
        matching = [e for e in entries if _entry_keys(e) & ids]
        found += _select(kind, root, resource_roots(root, kind, getattr(item, kind)), matching, name)
    for entry in entries:
        path = entry.path
        if (
            source_kind(entry.source, entry.base) != "path"
            or not os.path.isdir(path)
            or not pi_package_dir(path)
        ):
            continue
        matching = [e for e in entries if e.path == path and source_kind(e.source, e.base) == "path"]
        if entry is not matching[-1]:
            continue  # the same folder named twice (user and project): once, with the winner's filters
        manifest = pi_manifest(path)
        listed = manifest.get(kind) if isinstance(manifest.get(kind), list) else None
        found += _select(kind, path, resource_roots(path, kind, listed), matching, entry.source)
    seen: set[str] = set()
    return [r for r in found if not (r.path in seen or seen.add(r.path))]
