"""A Copilot account's model lists and the policy switch of its login (pi_host/config/copilot_models.py),
against a loopback Copilot API: what pi 1.6.0 reads from ``/models`` and posts to
``/models/<id>/policy``."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from pi_host.config import oauth_http as http
from pi_host.config.copilot_models import INDIVIDUAL_BASE, enable_models, parse_models, with_enabled

ACCOUNT = {
    "data": [
        {"id": "gpt-4.1", "model_picker_enabled": True, "policy": {"state": "enabled"}},
        {"id": "claude-opus-5.5", "model_picker_enabled": True, "policy": {"state": "unconfigured"}},
        {"id": "grok-4.7", "model_picker_enabled": True, "policy": {"state": "unconfigured"}},
        {"id": "not-in-catalog", "model_picker_enabled": True, "policy": {"state": "unconfigured"}},
        {"id": "switched-off", "model_picker_enabled": True, "policy": {"state": "disabled"}},
        {"id": "hidden", "model_picker_enabled": False, "policy": {"state": "unconfigured"}},
        {"id": "no-tools", "model_picker_enabled": True, "capabilities": {"supports": {"tool_calls": False}}},
    ]
}


class CopilotApi:
    """``POST /models/<id>/policy``: 200, or 429 (always) for the ids in :attr:`limited`."""

    def __init__(self) -> None:
        self.posts: list[tuple[str, dict, dict]] = []
        self.limited: set[str] = set()
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                model = self.path.split("/")[2]
                api.posts.append((model, body, {k.lower(): v for k, v in self.headers.items()}))
                status = 429 if model in api.limited else 200
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()


@pytest.fixture
def api(monkeypatch):
    """The loopback API; requests to Copilot's real hosts go to it (the OAuth test origin hook)."""
    server = CopilotApi()
    monkeypatch.setenv(http.ORIGIN_ENV, server.url)
    yield server
    server.close()


def test_the_lists_pi_reads_from_an_account():
    models = parse_models(ACCOUNT, "https://api.business.githubcopilot.com")
    assert models.available == ["gpt-4.1", "claude-opus-5.5", "grok-4.7", "not-in-catalog"]
    assert models.policy_gated == ["claude-opus-5.5", "grok-4.7", "not-in-catalog"]
    assert parse_models({"error": "x"}, INDIVIDUAL_BASE) is None


def test_an_individual_account_with_no_picker_models_falls_back_to_its_enabled_ones():
    body = {
        "data": [
            {"id": "gpt-4.1", "model_picker_enabled": False, "policy": {"state": "enabled"}},
            {"id": "claude-opus-5.5", "model_picker_enabled": False, "policy": {"state": "unconfigured"}},
        ]
    }
    assert parse_models(body, INDIVIDUAL_BASE).available == ["gpt-4.1"]
    assert parse_models(body, INDIVIDUAL_BASE).policy_gated == ["claude-opus-5.5"]
    business = parse_models(body, "https://api.business.githubcopilot.com")
    assert business.available == [] and business.policy_gated == []


def test_login_switches_on_the_catalogs_gated_models_and_adds_them(api):
    models = parse_models(ACCOUNT, INDIVIDUAL_BASE)
    headers = {"Authorization": "Bearer tid=1", "Copilot-Integration-Id": "vscode-chat"}
    catalog = {"gpt-4.1", "claude-opus-5.5", "grok-4.7"}
    available = with_enabled(models, catalog, lambda ids: enable_models(INDIVIDUAL_BASE, headers, ids))
    assert [model for model, _, _ in api.posts] == ["claude-opus-5.5", "grok-4.7"]  # not the unknown one
    model, body, sent = api.posts[0]
    assert body == {"state": "enabled"}
    assert sent["openai-intent"] == "chat-policy" and sent["x-interaction-type"] == "chat-policy"
    assert sent["authorization"] == "Bearer tid=1" and sent["copilot-integration-id"] == "vscode-chat"
    assert available == ["gpt-4.1", "claude-opus-5.5", "grok-4.7", "not-in-catalog"]


def test_rate_limiting_that_outlasts_the_retries_stops_the_batch(api):
    api.limited.add("claude-opus-5.5")
    assert enable_models(INDIVIDUAL_BASE, {}, ["claude-opus-5.5", "grok-4.7"]) == []
    assert [model for model, _, _ in api.posts] == ["claude-opus-5.5"] * 3  # the try and two retries


def test_nothing_is_switched_on_when_the_catalog_is_unknown():
    models = parse_models(ACCOUNT, INDIVIDUAL_BASE)
    called = []
    assert with_enabled(models, None, lambda ids: called.append(ids) or ids) == models.available
    assert called == []
