"""models.json and auth.json at the user's boundary: ``pi -p`` against a loopback server, checking
the headers and body the server received (and, where pi 1.6.0 is installed, that pi sends the
same)."""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

from tests.support.pi import run_pi
from tests.support.pi_node import find_pi, run_print  # noqa: E402
from tests.support.providers.recording import RecordingServer


def api_key(name: str) -> bool:
    """The variables left out of pi-host's environment: only models.json and auth.json give keys."""
    return name.endswith("_API_KEY")


def both(models: dict, model: str, env, *extra: str):
    """Run pi-host, then pi (when installed), each against a fresh server; yields the chat
    requests each one sent."""
    args = ["-p", "--no-session", "--model", model, *extra, "hello"]
    results = []
    with RecordingServer() as server:
        _write_urls(env["agent"], models, server.url)
        done = run_pi(*args, cwd=env["work"], drop=api_key)
        assert done.returncode == 0, done.stderr
        results.append(("pi-host", server.chats()))
    pi = find_pi()
    if pi is not None:
        with RecordingServer() as server:
            _write_urls(env["agent"], models, server.url)
            done = run_print(pi, args, str(env["work"]), str(env["agent"]))
            assert done.returncode == 0, done.stderr
            results.append(("pi", server.chats()))
    return results


def _write_urls(agent: Path, models: dict, url: str) -> None:
    (agent / "models.json").write_text(json.dumps(models).replace("LOOPBACK", url))


def test_provider_headers_merge_with_model_headers(isolated_environment):
    models = {
        "providers": {
            "loopc": {
                "baseUrl": "LOOPBACK/v1",
                "api": "openai-completions",
                "apiKey": "sk-loop",
                "headers": {"X-Team": "provider-team", "X-Both": "from-provider"},
                "models": [{"id": "m1", "headers": {"X-Both": "from-model", "X-Model": "m1-only"}}],
            }
        }
    }
    for who, chats in both(models, "loopc/m1", isolated_environment):
        headers = chats[0].headers
        assert headers["x-team"] == "provider-team", who
        assert headers["x-both"] == "from-model", who
        assert headers["x-model"] == "m1-only", who


def test_chat_template_kwargs_var_placeholders(isolated_environment):
    kwargs = {
        "enable_thinking": {"$var": "thinking.enabled"},
        "reasoning_effort": {"$var": "thinking.effort"},
        "only_when_on": {"$var": "thinking.enabled", "omitWhenOff": True},
        "fixed": "literal",
    }
    models = {
        "providers": {
            "loopt": {
                "baseUrl": "LOOPBACK/v1",
                "api": "openai-completions",
                "apiKey": "sk-loop",
                "compat": {"thinkingFormat": "chat-template", "chatTemplateKwargs": kwargs},
                "models": [{"id": "think-1", "reasoning": True}],
            }
        }
    }
    for who, chats in both(models, "loopt/think-1", isolated_environment, "--thinking", "high"):
        sent = chats[0].json()["chat_template_kwargs"]
        assert sent == {
            "enable_thinking": True,
            "reasoning_effort": "high",
            "only_when_on": True,
            "fixed": "literal",
        }, who
    for who, chats in both(models, "loopt/think-1", isolated_environment, "--thinking", "off"):
        assert chats[0].json()["chat_template_kwargs"] == {"enable_thinking": False, "fixed": "literal"}, who


def test_anthropic_auth_header_sends_key_and_bearer(isolated_environment):
    models = {
        "providers": {
            "loopa": {
                "baseUrl": "LOOPBACK",
                "api": "anthropic-messages",
                "apiKey": "sk-loop-anthropic",
                "authHeader": True,
                "models": [{"id": "claude-loop"}],
            }
        }
    }
    for who, chats in both(models, "loopa/claude-loop", isolated_environment):
        headers = chats[0].headers
        assert headers["x-api-key"] == "sk-loop-anthropic", who
        assert headers["authorization"] == "Bearer sk-loop-anthropic", who


