"""Request pieces every adapter takes from the shared layer: the replayed system prompt
(``pi_host.protocol.transcript``), configured headers (``pi_host.lib.llm.http.request_headers``) and
surrogate scrubbing (``pi_host.lib.llm.transform.scrub_body``)."""

from __future__ import annotations

from pi_provider_google.stream import prepare as prepare_google
from pi_provider_openai.completions import prepare as prepare_completions
from pi_provider_openai.responses import prepare as prepare_responses

from pi_host.lib.llm.http import request_headers
from pi_host.lib.llm.transform import scrub_body
from pi_host.protocol import AssistantMessage, LlmContext, SystemMessage, TextContent, UserMessage
from pi_host.protocol.transcript import patch_text, replay_system, split_system
from tests.support.providers.openai_google import make_model, options

BASE = "http://127.0.0.1:9/v1"


def transcript() -> list:
    """A prompt patched twice mid-conversation: a section replaced, one deleted, text appended."""
    return [
        SystemMessage(sections={"preamble": "You are terse.", "rules": "<rules>\nno emoji\n</rules>"}),
        UserMessage(content="first"),
        AssistantMessage(
            content=[TextContent(text="ok")], stop_reason="stop", api="x", provider="p", model="m"
        ),
        SystemMessage(
            content="Also answer in French.", sections={"rules": None, "env": "<env>\ncwd=/w\n</env>"}
        ),
        UserMessage(content="second"),
    ]


EXPECTED_PROMPT = "Also answer in French.\n\nYou are terse.\n\n<env>\ncwd=/w\n</env>"


def test_split_system_collapsed_and_in_place():
    messages = transcript()
    prompt, rest = split_system(messages)
    assert prompt == EXPECTED_PROMPT == replay_system(messages).render()
    assert [m.role for m in rest] == ["user", "assistant", "user"]
    prompt, rest = split_system(messages, in_place=True)
    assert prompt == "You are terse.\n\n<rules>\nno emoji\n</rules>"
    assert [m.role for m in rest] == ["user", "assistant", "system", "user"]
    assert patch_text(rest[2]) == "Also answer in French.\n\n<env>\ncwd=/w\n</env>"


def test_completions_collapses_or_sends_patches_in_place():
    _, body, _, _ = prepare_completions(make_model(BASE), LlmContext(messages=transcript()), options())
    assert body["messages"][0] == {"role": "system", "content": EXPECTED_PROMPT}
    assert [m["role"] for m in body["messages"]] == ["system", "user", "assistant", "user"]

    in_place = make_model(BASE, compat={"supportsMidConvoSystemMessages": True})
    _, body, _, _ = prepare_completions(in_place, LlmContext(messages=transcript()), options())
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["system", "user", "assistant", "system", "user"]
    assert body["messages"][3]["content"] == "Also answer in French.\n\n<env>\ncwd=/w\n</env>"


def test_responses_and_google_send_the_replayed_prompt():
    model = make_model(BASE, api="openai-responses", id="gpt-4.1")
    _, body, _ = prepare_responses(model, LlmContext(messages=transcript()), options())
    assert body["input"][0] == {"role": "system", "content": EXPECTED_PROMPT}
    assert [item.get("role") for item in body["input"]].count("system") == 1

    gemini = make_model(BASE, api="google-generative-ai", provider="google", id="gemini-2.5-flash")
    _, body, _ = prepare_google(gemini, LlmContext(messages=transcript()), options())
    assert body["systemInstruction"] == {"parts": [{"text": EXPECTED_PROMPT}]}
    assert [c["role"] for c in body["contents"]] == ["user", "model", "user"]


def test_configured_header_values_resolve_for_every_adapter(monkeypatch):
    monkeypatch.setenv("PI_TEST_TEAM", "blue")
    headers = {"X-Team": "$PI_TEST_TEAM", "x-unset": "$PI_TEST_NOT_SET", "x-literal": "a$$b"}
    caller = {"x-call": "1", "x-literal": None}
    completions = make_model(BASE, headers=headers)
    _, _, sent, _ = prepare_completions(
        completions, LlmContext(messages=transcript()), options(headers=caller)
    )
    assert sent["x-team"] == "blue" and sent["x-call"] == "1"
    assert "x-unset" not in sent and "x-literal" not in sent  # unresolved left out; None deletes
    assert sent["authorization"] == "Bearer sk-test-key"

    gemini = make_model(
        BASE, api="google-generative-ai", provider="google", id="gemini-2.5-flash", headers=headers
    )
    _, _, sent = prepare_google(gemini, LlmContext(messages=transcript()), options())
    assert sent.pop("user-agent").startswith("pi-host/")
    assert sent == {"x-goog-api-key": "sk-test-key", "x-team": "blue", "x-literal": "a$b"}


def test_request_headers_order_and_case():
    model = make_model(BASE, headers={"Authorization": "Bearer from-config"})
    merged = request_headers(model, options(headers={"X-Extra": "y"}), {"Authorization": "Bearer key"})
    assert merged == {"authorization": "Bearer from-config", "x-extra": "y"}


def test_scrub_body_returns_clean_bodies_untouched():
    clean = {"messages": [{"content": "héllo 🎉"}]}
    assert scrub_body(clean) is clean
    dirty = {"messages": [{"content": ["bad \ud800 text", 3]}], "n": None}
    assert scrub_body(dirty) == {"messages": [{"content": ["bad  text", 3]}], "n": None}
