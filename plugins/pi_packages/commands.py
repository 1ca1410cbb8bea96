"""``pi install``, ``pi remove`` (``uninstall``), ``pi list`` and ``pi update``: plugin packages
installed with pip into the environment pi-host runs in, recorded in a manifest so that
``pi install --sync`` brings them back into a fresh environment."""

from __future__ import annotations

import json
import os
import re
import sys
from typing import Any

from pi_packages import manifest
from pi_packages.pip_runner import HOST, PipMissing, installed, normalise, run_pip

INSTALL_USAGE = """\
Usage: pi install [-l] [--editable] [-U] [-v] [pip options...] <requirement | path | git URL>...
       pi install --sync [-v] [pip options...]

Install plugin packages with pip into the environment pi-host runs in, and record them in
<agent dir>/pi-host-packages.json (-l/--local: the project's .pi/pi-host-packages.json, trusted
projects only). A path is recorded as an absolute path; git:host/owner/repo[@ref] and repository
URLs install with git. --sync installs every recorded package that is missing here (after pi-host
was reinstalled into a fresh environment). Other options (--no-deps, --no-build-isolation,
--index-url URL, --pre...) are passed to pip; -v shows pip's own output.
"""

REMOVE_USAGE = """\
Usage: pi remove [-l] [-v] <name | spec>...

Uninstall plugin packages with pip and drop them from the manifest (-l/--local: the project's).
"""

LIST_USAGE = """\
Usage: pi list [--json]

Installed plugin packages (distributions with pi_host entry points, pi-host itself aside): name,
version, scope (user, project, or - when not recorded), the spec it came from, the entry
points it provides and the skills, prompt templates and themes it ships. Recorded packages that
are not installed here are listed as missing; pi packages (folders) that the packages setting
names are listed with scope "settings".
"""

UPDATE_USAGE = """\
Usage: pi update [-l] [-v] [--extensions] [pip options...] [name...]

Upgrade the recorded plugin packages (all of them, or those named) with pip install -U.
"""

# pip options that take a value (so the value is not mistaken for a package spec)
VALUE_OPTIONS = {
    "-i", "--index-url", "--extra-index-url", "-f", "--find-links", "-c", "--constraint",
    "--platform", "--python-version", "--implementation", "--abi", "--root", "--prefix",
    "--src", "--upgrade-strategy", "--progress-bar", "--cache-dir", "--trusted-host",
    "--config-settings", "-C", "--global-option", "--proxy", "--timeout", "--retries",
    "--no-binary", "--only-binary", "--cert", "--client-cert", "--exists-action", "--log",
}  # fmt: skip
ARCHIVE = re.compile(r"\.(whl|zip|tar\.gz|tgz|tar\.bz2|tar)(#.*)?$")
NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def _err(line: str) -> None:
    sys.stderr.write(line.rstrip("\n") + "\n")
    sys.stderr.flush()


def _out(line: str) -> None:
    sys.stdout.write(line.rstrip("\n") + "\n")
    sys.stdout.flush()


class Options:
    def __init__(self) -> None:
        self.local = self.editable = self.upgrade = self.verbose = self.sync = False
        self.approve: bool | None = None
        self.json = self.help = False
        self.pip: list[str] = []
        self.specs: list[str] = []


def parse(argv: list[str]) -> Options:
    opts = Options()
    it = iter(argv)
    for arg in it:
        if arg in ("-h", "--help"):
            opts.help = True
        elif arg in ("-l", "--local"):
            opts.local = True
        elif arg == "--editable":  # not -e: that is pi's --extension
            opts.editable = True
        elif arg in ("-U", "--upgrade"):
            opts.upgrade = True
        elif arg in ("-v", "--verbose"):
            opts.verbose = True
        elif arg == "--sync":
            opts.sync = True
        elif arg == "--json":
            opts.json = True
        elif arg in ("-a", "--approve"):
            opts.approve = True
        elif arg in ("-na", "--no-approve"):
            opts.approve = False
        elif arg == "--extensions":
            pass  # pi's spelling of "the packages, not pi itself"
        elif arg == "--":
            opts.specs.extend(it)
        elif arg.startswith("-"):
            opts.pip.append(arg)
            if arg in VALUE_OPTIONS:
                opts.pip.append(next(it, ""))
        else:
            opts.specs.append(arg)
    if opts.approve is None:  # ``pi -a install -l ...``: the option came before the subcommand
        from pi_host.cli.args import prescan

        opts.approve = prescan(sys.argv[1:]).approve
    return opts


def normalise_spec(spec: str, cwd: str) -> str:
    """What pip is given and the manifest records: an absolute path for a local path, a
    ``git+`` URL for pi's ``git:`` sources and bare repository URLs, else the requirement."""
    if spec.startswith("git:") and not spec.startswith("git://"):
        return "git+https://" + spec[4:]
    if spec.startswith(("https://", "http://", "ssh://")) and not ARCHIVE.search(spec):
        return "git+" + spec
    if spec.startswith(("git+", "git://")) or "://" in spec or " @ " in spec:
        return spec
    looks_like_path = spec.startswith((".", "/", "~")) or os.sep in spec or ARCHIVE.search(spec)
    if looks_like_path or os.path.exists(os.path.join(cwd, spec)):
        return os.path.abspath(os.path.join(cwd, os.path.expanduser(spec)))
    return spec


