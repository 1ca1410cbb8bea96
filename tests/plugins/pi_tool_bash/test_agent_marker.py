"""Tool results against pi 1.6.0: the same scripted tool calls (a loopback OpenAI server) run
through pi-host and, when installed, pi; the facts in the results (text read, line counts,
offsets, diff line numbers, hunk counts, the agent marker in a command's environment) must agree.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.support.loopback import LoopbackServer, Reply, write_models_json  # noqa: E402
from tests.support.pi_node import pi_env  # noqa: E402

CALLS = [
    ("read", {"path": "a.txt"}),
    ("read", {"path": "a.txt", "offset": 2, "limit": 1}),
    ("read", {"path": "nonl.txt"}),
    ("read", {"path": "a.txt", "offset": 10}),
    ("edit", {"path": "e.txt", "edits": [{"oldText": "baz", "newText": "qux"}]}),
    ("edit", {"path": "b.txt", "edits": [{"oldText": "two\n", "newText": ""}]}),
    ("edit", {"path": "c.txt", "edits": [{"oldText": "z\n", "newText": "z"}]}),
    ("bash", {"command": 'echo "agent=$PI_CODING_AGENT"'}),
]


def prepare(work: Path) -> None:
    (work / "a.txt").write_text("one\ntwo\nthree\n")
    (work / "b.txt").write_text("one\ntwo\nthree\n")
    (work / "c.txt").write_text("y\nz\n")
    (work / "nonl.txt").write_text("alpha\nbeta")
    (work / "e.txt").write_text("foo bar\nbaz foo\n")


def results(root: Path, command: list[str]) -> list[tuple[bool, str, dict]]:
    agent, work = root / "agent", root / "work"
    agent.mkdir()
    work.mkdir()
    prepare(work)
    env = pi_env(str(agent))
    env.pop("PI_CODING_AGENT", None)  # the marker must come from the agent itself
    with LoopbackServer([Reply.tool(name, args) for name, args in CALLS] + [Reply("done")]) as server:
        write_models_json(agent, server.url)
        args = ["--mode", "json", "-p", "--no-session", "--model", "loop/loop-1", "go"]
        done = subprocess.run(
            [*command, *args], cwd=work, env=env, capture_output=True, text=True, timeout=120
        )
    out = []
    for line in done.stdout.splitlines():
        event = json.loads(line) if line.startswith("{") else {}
        if event.get("type") == "tool_execution_end":
            result = event["result"]
            text = "".join(block.get("text", "") for block in result.get("content", []))
            out.append((bool(event.get("isError")), text, result.get("details") or {}))
    assert len(out) == len(CALLS), done.stderr[-2000:]
    return out


def test_agent_marker_in_command_environments(monkeypatch):
    from pi_host.lib.toolkit.local_shell import command_environment

    monkeypatch.delenv("PI_CODING_AGENT", raising=False)
    env = command_environment()
    assert env["PI_CODING_AGENT"] == "true" and env["AI_AGENT"] == "pi"
    assert "PI_CODING_AGENT" not in os.environ  # only the commands get it
