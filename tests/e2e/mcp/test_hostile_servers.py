"""Servers that misbehave, through the real ``pi``: one that never answers ``initialize`` (and
ignores SIGTERM, with a child of its own), one that writes output that is not JSON-RPC, and one
whose tool returns 50 MB. pi says one line naming the server, never a traceback, leaves no
process behind and handles the big result in seconds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from tests.e2e.mcp.helpers import write_config
from tests.support.pi import PI_SCRIPT, run_pi, start_pi

SILENT = """
import os, signal, subprocess, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
child = subprocess.Popen(["sleep", "300"])
with open(sys.argv[1], "a") as handle:
    handle.write(f"{os.getpid()} {child.pid}\\n")
while True:
    time.sleep(1)
"""

GARBLED = """
import sys
sys.stdout.write("this is not json\\n")
sys.stdout.flush()
for line in sys.stdin:
    sys.stdout.write('{"jsonrpc": "2.0", "id": 0, "result": {"broken": tru\\n')
    sys.stdout.flush()
"""

JUNK_AFTER_CONNECT = """
import json, sys

def send(message):
    sys.stdout.write(json.dumps(message) + "\\n")
    sys.stdout.flush()

sys.stdout.write("junky server 1.0 listening on stdio\\n")  # a banner: forgiven once it connects
for line in sys.stdin:
    request = json.loads(line)
    method, rid = request.get("method"), request.get("id")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": rid, "result": {
            "protocolVersion": request["params"]["protocolVersion"], "capabilities": {"tools": {}},
            "serverInfo": {"name": "junky", "version": "1"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": rid, "result": {"tools": [
            {"name": "hello", "description": "Say hello", "inputSchema": {"type": "object"}}]}})
    elif method == "tools/call":
        sys.stdout.write("DEBUG: calling hello\\n")
        send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": "hello there"}]}})
"""

BLOB = """
from mcp.server.mcpserver import MCPServer

server = MCPServer("blob")


