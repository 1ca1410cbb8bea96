"""The ``pi`` / ``pi-host`` command.

Kept tiny on purpose: ``--version`` answers without importing anything else; every other command
loads plugins the same way (:mod:`pi_host.cli.run`), and the heavier modules (typer, pydantic,
httpx) load only for the commands that need them.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in ("--version", "-v") or args == ["version"]:
        from pi_host._version import __version__

        sys.stdout.write(f"{__version__}\n")
        return 0
    from pi_host.cli.run import run_cli

    return run_cli(args)