def _scope_path(opts: Options, cwd: str) -> str | None:
    """The manifest this command writes; None (after one line) for an untrusted project."""
    if not opts.local:
        return manifest.manifest_path("user")
    from pi_host.config.trust import decide_trust

    decision = decide_trust(cwd, opts.approve)
    if not decision.trusted:
        _err(
            f"pi: project packages need a trusted project ({decision.reason}); "
            "trust it first or pass -a/--approve"
        )
        return None
    return manifest.manifest_path("project", cwd)


def _provides(dists: dict[str, Any], name: str) -> str:
    dist = dists.get(normalise(name))
    names = [ep.split(" = ")[0] for ep in dist.entry_points] if dist else []
    return f" (provides: {', '.join(names)})" if names else " (provides no pi_host entry points)"


def _install_one(spec: str, opts: Options, path: str, pip_extra: list[str]) -> bool:
    if os.path.isabs(spec) and not os.path.exists(spec):
        _err(f"pi: installing {spec} failed: no such file or directory")
        return False
    args = ["install"] + (["-U"] if opts.upgrade else []) + pip_extra
    args += ["-e", spec] if opts.editable else [spec]
    result = run_pip(args, verbose=opts.verbose)
    if not result.ok:
        detail = result.error_line() if not opts.verbose else "see pip's output above"
        _err(f"pi: installing {spec} failed: {detail}")
        return False
    for line in result.warnings():
        _err(f"pi: pip: {line}")
    requested = list(result.requested)
    dists = installed()
    if not requested:  # already satisfied: pip installed nothing
        match = NAME.match(spec)
        dist = dists.get(normalise(match.group(1))) if match and not os.path.isabs(spec) else None
        if dist is None:
            _err(f"pi: pip installed nothing for {spec}; not recorded")
            return False
        requested = [(dist.name, dist.version)]
        _out(f"{dist.name} {dist.version} is already installed{_provides(dists, dist.name)}")
    else:
        for name, version in requested:
            _out(f"Installed {name} {version}{_provides(dists, name)}")
    if result.others:
        _out("  with " + ", ".join(f"{n} {v}" for n, v in sorted(result.others)))
    for name, version in requested:
        if normalise(name) == HOST:
            continue
        manifest.record(path, spec, name, version, opts.editable)
    return True


def cmd_install(argv: list[str]) -> int:
    opts = parse(argv)
    if opts.help or (not opts.specs and not opts.sync):
        (sys.stdout if opts.help else sys.stderr).write(INSTALL_USAGE)
        return 0 if opts.help else 1
    cwd = os.getcwd()
    if opts.sync:
        return _sync(opts, cwd)
    path = _scope_path(opts, cwd)
    if path is None:
        return 1
    npm = [spec for spec in opts.specs if spec.startswith("npm:")]
    if npm:
        _err(
            f"pi: {npm[0]} is an npm package (pi's TypeScript extensions); pi-host installs Python "
            "plugin packages: a requirement, a path or a git URL"
        )
        return 1
    ok = True
    try:
        for spec in opts.specs:
            ok = _install_one(normalise_spec(spec, cwd), opts, path, opts.pip) and ok
    except PipMissing as exc:
        _err(f"pi: {exc}")
        return 1
    return 0 if ok else 1


def _scopes(cwd: str, approve: bool | None) -> list[tuple[str, str]]:
    """(scope, manifest path) of the user list and, for a trusted project, the project's."""
    found = [("user", manifest.manifest_path("user"))]
    project = manifest.manifest_path("project", cwd)
    if os.path.exists(project):
        from pi_host.config.trust import decide_trust

        if decide_trust(cwd, approve).trusted:
            found.append(("project", project))
        else:
            _err(f"pi: skipping {project}: the project is not trusted")
    return found


def _sync(opts: Options, cwd: str) -> int:
    dists = installed()
    missing: list[tuple[str, dict[str, Any]]] = []
    for _scope, path in _scopes(cwd, opts.approve):
        for entry in manifest.read_entries(path):
            if normalise(entry["name"]) not in dists and entry.get("spec"):
                missing.append((path, entry))
    if not missing:
        _out("Every recorded plugin package is installed")
        return 0
    ok = True
    try:
        for path, entry in missing:
            one = Options()
            one.editable, one.verbose = bool(entry.get("editable")), opts.verbose
            ok = _install_one(entry["spec"], one, path, opts.pip) and ok
    except PipMissing as exc:
        _err(f"pi: {exc}")
        return 1
    return 0 if ok else 1


