"""JSON mode (``--mode json``): the session header, then one JSON line per session event."""

from pi_host import hookimpl
from pi_host.plugins.registrations import Mode


async def run(request):
    from pi_mode_json.runner import run_json

    return await run_json(request)


@hookimpl
def register_modes():
    return [
        Mode(name="json", run=run, description="Print every session event as JSON lines", opens_session=True)
    ]
