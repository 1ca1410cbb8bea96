"""Interactive mode (``pi`` on a terminal): one long-running inline prompt-toolkit application.

The editor, queue, dialogs, status and footer stay pinned at the bottom of the terminal; finished
output is printed above them into the terminal's own scrollback. Everything is drawn through the
renderers registered with ``register_renderers`` (the built-ins live in ``pi_render_builtin``).
prompt-toolkit is imported only when this mode runs.
"""

from pi_host import hookimpl
from pi_host.plugins.registrations import CliFlag, Mode


async def run(request):
    import gc

    gc.disable()  # as during the CLI's start-up: the app turns it back on after its first frame
    from pi_mode_interactive.app import run_interactive

    return await run_interactive(request)


@hookimpl
def register_modes():
    return [
        Mode(
            name="interactive",
            run=run,
            description="The terminal interface (the default on a terminal)",
            has_ui=True,
            can_ask=True,
            opens_session=True,
        )
    ]


@hookimpl
def register_cli_flags():
    return [
        CliFlag("theme", "Load a theme file or directory (repeatable)", type="list"),
        CliFlag("use-theme", "The terminal theme for this run: a name, or light/dark", type="string"),
        CliFlag("no-themes", "Only the built-in dark and light themes"),
        CliFlag(
            "tui-mode",
            "Terminal layout: regular (inline) or fullscreen (start in the transcript view)",
            type="string",
        ),
    ]
