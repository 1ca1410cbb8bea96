"""``pi --mode rpc`` as a client drives it: a real subprocess, JSON lines on its stdin and
stdout, the faux provider scripted through ``PI_FAUX_SCRIPT``. Every command of pi 1.6.0 is
exercised, with the error answers, the extension UI sub-protocol and the shutdown paths."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

STREAMING_ERROR = (
    "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message."
)


class Rpc:
    """A bare driver: records are read by a thread that splits stdout on LF only."""

    def __init__(
        self, cwd: Path, script: list[dict[str, Any]], *args: str, env: dict[str, str] | None = None
    ):
        environment = dict(os.environ, PI_FAUX_SCRIPT=json.dumps(script), **(env or {}))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "pi_host", "--mode", "rpc", "--model", "faux/faux-1", *args],
            cwd=cwd, env=environment, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        self.records: queue.Queue[dict[str, Any]] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        self._next = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in iter(self.proc.stdout.readline, b""):
            self.records.put(json.loads(line))

    def write(self, payload: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(payload)
        self.proc.stdin.flush()

    def send(self, record: dict[str, Any]) -> str:
        self._next += 1
        ident = f"r{self._next}"
        self.write(json.dumps({"id": ident, **record}).encode() + b"\n")
        return ident

    def next(self, timeout: float = 20) -> dict[str, Any]:
        record = self.records.get(timeout=timeout)
        self.seen.append(record)
        return record

    def until(self, predicate, timeout: float = 20) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            record = self.next(max(0.1, deadline - time.monotonic()))
            if predicate(record):
                return record

    def response(self, ident: str, timeout: float = 20) -> dict[str, Any]:
        return self.until(lambda r: r.get("type") == "response" and r.get("id") == ident, timeout)

    def call(self, record: dict[str, Any], timeout: float = 20) -> dict[str, Any]:
        return self.response(self.send(record), timeout)

    def ok(self, record: dict[str, Any]) -> Any:
        answer = self.call(record)
        assert answer["success"] is True, answer
        assert answer["command"] == record["type"]
        return answer.get("data")

    def settled(self, timeout: float = 20) -> dict[str, Any]:
        return self.until(lambda r: r.get("type") == "agent_settled", timeout)

    def close(self, timeout: float = 20) -> int:
        if self.proc.stdin and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()


@pytest.fixture
def work(isolated_environment):
    return isolated_environment["work"]


def test_a_conversation_and_the_state_commands(work, isolated_environment):
    script = [{"text": "first answer"}, {"toolCalls": [{"name": "bash", "arguments": {"command": "echo tool-out"}}]},
              {"text": "after the tool"}]  # fmt: skip
    rpc = Rpc(work, script)
    try:
        assert rpc.ok({"type": "prompt", "message": "hello"}) == {"disposition": "started"}
        assert rpc.settled()["aborted"] is False
        assert rpc.ok({"type": "prompt", "message": "run it"}) == {"disposition": "started"}
        rpc.settled()
        kinds = [r["type"] for r in rpc.seen]
        assert kinds.count("agent_settled") == 2 and "tool_execution_end" in kinds
        state = rpc.ok({"type": "get_state"})
        assert state["model"]["id"] == "faux-1" and "headers" not in state["model"]
        assert (state["isStreaming"], state["isCompacting"], state["pendingMessageCount"]) == (
            False,
            False,
            0,
        )
        assert state["sessionFile"].endswith(".jsonl") and os.path.isfile(state["sessionFile"])
        messages = rpc.ok({"type": "get_messages"})["messages"]
        assert [m["role"] for m in messages if m["role"] != "system"] == [
            "user", "assistant", "user", "assistant", "toolResult", "assistant",
        ]  # fmt: skip
        assert rpc.ok({"type": "get_last_assistant_text"}) == {"text": "after the tool"}
        stats = rpc.ok({"type": "get_session_stats"})
        assert (stats["userMessages"], stats["assistantMessages"], stats["toolCalls"], stats["toolResults"]) == (
            2, 3, 1, 1,
        )  # fmt: skip
        assert stats["tokens"]["total"] == sum(
            stats["tokens"][k] for k in ("input", "output", "cacheRead", "cacheWrite")
        )
        assert stats["tokens"]["total"] > 0 and set(stats["contextUsage"]) == {
            "tokens",
            "contextWindow",
            "percent",
        }
        entries = rpc.ok({"type": "get_entries"})
        ids = [e["id"] for e in entries["entries"]]
        assert entries["leafId"] == ids[-1]
        later = rpc.ok({"type": "get_entries", "since": ids[-3]})
        assert [e["id"] for e in later["entries"]] == ids[-2:]
        missing = rpc.call({"type": "get_entries", "since": "nope"})
        assert (missing["success"], missing["error"]) == (False, "Entry not found: nope")
        tree = rpc.ok({"type": "get_tree"})
        assert tree["leafId"] == ids[-1] and tree["tree"][0]["entry"]["id"] == ids[0]
        forks = rpc.ok({"type": "get_fork_messages"})["messages"]
        assert [m["text"] for m in forks] == ["hello", "run it"]
        assert rpc.ok({"type": "set_session_name", "name": "rpc named"}) is None
        assert rpc.ok({"type": "get_state"})["sessionName"] == "rpc named"
        blank = rpc.call({"type": "set_session_name", "name": "  "})
        assert (blank["success"], blank["error"]) == (False, "Session name cannot be empty")
    finally:
        assert rpc.close() == 0


def test_models_thinking_modes_and_toggles(work):
    rpc = Rpc(work, [])
    try:
        models = rpc.ok({"type": "get_available_models"})["models"]
        assert {"faux-1", "faux-reasoner"} <= {m["id"] for m in models}
        assert rpc.ok({"type": "get_available_thinking_levels"}) == {"levels": ["off"]}
        assert rpc.ok({"type": "cycle_thinking_level"}) is None  # no reasoning: nothing to cycle
        chosen = rpc.ok({"type": "set_model", "provider": "faux", "modelId": "faux-reasoner"})
        assert chosen["id"] == "faux-reasoner" and chosen["reasoning"] is True
        bad = rpc.call({"type": "set_model", "provider": "faux", "modelId": "missing"})
        assert (bad["success"], bad["error"]) == (False, "Model not found: faux/missing")
        levels = rpc.ok({"type": "get_available_thinking_levels"})["levels"]
        assert levels[0] == "off" and "high" in levels
        assert rpc.ok({"type": "set_thinking_level", "level": "high"}) is None
        assert rpc.ok({"type": "get_state"})["thinkingLevel"] == "high"
        cycled = rpc.ok({"type": "cycle_thinking_level"})
        assert cycled["level"] in levels and cycled["level"] != "high"
        moved = rpc.ok({"type": "cycle_model"})
        assert set(moved) == {"model", "thinkingLevel", "isScoped"} and moved["isScoped"] is False
        for kind in ("set_steering_mode", "set_follow_up_mode"):
            assert rpc.ok({"type": kind, "mode": "all"}) is None
            assert rpc.call({"type": kind, "mode": "sometimes"})["success"] is False
        state = rpc.ok({"type": "get_state"})
        assert (state["steeringMode"], state["followUpMode"]) == ("all", "all")
        assert rpc.ok({"type": "set_auto_compaction", "enabled": False}) is None
        assert rpc.ok({"type": "get_state"})["autoCompactionEnabled"] is False
        assert rpc.ok({"type": "set_auto_retry", "enabled": False}) is None
        assert rpc.ok({"type": "abort_retry"}) is None
    finally:
        assert rpc.close() == 0


def test_malformed_input_unknown_commands_and_framing(work):
    rpc = Rpc(work, [{"text": "line\u2028separator kept"}])
    try:
        rpc.write(b'{"id":"x","type":"get_state"\n')
        parse = rpc.next()
        assert (parse["type"], parse["command"], parse["success"]) == ("response", "parse", False)
        assert parse["error"].startswith("Failed to parse command: ") and "id" not in parse
        rpc.write(b"\n   \n")  # blank lines are ignored
        unknown = rpc.call({"type": "fly"})
        assert (unknown["command"], unknown["success"], unknown["error"]) == (
            "fly",
            False,
            "Unknown command: fly",
        )
        rpc.write(json.dumps({"id": "crlf", "type": "get_state"}).encode() + b"\r\n")
        assert rpc.response("crlf")["success"] is True
        rpc.ok({"type": "prompt", "message": "a\u2028b"})
        rpc.settled()
        assert rpc.ok({"type": "get_last_assistant_text"}) == {"text": "line\u2028separator kept"}
        no_message = rpc.call({"type": "prompt"})
        assert no_message["success"] is False
    finally:
        assert rpc.close() == 0


def test_prompts_while_streaming_queue_abort_and_clear(work):
    slow = {"text": "x " * 400, "delayMs": 20, "chunkSize": 2}
    rpc = Rpc(work, [slow, {"text": "after steering"}, slow])
    try:
        rpc.ok({"type": "prompt", "message": "go"})
        rpc.until(lambda r: r.get("type") == "message_update")
        busy = rpc.call({"type": "prompt", "message": "again"})
        assert (busy["success"], busy["error"]) == (False, STREAMING_ERROR)
        assert rpc.ok({"type": "prompt", "message": "steer me", "streamingBehavior": "steer"}) == {
            "disposition": "queued"
        }
        assert rpc.ok({"type": "follow_up", "message": "later"}) == {"disposition": "queued"}
        assert rpc.ok({"type": "clear_queue"}) == {"steering": ["steer me"], "followUp": ["later"]}
        assert rpc.ok({"type": "steer", "message": "steer for real"}) == {"disposition": "queued"}
        assert rpc.ok({"type": "get_state"})["pendingMessageCount"] == 1
        rpc.until(lambda r: r.get("type") == "agent_settled", timeout=30)
        assert rpc.ok({"type": "get_last_assistant_text"}) == {"text": "after steering"}
        rpc.ok({"type": "prompt", "message": "slow again"})
        rpc.until(lambda r: r.get("type") == "message_update")
        assert rpc.ok({"type": "abort"}) is None  # answered once idle
        assert rpc.ok({"type": "get_state"})["isStreaming"] is False
        assert [r for r in rpc.seen if r.get("type") == "agent_settled"][-1]["aborted"] is True
    finally:
        assert rpc.close() == 0


def test_a_steering_mode_set_mid_run_counts_from_the_next_poll(work):
    """As pi: ``set_steering_mode`` while a run streams changes how the queue is taken at the
    next poll (both queued messages go together), not only from the next prompt."""
    slow = {"text": "x " * 50, "delayMs": 20, "chunkSize": 2}
    rpc = Rpc(work, [slow, {"text": "both seen"}, {"text": "one more turn"}])
    try:
        rpc.ok({"type": "prompt", "message": "go"})
        rpc.until(lambda r: r.get("type") == "message_update")
        rpc.ok({"type": "steer", "message": "first"})
        rpc.ok({"type": "steer", "message": "second"})
        assert rpc.ok({"type": "set_steering_mode", "mode": "all"}) is None
        rpc.until(lambda r: r.get("type") == "agent_settled", timeout=30)
        messages = rpc.ok({"type": "get_messages"})["messages"]
        roles = [m["role"] for m in messages if m["role"] != "system"]
        assert roles == ["user", "assistant", "user", "user", "assistant"], roles
    finally:
        assert rpc.close() == 0


def test_bash_streams_updates_and_reaches_the_next_prompt(work):
    import pi_provider_faux  # noqa: F401 (the provider records nothing across processes: check the file)

    rpc = Rpc(work, [{"text": "seen"}])
    try:
        ident = rpc.send({"type": "bash", "command": "printf 'one\\n'; sleep 0.2; printf 'two\\n'"})
        updates = []
        while True:
            record = rpc.next()
            if record.get("type") == "bash_execution_update":
                updates.append(record)
            if record.get("type") == "response" and record.get("id") == ident:
                break
        assert record["data"] == {
            "output": "one\ntwo\n",
            "exitCode": 0,
            "cancelled": False,
            "truncated": False,
        }
        assert "".join(u["delta"] for u in updates) == "one\ntwo\n" and {u["id"] for u in updates} == {ident}
        hidden = rpc.ok({"type": "bash", "command": "echo secret-ish", "excludeFromContext": True})
        assert hidden["output"] == "secret-ish\n"
        ident = rpc.send({"type": "bash", "command": "sleep 30"})
        time.sleep(0.3)
        assert rpc.ok({"type": "abort_bash"}) is None
        assert rpc.response(ident)["data"]["cancelled"] is True
        rpc.ok({"type": "prompt", "message": "what ran?"})
        rpc.settled()
        messages = rpc.ok({"type": "get_messages"})["messages"]
        runs = [m for m in messages if m["role"] == "bashExecution"]
        assert [m["command"] for m in runs][:2] == [
            "printf 'one\\n'; sleep 0.2; printf 'two\\n'",
            "echo secret-ish",
        ]
        assert runs[1]["excludeFromContext"] is True
    finally:
        assert rpc.close() == 0


def test_sessions_new_switch_fork_clone_and_export(work, tmp_path):
    rpc = Rpc(work, [{"text": "one"}, {"text": "two"}])
    try:
        rpc.ok({"type": "prompt", "message": "first"})
        rpc.settled()
        rpc.ok({"type": "prompt", "message": "second"})
        rpc.settled()
        original = rpc.ok({"type": "get_state"})["sessionFile"]
        second = rpc.ok({"type": "get_fork_messages"})["messages"][1]
        forked = rpc.ok({"type": "fork", "entryId": second["entryId"]})
        assert forked == {"text": "second", "cancelled": False}
        fork_file = rpc.ok({"type": "get_state"})["sessionFile"]
        assert fork_file != original
        assert [m["text"] for m in rpc.ok({"type": "get_fork_messages"})["messages"]] == ["first"]
        bad = rpc.call({"type": "fork", "entryId": "nope"})
        assert bad["success"] is False
        assert rpc.ok({"type": "clone"}) == {"cancelled": False}
        clone_file = rpc.ok({"type": "get_state"})["sessionFile"]
        assert clone_file not in (original, fork_file)
        assert rpc.ok({"type": "switch_session", "sessionPath": original}) == {"cancelled": False}
        state = rpc.ok({"type": "get_state"})
        assert state["sessionFile"] == original and state["messageCount"] >= 4
        page = tmp_path / "out.html"
        assert rpc.ok({"type": "export_html", "outputPath": str(page)}) == {"path": str(page)}
        assert "second" in page.read_text()
        assert rpc.ok({"type": "new_session"}) == {"cancelled": False}
        state = rpc.ok({"type": "get_state"})
        assert state["messageCount"] == 0 and state.get("sessionFile") != original
        # as pi: a path with no file yet is a new session there
        missing = tmp_path / "none.jsonl"
        assert rpc.ok({"type": "switch_session", "sessionPath": str(missing)}) == {"cancelled": False}
        assert rpc.ok({"type": "get_state"})["messageCount"] == 0
    finally:
        assert rpc.close() == 0
    header = json.loads(Path(clone_file).read_text().splitlines()[0])
    assert header["parentSession"] == fork_file


CONFIRM_PLUGIN = """
from pi_host import hookimpl
from pi_host.plugins.registrations import Command


