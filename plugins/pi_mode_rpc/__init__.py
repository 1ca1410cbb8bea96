"""RPC mode (``--mode rpc``): pi's editor protocol, JSON lines on stdin and stdout (reference
§10.4). Commands come in on stdin, each answered by one ``response`` record; session events and
the extension UI sub-protocol share stdout."""

from pi_host import hookimpl
from pi_host.plugins.registrations import Mode


async def run(request):
    from pi_mode_rpc.server import RpcServer

    return await RpcServer(request).serve()


@hookimpl
def register_modes():
    return [
        Mode(
            name="rpc",
            run=run,
            description="Serve pi's RPC protocol on stdin/stdout",
            has_ui=True,
            opens_session=True,
        )
    ]
