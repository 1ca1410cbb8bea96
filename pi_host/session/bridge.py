"""The loop's callbacks mapped onto plugin events (reference §4.6, §9.3).

Each method is handed to :class:`pi_host.loop.loop.LoopConfig`, so the loop stays ignorant of
plugins: this is the one place that knows which event a callback becomes (``context``,
``tool_call``, ``tool_result``, the provider hooks). How returns combine is each event's rule,
declared with its spec; nothing here folds.
"""

from __future__ import annotations

import copy
from typing import Any

from pi_host.loop.tools import ToolResult
from pi_host.protocol import StreamOptions


def provider_retry_settings(settings: dict[str, Any]) -> dict[str, Any] | None:
    """``retry.provider``, with pi's legacy ``retry.maxDelayMs`` as its ``maxRetryDelayMs``."""
    retry = settings.get("retry") if isinstance(settings.get("retry"), dict) else {}
    provider = dict(retry["provider"]) if isinstance(retry.get("provider"), dict) else {}
    if isinstance(retry.get("maxDelayMs"), int) and provider.get("maxRetryDelayMs") is None:
        provider["maxRetryDelayMs"] = retry["maxDelayMs"]
    return provider or None


class PluginBridge:
    def __init__(self, session: Any) -> None:
        self.session = session

    def transport_options(self) -> StreamOptions:
        """What every request of this session shares, whoever sends it (the loop, a summary):
        provider retries, timeouts, thinking budgets, and the secrets errors must not show."""
        settings = self.session.config.settings
        return StreamOptions(
            thinking_budgets=settings.get("thinkingBudgets"),
            retry=provider_retry_settings(settings),
            idle_timeout_ms=settings.get("httpIdleTimeoutMs"),  # 0 and "disabled" are meaningful
            secrets=self.secrets(),
            extra={"transport": settings.get("transport")} if settings.get("transport") else {},  # Codex
        )

    def stream_options(self) -> StreamOptions:
        """Options of one turn's request: the transport options, and the provider hooks, set
        only when a plugin listens (the stream-event one sits on the per-chunk path)."""
        session, host, ctx = self.session, self.session.host, self.session.ctx
        model = session.model
        options = self.transport_options()
        options.session_id = session.session_id
        options.thinking_level = session.thinking_level
        if host.has("on_before_provider_request"):

            async def on_payload(payload: Any) -> Any:
                event = {"payload": payload}
                await host.dispatch("before_provider_request", event, ctx)
                return event["payload"]

            options.on_payload = on_payload
        if host.has("on_before_provider_headers"):

            async def on_headers(headers: dict[str, Any]) -> None:
                await host.dispatch("before_provider_headers", {"headers": headers}, ctx)

            options.on_headers = on_headers
        if host.has("on_after_provider_response"):

            async def on_response(status: int, headers: dict[str, Any]) -> None:
                await host.dispatch("after_provider_response", {"status": status, "headers": headers}, ctx)

            options.on_response = on_response
        if host.has("on_provider_stream_event"):

            async def on_stream_event(data: Any) -> None:
                event = {"provider": model.provider, "api": model.api, "model": model.id, "data": data}
                await host.dispatch("provider_stream_event", event, ctx)

            options.on_stream_event = on_stream_event
        return options

    def secrets(self) -> list[str]:
        """Every key the catalog knows, and ``--api-key``: the provider layer redacts them."""
        registry = getattr(self.session, "registry", None)
        known = list(registry.secrets()) if hasattr(registry, "secrets") else []
        runtime = getattr(self.session.config, "api_key", None)
        return [runtime, *known] if runtime else known

    def api_key(self, provider: str) -> str | None:
        return self.session.config.api_key or self.session.registry.get_api_key(provider)

    async def transform_context(self, messages: list[Any]) -> list[Any]:
        host, ctx = self.session.host, self.session.ctx
        if host.has("on_context"):
            head = [m for m in messages if getattr(m, "role", None) == "system"]
            event = {"messages": copy.deepcopy([m for m in messages if getattr(m, "role", None) != "system"])}
            if await host.dispatch("context", event, ctx) is not None:
                messages = head + list(event["messages"])
        if host.has("on_context_with_system"):
            event = {"messages": list(messages)}
            await host.dispatch("context_with_system", event, ctx)
            messages = event["messages"]
        return messages

    async def before_tool_call(self, call: dict[str, Any]) -> Any:
        tool_call = call["toolCall"]
        event = {"toolCallId": tool_call.id, "toolName": tool_call.name, "input": call["args"]}
        decision = await self.session.host.dispatch("tool_call", event, self.session.ctx)
        return decision if decision is not None and decision.get("block") else None

    async def after_tool_call(self, call: dict[str, Any]) -> Any:
        if not self.session.host.has("on_tool_result"):
            return None
        result: ToolResult = call["result"]
        tool_call = call["toolCall"]
        event = {
            "toolCallId": tool_call.id,
            "toolName": tool_call.name,
            "input": call["args"],
            "content": result.content,
            "details": result.details,
            "structuredContent": result.structured_content,
            "isError": result.is_error,
            "usage": result.usage,
            "terminate": result.terminate,
        }
        await self.session.host.dispatch("tool_result", event, self.session.ctx)
        return ToolResult(
            content=list(event["content"]),
            details=event["details"],
            structured_content=event["structuredContent"],
            is_error=bool(event["isError"]),
            usage=event["usage"],
            terminate=bool(event["terminate"]),
        )