# --- OAuth refresh --------------------------------------------------------------------------------


def _xai_setup(env, server: RecordingServer, expires_ms: float) -> Path:
    models = {"providers": {"xai": {"baseUrl": server.url + "/v1"}}}
    (env["agent"] / "models.json").write_text(json.dumps(models))
    auth = env["agent"] / "auth.json"
    stored = {
        "xai": {"type": "oauth", "access": "old-access", "refresh": "refresh-1", "expires": expires_ms},
        "groq": {"type": "api_key", "key": "gsk-kept"},
    }
    auth.write_text(json.dumps(stored))
    auth.chmod(0o600)
    return auth


def test_expired_xai_token_is_refreshed_and_written_back(isolated_environment):
    with RecordingServer() as server:
        auth = _xai_setup(isolated_environment, server, time.time() * 1000 - 1000)
        server.token_reply = (
            200,
            {"access_token": "new-access", "refresh_token": "refresh-2", "expires_in": 3600},
        )
        token_url = {"PI_HOST_OAUTH_TOKEN_URL": server.url + "/token"}
        done = run_pi(
            "-p",
            "--no-session",
            "--model",
            "xai/grok-4",
            "hi",
            cwd=isolated_environment["work"],
            env=token_url,
            drop=api_key,
        )
        assert done.returncode == 0, done.stderr
        token, chat = server.requests
        assert token.path == "/token"
        assert token.form() == {
            "grant_type": "refresh_token",
            "client_id": "b1a00492-073a-47ea-816f-4c329264a828",
            "refresh_token": "refresh-1",
        }
        assert chat.headers["authorization"] == "Bearer new-access"
    stored = json.loads(auth.read_text())
    assert stored["groq"] == {"type": "api_key", "key": "gsk-kept"}
    entry = stored["xai"]
    assert (entry["access"], entry["refresh"]) == ("new-access", "refresh-2")
    # pi stores the expiry five minutes early
    assert abs(entry["expires"] - (time.time() * 1000 + 55 * 60 * 1000)) < 60_000
    assert stat.S_IMODE(os.stat(auth).st_mode) == 0o600
    assert not os.path.exists(str(auth) + ".lock")


def test_token_expiring_within_five_minutes_is_refreshed_once(isolated_environment):
    with RecordingServer() as server:
        _xai_setup(isolated_environment, server, time.time() * 1000 + 2 * 60 * 1000)
        server.token_reply = (200, {"access_token": "new-access", "expires_in": 7200})
        token_url = {"PI_HOST_OAUTH_TOKEN_URL": server.url + "/token"}
        done = run_pi(
            "-p",
            "--no-session",
            "--model",
            "xai/grok-4",
            "hi",
            cwd=isolated_environment["work"],
            env=token_url,
            drop=api_key,
        )
        assert done.returncode == 0, done.stderr
        assert [r.path for r in server.requests].count("/token") == 1
        assert server.chats()[0].headers["authorization"] == "Bearer new-access"
    entry = json.loads((isolated_environment["agent"] / "auth.json").read_text())["xai"]
    assert entry["refresh"] == "refresh-1"  # xAI kept the refresh token: pi keeps the old one


def test_failed_refresh_is_an_error_and_keeps_the_credential(isolated_environment):
    with RecordingServer() as server:
        auth = _xai_setup(isolated_environment, server, time.time() * 1000 - 1000)
        before = auth.read_text()
        token_url = {"PI_HOST_OAUTH_TOKEN_URL": server.url + "/token", "XAI_API_KEY": "xai-env-key"}
        done = run_pi(
            "-p",
            "--no-session",
            "--model",
            "xai/grok-4",
            "hi",
            cwd=isolated_environment["work"],
            env=token_url,
            drop=api_key,
        )
        assert done.returncode != 0
        assert "OAuth refresh failed for xai" in done.stderr
        assert "invalid_grant" in done.stderr
        assert server.chats() == []  # a stored credential owns its provider: no env fallback
    assert auth.read_text() == before
