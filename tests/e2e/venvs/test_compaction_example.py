"""The example strategy (extension_examples/pi-compaction-requests), installed by the real
``pi install`` into a throw-away environment, replaces the default LLM summaries."""

from __future__ import annotations

import glob
import json
import subprocess
import sys

import pi_provider_faux as faux
import pytest

from tests.e2e.compaction.test_cli import SETTINGS
from tests.support.compaction import Router, dump_call, small_session
from tests.support.paths import EXAMPLES
from tests.support.venv import make_venv, pi_install_example, venv_pi

EXAMPLE = EXAMPLES / "pi-compaction-requests"


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    where = make_venv(tmp_path_factory.mktemp("venv"))
    home = tmp_path_factory.mktemp("home")
    pi_install_example(
        "pi-compaction-requests", where, HOME=str(home), PI_CODING_AGENT_DIR=str(home / "agent")
    )
    return where


@pytest.fixture(scope="module")
def installed(venv):
    """The environment's site-packages, for the in-process test."""
    [site] = venv.glob("lib/python*/site-packages")
    return site


def test_installed_plugin_is_listed(venv, isolated_environment):
    out = venv_pi(venv, "plugins", "--json")
    rows = {row["name"]: row for row in json.loads(out.stdout)}
    row = rows["compaction-requests"]
    assert (row["source"], row["origin"], row["version"]) == ("installed", "pi-compaction-requests", "0.1.0")
    assert row["hooks"] == ["register_compaction_strategies"]
    assert rows["compaction-llm"]["source"] == "builtin"
    listed = venv_pi(venv, "list")
    assert "pi-compaction-requests" in listed.stdout, listed.stdout + listed.stderr


async def test_installed_strategy_is_used_without_any_setting(installed, monkeypatch):
    monkeypatch.syspath_prepend(str(installed))
    router = Router([dump_call(6000)] * 4 + ["done"]).install()
    session = await small_session()
    assert session.compactor.strategy().name == "requests-only"
    await session.prompt("dump everything")
    assert not router.summary_requests  # no model call for the summary
    [entry] = [e for e in session.store.entries() if e["type"] == "compaction"]
    assert entry["summary"] == "## User requests\n1. dump everything"
    # the setting still picks the built-in one by name
    session = await small_session(
        settings={**SETTINGS, "compaction": {**SETTINGS["compaction"], "strategy": "llm"}}
    )
    assert session.compactor.strategy(session.compactor.settings().strategy).name == "llm"


def test_cli_run_with_the_installed_strategy(venv, isolated_environment):
    agent, work = isolated_environment["agent"], isolated_environment["work"]
    (agent / "settings.json").write_text(json.dumps(SETTINGS))
    for i in range(1, 5):
        (work / f"notes{i}.txt").write_text(f"notes {i}: " + "the quick brown fox " * 300 + "\n")
    script = [
        *[{"toolCalls": [{"name": "read", "arguments": {"path": f"notes{i}.txt"}}]} for i in range(1, 5)],
        {"text": "All read."},  # with the LLM strategy the summary request would take this answer
    ]
    out = venv_pi(
        venv,
        "--mode",
        "json",
        "--model",
        "faux/faux-small",
        "Read the notes",
        cwd=work,
        PI_FAUX_SCRIPT=json.dumps(script),
    )
    assert out.returncode == 0, out.stderr
    records = [json.loads(line) for line in out.stdout.splitlines()]
    end = next(r for r in records if r["type"] == "compaction_end")
    assert end["result"]["summary"].startswith(
        "## User requests\n1. Read the notes\n\n<read-files>\nnotes1.txt"
    )
    final = [r for r in records if r["type"] == "message_end" and r["message"]["role"] == "assistant"][-1]
    assert final["message"]["content"][0]["text"] == "All read."
    [path] = glob.glob(str(agent / "sessions" / "*" / "*.jsonl"))
    with open(path, encoding="utf-8") as handle:
        assert any(json.loads(line).get("type") == "compaction" for line in handle)


def test_example_own_tests_pass():
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(EXAMPLE / "tests")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=EXAMPLE,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "3 passed" in out.stdout
    faux.clear()
