"""The resource tools in real runs of the pi CLI against an SDK server over stdio, driven by the
scripted faux model: listing (MCP Apps resources left out), templates, reading text, images and
binary contents (saved to a file)."""

from __future__ import annotations

import json
import os
import re

from tests.e2e.mcp.helpers import TEST_STDIO, pi, prompt, write_config


def _call(name: str, arguments: dict) -> list:
    return [{"toolCalls": [{"name": name, "arguments": arguments}]}, {"text": "got: {{lastToolResult}}"}]


def _direct(isolated_environment) -> None:
    write_config(isolated_environment["agent"] / "mcp.json", {"docs": {**TEST_STDIO, "exposure": "direct"}})


def test_list_resources_of_every_server_omits_mcp_apps(isolated_environment):
    _direct(isolated_environment)
    done = prompt("what resources?", _call("list_mcp_resources", {}))
    assert done.returncode == 0, done.stderr
    listed = json.loads(done.stdout.split("got: ", 1)[1])
    uris = {row["uri"] for row in listed["resources"]}
    assert uris == {"docs://readme", "docs://logo.png", "docs://data.bin"}
    assert all(row["server"] == "docs" for row in listed["resources"])
    readme = next(row for row in listed["resources"] if row["uri"] == "docs://readme")
    assert readme["name"] == "readme" and readme["mimeType"] == "text/plain"


def test_one_server_s_page_and_the_templates(isolated_environment):
    _direct(isolated_environment)
    done = prompt("resources of docs", _call("list_mcp_resources", {"server": "docs"}))
    assert done.returncode == 0, done.stderr
    page = json.loads(done.stdout.split("got: ", 1)[1])
    assert page["server"] == "docs" and len(page["resources"]) == 3 and "nextCursor" not in page
    done = prompt("templates", _call("list_mcp_resource_templates", {}))
    templates = json.loads(done.stdout.split("got: ", 1)[1])["resourceTemplates"]
    assert [t["uriTemplate"] for t in templates] == ["notes://{name}"]


def test_read_text_template_image_and_binary_resources(isolated_environment):
    _direct(isolated_environment)
    done = prompt("read", _call("read_mcp_resource", {"server": "docs", "uri": "docs://readme"}))
    assert done.returncode == 0, done.stderr
    assert "got: Read me: the answer is 42." in done.stdout
    done = prompt("note", _call("read_mcp_resource", {"server": "docs", "uri": "notes://todo"}))
    assert "got: note todo" in done.stdout
    done = pi(
        "--mode",
        "json",
        "--model",
        "faux/faux-1",
        "--no-session",
        "logo",
        script=_call("read_mcp_resource", {"server": "docs", "uri": "docs://logo.png"}),
    )
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    result = next(e for e in events if e["type"] == "tool_execution_end")["result"]
    assert result["content"][0]["type"] == "image" and result["content"][0]["mimeType"] == "image/png"
    done = prompt("data", _call("read_mcp_resource", {"server": "docs", "uri": "docs://data.bin"}))
    saved = re.search(r"resource saved to (\S+)\]", done.stdout).group(1)
    with open(saved, "rb") as handle:
        assert handle.read() == bytes(range(16))
    os.unlink(saved)


def test_unknown_server_is_a_tool_error_and_hidden_servers_get_no_resource_tools(isolated_environment):
    _direct(isolated_environment)
    done = prompt("read", _call("read_mcp_resource", {"server": "nope", "uri": "x://y"}))
    assert done.returncode == 0, done.stderr
    assert 'No connected MCP server "nope" offers resources' in done.stdout
    write_config(isolated_environment["agent"] / "mcp.json", {"docs": {**TEST_STDIO, "exposure": "hidden"}})
    done = prompt("any resources?", _call("list_mcp_resources", {}))
    assert "Tool list_mcp_resources not found" in done.stdout