def cmd_remove(argv: list[str]) -> int:
    opts = parse(argv)
    if opts.help or not opts.specs:
        (sys.stdout if opts.help else sys.stderr).write(REMOVE_USAGE)
        return 0 if opts.help else 1
    cwd = os.getcwd()
    path = _scope_path(opts, cwd)
    if path is None:
        return 1
    other = manifest.manifest_path("user" if opts.local else "project", cwd)
    entries = manifest.read_entries(path)
    dists = installed()
    code = 0
    for key in opts.specs:
        entry = manifest.find(entries, key) or manifest.find(entries, normalise_spec(key, cwd))
        name = entry["name"] if entry else key
        if normalise(name) == HOST:
            _err("pi: pi-host itself is not removed by pi remove")
            code = 1
            continue
        if normalise(name) not in dists:
            if entry and manifest.forget(path, name):
                _out(f"Removed {name} from {path} (it was not installed here)")
            else:
                _err(f"pi: {key} is not installed")
                code = 1
            continue
        if manifest.find(manifest.read_entries(other), name):
            manifest.forget(path, name)
            _out(f"Removed {name} from {path}; still installed: {other} lists it")
            continue
        try:
            result = run_pip(["uninstall", "-y", dists[normalise(name)].name], verbose=opts.verbose)
        except PipMissing as exc:
            _err(f"pi: {exc}")
            return 1
        if not result.ok:
            _err(f"pi: removing {name} failed: {result.error_line()}")
            code = 1
            continue
        manifest.forget(path, name)
        _out(f"Removed {dists[normalise(name)].name} {dists[normalise(name)].version}")
    return code


def _rows(cwd: str, approve: bool | None) -> list[dict[str, Any]]:
    from pi_host.config.trust import decide_trust
    from pi_packages.provided import provided

    dists = installed()
    shipped = provided(cwd, decide_trust(cwd, approve).trusted)
    recorded: dict[str, tuple[str, dict[str, Any]]] = {}
    for scope, path in reversed(_scopes(cwd, approve)):  # a project entry wins over the user's
        for entry in manifest.read_entries(path):
            recorded.setdefault(normalise(entry["name"]), (scope, entry))
    rows = []
    for key, dist in sorted(dists.items()):
        if key == HOST or not dist.entry_points:
            continue
        scope, entry = recorded.get(key, ("-", {}))
        rows.append(
            {
                "name": dist.name,
                "version": dist.version,
                "scope": scope,
                "spec": entry.get("spec"),
                "entryPoints": dist.entry_points,
                "installed": True,
                "resources": shipped.pop(key, {}).get("resources", {}),
            }
        )
    for package in shipped.values():  # pi packages (folders) and plugins the settings name
        rows.append(
            {
                "name": package["name"],
                "version": None,
                "scope": "settings",
                "spec": None,
                "entryPoints": [],
                "installed": True,
                "resources": package["resources"],
            }
        )
    for key, (scope, entry) in sorted(recorded.items()):
        if key not in dists:
            rows.append(
                {
                    "name": entry["name"],
                    "version": entry.get("version"),
                    "scope": scope,
                    "spec": entry.get("spec"),
                    "entryPoints": [],
                    "installed": False,
                    "resources": {},
                }
            )
    return rows


def cmd_list(argv: list[str]) -> int:
    opts = parse(argv)
    if opts.help:
        sys.stdout.write(LIST_USAGE)
        return 0
    rows = _rows(os.getcwd(), opts.approve)
    if opts.json:
        _out(json.dumps(rows, indent=2))
        return 0
    if not rows:
        _out("No plugin packages installed")
        return 0
    for row in rows:
        state = "" if row["installed"] else "  MISSING (pi install --sync)"
        _out(f"{row['name']} {row['version'] or '-'}  [{row['scope']}]{state}")
        if row["spec"]:
            _out(f"    from: {row['spec']}")
        for ep in row["entryPoints"]:
            _out(f"    pi_host: {ep}")
        for kind, names in row["resources"].items():
            _out(f"    {kind}: {', '.join(names)}")
    return 0


def cmd_update(argv: list[str]) -> int:
    opts = parse(argv)
    if opts.help:
        sys.stdout.write(UPDATE_USAGE)
        return 0
    cwd = os.getcwd()
    targets: list[tuple[str, dict[str, Any]]] = []
    scopes = _scopes(cwd, opts.approve)
    if opts.local:
        path = _scope_path(opts, cwd)
        if path is None:
            return 1
        scopes = [("project", path)]
    for _scope, path in scopes:
        for entry in manifest.read_entries(path):
            targets.append((path, entry))
    if opts.specs:
        chosen = []
        for key in opts.specs:
            found = [t for t in targets if manifest.find([t[1]], key)]
            if not found:
                _err(f"pi: {key} is not a recorded plugin package (see pi list)")
                return 1
            chosen += found
        targets = chosen
    if not targets:
        _out("No recorded plugin packages to update")
        return 0
    ok = True
    try:
        for path, entry in targets:
            one = Options()
            one.editable, one.verbose, one.upgrade = bool(entry.get("editable")), opts.verbose, True
            ok = _install_one(entry["spec"], one, path, opts.pip) and ok
    except PipMissing as exc:
        _err(f"pi: {exc}")
        return 1
    return 0 if ok else 1
