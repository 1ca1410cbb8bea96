"""The pi-guard example installs with pip and works as an ordinary third-party plugin."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pi_provider_faux as faux
import pytest

import pi_host
from pi_host import hookimpl
from pi_host.loop.tools import Tool, ToolResult
from pi_host.protocol import TextContent
from tests.example_install import pip_install_example


@pytest.fixture(scope="module")
def installed_guard(tmp_path_factory):
    return pip_install_example("pi-guard", tmp_path_factory.mktemp("site"))


class FakeBash(Tool):
    name = "bash"
    description = "pretend shell"
    parameters = {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}

    async def execute(self, tool_call_id, args, signal, on_update, ctx):
        return ToolResult(content=[TextContent(text=f"ran {args['command']}")])


class FakeBashPlugin:
    __name__ = "fake-bash"

    @hookimpl
    def register_tools(self):
        return [FakeBash()]


def test_pip_installed_plugin_is_listed(installed_guard):
    env = dict(os.environ, PYTHONPATH=str(installed_guard))
    out = subprocess.run(
        [sys.executable, "-m", "pi_host", "plugins", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    rows = {row["name"]: row for row in json.loads(out.stdout)}
    assert rows["guard"]["source"] == "installed"
    assert rows["guard"]["origin"] == "pi-guard" and rows["guard"]["version"] == "0.1.0"
    assert rows["guard"]["hooks"] == ["on_tool_call", "register_cli_flags", "register_commands"]


async def test_guard_blocks_dangerous_commands(installed_guard, monkeypatch):
    monkeypatch.syspath_prepend(str(installed_guard))
    faux.set_responses(
        [
            {
                "toolCalls": [
                    {"name": "bash", "arguments": {"command": "rm -rf /"}},
                    {"name": "bash", "arguments": {"command": "ls"}},
                ]
            },
            {"text": "ok"},
        ]
    )
    session = await pi_host.create_session(
        model="faux/faux-1", tools=["bash"], plugins=[FakeBashPlugin()], settings={}
    )
    await session.prompt("clean up")
    results = [m for m in session.messages if m.role == "toolResult"]
    assert results[0].is_error and "pi-guard refused" in results[0].content[0].text
    assert results[1].content[0].text == "ran ls"
    assert await session.prompt("/guard") == "handled"
    assert session.guard_report == ["rm -rf /"]
    flagged = await pi_host.create_session(
        model="faux/faux-1",
        tools=["bash"],
        plugins=[FakeBashPlugin()],
        settings={},
        flags={"guard-allow": True},
    )
    faux.set_responses(
        [{"toolCalls": [{"name": "bash", "arguments": {"command": "rm -rf /"}}]}, {"text": "ok"}]
    )
    await flagged.prompt("clean up")
    assert [m for m in flagged.messages if m.role == "toolResult"][0].content[0].text == "ran rm -rf /"
