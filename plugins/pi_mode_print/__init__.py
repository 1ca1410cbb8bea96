"""Print mode (``pi -p``): only the final answer on stdout; errors on stderr, exit 1."""

from pi_host import hookimpl
from pi_host.plugins.registrations import Mode


async def run(request):
    from pi_mode_print.runner import run_print

    return await run_print(request)


@hookimpl
def register_modes():
    return [
        Mode(
            name="print",
            run=run,
            description="Print the final assistant text and exit",
            aliases=["text"],
            opens_session=True,
        )
    ]
