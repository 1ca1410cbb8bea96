"""``pi_host.rpc.RpcClient``: framing, correlation, events, extension UI and shutdown, first against
small stand-in agents (a Python one-liner speaking the protocol), then against pi-host itself."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from pi_host.rpc import RpcClient, RpcClosedError, RpcError, RpcTimeoutError
from tests.support.paths import DOCS
from tests.support.rpc import LoopbackServer, Reply, World, pi_host_client, pi_host_env, write_models_json


def fake_agent(body: str) -> list[str]:
    """argv of a stand-in agent: ``body`` runs with ``out(record_or_bytes)`` and ``read()`` (the
    next command as a dict, None at EOF) defined."""
    prelude = textwrap.dedent(
        """
        import json, sys
        def out(record):
            data = record if isinstance(record, bytes) else json.dumps(record, ensure_ascii=False).encode() + b"\\n"
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
        def read():
            line = sys.stdin.buffer.readline()
            return json.loads(line) if line else None
        """
    )
    return [sys.executable, "-c", prelude + textwrap.dedent(body)]


# --- against stand-ins ----------------------------------------------------------------------------


def test_records_are_split_on_lf_only_with_crlf_partial_writes_and_noise():
    body = """
        import time
        out(b'{"type":"a","text":"one\\xe2\\x80\\xa8two\\xe2\\x80\\xa9three"}\\n')  # U+2028, U+2029 raw
        out(b'{"type":"b"}\\r\\n')
        out(b'{"type":"c","te')
        time.sleep(0.2)
        out(b'xt":"split"}\\n')
        out(b'not json\\n')
        out(b'\\n')
        out(b'{"type":"d"}')  # no final LF before EOF
    """
    with RpcClient(fake_agent(body)) as client:
        records = [client.next_event(timeout=10) for _ in range(4)]
        assert [r["type"] for r in records] == ["a", "b", "c", "d"]
        assert records[0]["text"] == "one\u2028two\u2029three"
        assert records[2]["text"] == "split"
        with pytest.raises(RpcClosedError):
            client.next_event(timeout=10)
        assert client.invalid_lines == [b"not json"]


def test_responses_are_matched_by_id_even_out_of_order():
    body = """
        first, second = read(), read()
        for command in (second, first):
            out({"id": command["id"], "type": "response", "command": command["type"], "success": True,
                 "data": {"echo": command.get("name")}})
        out({"type": "response", "command": "parse", "success": False, "error": "Failed to parse command: x"})
        read()
    """
    with RpcClient(fake_agent(body)) as client:
        answers: dict[str, object] = {}

        def ask(name: str) -> None:
            answers[name] = client.call("set_session_name", {"name": name})

        threads = [threading.Thread(target=ask, args=(name,)) for name in ("first", "second")]
        threads[0].start()
        time.sleep(0.2)  # "first" is written first
        threads[1].start()
        for thread in threads:
            thread.join(10)
        assert answers == {"first": {"echo": "first"}, "second": {"echo": "second"}}
        # a response nobody waits for is an event
        parse = client.wait_for_event("response", timeout=10)
        assert parse["command"] == "parse"


def test_a_refusal_raises_rpc_error_with_the_command_and_the_error():
    body = """
        command = read()
        out({"id": command["id"], "type": "response", "command": "set_model", "success": False,
             "error": "Model not found: a/b"})
        read()
    """
    with RpcClient(fake_agent(body)) as client:
        with pytest.raises(RpcError) as caught:
            client.set_model("a", "b")
        assert caught.value.command == "set_model"
        assert caught.value.error == "Model not found: a/b"
        assert caught.value.response["success"] is False


def test_requests_use_pi_field_names_and_leave_out_unset_ones():
    body = """
        while (command := read()) is not None:
            out({"id": command["id"], "type": "response", "command": command["type"], "success": True,
                 "data": command})
    """
    with RpcClient(fake_agent(body)) as client:

        def sent(data: dict) -> dict:
            return {k: v for k, v in data.items() if k != "id"}

        assert sent(client.prompt("hi", streaming_behavior="followUp")) == {
            "type": "prompt",
            "message": "hi",
            "streamingBehavior": "followUp",
        }
        assert sent(client.prompt("hi")) == {"type": "prompt", "message": "hi"}
        images = [{"type": "image", "data": "AAAA", "mimeType": "image/png"}]
        assert sent(client.steer("s", images))["images"] == images
        assert sent(client.follow_up("f")) == {"type": "follow_up", "message": "f"}
        assert sent(client.new_session("/p.jsonl")) == {"type": "new_session", "parentSession": "/p.jsonl"}
        assert sent(client.set_model("p", "m")) == {"type": "set_model", "provider": "p", "modelId": "m"}
        assert sent(client.set_thinking_level("high")) == {"type": "set_thinking_level", "level": "high"}
        assert sent(client.set_steering_mode("all")) == {"type": "set_steering_mode", "mode": "all"}
        assert sent(client.set_follow_up_mode("all")) == {"type": "set_follow_up_mode", "mode": "all"}
        assert sent(client.compact("focus")) == {"type": "compact", "customInstructions": "focus"}
        assert sent(client.set_auto_compaction(False)) == {"type": "set_auto_compaction", "enabled": False}
        assert sent(client.set_auto_retry(True)) == {"type": "set_auto_retry", "enabled": True}
        assert sent(client.bash("ls")) == {"type": "bash", "command": "ls"}
        assert sent(client.bash("ls", exclude_from_context=True))["excludeFromContext"] is True
        assert sent(client.export_html("/o.html")) == {"type": "export_html", "outputPath": "/o.html"}
        assert sent(client.switch_session("/s.jsonl")) == {
            "type": "switch_session",
            "sessionPath": "/s.jsonl",
        }
        assert sent(client.fork("e1")) == {"type": "fork", "entryId": "e1"}
        assert sent(client.get_entries(since="e2")) == {"type": "get_entries", "since": "e2"}
        assert sent(client.set_session_name("n")) == {"type": "set_session_name", "name": "n"}
        for method, command in [
            (client.abort, "abort"),
            (client.clear_queue, "clear_queue"),
            (client.get_state, "get_state"),
            (client.get_messages, "get_messages"),
            (client.cycle_model, "cycle_model"),
            (client.get_available_models, "get_available_models"),
            (client.cycle_thinking_level, "cycle_thinking_level"),
            (client.get_available_thinking_levels, "get_available_thinking_levels"),
            (client.abort_retry, "abort_retry"),
            (client.abort_bash, "abort_bash"),
            (client.get_session_stats, "get_session_stats"),
            (client.clone, "clone"),
            (client.get_fork_messages, "get_fork_messages"),
            (client.get_tree, "get_tree"),
            (client.get_last_assistant_text, "get_last_assistant_text"),
            (client.get_commands, "get_commands"),
        ]:
            assert sent(method()) == {"type": command}
        ids = [json.loads(json.dumps(client.get_state()))["id"] for _ in range(3)]
        assert len(set(ids)) == 3


def test_dialog_answers_use_pi_field_names():
    body = """
        for ident, method in [("1", "confirm"), ("2", "select"), ("3", "input"), ("4", "editor"),
                              ("5", "confirm"), ("6", "notify")]:
            out({"type": "extension_ui_request", "id": ident, "method": method, "title": "t"})
        answers = [read() for _ in range(5)]
        sys.stderr.write(json.dumps(answers))
        sys.stderr.flush()
        read()
    """
    scripted = {"1": True, "2": "Allow", "3": None, "4": {"value": "edited"}, "5": {"cancelled": True}}
    seen: list[str] = []

    def answer(request: dict) -> object:
        seen.append(request["method"])
        return scripted.get(request["id"], "ignored")

    client = RpcClient(fake_agent(body))
    client.on_ui_request(answer)
    deadline = time.monotonic() + 10
    while "[" not in client.stderr and time.monotonic() < deadline:
        time.sleep(0.02)
    assert client.close() == 0
    assert seen == ["confirm", "select", "input", "editor", "confirm", "notify"]
    assert json.loads(client.stderr) == [
        {"type": "extension_ui_response", "id": "1", "confirmed": True},
        {"type": "extension_ui_response", "id": "2", "value": "Allow"},
        {"type": "extension_ui_response", "id": "3", "cancelled": True},
        {"type": "extension_ui_response", "id": "4", "value": "edited"},
        {"type": "extension_ui_response", "id": "5", "cancelled": True},
    ]


def test_listeners_unsubscribe_and_a_failing_listener_does_not_stop_the_reader():
    body = """
        read()
        out({"type": "one"})
        read()
        out({"type": "two"})
        read()
    """
    with RpcClient(fake_agent(body)) as client:
        seen: list[str] = []

        def broken(record: dict) -> None:
            raise ValueError("listener bug")

        client.on_event(broken)
        unsubscribe = client.on_event(lambda r: seen.append(r["type"]))
        client.send({"type": "go"})
        client.wait_for_event("one", timeout=10)
        unsubscribe()
        client.send({"type": "go"})
        client.wait_for_event("two", timeout=10)
        assert seen == ["one"]
        assert len(client.listener_errors) == 2


def test_an_agent_that_dies_fails_the_call_with_its_stderr():
    body = """
        read()
        sys.stderr.write("fatal: out of cheese\\n")
        sys.exit(3)
    """
    client = RpcClient(fake_agent(body))
    with pytest.raises(RpcClosedError) as caught:
        client.get_state()
    assert caught.value.returncode == 3
    assert "out of cheese" in str(caught.value)
    assert client.close() == 3
    assert "out of cheese" in client.stderr


def test_a_silent_agent_times_out_and_close_kills_what_ignores_eof():
    body = """
        import signal, time
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        sys.stdin.close()
        time.sleep(60)
    """
    client = RpcClient(fake_agent(body), timeout=0.3)
    with pytest.raises(RpcTimeoutError):
        client.get_state()
    started = time.monotonic()
    assert client.close(timeout=0.5) != 0  # killed
    assert time.monotonic() - started < 10


# --- against pi-host --------------------------------------------------------------------------------


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World.make(tmp_path / "client")


def test_prompt_and_wait_returns_the_events_of_the_run(world):
    with LoopbackServer([Reply("Hello from the loop."), Reply("Second answer.")]) as server:
        with pi_host_client(world, server, "--no-session") as client:
            events = client.prompt_and_wait("Say hello", timeout=30)
            kinds = [e["type"] for e in events]
            assert kinds[0] == "agent_start"
            assert kinds[-1] == "agent_settled"
            assert events[-1]["aborted"] is False
            [answer] = [
                e for e in events if e["type"] == "message_end" and e["message"]["role"] == "assistant"
            ]
            assert answer["message"]["content"][0]["text"] == "Hello from the loop."
            assert not client.is_running
            assert client.wait_for_idle(timeout=1) is True  # idle: at once
            assert client.get_last_assistant_text() == {"text": "Hello from the loop."}
            second = client.prompt_and_wait("Again")
            assert second[0]["type"] == "agent_start"  # nothing of the first run
            assert client.get_state()["messageCount"] >= 4
            assert client.close() == 0


def test_a_bad_set_model_raises_rpc_error(world):
    with LoopbackServer([]) as server:
        with pi_host_client(world, server, "--no-session") as client:
            with pytest.raises(RpcError) as caught:
                client.set_model("nope", "nothing")
            assert caught.value.command == "set_model"
            assert caught.value.error == "Model not found: nope/nothing"
            assert client.get_state()["model"]["id"] == "loop-1"  # still usable


def test_line_and_paragraph_separators_survive_the_framing_both_ways(world):
    tricky = "first\u2028second\u2029third \u0085 fourth\r\nfifth"
    with LoopbackServer([Reply(f"echo: {tricky}")]) as server:
        with pi_host_client(world, server, "--no-session") as client:
            events = client.prompt_and_wait(f"say {tricky}")
            user = next(e for e in events if e["type"] == "message_end" and e["message"]["role"] == "user")
            content = user["message"]["content"]
            text = content if isinstance(content, str) else content[0]["text"]
            assert text == f"say {tricky}"
            assert client.get_last_assistant_text() == {"text": f"echo: {tricky}"}
            assert client.invalid_lines == []
        sent = server.requests[0]["messages"][-1]["content"]
        assert tricky in (sent if isinstance(sent, str) else sent[0]["text"])


def test_close_ends_the_process_with_exit_0_and_later_calls_fail(world):
    with LoopbackServer([]) as server:
        client = pi_host_client(world, server, "--no-session")
        assert client.get_state()["isStreaming"] is False
        assert client.close(timeout=20) == 0
        assert client.returncode == 0
        with pytest.raises(RpcClosedError):
            client.get_state()


def test_closing_during_a_run_aborts_it_and_exits_0(world):
    with LoopbackServer([Reply.slow(3000, delay=0.005)]) as server:
        client = pi_host_client(world, server, "--no-session")
        client.prompt("Tell me everything")
        client.wait_for_event("message_update", timeout=20)
        assert client.is_running
        assert client.close(timeout=20) == 0


def test_streaming_prompts_need_a_behaviour(world):
    with LoopbackServer([Reply.slow(3000, delay=0.005), Reply("steered")]) as server:
        with pi_host_client(world, server, "--no-session") as client:
            settled = threading.Event()
            client.on_event(lambda r: settled.set() if r["type"] == "agent_settled" else None)
            assert client.prompt("Long story") == {"disposition": "started"}
            client.wait_for_event("message_update", timeout=20)
            with pytest.raises(RpcError, match="Specify streamingBehavior"):
                client.prompt("Interrupting")
            assert client.prompt("Change course", streaming_behavior="steer") == {"disposition": "queued"}
            assert client.clear_queue() == {"steering": ["Change course"], "followUp": []}
            assert client.abort() is None
            assert settled.wait(20)
            assert client.get_state()["isStreaming"] is False


def test_bash_output_streams_with_the_command_id(world):
    with LoopbackServer([]) as server:
        with pi_host_client(world, server, "--no-session") as client:
            updates: list[dict] = []
            client.on_event(lambda r: updates.append(r) if r["type"] == "bash_execution_update" else None)
            result = client.bash("printf 'a\\nb\\n'; exit 4")
            assert result["output"] == "a\nb\n"
            assert result["exitCode"] == 4
            assert result["cancelled"] is False
            assert "".join(u["delta"] for u in updates) == "a\nb\n"
            assert len({u["id"] for u in updates}) == 1


DEPLOY_PLUGIN = """
from pi_host import hookimpl
from pi_host.plugins.registrations import Command


