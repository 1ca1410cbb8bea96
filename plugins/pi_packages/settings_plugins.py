"""pi's ``extensions`` and ``packages`` settings, read the Python way (docs/packages.md).

A settings entry pi-host can load becomes a plugin, loaded like ``-e``: a ``.py`` file, a Python
package folder (``__init__.py``), or an importable module name. A distribution that is already
installed with ``pi_host`` entry points has loaded anyway; its entry only filters what it ships
(``pi_host.lib.resources.package_resources``). A folder laid out as a pi package (``skills/``,
``prompts/``, ``themes/``, ``package.json``) gives its resources, not code.

pi's TypeScript and JavaScript extensions (files, extension folders, pi packages with
extensions, npm packages ``pi install npm:...`` installed) are loaded by the ``ts-bridge``
plugin. What else pi accepts there (npm packages not installed for pi-host, git sources,
``builtin:`` extensions) is one line saying why it is skipped, and the run goes on. ``!glob`` / ``-path`` entries of ``extensions`` exclude pi's
extension files and are left to pi.
"""

from __future__ import annotations

import importlib.util
import os
import re
from typing import Any

from pi_host.lib import resources
from pi_host.lib.resources import source_kind

SCRIPT_SUFFIXES = (".ts", ".js", ".mjs", ".cjs", ".mts", ".cts", ".tsx", ".jsx")
_MODULE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


def plugins_named(settings_path: str, data: dict[str, Any], problems: list[str]) -> list[str]:
    """The plugins ``data`` (the settings file ``settings_path``) names: absolute paths and module
    names; each entry that cannot load is one line in ``problems``."""
    base = os.path.dirname(settings_path)
    scope = "project" if os.path.basename(base) == ".pi" else "user"
    installed = _installed_names()
    found: list[str] = []

    def note(key: str, source: Any, why: str) -> None:
        problems.append(f"{settings_path}: {key}: {source!r} {why}")

    extensions = data.get("extensions")
    for entry in extensions if isinstance(extensions, list) else ():  # the schema names the rest
        if isinstance(entry, str) and not entry.strip():
            note("extensions", entry, "is not a path; ignored")
        elif isinstance(entry, str) and not entry.startswith(("!", "-")):  # pi's exclusions
            found += _classify("extensions", entry.lstrip("+"), base, {}, installed, note)
    for package in resources.settings_packages(settings_path, scope, problems):
        found += _classify("packages", package.source, base, package.filters, installed, note)
    return list(dict.fromkeys(found))


def _classify(
    key: str, source: str, base: str, filters: dict[str, Any], installed: set[str], note: Any
) -> list[str]:
    """What one source loads (a path or a module name), or nothing after one ``note``."""
    kind = source_kind(source, base)
    if kind == "npm":
        from pi_packages import npm

        folder = npm.package_dir(npm.package_name(source))
        if os.path.isdir(folder):
            return [folder]  # installed for pi-host: its TypeScript extensions load (ts-bridge)
        note(key, source, f"is an npm package pi-host has not installed (pi install {source}): skipped")
    elif kind == "git":
        note(
            key,
            source,
            f"is a git source; pi-host loads installed Python packages (pi install {source}): skipped",
        )
    elif kind == "builtin":
        note(key, source, "is one of pi's built-in extensions, which pi-host does not have: skipped")
    elif kind == "path":
        return _path(key, source, resources.absolute_path(source, base), filters, note)
    elif _normal(source) in installed or _normal(source.split(".")[0]) in installed:
        if filters.get("extensions") is not None:
            note(
                key,
                source,
                'is a Python package: the "extensions" filter does not apply (use disabledPlugins)',
            )
    elif _importable(source):
        return [source]
    else:
        note(key, source, f"is not an importable Python package (an npm package is 'npm:{source}'): skipped")
    return []


def _path(key: str, source: str, path: str, filters: dict[str, Any], note: Any) -> list[str]:
    if os.path.isfile(path):
        if path.endswith(".py"):
            return [path]
        if path.endswith(SCRIPT_SUFFIXES):
            return [path]  # pi's TypeScript/JavaScript extension: the ts-bridge plugin loads it
        else:
            note(key, source, "is not a Python file (.py): skipped")
    elif not os.path.isdir(path):
        note(key, source, f"does not exist ({path}): skipped")
    elif os.path.isfile(os.path.join(path, "__init__.py")):
        return [path]
    elif key == "packages" and resources.pi_package_dir(path):
        scripts = _script_extensions(path) if filters.get("extensions") != [] else []
        if scripts:
            return [path]  # its extensions load through ts-bridge; skills, prompts, themes as ever
    elif any(os.path.exists(os.path.join(path, n)) for n in ("package.json", "index.ts", "index.js")):
        return [path]  # a TypeScript/JavaScript extension folder (ts-bridge)
    elif any(os.path.exists(os.path.join(path, n)) for n in ("pyproject.toml", "setup.py")):
        note(key, source, f"is a Python project, not an installed package (pi install {path}): skipped")
    else:
        note(key, source, "holds no Python package (__init__.py) nor pi package resources: skipped")
    return []


def _script_extensions(root: str) -> list[str]:
    """The TypeScript/JavaScript extension files a pi package folder declares or holds."""
    listed = resources.pi_manifest(root).get("extensions")
    roots = resources.resource_roots(root, "extensions", listed if isinstance(listed, list) else None)
    found = []
    for path in roots:
        names = sorted(os.listdir(path)) if os.path.isdir(path) else [path]
        found += [
            os.path.join(path, n) if os.path.isdir(path) else n for n in names if n.endswith(SCRIPT_SUFFIXES)
        ]
        if os.path.isdir(path):
            found += [n for n in names if os.path.isfile(os.path.join(path, n, "index.ts"))]
    return [os.path.relpath(p, root) if os.path.isabs(p) else p for p in found]


def _normal(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def _installed_names() -> set[str]:
    """The distributions, entry-point names and top-level modules of installed ``pi_host``
    plugins (from the entry-point cache): these have loaded already."""
    from pi_host.config import paths
    from pi_host.plugins.loading import entry_points

    names: set[str] = set()
    for ep in entry_points(paths.cache_dir()):
        names |= {_normal(ep.dist), _normal(ep.name), _normal(ep.value.split(":")[0].split(".")[0])}
    return names


def _importable(name: str) -> bool:
    if not _MODULE.match(name):
        return False
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a parent package that fails to import, an odd name
        return False
