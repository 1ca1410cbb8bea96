"""Subscription logins at the user's boundary: ``pi auth login`` / ``logout`` against a loopback
authorization server (tests/support/oauth_server.py), and the login shared with pi 1.6.0 in both
directions when pi is installed under .tools (pi-host's login used by pi for ``--list-models`` and
a Codex request; a Kimi Code login refreshed by pi, then used by pi-host as pi wrote it)."""

from __future__ import annotations

import json
import shlex
import sys
import time

import pytest

from tests.support.oauth_server import ACCOUNT, AuthServer
from tests.support.pi import run_pi
from tests.support.pi_node import find_pi, run_print

# The "browser": fetch the authorize URL, following its redirect to pi-host's callback server.
BROWSER = shlex.join(
    [sys.executable, "-c", "import sys, urllib.request; urllib.request.urlopen(sys.argv[1]).read()"]
)


def _env(server: AuthServer, **extra: str) -> dict[str, str]:
    return {
        "PI_HOST_OAUTH_ORIGIN": server.url,
        "PI_HOST_OAUTH_CALLBACK_PORT": "0",
        "KIMI_CODE_OAUTH_HOST": server.url,
        "BROWSER": BROWSER + " %s",
        **extra,
    }


def test_codex_login_from_the_cli_is_used_by_pi_host_and_pi(isolated_environment):
    agent, work = isolated_environment["agent"], isolated_environment["work"]
    with AuthServer(codex_tool_call=False) as server:
        done = run_pi("auth", "login", "openai-codex", stdin=None, env=_env(server), cwd=work, timeout=30)
        assert done.returncode == 0, done.stderr
        assert "Logged in to OpenAI (ChatGPT Plus/Pro)" in done.stdout
        entry = json.loads((agent / "auth.json").read_text())["openai-codex"]
        assert set(entry) == {"type", "access", "refresh", "expires", "accountId"}
        assert entry["access"] not in done.stdout + done.stderr and entry["refresh"] not in done.stdout
        (agent / "models.json").write_text(
            json.dumps({"providers": {"openai-codex": {"baseUrl": server.url}}})
        )
        done = run_pi("-p", "--model", "openai-codex/gpt-5.6-sol", "hi", env=_env(server), cwd=work)
        assert done.returncode == 0 and done.stdout.strip() == "Reading it.", done.stderr
        ours = [r for r in server.requests if r.path == "/codex/responses"][-1].headers
        sessions = list((agent / "sessions").rglob("*.jsonl"))
        assert sessions and all(entry["access"] not in p.read_text() for p in sessions)
        pi = find_pi()
        if pi is not None:
            listed = run_print(pi, ["--list-models", "openai-codex"], str(work), str(agent))
            assert listed.returncode == 0 and "gpt-5.6-sol" in listed.stdout, listed.stderr
            answer = run_print(
                pi, ["-p", "--no-session", "--model", "openai-codex/gpt-5.6-sol", "hi"], str(work), str(agent)
            )
            assert answer.returncode == 0 and answer.stdout.strip() == "Reading it.", answer.stderr
            theirs = [r for r in server.requests if r.path == "/codex/responses" and r.method == "POST"][
                -1
            ].headers
            for name in ("authorization", "chatgpt-account-id", "openai-beta", "originator", "accept"):
                assert ours[name] == theirs[name], name
            assert theirs["chatgpt-account-id"] == ACCOUNT
    done = run_pi("auth", "logout", "openai-codex", cwd=work)
    assert done.returncode == 0 and "Logged out of OpenAI (ChatGPT Plus/Pro)." in done.stdout
    assert "openai-codex" not in json.loads((agent / "auth.json").read_text())


def test_pi_refreshes_a_kimi_login_and_pi_host_uses_what_pi_wrote(isolated_environment):
    pi = find_pi()
    if pi is None:
        pytest.skip("pi 1.6.0 is not installed under .tools")
    agent, work = isolated_environment["agent"], isolated_environment["work"]
    with AuthServer(device_interval=1) as server:
        done = run_pi("auth", "login", "kimi-coding", stdin=None, env=_env(server), cwd=work, timeout=30)
        assert done.returncode == 0, done.stderr
        assert "enter code: USER-1" in done.stdout
        auth = agent / "auth.json"
        stored = json.loads(auth.read_text())
        stored["kimi-coding"]["expires"] = 0  # expired: pi must refresh it
        auth.write_text(json.dumps(stored))
        (agent / "models.json").write_text(
            json.dumps({"providers": {"kimi-coding": {"baseUrl": server.url}}})
        )
        import os

        os.environ["KIMI_CODE_OAUTH_HOST"] = server.url
        try:
            answer = run_print(
                pi,
                ["-p", "--no-session", "--model", "kimi-coding/kimi-for-coding", "hi"],
                str(work),
                str(agent),
            )
        finally:
            del os.environ["KIMI_CODE_OAUTH_HOST"]
        assert answer.returncode == 0 and "kimi answer" in answer.stdout, answer.stderr
        written = json.loads(auth.read_text())["kimi-coding"]
        assert set(written) == {"type", "access", "refresh", "expires"}
        assert written["expires"] > time.time() * 1000 + 10 * 60 * 1000
        token_calls = len([r for r in server.requests if r.path == "/api/oauth/token"])
        done = run_pi("-p", "--model", "kimi-coding/kimi-for-coding", "hi", env=_env(server), cwd=work)
        assert done.returncode == 0 and "kimi answer" in done.stdout, done.stderr
        assert len([r for r in server.requests if r.path == "/api/oauth/token"]) == token_calls  # no refresh
        chat = [r for r in server.requests if r.path.endswith("/chat/completions")][-1]
        assert chat.headers["authorization"] == f"Bearer {written['access']}"


def test_revoked_refresh_is_one_line_asking_to_log_in_again(isolated_environment):
    agent, work = isolated_environment["agent"], isolated_environment["work"]
    with AuthServer() as server:
        server.revoked.add("refresh-dead")
        entry = {"type": "oauth", "access": "old-access-token", "refresh": "refresh-dead", "expires": 0}
        (agent / "auth.json").write_text(json.dumps({"kimi-coding": entry}))
        done = run_pi("-p", "--model", "kimi-coding/kimi-for-coding", "hi", env=_env(server), cwd=work)
    assert done.returncode != 0
    line = next(line for line in done.stderr.splitlines() if "OAuth refresh failed for kimi-coding" in line)
    assert "log in again (pi auth login kimi-coding" in line
    assert "refresh-dead" not in done.stderr + done.stdout and "old-access-token" not in done.stderr
