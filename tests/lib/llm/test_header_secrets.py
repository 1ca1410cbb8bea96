"""Configured header values are secrets whatever their name: the catalog lists every models.json
header value (provider, model and override headers; ``$VAR`` resolved, ``!command`` not run), a
request adds the values its ``!command``/``$VAR`` headers resolved to, and a redactor made from the
request's options sees values added after it was made. Values under 8 characters stay readable."""

from __future__ import annotations

import json

import pytest

from pi_host.config.models import ModelRegistry
from pi_host.lib.llm.http import request_headers
from pi_host.lib.llm.redact import MIN_SECRET_LENGTH, REDACTED, Redactor
from pi_host.plugins.selection import PluginRequest, load_plugins
from pi_host.protocol import StreamOptions
from tests.support.providers.adapters import API_NAMES, STREAMS, final, model
from tests.support.providers.openai_google import context
from tests.support.providers.sse import Reply
from tests.support.providers.wire import error_body


def _registry(work) -> ModelRegistry:
    return ModelRegistry.from_plugins(load_plugins(PluginRequest(cwd=str(work))).host)


def test_every_models_json_header_value_is_a_secret_whatever_its_name(isolated_environment, monkeypatch):
    agent, work = isolated_environment["agent"], isolated_environment["work"]
    marker = work / "command-ran"
    (agent / "models.json").write_text(
        json.dumps(
            {
                "providers": {
                    "org": {
                        "baseUrl": "http://127.0.0.1:9/v1",
                        "api": "openai-completions",
                        "apiKey": "dummy",
                        "headers": {"X-Org-Auth": "org-auth-literal-1", "X-Team": "ops"},
                        "models": [
                            {
                                "id": "m",
                                "headers": {
                                    "X-Route": "$ROUTE_VALUE",
                                    "X-Proxy": "Bearer proxy-token-9876",
                                    "X-Sig": f"!touch {marker}; echo sig",
                                },
                            }
                        ],
                    },
                    "openai": {
                        "modelOverrides": {"gpt-5-mini": {"headers": {"X-Tenant": "tenant-id-31337"}}}
                    },
                }
            }
        )
    )
    monkeypatch.setenv("ROUTE_VALUE", "route-from-env-2468")
    secrets = _registry(work).secrets()
    for expected in (
        "org-auth-literal-1",
        "route-from-env-2468",
        "Bearer proxy-token-9876",
        "proxy-token-9876",
        "tenant-id-31337",
    ):
        assert expected in secrets
    assert not marker.exists()  # listing secrets runs no `!command`
    # A short value is listed but never hunted for: it would match ordinary words.
    assert Redactor(secrets)("ops team: org-auth-literal-1") == f"ops team: {REDACTED}"


def test_plugin_catalog_headers_are_not_secrets_unless_named_so(isolated_environment):
    """Headers a provider plugin ships (public client identifiers) are not user configuration."""
    registry = _registry(isolated_environment["work"])
    shipped = {v for m in registry.models() for k, v in (m.headers or {}).items() if "key" not in k.lower()}
    assert not shipped & set(registry.secrets())


def test_request_headers_adds_resolved_indirections_to_the_options(monkeypatch):
    monkeypatch.setenv("ORG_TOKEN", "org-token-from-env-1")
    target = model("openai-completions", "http://127.0.0.1:9")
    target = target.model_copy(
        update={
            "headers": {
                "X-Env": "$ORG_TOKEN",
                "X-Cmd": "!printf %s 'Token cmd-token-value-22'",
                "X-Literal": "literal-value-333",
            }
        }
    )
    options = StreamOptions(api_key="k", secrets=["already-known-1"])
    redact = Redactor.from_options(options)  # made before the headers resolve, as adapters do
    headers = request_headers(target, options)
    assert headers["x-env"] == "org-token-from-env-1" and headers["x-cmd"] == "Token cmd-token-value-22"
    assert options.secrets == [
        "already-known-1",
        "org-token-from-env-1",
        "Token cmd-token-value-22",
        "cmd-token-value-22",
    ]  # a literal is the catalog's to list; the request adds only what it resolved
    text = "saw org-token-from-env-1 and cmd-token-value-22 and already-known-1"
    assert redact(text) == f"saw {REDACTED} and {REDACTED} and {REDACTED}"
    request_headers(target, options)
    assert len(options.secrets) == 4  # a second request adds nothing twice


def test_redactor_from_options_follows_later_secrets():
    options = StreamOptions(api_key="request-key-0001")
    redact = Redactor.from_options(options)
    assert redact("a late-secret-0002 b request-key-0001") == f"a late-secret-0002 b {REDACTED}"
    options.secrets.append("late-secret-0002")
    assert redact("a late-secret-0002 b request-key-0001") == f"a {REDACTED} b {REDACTED}"


@pytest.mark.parametrize("length", [MIN_SECRET_LENGTH - 1, MIN_SECRET_LENGTH])
def test_the_length_floor(length):
    value = "v" * length
    redacted = Redactor([value])(f"x {value} y")
    assert (redacted == f"x {REDACTED} y") is (length >= MIN_SECRET_LENGTH)


@pytest.mark.parametrize("api", API_NAMES)
async def test_a_command_header_echoed_by_a_400_is_redacted_for_every_api(sse_server, api):
    secret = "cmd-header-secret-5151"
    sse_server.enqueue(Reply.json(400, error_body(api, 400, f"X-Org-Sig {secret} is not allowed")))
    target = model(api, sse_server.url).model_copy(update={"headers": {"X-Org-Sig": f"!printf %s {secret}"}})
    events = STREAMS[api](target, context(), StreamOptions(api_key="dummy"))
    message = final([event async for event in events])
    assert sse_server.requests[0].headers["x-org-sig"] == secret
    assert message.stop_reason == "error" and message.error_message.startswith("400")
    assert secret not in message.model_dump_json() and REDACTED in message.error_message
