"""The pi-guard example is installed by the real ``pi install`` into a throw-away environment and
works as an ordinary third-party plugin: listed, loaded in process from that environment's
site-packages, and run by that environment's ``pi``."""

from __future__ import annotations

import json

import pi_provider_faux as faux
import pytest

import pi_host
from pi_host import hookimpl
from pi_host.loop.tools import Tool, ToolResult
from pi_host.protocol import TextContent
from tests.support.examples import install_example, installed_row
from tests.support.venv import venv_pi

HARMLESS_DD = "dd if=/dev/zero of=/dev/null count=1 2>/dev/null; echo dd-ran"
"""Matches the deny list's ``dd ... of=/dev/`` and does nothing if it runs."""


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    return install_example(tmp_path_factory, "pi-guard")


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


def test_installed_plugin_is_listed(installed):
    row = installed_row(installed, "guard")
    assert row["version"] == "0.1.0"
    assert row["hooks"] == ["on_tool_call", "register_cli_flags", "register_commands"]


def test_installed_pi_blocks_reports_and_obeys_its_flag(installed, isolated_environment):
    script = json.dumps(
        [
            {"toolCalls": [{"name": "bash", "arguments": {"command": HARMLESS_DD}}]},
            {"text": "said: {{lastToolResult}}"},
        ]
    )
    args = ["-p", "--no-session", "--model", "faux/faux-1"]
    work = isolated_environment["work"]
    blocked = venv_pi(installed.venv, *args, "copy", "/guard", cwd=work, PI_FAUX_SCRIPT=script)
    assert blocked.returncode == 0, blocked.stderr
    assert "said: pi-guard refused a dangerous command" in blocked.stdout
    assert "pi-guard: 1 command(s) blocked" in blocked.stdout
    allowed = venv_pi(installed.venv, *args, "--guard-allow", "copy", cwd=work, PI_FAUX_SCRIPT=script)
    assert allowed.returncode == 0, allowed.stderr
    assert "said: dd-ran" in allowed.stdout and "pi-guard" not in allowed.stdout
    assert "--guard-allow" in venv_pi(installed.venv, "--help").stdout


async def test_guard_blocks_dangerous_commands(installed, monkeypatch):
    monkeypatch.syspath_prepend(str(installed.site_packages))
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
