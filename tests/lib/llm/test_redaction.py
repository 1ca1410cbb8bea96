"""Keys never leave the provider layer: error texts built from answers that echo the key (HTTP
error bodies and errors inside the stream) are redacted for every API, with the request's key, the
catalog's other secrets and anything shaped like a provider token; the catalog lists every
configured secret and the session hands them to the provider layer."""

from __future__ import annotations

import json
from urllib.parse import quote

import pytest

import pi_host
from pi_host.config.models import ModelRegistry
from pi_host.lib.llm.errors import error_text_from_body
from pi_host.lib.llm.redact import REDACTED, Redactor
from pi_host.plugins.selection import PluginRequest, load_plugins
from tests.support.providers.adapters import API_NAMES, collect, final
from tests.support.providers.sse import Reply, sse_events
from tests.support.providers.wire import answer_chunks, error_body

KEY = "pi-redact-test-0a1b2c3d4e5f"
OTHER = "other-provider-key-99887766"


def test_configured_secrets_go_in_every_spelling():
    tricky = 'k/ey+with"odd=chars&more'
    redact = Redactor([KEY, tricky])
    text = f"a {KEY} b {json.dumps(tricky)} c {quote(tricky, safe='')} d"
    out = redact(text)
    assert KEY not in out and tricky not in out and quote(tricky, safe="") not in out
    assert out.count(REDACTED) == 3
    assert redact(out) == out  # idempotent


@pytest.mark.parametrize(
    "token",
    [
        "sk-ant-api03-Zq8vN2mK5xR7tY1wP4sL9dF3gH6jB0cV",
        "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz012345",
        "sk-or-v1-0123456789abcdef0123456789abcdef",
        "AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW",
        "gsk_0123456789abcdefABCDEFghijkl",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV",
    ],
)
def test_token_shapes_go_even_when_nobody_configured_them(token):
    out = Redactor()(f"Invalid key {token}, check it")
    assert token not in out and out == f"Invalid key {REDACTED}, check it"


def test_bearer_values_go_and_ordinary_text_stays():
    redact = Redactor(["dummy"])  # a placeholder key: too short to hunt for
    assert redact("header Authorization: Bearer abc.def-123456") == f"header Authorization: Bearer {REDACTED}"
    for text in ("Incorrect API key provided: sk-proj-********abcd", "a dummy value", "skip-this-word"):
        assert redact(text) == text


def test_error_text_from_body_redacts():
    body = json.dumps(error_body("openai-completions", 401, f"Incorrect API key provided: {KEY}"))
    assert error_text_from_body(401, body, redact=Redactor([KEY])) == (
        f"401 invalid_request_error: Incorrect API key provided: {REDACTED}"
    )


@pytest.mark.parametrize("api", API_NAMES)
async def test_http_error_echoing_keys_is_redacted(sse_server, api):
    text = f"bad key {KEY}; your other key is {OTHER}"
    sse_server.enqueue(Reply.json(401, error_body(api, 401, text)))
    message = final(await collect(api, sse_server.url, api_key=KEY, secrets=[OTHER]))
    assert message.stop_reason == "error"
    assert message.error_message.startswith("401") and message.error_message.count(REDACTED) == 2
    assert KEY not in message.model_dump_json() and OTHER not in message.model_dump_json()


def _stream_error(api: str) -> bytes:
    """An error reported inside a 200 stream, echoing the key, after some text."""
    head = answer_chunks(api, "partial text")[0]
    text = f"upstream rejected key {KEY}"
    if api == "anthropic-messages":
        tail = sse_events(
            [("error", {"type": "error", "error": {"type": "authentication_error", "message": text}})]
        )
    elif api == "openai-responses":
        tail = sse_events([(None, {"type": "error", "code": "invalid_api_key", "message": text})])
    else:
        tail = sse_events([(None, {"error": {"message": text, "code": 401}})])
    return head + tail.encode()


@pytest.mark.parametrize("api", API_NAMES)
async def test_error_inside_the_stream_is_redacted(sse_server, api):
    sse_server.enqueue(Reply.sse(_stream_error(api)))
    message = final(await collect(api, sse_server.url, api_key=KEY))
    assert message.stop_reason == "error"
    assert REDACTED in message.error_message and KEY not in message.error_message


def test_registry_lists_every_configured_secret_without_running_commands(isolated_environment, monkeypatch):
    agent, work = isolated_environment["agent"], isolated_environment["work"]
    marker = work / "command-ran"
    (agent / "auth.json").write_text(
        json.dumps(
            {
                "anthropic": {"type": "api_key", "key": "auth-json-key-123456"},
                "groq": {"type": "api_key", "key": "$GROQ_FROM_AUTH"},
                "openai": {
                    "type": "oauth",
                    "access": "oauth-access-token-1",
                    "refresh": "oauth-refresh-token-2",
                },
                "mistral": {"type": "api_key", "key": f"!touch {marker}; echo secret"},
            }
        )
    )
    (agent / "models.json").write_text(
        json.dumps(
            {
                "providers": {
                    "local": {
                        "baseUrl": "http://127.0.0.1:9/v1",
                        "api": "openai-completions",
                        "apiKey": "models-json-key-7890",
                        "headers": {"x-custom-token": "$HEADER_TOKEN", "x-title": "not a secret"},
                        "models": [{"id": "m"}],
                    }
                }
            }
        )
    )
    monkeypatch.setenv("GROQ_FROM_AUTH", "groq-key-via-auth-env")
    monkeypatch.setenv("HEADER_TOKEN", "header-token-value-42")
    monkeypatch.setenv("GEMINI_API_KEY", "gemini-env-key-31415")
    registry = ModelRegistry.from_plugins(load_plugins(PluginRequest(cwd=str(work))).host)
    registry.runtime_keys["xai"] = "runtime-key-from-flag"
    secrets = registry.secrets()
    for expected in (
        "auth-json-key-123456",
        "groq-key-via-auth-env",
        "oauth-access-token-1",
        "oauth-refresh-token-2",
        "models-json-key-7890",
        "header-token-value-42",
        "gemini-env-key-31415",
        "runtime-key-from-flag",
    ):
        assert expected in secrets
    assert "not a secret" in secrets  # every configured header value, whatever its name
    assert not marker.exists()  # listing secrets runs no `!command`


async def test_session_hands_the_catalog_secrets_to_the_provider(isolated_environment, monkeypatch):
    (isolated_environment["agent"] / "auth.json").write_text(
        json.dumps({"openai": {"type": "api_key", "key": "stored-openai-key-1"}})
    )
    monkeypatch.setenv("GEMINI_API_KEY", "gemini-env-key-31415")
    session = await pi_host.create_session(
        model="anthropic/claude-haiku-4-5", provider="anthropic", api_key="flag-key-2718281828", settings={}
    )
    try:
        secrets = session.bridge.stream_options().secrets
    finally:
        await session.close()
    assert {"flag-key-2718281828", "stored-openai-key-1", "gemini-env-key-31415"} <= set(secrets)
