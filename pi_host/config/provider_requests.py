"""A provider's own part of a request on a shared wire API (``ProviderInfo.prepare``) and its
auth.json ``env``, put in front of the API's stream function by the model registry."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Callable
from typing import Any


def provider_stream(fn: Callable[..., Any], prepare: Callable[..., Any] | None, env: dict[str, str]) -> Any:
    """``fn`` with the provider's ``env`` in ``options.extra["env"]`` (variables the caller gave
    there win) and its ``prepare`` applied (``prepare(model, options)``, or
    ``prepare(model, options, context)`` when it takes a third parameter); a ``ValueError`` from ``prepare`` (a set-up that cannot
    work, such as Azure without an endpoint) is the stream's one ``error`` event."""

    # A prepare that names a third parameter also gets the request's context (GitHub Copilot's
    # headers depend on who spoke last).
    wants_context = prepare is not None and len(inspect.signature(prepare).parameters) >= 3

    def stream(model: Any, context: Any, options: Any) -> Any:
        if env:
            options.extra = {**options.extra, "env": {**env, **options.extra.get("env", {})}}
        if prepare is not None:
            try:
                model, options = (
                    prepare(model, options, context) if wants_context else prepare(model, options)
                )
            except ValueError as exc:
                return _failed(model, str(exc))
        return fn(model, context, options)

    return stream


async def _failed(model: Any, text: str) -> AsyncIterator[Any]:
    from pi_host.protocol import AssistantMessage, ErrorEvent

    message = AssistantMessage(
        api=model.api, provider=model.provider, model=model.id, stop_reason="error", error_message=text
    )
    yield ErrorEvent(reason="error", error=message)
