"""``pi install``, ``pi remove`` (``uninstall``), ``pi list`` and ``pi update``: plugin packages
installed with pip into the environment pi-host runs in, recorded in a manifest so that
``pi install --sync`` brings them back into a fresh environment."""

from __future__ import annotations

import json
import os
import re
import sys
from typing import Any

from pi_packages import build_tools, manifest, npm
from pi_packages.pip_runner import HOST, PipMissing, installed, normalise, pip_command, run_pip
from pi_packages.specs import normalise_spec, pip_install_args, spec_problem

INSTALL_USAGE = """\
Usage: pi install [-l] [--copy] [--editable] [-U] [-v] [pip options...] <requirement | path | git URL>...
       pi install [-l] [-v] npm:<package>[@version]...
       pi install --sync [-v] [pip options...]
       pi install --node

Install plugin packages with pip into the environment pi-host runs in, and record them in
<agent dir>/pi-host-packages.json (-l/--local: the project's .pi/pi-host-packages.json, trusted
projects only). A local folder is installed by reference (pip's editable install: later edits
are used, and /reload re-imports them); --copy installs a snapshot instead. A path is recorded as
an absolute path; git:host/owner/repo[@ref] and repository URLs install with git. npm:<package> is one of pi's TypeScript extension packages: npm installs it
into <agent dir>/pi-host/npm (Node.js and npm are fetched from the npm registry when missing;
--node does only that) and it loads at start-up. --sync installs every recorded package that is
missing here (after pi-host was reinstalled into a fresh environment). Other options (--no-deps,
--no-build-isolation, --index-url URL, --pre...) are passed to pip; -v shows pip's own output.
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
       pi update models

Upgrade the recorded plugin packages (all of them, or those named) with pip install -U.
"models" refreshes the model lists fetched per key (OpenRouter's) now, as pi does.
"""

# pip options that take a value (so the value is not mistaken for a package spec)
VALUE_OPTIONS = {
    "-i", "--index-url", "--extra-index-url", "-f", "--find-links", "-c", "--constraint",
    "--platform", "--python-version", "--implementation", "--abi", "--root", "--prefix",
    "--src", "--upgrade-strategy", "--progress-bar", "--cache-dir", "--trusted-host",
    "--config-settings", "-C", "--global-option", "--proxy", "--timeout", "--retries",
    "--no-binary", "--only-binary", "--cert", "--client-cert", "--exists-action", "--log",
    "-r", "--requirement", "-t", "--target", "--default-timeout", "--keyring-provider",
    "--log-file", "--root-user-action", "--use-feature", "--use-deprecated",
}  # fmt: skip
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
        self.copy = False
        """A local folder as a snapshot (pip's ordinary install) instead of by reference."""
        self.approve: bool | None = None
        self.json = self.help = self.node = False
        self.pip: list[str] = []
        self.specs: list[str] = []
        self.problem: str | None = None
        """One line saying why the command line cannot be run as it is."""


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
        elif arg == "--copy":
            opts.copy = True
        elif arg in ("-U", "--upgrade"):
            opts.upgrade = True
        elif arg in ("-v", "--verbose"):
            opts.verbose = True
        elif arg == "--sync":
            opts.sync = True
        elif arg == "--json":
            opts.json = True
        elif arg == "--node":
            opts.node = True
        elif arg in ("-a", "--approve"):
            opts.approve = True
        elif arg in ("-na", "--no-approve"):
            opts.approve = False
        elif arg == "--extensions":
            pass  # pi's spelling of "the packages, not pi itself"
        elif arg == "--":
            opts.specs.extend(it)
        elif arg == "-e":  # pip's -e takes the next argument: never let it take a spec
            opts.problem = "-e is pi's --extension, not pip's; use --editable for an editable install"
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
    # pi installs a local folder by reference: here pip's editable install, unless --copy
    folder = os.path.isabs(spec) and any(
        os.path.isfile(os.path.join(spec, name)) for name in ("pyproject.toml", "setup.py")
    )  # (pip names a folder that is no project more plainly when it is not asked to edit it)
    editable = opts.editable or (folder and not opts.copy)
    tools = None
    if folder and "--no-build-isolation" not in pip_extra and pip_command()[1]:
        built = build_tools.plan(spec, editable, pip_extra, opts.upgrade)
        if built is not None:
            pip_extra, tools = [*pip_extra, *built.pip_options()], built.tools
    args = ["install"] + (["-U"] if opts.upgrade else []) + pip_extra
    args += pip_install_args(spec, editable)
    result = run_pip(args, verbose=opts.verbose, build_tools=tools)
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
        manifest.record(path, spec, name, version, editable)
    return True


