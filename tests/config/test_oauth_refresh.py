"""models.json and auth.json at the user's boundary: ``pi -p`` against a loopback server, checking
the headers and body the server received (and, where pi 1.6.0 is installed, that pi sends the
same)."""

from __future__ import annotations

import json
import os
import time

from tests.support.providers.recording import RecordingServer


def test_valid_token_is_not_refreshed_and_anthropic_logins_never(isolated_environment):
    from pi_host.config.credentials import AuthStorage

    with RecordingServer() as server:
        os.environ["PI_HOST_OAUTH_TOKEN_URL"] = server.url + "/token"
        try:
            path = isolated_environment["agent"] / "auth.json"
            now = time.time() * 1000
            path.write_text(
                json.dumps({
                    "xai": {"type": "oauth", "access": "fresh", "refresh": "r", "expires": now + 3600_000},
                    "anthropic": {"type": "oauth", "access": "sk-ant-oat-x", "refresh": "r", "expires": now - 1},
                })
            )  # fmt: skip
            storage = AuthStorage(str(path))
            assert storage.resolve_key("xai") == (True, "fresh")
            assert storage.resolve_key("anthropic") == (True, None)
            assert server.requests == []
        finally:
            del os.environ["PI_HOST_OAUTH_TOKEN_URL"]


def test_openai_chatgpt_refresh(isolated_environment, monkeypatch):
    from pi_host.config.credentials import AuthStorage

    with RecordingServer() as server:
        monkeypatch.setenv("PI_HOST_OAUTH_TOKEN_URL", server.url + "/token")
        path = isolated_environment["agent"] / "auth.json"
        entry = {"type": "oauth", "access": "a1", "refresh": "r1", "expires": 0, "clientId": "client-7"}
        path.write_text(json.dumps({"openai": entry}))
        server.token_reply = (
            200,
            {
                "access_token": "a2",
                "refresh_token": "r2",
                "expires_in": 600,
                "scope": "openid chatgpt.tokens.use.direct",
            },
        )
        assert AuthStorage(str(path)).resolve_key("openai") == (True, "a2")
        assert server.requests[0].form() == {
            "grant_type": "refresh_token",
            "client_id": "client-7",
            "refresh_token": "r1",
            "resource": "https://api.openai.com/v1",
        }
        stored = json.loads(path.read_text())["openai"]
        assert stored["scopes"] == ["openid", "chatgpt.tokens.use.direct"]
        assert abs(stored["expires"] - (time.time() * 1000 + 7 * 60 * 1000)) < 60_000  # 3 minutes early
        # a grant without the direct-use scope is refused, as pi does
        path.write_text(json.dumps({"openai": entry}))
        server.token_reply = (
            200,
            {"access_token": "a3", "refresh_token": "r3", "expires_in": 600, "scope": "openid"},
        )
        storage = AuthStorage(str(path))
        assert storage.resolve_key("openai") == (True, None)
        assert "chatgpt.tokens.use.direct" in storage.oauth_problems["openai"]
