"""``pi auth print-api-key``, ``print-bearer-token`` and ``check``: outputs and exit codes as pi
1.6.0 gives them (recorded from pi with the same environment), and a bearer token refreshed
against a loopback authorization server when it has less than ``--min-expiry`` left."""

from __future__ import annotations

import json
import time

import pytest

from tests.support.oauth_server import AuthServer

KEY = "sk-test-1"


@pytest.fixture
def auth(isolated_environment, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    path = isolated_environment["agent"] / "auth.json"

    def run(*argv, stored=None):
        from pi_auth.cli import run as auth_run

        if stored is not None:
            path.write_text(json.dumps(stored))
        return auth_run(list(argv))

    run.path = path
    return run


def outputs(capsys):
    captured = capsys.readouterr()
    return captured.out, captured.err


@pytest.mark.parametrize(
    ("argv", "code", "out", "err"),
    [
        (["check", "--provider", "openai", "--json"], 0,
         '{"status":"ready","provider":"openai","authType":"api_key"}\n', ""),
        (["check", "--provider", "openai"], 0, "ready\n", ""),
        (["check", "--provider", "nosuch", "--json"], 1,
         '{"status":"not_ready","provider":"nosuch","reason":"provider_not_found"}\n', ""),
        (["check", "--provider", "groq"], 1, "not_ready\n", ""),
        (["check", "--model", "claude-opus-4-8", "--json"], 2,
         '{"status":"invalid","provider":"claude-opus-4-8","reason":"invalid_state"}\n', ""),
        (["check", "--provider", "openai", "--credentials", "--json"], 0,
         f'{{"status":"ready","provider":"openai","authType":"api_key","credentials":"{KEY}"}}\n', ""),
        (["check", "--provider", "openai", "--credentials"], 0, KEY + "\n", ""),
        (["print-api-key"], 1, "", "Error: Credential printing requires --provider <provider> or --model <model>\n"),
        (["check"], 2, "", "Error: Auth checks require --provider <provider> or --model <model>\n"),
        (["print-api-key", "--provider", "openai"], 0, KEY + "\n", ""),
        (["print-api-key", "--model", "gpt-6.2-sol"], 1, "",
         'Error: Model "gpt-6.2-sol" not found. Use --list-models to see available models.\n'),
        (["print-api-key", "--provider", "nosuch"], 1, "",
         'Error: Unknown provider "nosuch". Use --list-models to see available providers.\n'),
        (["print-bearer-token", "--provider", "openai"], 1, "",
         'Error: Provider "openai" is not configured with an OAuth bearer token\n'),
        (["check", "--bogus"], 1, "",
         'Unknown option --bogus for "auth check".\n'
         'Use "pi --help" or "pi auth check --provider <provider> [--json] [--credentials] [--no-refresh]".\n'),
        (["print-api-key", "--provider", "openai", "--json"], 1, "", "Error: --json is only supported by auth check\n"),
        (["print-bearer-token", "--provider", "x", "--min-expiry", "soon"], 1, "",
         "Error: --min-expiry must use a duration such as 30m or 1h\n"),
        (["bogus"], 1, "",
         'Error: Unknown auth command "bogus". Use "pi auth login", "pi auth logout", "pi auth print-api-key", '
         '"pi auth print-bearer-token", or "pi auth check".\n'),
    ],
)  # fmt: skip
def test_outputs_and_exit_codes_as_pi(auth, capsys, argv, code, out, err):
    assert auth(*argv) == code
    assert outputs(capsys) == (out, err)


def test_stored_keys_are_found_by_model_and_oauth_is_not_an_api_key(auth, capsys):
    stored = {
        "openai": {"type": "api_key", "key": "sk-stored-2"},
        "openai-codex": {"type": "oauth", "access": "tok-a", "refresh": "r", "expires": 9e15},
    }
    # both stored providers list the model; only one holds an API key
    assert auth("print-api-key", "--model", "gpt-6.2-sol", stored=stored) == 0
    assert outputs(capsys)[0] == "sk-stored-2\n"
    assert auth("print-api-key", "--provider", "openai", "--model", "gpt-6.2-sol") == 0
    assert outputs(capsys)[0] == "sk-stored-2\n"
    assert auth("print-api-key", "--provider", "openai-codex") == 1
    assert outputs(capsys)[1] == 'Error: Provider "openai-codex" is configured with OAuth, not an API key\n'
    assert auth("print-bearer-token", "--provider", "openai-codex") == 0
    assert outputs(capsys)[0] == "tok-a\n"
    assert auth("check", "--provider", "openai-codex", "--json") == 0
    assert json.loads(outputs(capsys)[0]) == {
        "status": "ready",
        "provider": "openai-codex",
        "authType": "oauth",
    }


def test_bearer_token_refreshed_below_min_expiry(auth, capsys, monkeypatch):
    with AuthServer() as server:
        monkeypatch.setenv("KIMI_CODE_OAUTH_HOST", server.url)
        soon = int(time.time() * 1000) + 10 * 60_000
        entry = {"type": "oauth", "access": "old-access", "refresh": "refresh-old", "expires": soon}
        assert (
            auth(
                "print-bearer-token",
                "--provider",
                "kimi-coding",
                "--min-expiry",
                "5m",
                stored={"kimi-coding": entry},
            )
            == 0
        )
        assert outputs(capsys)[0] == "old-access\n"  # ten minutes left is enough for 5m
        assert auth("print-bearer-token", "--provider", "kimi-coding") == 0  # not for the default 30m
        printed = outputs(capsys)[0].strip()
        stored = json.loads(auth.path.read_text())["kimi-coding"]
        assert printed == stored["access"] != "old-access" and stored["expires"] > soon
        # a revoked refresh: check with refresh says not_ready, --no-refresh leaves it ready
        server.revoked.add(stored["refresh"])
        expired = {**stored, "expires": 0}
        assert (
            auth("check", "--provider", "kimi-coding", "--no-refresh", stored={"kimi-coding": expired}) == 0
        )
        assert outputs(capsys)[0] == "ready\n"
        assert auth("check", "--provider", "kimi-coding", "--json") == 1
        out, err = outputs(capsys)
        assert json.loads(out)["reason"] == "credentials_not_configured"
        assert stored["refresh"] not in out + err and stored["access"] not in out + err
