"""pi-host's own stdio transport and the connection around it, in process, against small shell
"servers" (``sh``, ``cat``, ``sleep``): big messages are read in linear time, lines that are not
JSON-RPC are skipped and noted (never logged with a traceback), a stopped server's whole process
group is gone (SIGTERM-proof children included), a server that never answers ``initialize`` fails
within its ``timeout`` counted from its start, and a direct server still starting when the first
prompt stops waiting is named in one line."""

from __future__ import annotations

import json
import os
import time
from types import SimpleNamespace

import anyio
from pi_mcp import client, manager, stdio
from pi_mcp.client import Connection
from pi_mcp.config import ServerConfig
from pi_mcp.manager import MAX_TEXT_BYTES, McpManager, limit_structured


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _response(rid: int, text: str) -> bytes:
    result = {"content": [{"type": "text", "text": text}], "isError": False}
    return json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}).encode()


async def _read_all(command: list[str], tmp_path) -> tuple[list, list, float]:
    """Run ``command`` as a server and collect what the transport delivers until it ends."""
    process = await stdio.spawn(command[0], command[1:], dict(os.environ), str(tmp_path), None)
    junk: list = []
    messages: list = []
    started = time.monotonic()
    async with stdio.open_streams(process, lambda line, why: junk.append((line, why)), lambda: 0.0) as (
        read,
        _write,
    ):
        async for item in read:
            messages.append(item.message)
    return messages, junk, time.monotonic() - started


async def test_a_50_mb_message_is_read_in_linear_time(tmp_path):
    text = "0123456789abcde\n" * 3_125_000  # 50 MB of text, about 56 MB of JSON
    (tmp_path / "out").write_bytes(_response(7, text) + b"\n")
    messages, junk, elapsed = await _read_all(["cat", str(tmp_path / "out")], tmp_path)
    assert junk == [] and len(messages) == 1
    assert messages[0].id == 7 and messages[0].result["content"][0]["text"] == text
    assert elapsed < 10, elapsed  # the SDK's reader: minutes for this size


async def test_lines_that_are_not_json_rpc_are_skipped_and_noted(tmp_path):
    lines = [b"Server starting...", b"", b'{"not": "json-rpc"}', _response(1, "ok") + b"\r", b"{broken"]
    (tmp_path / "out").write_bytes(b"\n".join(lines) + b"\n")
    messages, junk, _ = await _read_all(["cat", str(tmp_path / "out")], tmp_path)
    assert [m.id for m in messages] == [1]  # a CRLF line is fine, a blank one skipped silently
    assert [line for line, _why in junk] == [b"Server starting...", b'{"not": "json-rpc"}', b"{broken"]


async def test_stopping_ends_the_whole_group_even_when_it_ignores_sigterm(tmp_path):
    pid_file = tmp_path / "child"
    script = f"trap '' TERM; sleep 300 & echo $! > {pid_file}; wait"
    process = await stdio.spawn("sh", ["-c", script], dict(os.environ), str(tmp_path), None)
    while not pid_file.exists() or not pid_file.read_text().strip():
        await anyio.sleep(0.01)
    child = int(pid_file.read_text())
    started = time.monotonic()
    await stdio.stop_process(process, 0.0)
    assert not _alive(process.pid) and not _alive(child)
    assert time.monotonic() - started < stdio.TERM_WAIT_S + 2
    assert process not in stdio._live


def _connection(tmp_path, script: str, timeout: float, warnings: list | None = None) -> Connection:
    config = ServerConfig(
        "shell", {"command": "sh", "args": ["-c", script], "timeout": timeout}, "x", "global"
    )
    return Connection(config, str(tmp_path), lambda c: None, None if warnings is None else warnings.append)


