"""The plugin hooks of one provider request, for adapters: without httpx, so a provider that makes
no HTTP request (the scripted ``faux`` one) fires them without paying for the HTTP stack.

``run_request_hooks`` runs ``before_provider_headers`` then ``before_provider_request`` (pi's
order) and returns the body to send; ``stream_event_hook`` gives the ``provider_stream_event``
bridge, or None when nobody listens. :mod:`pi_host.lib.llm.http` offers the same names.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any


async def apply_payload_hook(options: Any, body: dict[str, Any]) -> dict[str, Any]:
    """Run ``options.on_payload`` (sync or async); a non-None return replaces the body."""
    hook = getattr(options, "on_payload", None)
    if hook is None:
        return body
    result = hook(body)
    if inspect.isawaitable(result):
        result = await result
    return body if result is None else result


async def run_request_hooks(options: Any, body: dict[str, Any], headers: dict[str, Any]) -> dict[str, Any]:
    """``options.on_headers`` changes ``headers`` in place (a value set to None drops that
    header), then ``options.on_payload`` may replace the body, which is returned."""
    on_headers = getattr(options, "on_headers", None)
    if on_headers is not None:
        result = on_headers(headers)
        if inspect.isawaitable(result):
            await result
    return await apply_payload_hook(options, body)


def stream_event_hook(options: Any) -> Callable[[Any], Awaitable[None]] | None:
    """``options.on_stream_event`` as an awaitable ``emit(data)``, or None when nobody listens
    (adapters then skip the call: it sits on the per-chunk path)."""
    callback = getattr(options, "on_stream_event", None)
    if callback is None:
        return None

    async def emit(data: Any) -> None:
        result = callback(data)
        if inspect.isawaitable(result):
            await result

    return emit
