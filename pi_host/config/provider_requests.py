"""A provider's own part of a request on a shared wire API (``ProviderInfo.prepare``) and its
auth.json ``env``, put in front of the API's stream function by the model registry."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any


def provider_stream(fn: Callable[..., Any], prepare: Callable[..., Any] | None, env: dict[str, str]) -> Any:
    """``fn`` with the provider's ``env`` in ``options.extra["env"]`` (variables the caller gave
    there win) and its ``prepare`` applied; a ``ValueError`` from ``prepare`` (a set-up that cannot
    work, such as Azure without an endpoint) is the stream's one ``error`` event."""

    def stream(model: Any, context: Any, options: Any) -> Any:
        if env:
            options.extra = {**options.extra, "env": {**env, **options.extra.get("env", {})}}
        if prepare is not None:
            try:
                model, options = prepare(model, options)
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