async def test_a_server_that_never_answers_fails_within_its_timeout_and_is_gone(tmp_path, capfd):
    pid_file = tmp_path / "pid"
    connection = _connection(tmp_path, f"echo $$ > {pid_file}; echo 'this is not json'; exec sleep 300", 1.5)
    started = time.monotonic()
    connection.start()
    assert not await connection.wait(30)
    assert time.monotonic() - started < 1.5 + 5  # counted from the start, SDK import included
    assert connection.state == "failed"
    assert (
        connection.error
        == "no answer to initialize within 1.5s (its output is not JSON-RPC: 'this is not json')"
    )
    await connection.stop()
    assert not _alive(int(pid_file.read_text()))
    assert "Traceback" not in capfd.readouterr().err


async def test_a_stop_while_starting_leaves_no_process(tmp_path):
    pid_file = tmp_path / "pid"
    connection = _connection(tmp_path, f"echo $$ > {pid_file}; trap '' TERM; exec sleep 300", 60)
    connection.start()
    while not pid_file.exists() or not pid_file.read_text().strip():
        await anyio.sleep(0.01)
    await connection.wait(0.3)
    started = time.monotonic()
    await connection.stop()
    assert time.monotonic() - started < client.STOP_WAIT_S
    assert not _alive(int(pid_file.read_text()))


class _Session(SimpleNamespace):
    """What McpManager uses of a session: its tool tables, its host, and its warning line."""


def _session(warnings: list) -> _Session:
    host = SimpleNamespace(has=lambda name: False)
    return _Session(
        all_tools={}, active_tools={}, config=SimpleNamespace(no_tools=False), host=host, warn=warnings.append
    )


async def test_a_direct_server_still_starting_when_the_prompt_stops_waiting_is_named(tmp_path, monkeypatch):
    monkeypatch.setattr(manager, "DIRECT_WAIT_S", 0.3)
    warnings: list[str] = []
    ctx = SimpleNamespace(session=_session(warnings), cwd=str(tmp_path))
    config = ServerConfig(
        "slow",
        {"command": "sh", "args": ["-c", "exec sleep 300"], "timeout": 60, "exposure": "direct"},
        "x",
        "global",
    )
    mcp = McpManager(ctx, [config], [])
    mcp.start()
    try:
        await mcp.wait_direct()
        await mcp.wait_direct()  # said once
    finally:
        await mcp.close()
    assert warnings == [
        'MCP server "slow" is still starting after 0.3s (no answer to initialize yet); '
        "this prompt goes on without its tools"
    ]


def test_big_structured_content_is_saved_instead_of_sent(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)
    small = {"rows": [1, 2, 3]}
    details: dict = {}
    assert limit_structured(small, details) == small and details == {}
    big = {"result": "x" * (MAX_TEXT_BYTES + 1)}
    assert limit_structured(big, details) is None
    assert details["structuredContentOmitted"] == f"{MAX_TEXT_BYTES + 14} bytes, over the 20KB limit"
    assert json.loads(open(details["structuredContentPath"]).read()) == big
    assert details["structuredContentPath"].startswith(str(tmp_path))


async def test_junk_after_connecting_is_said_once(tmp_path):
    """A line that is not JSON-RPC from a connected server: one warning, the messages go on."""
    warnings: list[str] = []
    connection = _connection(tmp_path, "exit 0", 5, warnings)
    connection.state = "connected"
    connection._note_junk(b"DEBUG: one", "Invalid JSON")
    connection._note_junk(b"DEBUG: two", "Invalid JSON")
    assert warnings == ["MCP server \"shell\" wrote output that is not JSON-RPC (ignored): 'DEBUG: one'"]


def test_sdk_warnings_are_kept_for_the_connection_not_printed(tmp_path, capfd):
    import logging

    client._import_sdk()  # installs the handler (the SDK itself is already imported here)
    connection = _connection(tmp_path, "exit 0", 5)
    token = client._current.set(connection)
    try:
        try:
            raise ValueError("Invalid JSON: expected value at line 1 column 1")
        except ValueError:
            logging.getLogger("mcp.client.streamable_http").exception(
                "Failed to parse a message from the server"
            )
    finally:
        client._current.reset(token)
    assert connection.sdk_note == "Failed to parse a message from the server"
    assert capfd.readouterr().err == ""
