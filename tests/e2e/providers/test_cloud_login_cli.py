"""``pi auth login`` for the providers set up with more than a key (pi_host/config/cloud_logins.py):
the questions pi 1.6.0 asks, the ``auth.json`` entry it writes, and that entry used by pi-host and
(when installed) by pi 1.6.0 itself."""

from __future__ import annotations

import json

import pytest

from tests.support.pi import run_pi
from tests.support.pi_node import find_pi, run_print


def _login(provider: str, answers: list[str], cwd) -> tuple[object, dict]:
    done = run_pi("auth", "login", provider, stdin="\n".join(answers) + "\n", cwd=cwd, timeout=30)
    return done, done.stdout


def _entry(agent, provider: str) -> dict:
    return json.loads((agent / "auth.json").read_text())[provider]


def test_bedrock_profile_login_is_stored_as_pi_stores_it_and_makes_bedrock_ready(
    isolated_environment, monkeypatch
):
    agent, work = isolated_environment["agent"], isolated_environment["work"]
    for name in ("AWS_PROFILE", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_BEARER_TOKEN_BEDROCK"):
        monkeypatch.delenv(name, raising=False)
    before = run_pi("--list-models", "amazon-bedrock", cwd=work)
    assert before.stdout.strip() == 'No models match "amazon-bedrock".'
    done, out = _login("amazon-bedrock", ["7", "2", "team-profile"], work)
    assert done.returncode == 0, done.stderr
    assert "Select Amazon Bedrock authentication method:" in out
    assert "  1. Bearer token\n  2. AWS profile\n  3. Existing AWS credential chain" in out
    assert "Enter a number from 1 to 3." in out  # "7" was refused, then "2" taken
    assert "AWS credential provider chain: https://docs.aws.amazon.com/" in out
    assert "Saved API key for Amazon Bedrock. Credentials saved to" in out
    assert _entry(agent, "amazon-bedrock") == {"type": "api_key", "env": {"AWS_PROFILE": "team-profile"}}
    listed = run_pi("--list-models", "amazon-bedrock", cwd=work)
    assert listed.returncode == 0 and "amazon-bedrock" in listed.stdout, listed.stderr
    pi = find_pi()
    if pi is not None:  # pi 1.6.0 reads the same entry the same way
        theirs = run_print(pi, ["--list-models", "amazon-bedrock"], str(work), str(agent))
        assert theirs.returncode == 0 and "amazon-bedrock" in theirs.stdout, theirs.stderr


def test_bedrock_bearer_token_is_read_without_echo_and_never_printed(isolated_environment):
    agent, work = isolated_environment["agent"], isolated_environment["work"]
    done, out = _login("amazon-bedrock", ["1", "bedrock-token-123"], work)
    assert done.returncode == 0, done.stderr
    assert _entry(agent, "amazon-bedrock") == {"type": "api_key", "key": "bedrock-token-123"}
    assert "bedrock-token-123" not in out + done.stderr


def test_vertex_service_account_login_stores_project_location_and_file(isolated_environment, tmp_path):
    agent, work = isolated_environment["agent"], isolated_environment["work"]
    key_file = tmp_path / "sa.json"
    key_file.write_text("{}")
    done, out = _login("google-vertex", ["3", "my-project", "europe-west4", str(key_file)], work)
    assert done.returncode == 0, done.stderr
    assert "Provide a service account credentials file, project, and location." in out
    assert _entry(agent, "google-vertex") == {
        "type": "api_key",
        "env": {
            "GOOGLE_CLOUD_PROJECT": "my-project",
            "GOOGLE_CLOUD_LOCATION": "europe-west4",
            "GOOGLE_APPLICATION_CREDENTIALS": str(key_file),
        },
    }
    listed = run_pi("--list-models", "google-vertex", cwd=work)
    assert listed.returncode == 0 and "google-vertex" in listed.stdout, listed.stderr


@pytest.mark.parametrize(
    ("provider", "answers", "env"),
    [
        ("cloudflare-workers-ai", ["cf-key", "acct-1"], {"CLOUDFLARE_ACCOUNT_ID": "acct-1"}),
        (
            "cloudflare-ai-gateway",
            ["cf-key", "acct-1", "gw-9"],
            {"CLOUDFLARE_ACCOUNT_ID": "acct-1", "CLOUDFLARE_GATEWAY_ID": "gw-9"},
        ),
    ],
)
def test_cloudflare_logins_store_the_key_and_the_account(isolated_environment, provider, answers, env):
    agent, work = isolated_environment["agent"], isolated_environment["work"]
    done, out = _login(provider, answers, work)
    assert done.returncode == 0, done.stderr
    assert _entry(agent, provider) == {"type": "api_key", "key": "cf-key", "env": env}
    assert "cf-key" not in out


def test_a_login_cut_short_saves_nothing(isolated_environment):
    agent, work = isolated_environment["agent"], isolated_environment["work"]
    done, _ = _login("google-vertex", ["2", "my-project"], work)  # input ends before the location
    assert done.returncode == 1 and "Login cancelled." in done.stderr
    assert not (agent / "auth.json").exists() or "google-vertex" not in json.loads(
        (agent / "auth.json").read_text()
    )