@server.tool()
def blob(size: int) -> str:
    \"\"\"size bytes of text, 16-byte lines\"\"\"
    return ("0123456789abcde\\n" * (size // 16 + 1))[:size]


server.run()
"""


FAILED = (
    'pi: MCP server "silent" failed to start: no answer to initialize within 2s; its tools are unavailable'
)
SLOW = (
    'pi: MCP server "silent" is still starting after 10s (no answer to initialize yet); '
    "this prompt goes on without its tools"
)


def _script(tmp_path: Path, name: str, source: str) -> str:
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    return str(path)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as handle:  # a zombie is not alive
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


FAUX = ["-p", "go", "--model", "faux/faux-1", "--no-session", "--tools", "read"]
"""A print run of the scripted model (the MCP tools come on top of ``read``)."""


def test_a_server_that_never_answers_initialize_is_named_and_leaves_nothing(isolated_environment, tmp_path):
    """Four runs at once: each waits for the direct server up to its ``timeout``, says one line
    naming it, and exits with the server and its child gone (the server ignores SIGTERM). (Ten
    runs showed the same and cost 2.5 times the CPU on a suite that shares two cores.)"""
    runs = []
    for index in range(4):
        pids = tmp_path / f"pids-{index}"
        agent = tmp_path / f"agent-{index}"
        silent = _script(tmp_path, "silent", SILENT)
        entry = {"command": sys.executable, "args": [silent, str(pids)], "timeout": 2, "exposure": "direct"}
        write_config(agent / "mcp.json", {"silent": entry})
        started = time.monotonic()
        process = start_pi(
            *FAUX,
            script=[{"text": "answered anyway"}],
            env={"PI_CODING_AGENT_DIR": str(agent)},
            command=PI_SCRIPT,
            stdin=subprocess.DEVNULL,
        )
        runs.append((process, pids, started))
    for process, pids, started in runs:
        out, err = process.communicate(timeout=90)
        elapsed = time.monotonic() - started
        assert process.returncode == 0, err
        assert out == "answered anyway\n"
        # The server's timeout counts from its start; several runs on two cores can take longer than
        # the first prompt's 10 s wait just to import the SDK: then that wait names it.
        assert err.splitlines()[:1] in ([FAILED], [SLOW]) and len(err.splitlines()) == 1, err
        assert elapsed < 60, elapsed  # timeout 2 s, SIGTERM ignored: 2 s more; runs share two cores
        spawned = [int(pid) for pid in pids.read_text().split()]
        assert len(spawned) == 2, spawned  # the server and its child
        deadline = time.monotonic() + 1
        while any(map(_alive, spawned)) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not [pid for pid in spawned if _alive(pid)], spawned


def test_a_run_that_ends_while_a_deferred_server_is_silent_leaves_nothing_and_says_nothing(
    isolated_environment, tmp_path
):
    """Nobody waited for it: the run is quick and quiet, and the server is gone all the same."""
    pids = tmp_path / "pids"
    silent = _script(tmp_path, "silent", SILENT)
    write_config(
        isolated_environment["agent"] / "mcp.json",
        {
            "silent": {
                "command": sys.executable,
                "args": [silent, str(pids)],
                "timeout": 30,
                "exposure": "deferred",
            }
        },
    )
    for _ in range(3):
        started = time.monotonic()
        done = run_pi(*FAUX, script=[{"text": "quick"}], command=PI_SCRIPT)
        assert (done.returncode, done.stdout, done.stderr) == (0, "quick\n", "")
        assert time.monotonic() - started < 15
    time.sleep(0.3)
    spawned = [int(pid) for pid in pids.read_text().split()] if pids.exists() else []
    assert not [pid for pid in spawned if _alive(pid)], spawned


def test_output_that_is_not_json_rpc_is_one_line_without_a_traceback(isolated_environment, tmp_path):
    garbled = _script(tmp_path, "garbled", GARBLED)
    write_config(
        isolated_environment["agent"] / "mcp.json",
        {"garbled": {"command": sys.executable, "args": [garbled], "timeout": 2, "exposure": "direct"}},
    )
    done = run_pi(*FAUX, script=[{"text": "still here"}], command=PI_SCRIPT)
    assert done.returncode == 0 and done.stdout == "still here\n"
    assert "Traceback" not in done.stderr
    assert done.stderr.splitlines() == [
        'pi: MCP server "garbled" failed to start: no answer to initialize within 2s (its output is not '
        "JSON-RPC: 'this is not json'); its tools are unavailable"
    ], done.stderr


def test_junk_from_a_connected_server_is_said_once_and_skipped(isolated_environment, tmp_path):
    """A banner before ``initialize`` is forgiven; a line that is not JSON-RPC afterwards is said
    once (the tool is called twice), and the answer after it still arrives."""
    junky = _script(tmp_path, "junky", JUNK_AFTER_CONNECT)
    write_config(
        isolated_environment["agent"] / "mcp.json",
        {"junky": {"command": sys.executable, "args": [junky], "exposure": "direct"}},
    )
    call = {"toolCalls": [{"name": "mcp__junky__hello", "arguments": {}}]}
    script = [call, call, {"text": "got: {{lastToolResult}}"}]
    done = run_pi(*FAUX, script=script, command=PI_SCRIPT)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "got: hello there\n"
    assert done.stderr.splitlines() == [
        "pi: MCP server \"junky\" wrote output that is not JSON-RPC (ignored): 'DEBUG: calling hello'"
    ], done.stderr


def test_a_50_mb_result_is_truncated_in_seconds(isolated_environment, tmp_path):
    """The SDK's stdio reader, which pi-host used, takes time quadratic in a message's size: this
    call ran into the server's 60 s timeout (65 s, "Request 'tools/call' timed out"). Now the
    result arrives, is cut to the 20 KB text limit with the full text saved, and the structured
    copy (50 MB more) is saved rather than sent in every event."""
    blob = _script(tmp_path, "blob", BLOB)
    write_config(
        isolated_environment["agent"] / "mcp.json",
        {"blob": {"command": sys.executable, "args": [blob], "exposure": "direct", "timeout": 60}},
    )
    temp = tmp_path / "tmp"
    temp.mkdir()
    script = [
        {"toolCalls": [{"name": "mcp__blob__blob", "arguments": {"size": 50_000_000}}]},
        {"text": "got: {{lastToolResult}}"},
    ]
    started = time.monotonic()
    done = run_pi(
        "--mode",
        "json",
        *FAUX[1:],
        script=script,
        env={"TMPDIR": str(temp)},
        command=PI_SCRIPT,
        timeout=120,
    )
    elapsed = time.monotonic() - started
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stderr == ""
    lines = done.stdout.splitlines()
    assert max(map(len, lines)) < 200_000  # no event carries the 50 MB
    end = next(json.loads(line) for line in lines if '"tool_execution_end"' in line)
    text = end["result"]["content"][0]["text"]
    assert text.startswith("Warning: truncated output (original token count: 12500000)")
    assert "chars truncated" in text and len(text.encode()) < 25_000
    details = end["result"]["details"]
    assert "structuredContent" not in end["result"]
    assert os.path.getsize(details["fullOutputPath"]) == 50_000_000
    assert text.endswith(f"[Full output: {details['fullOutputPath']} (read it with offset/limit)]")
    saved = json.loads(Path(details["structuredContentPath"]).read_text())
    assert len(saved["result"]) == 50_000_000
    assert elapsed < 45, elapsed  # before: the call timed out after its 60 s; now about 6 s
