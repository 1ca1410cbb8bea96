"""The start-up line about recorded packages this environment lacks.

Cost when there is no manifest (the usual case): one failed ``stat``. With one, a small JSON read
and a look at the plugin records loading already made (an installed plugin's record names its
distribution); only names missing there are looked up with ``importlib.metadata``.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from pi_packages import manifest


def missing_packages(ctx: Any) -> list[str]:
    paths = [manifest.manifest_path("user")]
    if ctx.is_project_trusted():
        paths.append(manifest.manifest_path("project", ctx.cwd))
    paths = [p for p in paths if os.path.exists(p)]
    if not paths:
        return []
    names = {manifest.normalise(e["name"]): e["name"] for p in paths for e in manifest.read_entries(p)}
    host = getattr(ctx.session, "host", None)
    seen = {manifest.normalise(r.origin) for r in getattr(host, "records", ()) if r.source == "installed"}
    missing = []
    for key, name in sorted(names.items()):
        if key in seen:
            continue
        from importlib.metadata import PackageNotFoundError, distribution

        try:
            distribution(name)
        except PackageNotFoundError:
            missing.append(name)
    return missing


def startup_hint(ctx: Any) -> None:
    if ctx.mode == "sdk":
        return
    missing = missing_packages(ctx)
    if not missing:
        return
    count = len(missing)
    line = (
        f"{count} recorded plugin package{'s' if count > 1 else ''} "
        f"{'are' if count > 1 else 'is'} not installed in this environment ({', '.join(missing)}): "
        "run 'pi install --sync'"
    )
    if ctx.has_ui and ctx.mode == "interactive":
        ctx.ui.notify(line, "warning")
    else:
        sys.stderr.write(f"pi: {line}\n")
        sys.stderr.flush()
