"""Tool results against pi 1.6.0: the same scripted tool calls (a loopback OpenAI server) run
through pi-host and, when installed, pi; the facts in the results (text read, line counts,
offsets, diff line numbers, hunk counts, the agent marker in a command's environment) must agree.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.loopback import LoopbackServer, Reply, write_models_json  # noqa: E402
from tests.support.pi_node import find_pi, pi_env  # noqa: E402

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


@pytest.fixture(scope="module")
def host_results(tmp_path_factory):
    return results(tmp_path_factory.mktemp("host"), [sys.executable, "-m", "pi_host"])


def test_host_results_keep_pi_facts(host_results):
    read_all, read_part, read_nonl, beyond, edit, removed, joined, bash = host_results
    assert read_all == (False, "one\ntwo\nthree\n", {})  # the trailing newline is kept
    assert read_part[1].startswith("two\n\n[") and "2 more lines" in read_part[1]  # 4 lines in all
    assert "offset=3" in read_part[1]
    assert read_nonl[1] == "alpha\nbeta"
    assert beyond[0] and "Offset 10" in beyond[1] and "4 lines" in beyond[1]
    assert edit[2]["diff"] == " 1 foo bar\n-2 baz foo\n+2 qux foo"
    assert edit[2]["patch"] == "--- e.txt\n+++ e.txt\n@@ -1,2 +1,2 @@\n foo bar\n-baz foo\n+qux foo\n"
    assert edit[2]["firstChangedLine"] == 2
    assert removed[2]["diff"] == " 1 one\n-2 two\n 3 three"  # context keeps its old number
    assert joined[2]["diff"] == " 1 y\n-2 z\n+2 z"  # only the line end changed
    assert joined[2]["patch"].endswith("-z\n+z\n\\ No newline at end of file\n")
    assert bash[1].strip() == "agent=true"


def test_same_facts_as_pi(host_results, tmp_path):
    pi = find_pi()
    if pi is None:
        pytest.skip("pi 1.6.0 is not installed")
    (tmp_path / "pi").mkdir()
    theirs = results(tmp_path / "pi", list(pi))
    for call, ours, pis in zip(CALLS, host_results, theirs, strict=True):
        assert ours[0] == pis[0], call
        if call[0] == "read" and not ours[0]:
            # Notice wording is each program's own; the text read and the numbers in it are not.
            assert ours[1].split("\n\n[")[0] == pis[1].split("\n\n[")[0], call
            assert [w for w in ours[1].split() if w.strip("[].").isdigit() or "offset=" in w] == [
                w for w in pis[1].split() if w.strip("[].").isdigit() or "offset=" in w
            ], call
        elif call[0] == "edit":
            for key in ("diff", "patch", "firstChangedLine"):
                assert ours[2][key] == pis[2][key], (call, key)
        elif call[0] == "bash":
            assert ours[1] == pis[1], call
    assert "4 lines" in theirs[3][1]
