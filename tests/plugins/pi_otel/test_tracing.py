"""pi_otel with the SDK's in-memory exporter: a run with a tool call and a sub-agent gives
invoke_agent / chat / execute_tool spans with the GenAI attributes, the sub-agent's run nested
under the parent's ``task`` span; content only when opted in; off without OTEL_* variables."""

from __future__ import annotations

import pi_provider_faux
import pytest

import pi_host
from tests.support.faux import text, tool_call

otel_sdk = pytest.importorskip("opentelemetry.sdk.trace")
from opentelemetry import trace  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

EXPORTER = InMemorySpanExporter()


@pytest.fixture
def spans(monkeypatch):
    import pi_otel.tracing as tracing

    if not isinstance(trace.get_tracer_provider(), otel_sdk.TracerProvider):
        provider = otel_sdk.TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(EXPORTER))
        trace.set_tracer_provider(provider)
    monkeypatch.setattr(tracing, "_provider", trace.get_tracer_provider())
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
    EXPORTER.clear()
    return EXPORTER


async def _run(tmp_path):
    pi_provider_faux.set_responses(
        [
            tool_call("task", prompt="read notes.txt"),
            tool_call("read", path="notes.txt"),  # the sub-agent
            text("the notes say hi"),  # the sub-agent
            text("done: {{lastToolResult}}"),
        ]
    )
    (tmp_path / "notes.txt").write_text("hi\n")
    session = await pi_host.create_session(
        model="faux/faux-1", cwd=str(tmp_path), settings={}, tools=["read", "task"],
        store_options={"no_session": True},
    )  # fmt: skip
    await session.prompt("delegate")
    await session.close()
    return session


async def test_spans_names_attributes_and_nesting(spans, tmp_path):
    session = await _run(tmp_path)
    done = spans.get_finished_spans()
    names = sorted(s.name for s in done)
    assert names == sorted(
        ["invoke_agent pi-host"] * 2 + ["chat faux-1"] * 4 + ["execute_tool task", "execute_tool read"]
    )
    by_id = {s.context.span_id: s for s in done}
    agents = [s for s in done if s.name.startswith("invoke_agent")]
    parent_agent = next(s for s in agents if s.parent is None)
    child_agent = next(s for s in agents if s.parent is not None)
    task = next(s for s in done if s.name == "execute_tool task")
    read = next(s for s in done if s.name == "execute_tool read")
    assert parent_agent.attributes["gen_ai.conversation.id"] == session.session_id
    assert task.parent.span_id == parent_agent.context.span_id
    assert child_agent.parent.span_id == task.context.span_id  # the sub-agent under its tool span
    assert read.parent.span_id == child_agent.context.span_id
    assert len({s.context.trace_id for s in done}) == 1
    chats = [s for s in done if s.name.startswith("chat")]
    for chat in chats:
        assert by_id[chat.parent.span_id].name.startswith("invoke_agent")
        attrs = chat.attributes
        assert attrs["gen_ai.operation.name"] == "chat" and attrs["gen_ai.request.model"] == "faux-1"
        assert attrs["gen_ai.provider.name"] == "faux" and attrs["gen_ai.usage.input_tokens"] > 0
        assert "pi_host.usage.cost_usd" in attrs and "gen_ai.input.messages" not in attrs
    assert read.attributes["gen_ai.tool.call.id"] and "gen_ai.tool.call.arguments" not in read.attributes


async def test_content_only_when_opted_in(spans, tmp_path, monkeypatch):
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    await _run(tmp_path)
    done = spans.get_finished_spans()
    read = next(s for s in done if s.name == "execute_tool read")
    assert "notes.txt" in read.attributes["gen_ai.tool.call.arguments"]
    chat = next(s for s in done if s.name.startswith("chat"))
    assert "delegate" in chat.attributes["gen_ai.input.messages"]


async def test_off_without_otel_variables(tmp_path, monkeypatch):
    import pi_otel

    for name in pi_otel.ON_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    assert not pi_otel.enabled()
    assert not pi_otel.enabled({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x", "OTEL_SDK_DISABLED": "true"})
    assert pi_otel.enabled({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://x"})
    EXPORTER.clear()
    await _run(tmp_path)
    assert EXPORTER.get_finished_spans() == ()
