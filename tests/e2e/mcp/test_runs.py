"""MCP tools in real runs of the pi CLI against real servers (mcp-server-time and mcp-server-git
over stdio, SDK servers over stdio and streamable HTTP, the SDK-free test server of
``tests/support/mcp_light.py`` where the SDK is not the point), driven by the scripted faux model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from tests.e2e.mcp.helpers import SDK_STDIO, SERVERS, TEST_STDIO, TIME, pi, prompt, write_config

CALL_TIME = [
    {"toolCalls": [{"name": "mcp__time__get_current_time", "arguments": {"timezone": "UTC"}}]},
    {"text": "got: {{lastToolResult}}"},
]


def test_direct_tool_round_trips_through_the_cli(isolated_environment):
    write_config(isolated_environment["agent"] / "mcp.json", {"time": {**TIME, "exposure": "direct"}})
    done = prompt("what time is it", CALL_TIME)
    assert done.returncode == 0, done.stderr
    assert '"timezone": "UTC"' in done.stdout and "datetime" in done.stdout


def test_json_mode_lists_the_tools_with_pis_names_and_hooks_see_the_call(isolated_environment, tmp_path):
    write_config(isolated_environment["agent"] / "mcp.json", {"time": {**TIME, "exposure": "direct"}})
    plugin = tmp_path / "seen.py"
    plugin.write_text(
        "from pi_host import hookimpl\n"
        "@hookimpl\n"
        "def on_tool_result(event, ctx):\n"
        "    if event['toolName'].startswith('mcp__'):\n"
        "        return {'content': [{'type': 'text', 'text': 'patched ' + event['toolName']}]}\n"
        "@hookimpl\n"
        "def on_mcp_servers_change(event, ctx):\n"
        "    print('servers:', [(s['name'], s['state']) for s in event['servers']], flush=True)\n"
    )
    done = pi(
        "--mode",
        "json",
        "-e",
        str(plugin),
        "--model",
        "faux/faux-1",
        "--no-session",
        "time?",
        script=CALL_TIME,
    )
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    system = next(
        e["message"] for e in events if e["type"] == "message_start" and e["message"]["role"] == "system"
    )
    declared = {t["name"] for t in system.get("toolsAdded") or system.get("tools_added") or []}
    assert {"mcp__time__get_current_time", "mcp__time__convert_time"} <= declared
    ends = [e for e in events if e["type"] == "tool_execution_end"]
    assert ends and ends[0]["result"]["content"][0]["text"] == "patched mcp__time__get_current_time"
    assert "servers: [('time', 'connected')]" in done.stdout


def test_no_mcp_disables_the_servers_for_one_run(isolated_environment):
    write_config(isolated_environment["agent"] / "mcp.json", {"time": {**TIME, "exposure": "direct"}})
    done = prompt("time?", CALL_TIME, "--no-mcp")
    assert done.returncode == 0, done.stderr
    assert "Tool mcp__time__get_current_time not found" in done.stdout


def test_deferred_tools_are_found_by_tool_search_and_callable_in_the_same_run(isolated_environment):
    write_config(isolated_environment["agent"] / "mcp.json", {"time": TIME})  # default: codemode
    script = [
        {"toolCalls": [{"name": "tool_search", "arguments": {"query": "current time"}}]},
        {"toolCalls": [{"name": "mcp__time__get_current_time", "arguments": {"timezone": "Europe/Paris"}}]},
        {"text": "paris: {{lastToolResult}}"},
    ]
    done = prompt("time in paris", script)
    assert done.returncode == 0, done.stderr
    assert "codemode is not available in pi-host" in done.stderr  # one line, then deferred
    assert len([line for line in done.stderr.splitlines() if "codemode" in line]) == 1
    assert '"timezone": "Europe/Paris"' in done.stdout


def test_hidden_and_untrusted_project_servers_are_not_reachable(isolated_environment):
    write_config(isolated_environment["agent"] / "mcp.json", {"time": {**TIME, "exposure": "hidden"}})
    write_config(isolated_environment["work"] / ".pi" / "mcp.json", {"proj": {**TIME, "exposure": "direct"}})
    script = [
        {"toolCalls": [{"name": "mcp__proj__get_current_time", "arguments": {"timezone": "UTC"}}]},
        {"toolCalls": [{"name": "mcp__time__get_current_time", "arguments": {"timezone": "UTC"}}]},
        {"text": "done: {{lastToolResult}}"},
    ]
    done = prompt("time?", script)
    assert done.returncode == 0, done.stderr
    assert "Tool mcp__time__get_current_time not found" in done.stdout
    listed = pi("mcp", "list", "--json")
    assert [s["name"] for s in json.loads(listed.stdout)["servers"]] == ["time"]
    trusted = prompt("time?", CALL_TIME[:1] + [{"text": "t: {{lastToolResult}}"}], "--approve")
    assert "Tool mcp__time__get_current_time not found" in trusted.stdout  # hidden stays hidden


def test_a_server_that_crashes_is_reported_once_and_the_run_goes_on(isolated_environment):
    write_config(isolated_environment["agent"] / "mcp.json", {"t": {**TEST_STDIO, "exposure": "direct"}})
    script = [
        {"toolCalls": [{"name": "mcp__t__echo", "arguments": {"text": "abc"}}]},
        {"toolCalls": [{"name": "mcp__t__crash", "arguments": {}}]},
        {"toolCalls": [{"name": "mcp__t__echo", "arguments": {"text": "again"}}]},
        {"text": "still here: {{lastToolResult}}"},
    ]
    done = prompt("go", script)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if "MCP server" in line]
    assert len(lines) == 1 and 'MCP server "t" disconnected' in lines[0], done.stderr
    assert "still here:" in done.stdout and 'MCP server "t" is not connected' in done.stdout


def test_a_server_that_cannot_start_is_one_line(isolated_environment):
    write_config(
        isolated_environment["agent"] / "mcp.json",
        {"gone": {"command": "/nonexistent/mcp-server", "exposure": "direct"}},
    )
    done = prompt("hi", [{"text": "answered"}])
    assert done.returncode == 0 and done.stdout.strip() == "answered"
    assert [line for line in done.stderr.splitlines() if "MCP" in line] == [
        next(line for line in done.stderr.splitlines() if 'MCP server "gone" failed to start' in line)
    ]


def test_large_text_results_are_middle_truncated_with_the_full_text_saved(isolated_environment):
    write_config(isolated_environment["agent"] / "mcp.json", {"t": {**TEST_STDIO, "exposure": "direct"}})
    script = [
        {"toolCalls": [{"name": "mcp__t__big", "arguments": {"size": 60000}}]},
        {"text": "{{lastToolResult}}"},
    ]
    done = prompt("big", script)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.startswith("Warning: truncated output (original token count: ")
    assert "chars truncated\u2026" in out and "line 000000" in out and "line 005000" in out
    path = out.split("[Full output: ")[1].split(" (read it with offset/limit)]")[0]
    try:
        full = open(path, encoding="utf-8").read()
        assert "line 002500" in full and "line 002500" not in out
        assert len(out.encode()) < 21000 < len(full.encode())
    finally:
        os.unlink(path)


@pytest.fixture
def http_server(tmp_path):
    port_file = tmp_path / "port"
    process = subprocess.Popen(
        [sys.executable, SERVERS, "http", str(port_file)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while not port_file.exists():
            assert time.monotonic() < deadline and process.poll() is None, "the HTTP server did not start"
            time.sleep(0.05)
        url = f"http://127.0.0.1:{port_file.read_text()}/mcp"
        import socket

        host, port = "127.0.0.1", int(port_file.read_text())
        while True:
            try:
                socket.create_connection((host, port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline
                time.sleep(0.05)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_streamable_http_server_round_trips(isolated_environment, http_server):
    write_config(
        isolated_environment["agent"] / "mcp.json",
        {"web": {"url": http_server, "headers": {"X-Test": "${HOME}"}, "exposure": "direct"}},
    )
    listed = pi("mcp", "list")
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert "web: connected, 4 tools (direct, global)" in listed.stdout
    script = [
        {"toolCalls": [{"name": "mcp__web__echo", "arguments": {"text": "over http"}}]},
        {"text": "{{lastToolResult}}"},
    ]
    done = prompt("echo", script)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ptth revo"


def test_slash_mcp_shows_status_and_restart_brings_tools_back(isolated_environment):
    write_config(isolated_environment["agent"] / "mcp.json", {"t": {**TEST_STDIO, "exposure": "direct"}})
    status = prompt("/mcp", [])
    assert status.returncode == 0, status.stderr
    assert "t: connected, 4 tools (direct, global)" in status.stdout
    assert "tools: echo, big, grow, crash" in status.stdout
    script = [
        {"toolCalls": [{"name": "mcp__t__crash", "arguments": {}}]},
        {"text": "crashed"},
        {"toolCalls": [{"name": "mcp__t__echo", "arguments": {"text": "back"}}]},
        {"text": "after restart: {{lastToolResult}}"},
    ]
    done = pi(
        "--mode",
        "json",
        "--model",
        "faux/faux-1",
        "--no-session",
        "crash it",
        "/mcp restart t",
        "echo",
        script=script,
    )
    assert done.returncode == 0, done.stderr
    assert "Restarted MCP t: connected" in done.stdout
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    texts = [
        block.get("text")
        for e in events
        if e["type"] == "message_end" and e["message"]["role"] == "assistant"
        for block in e["message"]["content"]
        if block.get("type") == "text"
    ]
    assert texts[-1] == "after restart: kcab"


def test_a_model_on_a_loopback_server_calls_the_tool_and_gets_its_result(isolated_environment):
    from tests.support.loopback import LoopbackServer, Reply, ToolCall, write_models_json

    write_config(isolated_environment["agent"] / "mcp.json", {"time": {**TIME, "exposure": "direct"}})
    call = ToolCall("mcp__time__get_current_time", {"timezone": "Europe/Paris"})
    with LoopbackServer([Reply("", tool_calls=[call]), Reply("it is late")]) as server:
        write_models_json(isolated_environment["agent"], server.url)
        done = pi("-p", "what time is it", "--model", "loop/loop-1", "--no-session")
        assert done.returncode == 0, done.stderr
        assert "it is late" in done.stdout
        first, second = server.requests
    declared = [tool["function"]["name"] for tool in first.get("tools", [])]
    assert "mcp__time__get_current_time" in declared  # offered to the model with pi's name
    [result] = [m for m in second["messages"] if m["role"] == "tool"]
    text = result["content"] if isinstance(result["content"], str) else json.dumps(result["content"])
    assert "Europe/Paris" in text and "datetime" in text  # the server's answer went back to the model


def test_mcp_server_git_lists_pi_named_tools_and_a_model_driven_call_round_trips(isolated_environment):
    repo = isolated_environment["work"] / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    (repo / "notes.txt").write_text("first\n")
    subprocess.run([*git, "add", "notes.txt"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "first commit"], check=True)
    (repo / "untracked.txt").write_text("new\n")
    server = {"command": sys.executable, "args": ["-m", "mcp_server_git", "--repository", str(repo)]}
    write_config(isolated_environment["agent"] / "mcp.json", {"git": {**server, "exposure": "direct"}})
    listed = pi("mcp", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert "git_status" in listed.stdout
    script = [
        {"toolCalls": [{"name": "mcp__git__git_status", "arguments": {"repo_path": str(repo)}}]},
        {"toolCalls": [{"name": "mcp__git__git_log", "arguments": {"repo_path": str(repo)}}]},
        {"text": "log: {{lastToolResult}}"},
    ]
    done = pi("--mode", "json", "--model", "faux/faux-1", "--no-session", "what changed?", script=script)
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    system = next(
        e["message"] for e in events if e["type"] == "message_start" and e["message"]["role"] == "system"
    )
    declared = {t["name"] for t in system["toolsAdded"]}
    assert {"mcp__git__git_status", "mcp__git__git_log", "mcp__git__git_diff_unstaged"} <= declared
    results = [e["result"]["content"][0]["text"] for e in events if e["type"] == "tool_execution_end"]
    assert "untracked.txt" in results[0] and "first commit" in results[1]


def test_a_changed_tool_list_adds_and_withdraws_tools(isolated_environment):
    # the SDK's own server: its list_changed notification is what real servers send
    write_config(isolated_environment["agent"] / "mcp.json", {"docs": {**SDK_STDIO, "exposure": "direct"}})
    script = [
        {"toolCalls": [{"name": "mcp__docs__grow", "arguments": {}}]},
        {"text": "first: {{lastToolResult}}"},
        {"toolCalls": [{"name": "mcp__docs__fresh", "arguments": {"text": "x"}}]},
        {"text": "second: {{lastToolResult}}"},
    ]
    done = pi(
        "--mode",
        "json",
        "--model",
        "faux/faux-1",
        "--no-session",
        "grow the tools",
        "use the new one",
        script=script,
    )
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    systems = [
        e["message"] for e in events if e["type"] == "message_end" and e["message"]["role"] == "system"
    ]
    assert "mcp__docs__big" in {t["name"] for t in systems[0]["toolsAdded"]}
    later = systems[1]  # the patch of the second prompt: fresh declared, big withdrawn
    assert [t["name"] for t in later.get("toolsAdded") or []] == ["mcp__docs__fresh"]
    assert [t["name"] for t in later.get("toolsRemoved") or []] == ["mcp__docs__big"]
    results = [e["result"]["content"][0]["text"] for e in events if e["type"] == "tool_execution_end"]
    assert results == ["grown", "fresh: x"]
