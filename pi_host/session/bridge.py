"""The loop's callbacks mapped onto plugin events (reference §4.6, §9.3).

Each method is handed to :class:`pi_host.loop.loop.LoopConfig`: the loop stays ignorant of
plugins, and this is the one place that knows which event a callback becomes and how its
returns fold (chained ``context`` lists, ``tool_call`` blocks, ``tool_result`` patches,
``before_provider_request`` payloads, provider header/response/stream bridges).
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from pi_host.loop.tools import ToolResult
from pi_host.plugins.dispatch import is_stop
from pi_host.protocol import StreamOptions

if TYPE_CHECKING:
    from pi_host.session import AgentSession


class PluginBridge:
    def __init__(self, session: AgentSession) -> None:
        self.session = session

    def stream_options(self) -> StreamOptions:
        return StreamOptions(
            session_id=self.session.session_id,
            thinking_level=self.session.thinking_level,
            on_payload=self.on_payload if self.session.host.has("on_before_provider_request") else None,
            thinking_budgets=self.session.config.settings.get("thinkingBudgets"),
            extra=self.provider_extra(),
        )

    def provider_extra(self) -> dict[str, Any]:
        """Provider-level retry settings and hook bridges for the shared HTTP layer
        (``pi_host.lib.llm.http``); callbacks are set only when a plugin listens."""
        settings = self.session.config.settings
        extra: dict[str, Any] = {}
        provider_retry = (settings.get("retry") or {}).get("provider")
        if isinstance(provider_retry, dict):
            extra["retry"] = provider_retry
        if settings.get("httpIdleTimeoutMs"):
            extra["httpIdleTimeoutMs"] = settings["httpIdleTimeoutMs"]
        host, ctx, model = self.session.host, self.session.ctx, self.session.model
        if host.has("on_before_provider_headers"):

            async def on_headers(headers: dict[str, Any]) -> None:
                await host.dispatch("before_provider_headers", {"headers": headers}, ctx)

            extra["onHeaders"] = on_headers
        if host.has("on_after_provider_response"):

            async def on_response(status: int, headers: dict[str, Any]) -> None:
                await host.dispatch("after_provider_response", {"status": status, "headers": headers}, ctx)

            extra["onResponse"] = on_response
        if host.has("on_provider_stream_event"):

            async def on_stream_event(data: Any) -> None:
                event = {"provider": model.provider, "api": model.api, "model": model.id, "data": data}
                await host.dispatch("provider_stream_event", event, ctx)

            extra["onStreamEvent"] = on_stream_event
        return extra

    async def on_payload(self, payload: dict[str, Any]) -> Any:
        event = {"payload": payload}

        def fold(ev: dict[str, Any], result: Any) -> None:
            ev["payload"] = result

        await self.session.host.dispatch("before_provider_request", event, self.session.ctx, fold=fold)
        return event["payload"]

    def api_key(self, provider: str) -> str | None:
        return self.session.config.api_key or self.session.registry.get_api_key(provider)

    async def transform_context(self, messages: list[Any]) -> list[Any]:
        if self.session.host.has("on_context"):
            head = [m for m in messages if getattr(m, "role", None) == "system"]
            event = {"messages": copy.deepcopy([m for m in messages if getattr(m, "role", None) != "system"])}

            def fold(ev: dict[str, Any], result: Any) -> None:
                if isinstance(result, dict) and result.get("messages") is not None:
                    ev["messages"] = result["messages"]

            result = await self.session.host.dispatch("context", event, self.session.ctx, fold=fold)
            if result is not None:
                messages = head + list(event["messages"])
        if self.session.host.has("on_context_with_system"):
            event = {"messages": list(messages)}

            def fold_all(ev: dict[str, Any], result: Any) -> None:
                if isinstance(result, dict) and result.get("messages") is not None:
                    ev["messages"] = result["messages"]

            await self.session.host.dispatch("context_with_system", event, self.session.ctx, fold=fold_all)
            messages = event["messages"]
        return messages

    async def before_tool_call(self, call: dict[str, Any]) -> Any:
        tool_call = call["toolCall"]
        event = {"toolCallId": tool_call.id, "toolName": tool_call.name, "input": call["args"]}
        result = await self.session.host.dispatch("tool_call", event, self.session.ctx, raise_stops=True)
        if isinstance(result, dict) and result.get("error") is not None:
            exc = result["error"]
            if not isinstance(exc, Exception):
                result["reason"] = f"Extension error blocking execution: {exc}"
            self.session.host.report("tool_call", "tool_call", exc)
        return result if result is not None and is_stop(result) else None

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

        def fold(ev: dict[str, Any], patch: Any) -> None:
            if not isinstance(patch, dict):
                return
            if "content" in patch and "structuredContent" not in patch:
                ev["structuredContent"] = None
            for key in ("content", "details", "structuredContent", "isError", "usage", "terminate"):
                if key in patch:
                    ev[key] = patch[key]

        await self.session.host.dispatch("tool_result", event, self.session.ctx, fold=fold)
        return ToolResult(
            content=list(event["content"]),
            details=event["details"],
            structured_content=event["structuredContent"],
            is_error=bool(event["isError"]),
            usage=event["usage"],
            terminate=bool(event["terminate"]),
        )
