"""Session events -> spans (imported only when tracing is on)."""

from __future__ import annotations

import json
import os
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode

AGENT_NAME = "pi-host"
_provider: Any = None
_tool_spans: dict[str, Any] = {}
"""A running sub-agent's session id -> the parent's ``execute_tool`` span (its children's parent)."""
_tracers: dict[int, SessionTracer] = {}


def capture_content() -> bool:
    return os.environ.get("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "").strip().lower() == "true"


def provider() -> Any:
    """The global SDK provider when one is set (an application's, a test's), else one made from
    the ``OTEL_*`` variables with a batching OTLP exporter (or the console's)."""
    global _provider
    if _provider is not None:
        return _provider
    from opentelemetry.sdk.trace import TracerProvider

    current = trace.get_tracer_provider()
    if isinstance(current, TracerProvider):
        _provider = current
        return current
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    made = TracerProvider()  # resource from OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES
    kind = os.environ.get("OTEL_TRACES_EXPORTER", "otlp").strip().lower() or "otlp"
    if kind == "console":
        from opentelemetry.sdk.trace.export import ConsoleSpanExporter

        exporter: Any = ConsoleSpanExporter()
    else:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        exporter = OTLPSpanExporter()  # endpoint, headers, timeout from OTEL_EXPORTER_OTLP_*
    made.add_span_processor(BatchSpanProcessor(exporter))
    _provider = made
    return made


def attach(session: Any) -> None:
    if id(session) in _tracers:
        return
    tracer = SessionTracer(session, provider().get_tracer("pi_otel"))
    _tracers[id(session)] = tracer
    tracer.unsubscribe = session.subscribe(tracer)


def detach(session: Any) -> None:
    tracer = _tracers.pop(id(session), None)
    if tracer is None:
        return
    tracer.close()
    if tracer.unsubscribe is not None:
        tracer.unsubscribe()
    if not _tracers and _provider is not None:
        _provider.force_flush()  # a print run exits right after: send what was recorded


class SessionTracer:
    """One session's spans, from its events."""

    def __init__(self, session: Any, tracer: Any) -> None:
        self.session = session
        self.tracer = tracer
        self.unsubscribe: Any = None
        self.agent: Any = None
        self.chat: Any = None
        self.tools: dict[str, Any] = {}
        self.content = capture_content()

    def __call__(self, event: dict[str, Any]) -> None:
        handler = getattr(self, "on_" + event.get("type", ""), None)
        if handler is not None:
            handler(event)

    def _in(self, parent: Any) -> Any:
        return trace.set_span_in_context(parent) if parent is not None else otel_context.Context()

    def on_agent_start(self, event: dict[str, Any]) -> None:
        session = self.session
        parent = _tool_spans.get(session.session_id)
        self.agent = self.tracer.start_span(
            f"invoke_agent {AGENT_NAME}",
            context=self._in(parent),
            kind=SpanKind.INTERNAL,
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": AGENT_NAME,
                "gen_ai.conversation.id": session.session_id,
                **_model_attributes(session.model),
            },
        )

    def on_message_start(self, event: dict[str, Any]) -> None:
        message = event.get("message")
        if getattr(message, "role", None) != "assistant" or self.agent is None:
            return
        model = self.session.model
        self.chat = self.tracer.start_span(
            f"chat {getattr(model, 'id', '')}".strip(),
            context=self._in(self.agent),
            kind=SpanKind.CLIENT,
            attributes={"gen_ai.operation.name": "chat", **_model_attributes(model)},
        )
        if self.content:
            history = [m.to_json() for m in self.session.messages if getattr(m, "role", None) != "assistant"]
            self.chat.set_attribute("gen_ai.input.messages", json.dumps(history[-20:], default=str))

    def on_message_end(self, event: dict[str, Any]) -> None:
        message = event.get("message")
        if getattr(message, "role", None) != "assistant" or self.chat is None:
            return
        span, self.chat = self.chat, None
        usage = message.usage
        span.set_attributes(
            {
                "gen_ai.response.model": getattr(message, "model", "") or "",
                "gen_ai.response.finish_reasons": [str(message.stop_reason)],
                "gen_ai.usage.input_tokens": int(usage.input or 0) + int(usage.cache_read or 0),
                "gen_ai.usage.output_tokens": int(usage.output or 0),
                "gen_ai.usage.cache_read.input_tokens": int(usage.cache_read or 0),
                "pi_host.usage.cost_usd": float(usage.cost.total or 0),
            }
        )
        if getattr(message, "response_id", None):
            span.set_attribute("gen_ai.response.id", message.response_id)
        if self.content:
            span.set_attribute("gen_ai.output.messages", json.dumps([message.to_json()], default=str))
        if message.stop_reason in ("error", "aborted"):
            span.set_status(Status(StatusCode.ERROR, message.error_message or message.stop_reason))
            span.set_attribute("error.type", message.stop_reason)
        span.end()

    def on_tool_execution_start(self, event: dict[str, Any]) -> None:
        name = event.get("toolName", "")
        span = self.tracer.start_span(
            f"execute_tool {name}",
            context=self._in(self.agent),
            kind=SpanKind.INTERNAL,
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": name,
                "gen_ai.tool.call.id": event.get("toolCallId", ""),
            },
        )
        if self.content:
            span.set_attribute("gen_ai.tool.call.arguments", json.dumps(event.get("args"), default=str))
        self.tools[event.get("toolCallId", "")] = span

    def on_tool_execution_end(self, event: dict[str, Any]) -> None:
        span = self.tools.pop(event.get("toolCallId", ""), None)
        if span is None:
            return
        if event.get("isError"):
            span.set_status(Status(StatusCode.ERROR))
            span.set_attribute("error.type", "tool_error")
        if self.content:
            span.set_attribute("gen_ai.tool.call.result", json.dumps(event.get("result"), default=str))
        span.end()

    def on_subagent_start(self, event: dict[str, Any]) -> None:
        span = self.tools.get(event.get("toolCallId") or "")
        if span is not None:
            _tool_spans[event["subagentId"]] = span

    def on_subagent_end(self, event: dict[str, Any]) -> None:
        _tool_spans.pop(event.get("subagentId", ""), None)

    def on_budget_exceeded(self, event: dict[str, Any]) -> None:
        if self.agent is not None:
            self.agent.add_event("budget_exceeded", {k: str(v) for k, v in event.items() if k != "type"})

    def on_agent_end(self, event: dict[str, Any]) -> None:
        for span in (self.chat, self.agent):
            if span is not None:
                span.end()
        self.chat = self.agent = None

    def close(self) -> None:
        for span in [*self.tools.values(), self.chat, self.agent]:
            if span is not None:
                span.end()
        self.tools.clear()
        self.chat = self.agent = None


def _model_attributes(model: Any) -> dict[str, Any]:
    if model is None:
        return {}
    return {"gen_ai.provider.name": str(model.provider), "gen_ai.request.model": str(model.id)}
