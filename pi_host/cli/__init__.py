"""The ``pi`` / ``pi-host`` command.

Kept tiny on purpose: ``--version`` answers without importing anything else, and the heavier modules
(typer, pluggy, pydantic, httpx) load only for the commands that need them.
"""

from __future__ import annotations

import sys

BUILTIN_SUBCOMMANDS = ("plugins",)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in ("--version", "-v") or args == ["version"]:
        from pi_host._version import __version__

        sys.stdout.write(f"{__version__}\n")
        return 0
    if args and args[0] == "plugins":
        from pi_host.cli.plugins_cmd import run_plugins_command

        return run_plugins_command(args[1:])
    from pi_host.cli.run import run_cli

    return run_cli(args)
