"""Configured header values are credentials whatever their name: a 400 that echoes them is shown,
saved and exported with each value replaced by ``[redacted]``, for every API.

A custom provider in ``models.json`` sends ``X-Org-Auth`` (a literal on the provider), and on its
model ``X-Org-Route`` (``$ORG_ROUTE``, from the environment) and ``X-Org-Sig`` (a ``!command``);
none of the names looks like a credential to a name-based filter. The loopback server answers
every request with a 400 whose message repeats the three values and a short ``X-Team`` value
(``ops``, under the 8-character floor, which must stay readable). The secrets must appear in none
of: stdout and stderr of ``pi -p`` and ``pi --mode json``, the session files, the ``--export``
page.

The second part checks ``shellScrubProviderKeys`` from inside a bash tool call: what
``/proc/$PPID/environ`` and ``ps -o args= -p $PPID`` show of pi itself, and the documented limit
(the shell that started pi keeps its variables).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.support.faux import text, tool_call
from tests.support.pi import run_pi
from tests.support.providers.sse import Reply, SSEServer
from tests.support.providers.wire import APIS, error_body

PI = [sys.executable, "-m", "pi_host"]
LITERAL = "orgauth-7f3a9c1e5b2d8046"
FROM_ENV = "orgroute-2b8e4d6f0a1c3957"
FROM_COMMAND = "orgsig-9d1f3b5a7c2e4068"
SECRETS = (LITERAL, FROM_ENV, FROM_COMMAND)
SHORT = "ops"


def _models(api: str, url: str) -> dict:
    return {
        "providers": {
            "orgproxy": {
                "baseUrl": url + APIS[api].prefix,
                "api": api,
                "apiKey": "local-dummy",
                "headers": {"X-Org-Auth": LITERAL, "X-Team": SHORT},
                "models": [
                    {
                        "id": "org-model",
                        "headers": {"X-Org-Route": "$ORG_ROUTE", "X-Org-Sig": f"!printf %s {FROM_COMMAND}"},
                    }
                ],
            }
        }
    }


def _run(api: str, root: Path) -> dict:
    agent, home, work = root / "agent", root / "home", root / "work"
    for directory in (agent, home, work):
        directory.mkdir(parents=True)
    server = SSEServer().start()
    echo = f"header X-Org-Auth={LITERAL} route={FROM_ENV} sig={FROM_COMMAND} team={SHORT} is not allowed"
    server.default = Reply.json(400, error_body(api, 400, echo))
    try:
        (agent / "models.json").write_text(json.dumps(_models(api, server.url)))
        # the 400 names a server error: without this each run would retry it three times (14 s)
        (agent / "settings.json").write_text(json.dumps({"retry": {"enabled": False}}))
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        env.update(
            HOME=str(home),
            PI_CODING_AGENT_DIR=str(agent),
            ORG_ROUTE=FROM_ENV,
            PI_HOST_CACHE_DIR=os.environ.get("PI_HOST_CACHE_DIR") or str(root / "cache"),
        )
        args = ["--model", "orgproxy/org-model"]
        out = {}
        for mode in (["-p"], ["--mode", "json"]):
            done = subprocess.run(
                [*PI, *args, *mode, "hello"], cwd=work, env=env, capture_output=True, text=True, timeout=90
            )
            out[mode[-1]] = done
        sessions = sorted(agent.rglob("*.jsonl"))
        page = root / "export.html"
        exported = subprocess.run(
            [*PI, "--export", str(sessions[-1]), str(page)],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=90,
        )
        return {
            "runs": out,
            "sessions": sessions,
            "page": page,
            "export": exported,
            "requests": server.requests,
        }
    finally:
        server.stop()


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, dict]:
    root = tmp_path_factory.mktemp("secrets")
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = {api: pool.submit(_run, api, root / api) for api in APIS}
        return {api: future.result() for api, future in futures.items()}


@pytest.mark.parametrize("api", list(APIS))
def test_configured_header_values_are_redacted_everywhere(runs, api):
    run = runs[api]
    sent = run["requests"][0].headers
    assert (sent["x-org-auth"], sent["x-org-route"], sent["x-org-sig"]) == SECRETS  # they were sent
    printed, streamed = run["runs"]["-p"], run["runs"]["json"]
    assert printed.returncode == 1 and printed.stdout == ""
    lines = printed.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("pi: 400"), printed.stderr
    assert lines[0].count("[redacted]") == 3, lines[0]
    assert f"team={SHORT} is not allowed" in lines[0]  # a short value is not hunted for
    errors = [
        json.loads(line)["message"].get("errorMessage")
        for line in streamed.stdout.splitlines()
        if json.loads(line).get("type") == "message_end"
    ]
    assert any(e and e.count("[redacted]") == 3 for e in errors), errors
    assert run["export"].returncode == 0, run["export"].stderr
    page = run["page"].read_text()
    assert "[redacted]" in page
    places = {
        "-p stdout": printed.stdout,
        "-p stderr": printed.stderr,
        "json stdout": streamed.stdout,
        "json stderr": streamed.stderr,
        "export page": page,
        **{str(path): path.read_text() for path in run["sessions"]},
    }
    assert len(run["sessions"]) == 2
    for where, content in places.items():
        for secret in SECRETS:
            assert secret not in content, (where, secret)


# --- shellScrubProviderKeys: pi's own environment and arguments ------------------------------------

ENV_KEY = "scrub-env-key-4c2e8a6f1b3d"
FLAG_KEY = "scrub-flag-key-7e5a3c1f9d0b"
SEP = "@@42@@"
"""The command prints it computed (``$((40+2))``): pi's environment holds the script's text."""
PEEK = (
    "cat /proc/$PPID/environ | tr '\\0' '\\n'; echo @@$((40+2))@@; ps -ww -o args= -p $PPID; "
    "echo @@$((40+2))@@; env | grep -c '^[A-Z_]*_API_KEY='"
)


def _peek(agent: Path, scrub: bool):
    (agent / "settings.json").write_text(json.dumps({"shellScrubProviderKeys": scrub}))
    script = [tool_call("bash", command=PEEK), text("seen: {{lastToolResult}}")]
    return run_pi(
        "-p",
        "--model",
        "faux/faux-1",
        "--tools",
        "bash",
        "--api-key",
        FLAG_KEY,
        "peek at the parent",
        script=script,
        env={"ANTHROPIC_API_KEY": ENV_KEY, "OPENAI_API_KEY": ENV_KEY + "-openai"},
    )


def test_scrubbed_keys_are_not_in_pi_own_environ_or_arguments(isolated_environment):
    done = _peek(isolated_environment["agent"], scrub=True)
    assert done.returncode == 0, done.stderr
    environ, args, count = done.stdout.split(SEP)
    assert "PI_CODING_AGENT_DIR=" in environ and "pi_host" in args  # the command did look at pi
    assert "--api-key" in args and FLAG_KEY not in args
    assert ENV_KEY not in environ and "ANTHROPIC_API_KEY" not in environ and "OPENAI_API_KEY" not in environ
    assert count.strip().splitlines()[0] == "0"  # nor in the command's own environment
    for path in isolated_environment["agent"].rglob("*.jsonl"):
        content = path.read_text()
        assert ENV_KEY not in content and FLAG_KEY not in content


def test_without_scrubbing_keys_are_inherited_as_in_pi(isolated_environment):
    """The default, pi's: the command and pi's own /proc entries show the keys."""
    done = _peek(isolated_environment["agent"], scrub=False)
    assert done.returncode == 0, done.stderr
    environ, args, count = done.stdout.split(SEP)
    assert f"ANTHROPIC_API_KEY={ENV_KEY}" in environ and FLAG_KEY in args
    assert count.strip().splitlines()[0] == "2"


def test_scrubbing_does_not_reach_the_shell_pi_was_started_from(isolated_environment):
    """The documented limit: a command runs as the user, and the process that started pi (here a
    shell holding the key in its environment) still shows it."""
    (isolated_environment["agent"] / "settings.json").write_text(json.dumps({"shellScrubProviderKeys": True}))
    grandparent = "$(ps -o ppid= -p $PPID | tr -d ' ')"
    peek = (
        "tr '\\0' '\\n' < /proc/$PPID/environ | grep -c '^ANTHROPIC_API_KEY='; "
        f"tr '\\0' '\\n' < /proc/{grandparent}/environ | grep -c '^ANTHROPIC_API_KEY='"
    )
    done = run_pi(
        *("-p", "--model", "faux/faux-1", "--tools", "bash", "peek"),
        script=[tool_call("bash", command=peek), text("{{lastToolResult}}")],
        env={"ANTHROPIC_API_KEY": ENV_KEY},
        command=["bash", "-c", '"$0" -m pi_host "$@"; true', sys.executable],
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", "1"]  # pi's own: hidden; the starting shell's: still there
