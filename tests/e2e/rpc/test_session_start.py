"""A session is complete before its first event (issue 28): ``session_start`` handlers see the
tools the run will have and can use ``ctx.ui`` at once, at start and after every switch, through
the real ``pi`` (print mode and RPC)."""

from __future__ import annotations

import json
from pathlib import Path

from pi_host.rpc import RpcClient
from tests.support.loopback import LoopbackServer, Reply, write_models_json
from tests.support.pi import PI, run_pi, write_plugin

PROBE = """
import json, os
from pi_host import hookimpl
from pi_host.plugins.registrations import Command

def _log(record):
    with open(os.environ["PROBE_LOG"], "a") as out:
        out.write(json.dumps(record) + "\\n")

@hookimpl
async def on_session_start(event, ctx):
    record = {"reason": event["reason"], "tools": sorted(ctx.get_active_tools())}
    if os.environ.get("PROBE_ASK"):
        ctx.ui.set_title("title " + event["reason"])
        record["confirmed"] = await ctx.ui.confirm("Start?", "reason " + event["reason"])
    _log(record)

async def reload_now(args, ctx):
    await ctx.reload()

@hookimpl
def register_commands():
    return [Command("reload-now", reload_now, "ctx.reload()")]
"""


def _log(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_session_start_sees_the_tools_the_command_line_selected(tmp_path):
    probe = write_plugin(tmp_path, "probe", PROBE)
    log = tmp_path / "log.jsonl"
    cases = [
        (("--tools", "read"), ["read"]),
        (("--tools", "read,gr*"), ["grep", "read"]),
        (("--exclude-tools", "bash,edit"), ["read", "write"]),
        (("--no-builtin-tools",), []),
        (("--tools", "-write"), ["bash", "edit", "read"]),
    ]
    for flags, expected in cases:
        log.unlink(missing_ok=True)
        out = run_pi(
            "-p",
            "--no-session",
            "--model",
            "faux/faux-1",
            *flags,
            "-e",
            probe,
            "hi",
            env={"PROBE_LOG": str(log)},
        )
        assert out.returncode == 0, out.stderr
        assert _log(log) == [{"reason": "startup", "tools": expected}], flags


def test_every_session_an_rpc_run_opens_is_built_with_its_tools_and_its_ui(tmp_path, isolated_environment):
    """start, new, switch (resume), fork and reload: session_start sees ``--tools`` and its
    ``ctx.ui.confirm`` reaches the client as an extension_ui_request that is waited for."""
    probe = write_plugin(tmp_path, "probe", PROBE)
    log = tmp_path / "log.jsonl"
    env = {
        **__import__("os").environ,
        "PROBE_LOG": str(log),
        "PROBE_ASK": "1",
        "PI_FAUX_SCRIPT": json.dumps([{"text": "one"}, {"text": "two"}]),
    }
    asked: list[dict] = []

    def answer(record: dict):
        asked.append(record)
        return record.get("method") == "confirm"  # yes to every confirm

    with RpcClient(
        [*PI, "--mode", "rpc"],
        args=["--model", "faux/faux-1", "--tools", "read,ls", "-e", probe],
        env=env,
        cwd=isolated_environment["work"],
    ) as client:
        client.on_ui_request(answer)
        client.prompt_and_wait("first prompt")
        first_file = client.get_state()["sessionFile"]
        assert client.new_session() == {"cancelled": False}
        client.prompt_and_wait("second prompt")
        assert client.switch_session(first_file) == {"cancelled": False}
        user_entry = next(
            e["id"]
            for e in client.call("get_entries")["entries"]
            if e.get("message", {}).get("role") == "user"
        )
        assert client.fork(user_entry)["cancelled"] is False
        client.prompt_and_wait("/reload-now")
    records = _log(log)
    assert [r["reason"] for r in records] == ["startup", "new", "resume", "fork", "reload"]
    assert all(r["tools"] == ["ls", "read"] and r["confirmed"] is True for r in records), records
    confirms = [r for r in asked if r.get("method") == "confirm"]
    titles = [r for r in asked if r.get("method") == "setTitle"]
    assert [c["message"] for c in confirms] == [
        f"reason {r}" for r in ("startup", "new", "resume", "fork", "reload")
    ]
    assert [t["title"] for t in titles] == [
        f"title {r}" for r in ("startup", "new", "resume", "fork", "reload")
    ]


CONTEXT_EDIT = """
from pi_host import hookimpl

replaced = False

@hookimpl
def on_turn_end(event, ctx):
    global replaced
    if replaced or event["outcome"] != "completed" or event["toolResults"]:
        return None
    replaced = True
    return {
        "entries": [
            *event["entries"],
            {"type": "context_edit", "targetId": event["messageEntryId"], "replacement": None},
            {"type": "custom_message", "customType": "replacement-instruction",
             "content": "Answer again using the persisted user request.", "display": False},
        ],
        "continue": True,
    }
"""


def test_pis_context_edit_at_turn_end_pattern_writes_its_entries_and_the_model_answers_again(
    tmp_path, isolated_environment
):
    """The pattern of pi's docs/extensions.md (turn_start / turn_end), ported as it is: the first
    answer is edited out of the context and the model asked once more."""
    plugin = write_plugin(tmp_path, "replace_first", CONTEXT_EDIT)
    with LoopbackServer([Reply("first answer"), Reply("second answer")]) as server:
        write_models_json(isolated_environment["agent"], server.url)
        out = run_pi("-p", "--model", "loop/loop-1", "-e", plugin, "hello")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "second answer"
    second = json.dumps(server.requests[1]["messages"])
    assert "first answer" not in second and "Answer again using the persisted user request." in second
    [path] = list((isolated_environment["agent"] / "sessions").rglob("*.jsonl"))
    entries = [json.loads(line) for line in path.read_text().splitlines()[1:]]
    first = next(e for e in entries if e.get("message", {}).get("role") == "assistant")
    edit = next(e for e in entries if e["type"] == "context_edit")
    assert edit["targetId"] == first["id"] and edit["replacement"] is None
    assert any(
        e["type"] == "custom_message" and e["customType"] == "replacement-instruction" for e in entries
    )
    assert entries[-1]["message"]["role"] == "assistant" and "second answer" in json.dumps(entries[-1])