async def deploy(args, ctx):
    answer = await ctx.ui.confirm("Deploy?", "to production", timeout=float(args) if args else None)
    ctx.ui.notify(f"deploy answered {answer}", "warning")
    ctx.ui.set_status("deploy", "done")
    choice = await ctx.ui.select("Where?", ["eu", "us"])
    ctx.ui.notify(f"region {choice}")


@hookimpl
def register_commands():
    return [Command(name="deploy", handler=deploy, description="Deploy it")]
"""


def test_extension_dialogs_go_through_extension_ui_requests(work, tmp_path):
    plugin = tmp_path / "deploy.py"
    plugin.write_text(CONFIRM_PLUGIN)
    rpc = Rpc(work, [], "-e", str(plugin))
    try:
        assert rpc.ok({"type": "get_state"}) is not None
        ident = rpc.send({"type": "prompt", "message": "/deploy"})
        ask = rpc.until(lambda r: r.get("type") == "extension_ui_request" and r.get("method") == "confirm")
        assert (ask["title"], ask["message"]) == ("Deploy?", "to production") and "timeout" not in ask
        rpc.write(
            json.dumps({"type": "extension_ui_response", "id": ask["id"], "confirmed": True}).encode() + b"\n"
        )
        note = rpc.until(lambda r: r.get("type") == "extension_ui_request" and r.get("method") == "notify")
        assert (note["message"], note["notifyType"]) == ("deploy answered True", "warning")
        status = rpc.until(lambda r: r.get("method") == "setStatus")
        assert (status["statusKey"], status["statusText"]) == ("deploy", "done")
        pick = rpc.until(lambda r: r.get("method") == "select")
        assert pick["options"] == ["eu", "us"]
        rpc.write(
            json.dumps({"type": "extension_ui_response", "id": pick["id"], "value": "us"}).encode() + b"\n"
        )
        assert rpc.until(lambda r: r.get("method") == "notify")["message"] == "region us"
        assert rpc.response(ident)["data"] == {"disposition": "handled"}
        commands = rpc.ok({"type": "get_commands"})["commands"]
        deploy = next(c for c in commands if c["name"] == "deploy")
        assert deploy["source"] == "extension" and deploy["sourceInfo"]["path"] == str(plugin)
        # A timeout: nobody answers, the dialog resolves to its default (False) on the agent side.
        rpc.send({"type": "prompt", "message": "/deploy 0.3"})
        ask = rpc.until(lambda r: r.get("method") == "confirm")
        assert ask["timeout"] == 300
        assert rpc.until(lambda r: r.get("method") == "notify")["message"] == "deploy answered False"
        pick = rpc.until(lambda r: r.get("method") == "select")
        rpc.write(
            json.dumps({"type": "extension_ui_response", "id": pick["id"], "cancelled": True}).encode()
            + b"\n"
        )
        assert rpc.until(lambda r: r.get("method") == "notify")["message"] == "region None"
    finally:
        assert rpc.close() == 0


def test_stdin_eof_during_a_run_aborts_it_and_exits_cleanly(work):
    rpc = Rpc(work, [{"text": "y " * 2000, "delayMs": 20, "chunkSize": 2}])
    rpc.ok({"type": "prompt", "message": "long"})
    rpc.until(lambda r: r.get("type") == "message_update")
    started = time.monotonic()
    assert rpc.close(timeout=15) == 0
    assert time.monotonic() - started < 10
    rest = []
    while not rpc.records.empty():
        rest.append(rpc.records.get())
    assert any(r.get("type") == "agent_settled" and r.get("aborted") for r in rest + rpc.seen)


def test_sigterm_aborts_the_run_and_exits_with_143(work):
    rpc = Rpc(work, [{"text": "z " * 2000, "delayMs": 20, "chunkSize": 2}])
    try:
        rpc.ok({"type": "prompt", "message": "long"})
        rpc.until(lambda r: r.get("type") == "message_update")
        rpc.proc.send_signal(signal.SIGTERM)
        assert rpc.proc.wait(timeout=15) == 143
        err = rpc.proc.stderr.read().decode()
        assert "interrupted (SIGTERM)" in err
    finally:
        rpc.close()


def test_a_prompt_during_compaction_is_refused_and_abort_cancels_the_compaction(work, isolated_environment):
    (isolated_environment["agent"] / "settings.json").write_text(
        json.dumps({"compaction": {"keepRecentTokens": 1}})
    )
    slow_summary = {"text": "## Goal\n" + "s " * 600, "delayMs": 20, "chunkSize": 2}
    rpc = Rpc(work, [{"text": "one"}, {"text": "two"}, slow_summary])
    try:
        for text in ("first", "second"):
            rpc.ok({"type": "prompt", "message": text})
            rpc.settled()
        compact = rpc.send({"type": "compact"})
        rpc.until(lambda r: r.get("type") == "compaction_start")
        assert rpc.ok({"type": "get_state"})["isCompacting"] is True
        refused = rpc.call({"type": "prompt", "message": "too early"})
        assert refused["success"] is False and "ompaction" in refused["error"]
        assert rpc.ok({"type": "abort"}) is None
        answer = rpc.response(compact)
        assert (answer["success"], answer["error"]) == (False, "Compaction cancelled")
        end = next(r for r in rpc.seen if r.get("type") == "compaction_end")
        assert end["aborted"] is True
        assert rpc.ok({"type": "get_state"})["isCompacting"] is False
    finally:
        assert rpc.close() == 0
