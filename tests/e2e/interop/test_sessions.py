"""pi 1.6.0 continues a session written by pi-host (skipped when pi is not installed; see
``pi_node.py`` for how to install it)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from pi_session_jsonl.store import JsonlStore

from tests.plugins.pi_session_jsonl.test_pi_fixtures import _comparable, _same_history
from tests.support.loopback_fixture_server import LoopbackServer, models_json
from tests.support.pi_node import find_pi, run_print
from tests.support.session_files import read_jsonl

PI_HOST = str(Path(sys.executable).with_name("pi"))
PI = find_pi()


def _pi_host(args: list[str], cwd: Path, agent: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent)}
    return subprocess.run([PI_HOST, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)


@pytest.mark.skipif(PI is None, reason="pi 1.6.0 (node) is not installed under .tools/")
def test_pi_continues_a_session_written_by_pi_host(tmp_path, isolated_environment):
    work, agent = isolated_environment["work"], isolated_environment["agent"]
    pi_agent = tmp_path / "pi-agent"
    pi_agent.mkdir()
    with LoopbackServer() as server:
        config = json.dumps(models_json(server.base_url))
        (agent / "models.json").write_text(config)
        (pi_agent / "models.json").write_text(config)
        assert _pi_host(["--model", "loop/loop-1", "-p", "Hello from pi-host"], work, agent).returncode == 0
        second = _pi_host(["-c", "-p", "Please use bash to print"], work, agent)
        assert second.returncode == 0, second.stderr
        assert "fixture-output" in second.stdout
        [path] = list((agent / "sessions").glob("*/*.jsonl"))
        ours = tmp_path / "ours.jsonl"
        shutil.copyfile(path, ours)
        theirs = tmp_path / "theirs.jsonl"
        shutil.copyfile(path, theirs)
        written = read_jsonl(theirs)

        mine = _pi_host(["--session", str(ours), "-p", "Continue please"], work, agent)
        assert mine.returncode == 0, mine.stderr
        ours_request = server.requests[-1]["messages"]

        result = run_print(
            PI,
            ["--session", str(theirs), "--no-extensions", "-p", "Continue please"],
            str(work),
            str(pi_agent),
        )
        assert result.returncode == 0, result.stderr
        assert result.stdout.startswith("Answer")
        pi_request = server.requests[-1]["messages"]
    # pi sent the conversation pi-host recorded, exactly as pi-host itself sends it
    _same_history(_comparable(ours_request), _comparable(pi_request))
    roles = [m["role"] for m in _comparable(pi_request)]
    assert roles == ["user", "assistant", "user", "assistant", "tool", "assistant", "user"]
    after = read_jsonl(theirs)
    assert after[: len(written)] == written
    assert after[len(written)]["parentId"] == written[-1]["id"]
    store = JsonlStore.open_file(str(theirs))
    assert store.leaf_id() == after[-1]["id"] and len(store.path()) == len(after) - 1
    store.close()


def _every_entry_type(path: Path, cwd: Path, compact: bool) -> list[dict]:
    from pi_host.protocol import AssistantMessage, SystemMessage, TextContent, UserMessage

    store = JsonlStore.create(str(cwd), str(path.parent), path=str(path))
    store.append({"type": "model_change", "provider": "loop", "modelId": "loop-1"})
    store.append({"type": "thinking_level_change", "thinkingLevel": "off"})
    store.append_message(SystemMessage(content="", sections={"preamble": "Be brief."}, tools_added=[]))
    first = store.append_message(UserMessage(content=[TextContent(text="first question")]))
    answer = store.append_message(
        AssistantMessage(
            content=[TextContent(text="first answer")],
            api="openai-completions",
            provider="loop",
            model="loop-1",
        )
    )
    store.append_message(UserMessage(content=[TextContent(text="abandoned question")]))
    store.set_label(first["id"], "start")
    store.branch_with_summary(answer["id"], "The user tried something else.")
    store.append(
        {"type": "custom_message", "customType": "note", "content": "a note for the model", "display": True}
    )
    second = store.append_message(UserMessage(content=[TextContent(text="second question")]))
    store.append_message(
        AssistantMessage(
            content=[TextContent(text="second answer")],
            api="openai-completions",
            provider="loop",
            model="loop-1",
        )
    )
    store.append_context_edit(
        second["id"], {"content": [{"type": "text", "text": "second question (edited)"}]}
    )
    store.append_context_edit(first["id"], None)
    if compact:
        store.append(
            {
                "type": "compaction",
                "summary": "Earlier: two questions.",
                "firstKeptEntryId": second["id"],
                "tokensBefore": 99,
            }
        )
    store.append_message(UserMessage(content=[TextContent(text="third question")]))
    store.set_name("every entry type")
    ours = [m.to_json() for m in store.build_context().messages]
    store.close()
    return ours


@pytest.mark.skipif(PI is None, reason="pi 1.6.0 (node) is not installed under .tools/")
@pytest.mark.parametrize("compact", [False, True])
def test_pi_projects_every_entry_type_written_here_like_we_do(compact, tmp_path, isolated_environment):
    """A tree with branches, labels, a branch summary, a custom message, context edits and a
    compaction, written by this store: pi's own context (RPC ``get_messages``) matches ours."""
    from tests.support.pi_node import PiRpc

    work = isolated_environment["work"]
    path = tmp_path / "sessions" / "every.jsonl"
    ours = _every_entry_type(path, work, compact)
    pi_agent = tmp_path / "pi-agent"
    pi_agent.mkdir()
    (pi_agent / "models.json").write_text(json.dumps(models_json("http://127.0.0.1:9/v1")))
    rpc = PiRpc(PI, ["--session", str(path), "--no-extensions"], str(work), str(pi_agent))
    try:
        theirs = rpc.command({"type": "get_messages"})["data"]["messages"]
        state = rpc.command({"type": "get_state"})["data"]
    finally:
        rpc.close()
    assert state["sessionName"] == "every entry type"
    expected = (
        ["system", "compactionSummary", "user", "assistant", "user"]
        if compact
        else ["system", "assistant", "branchSummary", "custom", "user", "assistant", "user"]
    )
    assert [m["role"] for m in ours] == expected
    assert [m["role"] for m in theirs] == expected
    for mine, pis in zip(ours, theirs, strict=True):
        for key in ("content", "summary", "fromId", "customType", "display", "sections"):
            assert mine.get(key) == pis.get(key), key


