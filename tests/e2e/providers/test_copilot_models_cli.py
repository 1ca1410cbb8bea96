"""A GitHub Copilot login lists only the models its account offers: ``availableModelIds``, which
the login and each refresh store from the account's ``/models`` answer (that exchange runs
against a loopback server in tests/config/test_oauth_flows.py). ``pi --list-models`` with the
same auth.json prints the same rows as pi 1.6.0 (run when pi is installed under .tools/); a
token from the environment, or a login stored without the list, lists the whole catalog."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.support.paths import REPO
from tests.support.pi_node import find_pi

FAR = 4102444800  # 2100-01-01: the stored token never needs a refresh (which would go online)
LOGIN = {
    "type": "oauth",
    "access": f"tid=1;exp={FAR};proxy-ep=proxy.individual.githubcopilot.com",
    "refresh": "gho_loopback_user",
    "expires": FAR * 1000,
}


def _setup(tmp_path, credential):
    agent = tmp_path / "agent"
    agent.mkdir(exist_ok=True)
    if credential is not None:
        (agent / "auth.json").write_text(json.dumps({"github-copilot": credential}))
        (agent / "auth.json").chmod(0o600)
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path),
        "PI_CODING_AGENT_DIR": str(agent),
        "PI_OFFLINE": "1",
        "PI_SKIP_VERSION_CHECK": "1",
        "PI_TELEMETRY": "0",
    }


def _copilot_rows(command, env, cwd):
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=60, cwd=cwd)
    assert done.returncode == 0, done.stderr
    return [line.split()[1] for line in done.stdout.splitlines() if line.startswith("github-copilot ")]


def _ours(env, cwd):
    return _copilot_rows([sys.executable, "-m", "pi_host", "--list-models"], env, cwd)


def test_a_login_lists_only_its_accounts_models_as_pi_does(tmp_path):
    credential = {**LOGIN, "availableModelIds": ["gpt-6.1-sol", "claude-opus-5.5", "not-in-catalog"]}
    env = _setup(tmp_path, credential)
    assert _ours(env, tmp_path) == ["claude-opus-5.5", "gpt-6.1-sol"]
    pi = find_pi()
    if pi is None:
        pytest.skip("pi 1.6.0 is not installed under .tools/ (pi-host's own listing was checked)")
    assert _copilot_rows([*pi, "--list-models"], env, tmp_path) == ["claude-opus-5.5", "gpt-6.1-sol"]


@pytest.mark.parametrize(
    "credential,variables",
    [(LOGIN, {}), (None, {"COPILOT_GITHUB_TOKEN": "ghu_loopback_token"})],
    ids=["login-without-the-list", "token-from-the-environment"],
)
def test_without_an_account_list_every_copilot_model_is_listed(tmp_path, credential, variables):
    env = {**_setup(tmp_path, credential), **variables}
    catalog = json.loads((REPO / "plugins/pi_provider_catalog/catalog/github-copilot.json").read_text())
    assert sorted(_ours(env, tmp_path)) == sorted(m["id"] for m in catalog["models"])
