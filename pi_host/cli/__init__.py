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
    import gc

    # Start-up allocates many long-lived objects (modules, pydantic models, plugin tables) and
    # no garbage: collecting while importing costs ~10 % of start-up for nothing. The collector
    # comes back, with those objects frozen out of its scans, once the session is open.
    gc.disable()
    from pi_host.cli import module_cache
    from pi_host.config.paths import cache_dir

    cache = cache_dir()
    module_cache.install(cache)
    from pi_host.cli import code_cache

    code_cache.install(cache)
    from pi_host.cli.run import run_cli

    code = run_cli(args)
    if argv is None:  # started as the ``pi`` command: skip the interpreter's teardown when safe
        from pi_host.cli.fast_exit import finish

        finish(code)
    return code
