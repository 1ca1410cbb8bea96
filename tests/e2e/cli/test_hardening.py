"""Signals, hung plugin hooks and plugin isolation, through the real ``pi`` command (issue 11:
items 9, 10 and 12). Every run must end with its one line on stderr, the right exit code, no
traceback, and the session file holding what was finished."""

from __future__ import annotations

import glob
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

PI = [sys.executable, "-m", "pi_host"]
SLOW_TEXT = [
    {"text": "a long answer, streamed slowly so that a signal lands in the middle of it", "delayMs": 60}
]


def env_with(script=None, **extra: str) -> dict[str, str]:
    environ = dict(os.environ)
    if script is not None:
        environ["PI_FAUX_SCRIPT"] = json.dumps(script)
    environ.update(extra)
    return environ


def run(*args: str, script=None, timeout: float = 60, **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*PI, *args], env=env_with(script, **extra), capture_output=True, text=True, timeout=timeout
    )


def plugin(tmp_path: Path, name: str, source: str) -> str:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source).lstrip())
    return str(path)


def start(*args: str, script=None, **extra: str) -> subprocess.Popen:
    return subprocess.Popen(
        [*PI, *args], env=env_with(script, **extra), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def wait_for_session_line(agent: Path, needle: str, timeout: float = 20) -> Path:
    """The session file, once a line containing ``needle`` was written to it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for path in glob.glob(str(agent / "sessions" / "*" / "*.jsonl")):
            if needle in Path(path).read_text():
                return Path(path)
        time.sleep(0.02)
    raise AssertionError(f"no session line with {needle!r}")


def entries(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


# --- 10: signals ------------------------------------------------------------------------------


@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_mid_stream_aborts_saves_and_says_one_line(isolated_environment, signum, code):
    agent = isolated_environment["agent"]
    process = start("-p", "--model", "faux/faux-1", "tell me", script=SLOW_TEXT)
    path = wait_for_session_line(agent, '"role":"user"')
    time.sleep(0.5)  # the answer is streaming now
    started = time.monotonic()
    process.send_signal(signum)
    out, err = process.communicate(timeout=20)
    assert time.monotonic() - started < 3
    assert process.returncode == code
    assert out == ""
    assert err.strip().splitlines() == [
        f"pi: interrupted ({signal.Signals(signum).name}): the run was aborted; the session keeps what it saved"
    ]
    kinds = [(e["type"], e.get("message", {}).get("role")) for e in entries(path)]
    assert ("message", "user") in kinds
    final = [e["message"] for e in entries(path) if e.get("message", {}).get("role") == "assistant"][-1]
    assert final["stopReason"] == "aborted" and final["content"]  # the partial answer is kept


def test_ctrl_c_mid_tool_kills_the_command(isolated_environment):
    agent = isolated_environment["agent"]
    script = [
        {"toolCalls": [{"name": "bash", "arguments": {"command": "sleep 30; echo finished"}}]},
        {"text": "x"},
    ]
    process = start("-p", "--model", "faux/faux-1", "--tools", "bash", "go", script=script)
    path = wait_for_session_line(agent, '"toolCall"')
    time.sleep(0.5)
    process.send_signal(signal.SIGINT)
    _out, err = process.communicate(timeout=20)
    assert process.returncode == 130 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    results = [e["message"] for e in entries(path) if e.get("message", {}).get("role") == "toolResult"]
    assert results and results[0]["isError"] is True  # the call is closed, not left dangling


def test_a_second_signal_exits_at_once(isolated_environment, tmp_path):
    stuck = plugin(
        tmp_path,
        "stuck_shutdown",
        """
        import time
        from pi_host import hookimpl

        @hookimpl
        def on_session_shutdown(event):
            time.sleep(60)  # keeps the first signal's orderly exit from finishing
        """,
    )
    process = start("-p", "--model", "faux/faux-1", "-e", stuck, "tell me", script=SLOW_TEXT)
    wait_for_session_line(isolated_environment["agent"], '"role":"user"')
    time.sleep(0.3)
    process.send_signal(signal.SIGINT)
    time.sleep(0.3)
    started = time.monotonic()
    process.send_signal(signal.SIGINT)
    process.communicate(timeout=20)
    assert time.monotonic() - started < 1.0 and process.returncode == 130


# --- 9: hooks that hang ------------------------------------------------------------------------

SYNC_HANG = """
import time
from pi_host import hookimpl

@hookimpl
def on_input(event):
    time.sleep(600)
"""
ASYNC_HANG = """
import asyncio
from pi_host import hookimpl

@hookimpl
async def on_input(event):
    await asyncio.sleep(600)
"""


@pytest.mark.parametrize("source", [SYNC_HANG, ASYNC_HANG], ids=["sync", "async"])
def test_a_hung_hook_times_out_is_named_and_the_run_goes_on(isolated_environment, tmp_path, source):
    (isolated_environment["agent"] / "settings.json").write_text(json.dumps({"pluginHookTimeoutMs": 500}))
    hang = plugin(tmp_path, "hang", source)
    started = time.monotonic()
    out = run("-p", "--no-session", "--model", "faux/faux-1", "-e", hang, "hi", timeout=30)
    assert time.monotonic() - started < 8
    assert out.returncode == 0 and out.stdout == "faux: hi\n"
    assert out.stderr.strip().splitlines() == ["pi: plugin 'hang' failed in input: timed out after 0.5 s"]


def test_a_signal_ends_a_hung_sync_hook_within_two_seconds(isolated_environment, tmp_path):
    hang = plugin(tmp_path, "hang", SYNC_HANG)
    process = start("-p", "--model", "faux/faux-1", "-e", hang, "hi")
    time.sleep(1.5)  # plugins loaded, the hook is sleeping (the default limit is two minutes)
    started = time.monotonic()
    process.send_signal(signal.SIGTERM)
    _out, err = process.communicate(timeout=20)
    assert time.monotonic() - started < 3.5
    assert process.returncode == 143 and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


# --- 12: plugin isolation ------------------------------------------------------------------------


# One variant at the command line; every variant in process: tests/kernel/test_hook_failures.py.
@pytest.mark.parametrize(
    "returned, words",
    [('{"entries": [{"type": "custom_message", "content": 5, "customType": "x"}]}', "content must be")],
)
def test_a_malformed_turn_end_return_is_named_and_the_run_finishes(
    isolated_environment, tmp_path, returned, words
):
    bad = plugin(
        tmp_path,
        "bad_boundary",
        f"""
        from pi_host import hookimpl

        @hookimpl
        def on_turn_end(event):
            return {returned}
        """,
    )
    out = run("-p", "--no-session", "--model", "faux/faux-1", "-e", bad, "hi")
    assert out.returncode == 0 and out.stdout == "faux: hi\n"
    [line] = out.stderr.strip().splitlines()
    assert "'bad_boundary'" in line and "turn_end" in line and words in line


def test_a_tool_with_an_invalid_schema_is_dropped_in_one_line(isolated_environment, tmp_path):
    bad = plugin(
        tmp_path,
        "bad_schema",
        """
        from pi_host import Tool, ToolResult, hookimpl

        class Broken(Tool):
            name = "broken"
            description = "has a pattern that does not compile"
            parameters = {"type": "object", "properties": {"q": {"type": "string", "pattern": "(oops"}}}

            async def execute(self, tool_call_id, args, signal, on_update, ctx):
                return ToolResult.text("never")

        @hookimpl
        def register_tools():
            return [Broken()]
        """,
    )
    script = [
        {"toolCalls": [{"name": "broken", "arguments": {"q": "x"}}]},
        {"text": "then: {{lastToolResult}}"},
    ]
    out = run("-p", "--no-session", "--model", "faux/faux-1", "-e", bad, "go", script=script)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "then: Tool broken not found"
    [line] = out.stderr.strip().splitlines()
    assert "'bad_schema'" in line and "broken" in line and "regular expression" in line


def test_before_provider_request_returning_a_string_is_ignored(isolated_environment, tmp_path):
    bad = plugin(
        tmp_path,
        "bad_payload",
        """
        from pi_host import hookimpl

        @hookimpl
        def on_before_provider_request(event):
            return "a string, not a request body"
        """,
    )
    out = run("-p", "--no-session", "--model", "faux/faux-1", "-e", bad, "hi")
    assert out.returncode == 0 and out.stdout == "faux: hi\n"
    [line] = out.stderr.strip().splitlines()
    assert "'bad_payload'" in line and "before_provider_request" in line and "dict" in line


# One variant at the command line (the session file is checked too); all three in process:
# tests/kernel/test_hook_failures.py.
@pytest.mark.parametrize("statement", ["raise SystemExit(3)"])
def test_exit_and_keyboard_interrupt_in_a_hook_are_failures_not_exits(
    isolated_environment, tmp_path, statement
):
    agent = isolated_environment["agent"]
    bad = plugin(
        tmp_path,
        "exiter",
        f"""
        from pi_host import hookimpl

        @hookimpl
        def on_agent_start(event):
            {statement}
        """,
    )
    out = run("-p", "--model", "faux/faux-1", "-e", bad, "hi")
    assert out.returncode == 0 and out.stdout == "faux: hi\n"
    [line] = out.stderr.strip().splitlines()
    assert "'exiter'" in line and "agent_start" in line
    [path] = glob.glob(str(agent / "sessions" / "*" / "*.jsonl"))
    roles = [e["message"]["role"] for e in entries(Path(path)) if e["type"] == "message"]
    assert roles[-2:] == ["user", "assistant"]  # the run finished and was saved


# The exit code and the one line for a failure during the run and one at shutdown; the other hooks
# in process: tests/kernel/test_hook_failures.py.
@pytest.mark.parametrize("hook", ["on_agent_start", "on_session_shutdown"])
def test_strict_plugins_is_one_line_and_exit_1(isolated_environment, tmp_path, hook):
    bad = plugin(
        tmp_path,
        "strict_bad",
        f"""
        from pi_host import hookimpl

        @hookimpl
        def {hook}(event):
            raise RuntimeError("boom")
        """,
    )
    for mode in (["-p"], ["--mode", "json"]):
        out = run(*mode, "--strict-plugins", "--no-session", "--model", "faux/faux-1", "-e", bad, "hi")
        assert out.returncode == 1
        assert out.stderr.strip().splitlines() == [
            f"pi: plugin 'strict_bad' failed in {hook[3:]}: RuntimeError: boom"
        ]


# --- 13: deeply nested tool arguments ------------------------------------------------------------


@pytest.mark.parametrize("depth", [150, 1000, 100_000])
def test_deeply_nested_arguments_are_an_error_for_that_call_only(isolated_environment, tmp_path, depth):
    deep = '{"a":' * depth + "1" + "}" * depth
    script = [
        {"toolCalls": [{"name": "ls", "rawArguments": deep}, {"name": "ls", "arguments": {}}]},
        {"text": "after: {{lastToolResult}}"},
    ]
    script_file = tmp_path / "script.json"  # too big for an environment variable
    script_file.write_text(json.dumps(script))
    (isolated_environment["work"] / "marker.txt").write_text("x")
    out = run(
        "--mode", "json", "--model", "faux/faux-1", "--tools", "ls", "go", PI_FAUX_SCRIPT=str(script_file)
    )
    assert out.returncode == 0 and out.stderr == ""
    events = [json.loads(line) for line in out.stdout.splitlines()]
    ends = [e for e in events if e["type"] == "tool_execution_end"]
    assert [e["isError"] for e in ends] == [True, False]  # the sibling call still ran
    assert (
        "nest" in ends[0]["result"]["content"][0]["text"]
        or "recursion" in ends[0]["result"]["content"][0]["text"]
    )
    final = [e for e in events if e["type"] == "message_end" and e["message"]["role"] == "assistant"][-1]
    assert final["message"]["stopReason"] == "stop" and "marker.txt" in final["message"]["content"][0]["text"]
    [path] = glob.glob(str(isolated_environment["agent"] / "sessions" / "*" / "*.jsonl"))
    assert len(entries(Path(path))) > 4  # the session file stays readable JSON lines


def test_moderately_nested_arguments_still_work(isolated_environment):
    nested = {"path": "."}
    for _ in range(40):
        nested = {"x": nested}
    script = [{"toolCalls": [{"name": "ls", "arguments": {"path": ".", "extra": nested}}]}, {"text": "ok"}]
    out = run("-p", "--no-session", "--model", "faux/faux-1", "--tools", "ls", "go", script=script)
    assert out.returncode == 0 and out.stdout == "ok\n"