@pytest.mark.skipif(PI is None, reason="pi 1.6.0 (node) is not installed under .tools/")
def test_pi_opens_and_continues_a_sub_agents_child_session(tmp_path, isolated_environment):
    """The ``task`` tool's child session (issue 35) is a file pi 1.6.0 opens: it continues the
    child's conversation and keeps its ``parentSession`` link."""
    from tests.support.loopback import LoopbackServer as ScriptedServer
    from tests.support.loopback import Reply, write_models_json

    work, agent = isolated_environment["work"], isolated_environment["agent"]
    pi_agent = tmp_path / "pi-agent"
    replies = [
        Reply.tool("task", {"prompt": "CHILD-TASK say hi"}),
        Reply("CHILD-ANSWER hi"),
        Reply("parent done"),
        Reply("pi continued the child"),
    ]
    with ScriptedServer(replies) as server:
        write_models_json(agent, server.url)
        write_models_json(pi_agent, server.url)
        run = _pi_host(["--model", "loop/loop-1", "--tools", "read,task", "-p", "delegate"], work, agent)
        assert run.returncode == 0 and "parent done" in run.stdout, run.stderr
        headers = {p: read_jsonl(p)[0] for p in (agent / "sessions").rglob("*.jsonl")}
        [parent] = [p for p, h in headers.items() if "parentSession" not in h]
        [child] = [p for p, h in headers.items() if h.get("parentSession") == str(parent)]
        before = read_jsonl(child)
        result = run_print(
            PI, ["--session", str(child), "--no-extensions", "-p", "go on"], str(work), str(pi_agent)
        )
        assert result.returncode == 0, result.stderr
        assert "pi continued the child" in result.stdout
        sent = server.requests[-1]["messages"]
    texts = json.dumps(sent)
    assert "CHILD-TASK" in texts and "CHILD-ANSWER hi" in texts and "delegate" not in texts
    after = read_jsonl(child)
    assert after[: len(before)] == before and after[0]["parentSession"] == str(parent)