def _npm_step(step: Any) -> int:
    """Run one npm action; its failure is one line."""
    try:
        step()
    except npm.NpmError as exc:
        _err(f"pi: {exc}")
        return 1
    return 0


def _is_npm(entry: dict[str, Any]) -> bool:
    return entry.get("kind") == "npm"


def _refused(spec: Any, path: str | None = None, name: str = "") -> bool:
    """One line when ``spec`` (from the command line, or ``name``'s in manifest ``path``) must not
    reach pip; whether it was refused."""
    problem = spec_problem(spec)
    if problem is not None:
        where = f"{path}: refusing {name}'s spec" if path else "refusing"
        _err(f"pi: {where} {spec!r}: {problem}")
    return problem is not None


def cmd_install(argv: list[str]) -> int:
    opts = parse(argv)
    if opts.help or (not opts.specs and not opts.sync and not opts.node):
        (sys.stdout if opts.help else sys.stderr).write(INSTALL_USAGE)
        return 0 if opts.help else 1
    if opts.problem:
        _err(f"pi: {opts.problem}")
        return 1
    cwd = os.getcwd()
    if opts.node:
        return _npm_step(lambda: _out(f"Node.js for TypeScript extensions: {npm.ensure_node(_out)}"))
    if opts.sync:
        return _sync(opts, cwd)
    if [spec for spec in opts.specs if _refused(spec)]:  # nothing is installed: every spec is named
        return 1
    path = _scope_path(opts, cwd)
    if path is None:
        return 1
    created = not os.path.exists(path)
    ok = True
    try:
        for spec in opts.specs:
            if spec.startswith("npm:"):
                ok = (
                    _npm_step(lambda spec=spec: npm.install(spec, path, opts.pip, opts.verbose, _out)) == 0
                    and ok
                )
            else:
                ok = _install_one(normalise_spec(spec, cwd), opts, path, opts.pip) and ok
    except PipMissing as exc:
        _err(f"pi: {exc}")
        return 1
    if created and opts.local and os.path.exists(path):
        _project_list_note(cwd, opts.approve)
    return 0 if ok else 1


def _project_list_note(cwd: str, approve: bool | None) -> None:
    """The project's list is a protected resource (like .pi/settings.json): a project that was
    trusted only because it had nothing to protect now needs a decision before pi reads it."""
    from pi_host.config.trust import decide_trust

    if not decide_trust(cwd, approve).trusted:
        _err(
            f"pi: {manifest.manifest_path('project', cwd)} is read only in a trusted project: "
            "trust this one (/trust, or -a/--approve) for pi list, pi install --sync and the "
            "start-up check to use it"
        )


def _scopes(cwd: str, approve: bool | None, skipped: list[str] | None = None) -> list[tuple[str, str]]:
    """(scope, manifest path) of the user list and, for a trusted project, the project's (an
    untrusted project's list is one line, and its path is added to ``skipped``)."""
    found = [("user", manifest.manifest_path("user"))]
    project = manifest.manifest_path("project", cwd)
    if os.path.exists(project):
        from pi_host.config.trust import decide_trust

        decision = decide_trust(cwd, approve)
        if decision.trusted:
            found.append(("project", project))
        else:
            _err(
                f"pi: skipping {project}: the project is not trusted ({decision.reason}); "
                "trust it (/trust, or -a/--approve) to use its packages"
            )
            if skipped is not None:
                skipped.append(project)
    return found


def _recorded(scopes: list[tuple[str, str]]) -> list[tuple[str, dict[str, Any]]]:
    """Every (manifest path, entry) of ``scopes``."""
    return [(path, entry) for _scope, path in scopes for entry in manifest.read_entries(path, True)]


def _allowed(targets: list[tuple[str, dict[str, Any]]]) -> tuple[list[tuple[str, dict[str, Any]]], bool]:
    """The ``targets`` whose recorded spec may go to pip, and whether all of them may (a manifest
    can come with a repository: each refused spec is one line and is skipped)."""
    good = [(path, e) for path, e in targets if not _refused(e.get("spec"), path, e["name"])]
    return good, len(good) == len(targets)


