"""``pi mcp add / remove / list`` write and read the mcp.json pi 1.6.0 writes and reads."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.e2e.mcp.helpers import pi, write_config
from tests.support.pi_node import find_pi, pi_env


def _add_time() -> subprocess.CompletedProcess:
    return pi(
        "mcp",
        "add",
        "time",
        "--env",
        "FOO=bar",
        "--description",
        "Time tools",
        "--",
        sys.executable,
        "-m",
        "mcp_server_time",
    )


def test_add_list_remove(isolated_environment):
    agent = isolated_environment["agent"]
    done = _add_time()
    assert done.returncode == 0 and f'Added global MCP server "time" in {agent / "mcp.json"}.' in done.stdout
    http = pi(
        "mcp",
        "add",
        "docs",
        "--url",
        "http://127.0.0.1:9/mcp",
        "--bearer-token-env-var",
        "TOK",
        "--exposure",
        "direct",
    )
    assert http.returncode == 0, http.stderr
    assert json.loads((agent / "mcp.json").read_text()) == {
        "mcpServers": {
            "time": {
                "command": sys.executable,
                "args": ["-m", "mcp_server_time"],
                "env": {"FOO": "bar"},
                "description": "Time tools",
            },
            "docs": {
                "url": "http://127.0.0.1:9/mcp",
                "headers": {"Authorization": "Bearer ${TOK}"},
                "exposure": "direct",
            },
        }
    }
    listed = pi("mcp", "list")
    assert listed.returncode == 1  # docs cannot resolve ${TOK}
    assert "time: connected, 2 tools (codemode, global)" in listed.stdout
    assert "tools: get_current_time, convert_time" in listed.stdout
    assert (
        'Failed to resolve MCP server "docs" header "Authorization" from environment variable: TOK'
        in listed.stdout
    )
    removed = pi("mcp", "remove", "docs")
    assert removed.returncode == 0 and 'Removed global MCP server "docs"' in removed.stdout
    assert pi("mcp", "remove", "docs").returncode == 1
    as_json = json.loads(pi("mcp", "list", "--json").stdout)
    assert [(s["name"], s["state"], s["tools"]) for s in as_json["servers"]] == [
        ("time", "connected", ["get_current_time", "convert_time"])
    ]


def test_invalid_entries_are_reported_with_pis_messages(isolated_environment):
    write_config(
        isolated_environment["agent"] / "mcp.json",
        {
            "s": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
            "bad name!": {"command": "x"},
            "off": {"command": "x", "enabled": False},
        },
    )
    listed = pi("mcp", "list", "--json")
    data = json.loads(listed.stdout)
    assert listed.returncode == 1
    assert [(s["name"], s["state"]) for s in data["servers"]] == [("off", "disabled")]
    assert any(
        'server "s": legacy SSE transport is not supported; use the streamable HTTP URL' in e
        for e in data["errors"]
    )
    assert any('invalid server name "bad name!"' in e for e in data["errors"])


def test_local_add_in_an_untrusted_project_says_it_is_ignored(isolated_environment):
    done = pi("mcp", "add", "-l", "y", "--", "foo")
    assert done.returncode == 0
    assert "The project is not trusted" in done.stdout
    assert json.loads((isolated_environment["work"] / ".pi" / "mcp.json").read_text()) == {
        "mcpServers": {"y": {"command": "foo"}}
    }
    assert json.loads(pi("mcp", "list", "--json").stdout)["servers"] == []


PI = find_pi()
needs_pi = pytest.mark.skipif(PI is None, reason="pi 1.6.0 is not installed (.tools/pi)")


def _node(argv: list[str], agent) -> subprocess.CompletedProcess:
    env = {**pi_env(str(agent)), "HOME": os.environ["HOME"]}
    return subprocess.run([*PI, *argv], capture_output=True, text=True, timeout=60, env=env, cwd=os.getcwd())


@needs_pi
def test_pi_reads_what_pi_host_writes(isolated_environment):
    agent = isolated_environment["agent"]
    assert _add_time().returncode == 0
    listed = _node(["mcp", "list", "--json"], agent)
    servers = json.loads(listed.stdout)["servers"]
    assert [(s["name"], s["state"], s["tools"]) for s in servers] == [
        ("time", "connected", ["get_current_time", "convert_time"])
    ], listed.stderr


@needs_pi
def test_pi_host_reads_what_pi_writes(isolated_environment):
    agent = isolated_environment["agent"]
    done = _node(
        ["mcp", "add", "clock", "--exposure", "direct", "--", sys.executable, "-m", "mcp_server_time"], agent
    )
    assert done.returncode == 0, done.stderr
    ours = json.loads(pi("mcp", "list", "--json").stdout)["servers"]
    theirs = json.loads(_node(["mcp", "list", "--json"], agent).stdout)["servers"]
    keys = ("name", "scope", "source", "enabled", "exposure", "transport", "state", "tools")
    assert [{k: s[k] for k in keys} for s in ours] == [{k: s[k] for k in keys} for s in theirs]
    assert ours[0]["state"] == "connected"
