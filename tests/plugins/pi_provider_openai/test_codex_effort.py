"""Thinking off on the Codex API, as pi 1.6.0 sends it: the effort ``none`` (or the model's own
``off`` value), in a ``configuration_update`` item for models that take them (so switching
thinking off keeps the prompt cache, with ``reasoning.effort`` fixed at ``medium``), in
``reasoning.effort`` with a summary otherwise."""

from __future__ import annotations

import base64
import json

import pytest
from pi_provider_openai import codex

from pi_host.config.models import ModelRegistry
from pi_host.plugins.selection import PluginRequest, load_plugins
from pi_host.protocol import LlmContext, StreamOptions, UserMessage


def _token() -> str:
    claims = {"https://api.openai.com/auth": {"chatgpt_account_id": "acct-1"}}
    part = base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=")
    return f"e30.{part}.sig"


@pytest.fixture(scope="module")
def registry() -> ModelRegistry:
    return ModelRegistry.from_plugins(load_plugins(PluginRequest(cwd=".")).host)


def _body(registry: ModelRegistry, model_id: str, level: str | None) -> dict:
    model = registry.find("openai-codex", model_id)
    context = LlmContext(messages=[UserMessage(content="hi")])
    _url, body, _headers = codex.prepare(
        model, context, StreamOptions(api_key=_token(), thinking_level=level)
    )
    return body


def _updates(body: dict) -> list:
    return [
        item["reasoning"]["effort"] for item in body["input"] if item.get("type") == "configuration_update"
    ]


def test_off_is_an_update_to_none_for_models_that_take_updates(registry):
    body = _body(registry, "gpt-6-sol", None)  # supportsMidConvoEffort, off mapped to "none"
    assert _updates(body) == ["none"] and body["input"][-1]["type"] == "configuration_update"
    assert body["reasoning"] == {"effort": "medium", "summary": "auto"}
    high = _body(registry, "gpt-6-sol", "high")
    assert _updates(high) == ["high"] and high["reasoning"]["effort"] == "medium"


def test_models_without_updates_send_none_as_the_effort(registry):
    body = _body(registry, "gpt-5.6-luna", None)
    assert _updates(body) == [] and body["reasoning"] == {"effort": "none", "summary": "auto"}