def _sync(opts: Options, cwd: str) -> int:
    dists = installed()
    skipped: list[str] = []
    recorded = _recorded(_scopes(cwd, opts.approve, skipped))
    npm_missing = [(p, e) for p, e in recorded if _is_npm(e) and npm.installed_version(e["name"]) is None]
    recorded = [(p, e) for p, e in recorded if not _is_npm(e)]
    npm_ok = all(
        _npm_step(lambda p=p, e=e: npm.install(e["spec"], p, [], opts.verbose, _out)) == 0
        for p, e in npm_missing
    )
    missing, ok = _allowed([(p, e) for p, e in recorded if normalise(e["name"]) not in dists])
    ok = ok and npm_ok
    ok = ok and not skipped  # an untrusted project's packages were asked for and not installed
    if not missing:
        if ok and not npm_missing:
            _out("Every recorded plugin package is installed")
        return 0 if ok else 1
    try:
        for path, entry in missing:
            one = Options()
            one.editable, one.verbose = bool(entry.get("editable")), opts.verbose
            one.copy = not one.editable  # as it was installed
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
    entries = manifest.read_entries(path, True)
    dists = installed()
    code = 0
    for key in opts.specs:
        entry = manifest.find(entries, key) or manifest.find(entries, normalise_spec(key, cwd))
        if entry is None and key.startswith("npm:"):
            entry = manifest.find(entries, npm.package_name(key))
        if entry is not None and _is_npm(entry):
            other_lists = manifest.find(manifest.read_entries(other, True), entry["name"]) is not None
            code = (
                _npm_step(lambda e=entry, k=other_lists: npm.remove(e, path, opts.verbose, _out, k)) or code
            )
            continue
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
            result = run_pip(["uninstall", "-y", "--", dists[normalise(name)].name], verbose=opts.verbose)
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
    rows = []
    for scope, path in reversed(_scopes(cwd, approve)):  # a project entry wins over the user's
        for entry in manifest.read_entries(path, True):
            if _is_npm(entry):
                rows.append(_npm_row(scope, entry))
            else:
                recorded.setdefault(normalise(entry["name"]), (scope, entry))
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
                "editable": bool(entry.get("editable")),
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


def _npm_row(scope: str, entry: dict[str, Any]) -> dict[str, Any]:
    version = npm.installed_version(entry["name"])
    return {
        "name": entry["name"],
        "version": version or entry.get("version"),
        "scope": scope,
        "spec": entry.get("spec"),
        "entryPoints": [],
        "installed": version is not None,
        "resources": {},
        "npm": npm.package_dir(entry["name"]),
    }


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
            _out(f"    from: {row['spec']}" + ("  (by reference)" if row.get("editable") else ""))
        for ep in row["entryPoints"]:
            _out(f"    pi_host: {ep}")
        if row.get("npm") and row["installed"]:
            _out(f"    npm: {row['npm']} (TypeScript extensions, loaded through ts-bridge)")
        for kind, names in row["resources"].items():
            _out(f"    {kind}: {', '.join(names)}")
    return 0


def cmd_update(argv: list[str]) -> int:
    if argv == ["models"]:
        return _update_models()
    opts = parse(argv)
    if opts.help:
        sys.stdout.write(UPDATE_USAGE)
        return 0
    if opts.problem:
        _err(f"pi: {opts.problem}")
        return 1
    cwd = os.getcwd()
    if opts.local:
        path = _scope_path(opts, cwd)
        if path is None:
            return 1
        scopes = [("project", path)]
    else:
        scopes = _scopes(cwd, opts.approve)
    targets = _recorded(scopes)
    if opts.specs:
        chosen = []
        for key in opts.specs:
            found = [t for t in targets if manifest.find([t[1]], key)]
            if not found:
                _err(f"pi: {key} is not a recorded plugin package (see pi list)")
                return 1
            chosen += found
        targets = chosen
    npm_targets = [(p, e) for p, e in targets if _is_npm(e)]
    npm_ok = all(
        _npm_step(lambda p=p, e=e: npm.install(e["spec"], p, [], opts.verbose, _out)) == 0
        for p, e in npm_targets
    )
    targets, valid = _allowed([(p, e) for p, e in targets if not _is_npm(e)])
    valid = valid and npm_ok
    if not targets and npm_targets:
        return 0 if valid else 1
    if not targets:
        if valid:
            _out("No recorded plugin packages to update")
        return 0 if valid else 1
    ok = valid
    try:
        for path, entry in targets:
            one = Options()
            one.editable, one.verbose, one.upgrade = bool(entry.get("editable")), opts.verbose, True
            one.copy = not one.editable
            ok = _install_one(entry["spec"], one, path, opts.pip) and ok
    except PipMissing as exc:
        _err(f"pi: {exc}")
        return 1
    return 0 if ok else 1


def _update_models() -> int:
    # pi's `pi update models`: fetch the per-key model lists now (the only network refresh a
    # print run gets; it reads the stored lists).
    from pi_host.config.model_store import update_models_command
    from pi_host.config.models import ModelRegistry
    from pi_host.plugins.selection import PluginRequest, last_loaded, load_plugins

    host = last_loaded() or load_plugins(PluginRequest(cwd=os.getcwd())).host
    return update_models_command(ModelRegistry.from_plugins(host))
