"""OpenTelemetry traces of pi-host runs (``pip install 'pi-host[otel]'``), following the GenAI
semantic conventions: ``invoke_agent`` per run of the agent, ``chat`` per provider request (model,
tokens, cost), ``execute_tool`` per tool call, and a sub-agent's run nested under its parent's
``task`` tool span.

Configured only through the standard variables: tracing is on when ``OTEL_TRACES_EXPORTER`` or an
``OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT`` is set (and ``OTEL_SDK_DISABLED`` is not ``true``); the
exporter, headers, service name and resource come from the ``OTEL_*`` variables the SDK reads.
Prompts, answers and tool arguments/results are recorded only with
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true``. When tracing is off this module is
all that loads: the SDK is imported on the first session of a traced run.
"""

from __future__ import annotations

import os

from pi_host import hookimpl

ON_VARIABLES = ("OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")


def enabled(environ: dict[str, str] | os._Environ[str] = os.environ) -> bool:
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    exporter = environ.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if exporter == "none":
        return False
    return any(environ.get(name) for name in ON_VARIABLES)


@hookimpl
def on_session_start(event, ctx):
    if not enabled():
        return
    from pi_otel import tracing  # the SDK loads here, in traced runs only

    tracing.attach(ctx.session)


@hookimpl
def on_session_shutdown(event, ctx):
    if not enabled():
        return
    from pi_otel import tracing

    tracing.detach(ctx.session)