async def deploy(args, ctx):
    confirmed = await ctx.ui.confirm("Deploy?", "really?")
    ctx.ui.notify(f"deploy confirmed: {confirmed}", "info")


@hookimpl
def register_commands():
    return [Command(name="deploy", handler=deploy, description="Ship it")]
"""


def test_extension_ui_dialogs_are_answered_by_the_callback(world, tmp_path):
    plugin = tmp_path / "deploy_plugin.py"
    plugin.write_text(DEPLOY_PLUGIN)
    with LoopbackServer([]) as server:
        with pi_host_client(world, server, "--no-session", "-e", str(plugin)) as client:
            asked: list[dict] = []

            def answer(request: dict) -> object:
                asked.append(request)
                return {"confirmed": True} if request["method"] == "confirm" else None

            client.on_ui_request(answer)
            assert client.prompt("/deploy") == {"disposition": "handled"}
            notify = client.wait_for_event(
                lambda r: r.get("type") == "extension_ui_request" and r.get("method") == "notify", timeout=20
            )
            assert notify["message"] == "deploy confirmed: True"
            assert notify["notifyType"] == "info"
            confirm = asked[0]
            assert (confirm["method"], confirm["title"], confirm["message"]) == (
                "confirm",
                "Deploy?",
                "really?",
            )
            assert isinstance(confirm["id"], str) and confirm["id"]
            names = [c["name"] for c in client.get_commands()["commands"]]
            assert "deploy" in names


def test_a_cancelled_dialog_reaches_the_plugin_as_false(world, tmp_path):
    plugin = tmp_path / "deploy_plugin.py"
    plugin.write_text(DEPLOY_PLUGIN)
    with LoopbackServer([]) as server:
        with pi_host_client(world, server, "--no-session", "-e", str(plugin)) as client:
            client.on_ui_request(lambda request: None)  # every dialog: cancelled
            client.prompt("/deploy")
            notify = client.wait_for_event(
                lambda r: r.get("type") == "extension_ui_request" and r.get("method") == "notify", timeout=20
            )
            assert notify["message"] == "deploy confirmed: False"


def test_the_client_module_imports_only_the_standard_library():
    code = (
        "import sys, pi_host.rpc; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('pydantic', 'httpx', 'pluggy', 'orjson', 'jiter', 'typer', 'rich', 'prompt_toolkit')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert out.stdout.strip() == "[]", out.stderr


def test_the_dialog_example_of_the_docs_runs(world):
    """docs/rpc.md's "A plugin's dialog, answered from a script", as a reader would run it."""
    doc = (DOCS / "rpc.md").read_text(encoding="utf-8")
    section = doc[doc.index("A plugin's dialog, answered from a script") :]
    code = section[
        section.index("```python\n") + len("```python\n") : section.index(
            "```", section.index("```python\n") + 9
        )
    ]
    (world.work / "deploy_plugin.py").write_text(DEPLOY_PLUGIN)
    (world.work / "example.py").write_text("from pi_host.rpc import RpcClient\n" + code)
    with LoopbackServer([]) as server:
        write_models_json(world.agent, server.url)
        out = subprocess.run(
            [sys.executable, "example.py"],
            cwd=world.work,
            env=pi_host_env(world),
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert out.returncode == 0, out.stderr
    assert "plugin says: deploy confirmed: True" in out.stdout
