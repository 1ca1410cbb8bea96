"""Built-in package management: ``pi install``, ``pi remove`` / ``uninstall``, ``pi list`` and
``pi update`` install plugin packages with pip into the environment pi-host runs in and record
them in a manifest (see :mod:`pi_packages.manifest`); at start-up, one line says when recorded
packages are missing (``pi install --sync`` brings them back). pi's ``extensions`` and
``packages`` settings load the Python plugins they name (:mod:`pi_packages.settings_plugins`).

Importing this module is cheap: the commands load when one runs.
"""

from pi_host import hookimpl
from pi_host.plugins.registrations import Subcommand


def _command(name):
    def run(argv):
        from pi_packages import commands

        return getattr(commands, f"cmd_{name}")(argv)

    return run


@hookimpl
def register_subcommands():
    remove = _command("remove")
    return [
        Subcommand(
            "install", _command("install"), "Install plugin packages with pip (--sync: restore recorded ones)"
        ),
        Subcommand("remove", remove, "Uninstall plugin packages"),
        Subcommand("uninstall", remove, "Uninstall plugin packages (same as remove)"),
        Subcommand("list", _command("list"), "List installed plugin packages"),
        Subcommand("update", _command("update"), "Upgrade recorded plugin packages"),
    ]


@hookimpl
def on_session_start(event, ctx):
    if event.get("reason") != "startup":
        return
    from pi_packages.hint import startup_hint

    startup_hint(ctx)


@hookimpl
def register_settings_plugins(settings_path, problems):
    from pi_host.config.json_files import read_json_object

    data = read_json_object(settings_path)[0]  # already read by plugin selection: cheap
    if data.get("extensions") is None and data.get("packages") is None:
        return []  # the usual case: the module below is not even imported
    from pi_packages.settings_plugins import plugins_named

    return plugins_named(settings_path, data, problems)
