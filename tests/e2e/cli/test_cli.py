"""The ``pi`` command end to end, as a subprocess (issue 2: print mode, JSON mode, plugins)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pi_host import __version__

BIN = Path(sys.executable).parent

TOOL_PLUGIN = """
from pi_host import hookimpl
from pi_host.loop.tools import Tool, ToolResult
from pi_host.protocol import TextContent


class Shout(Tool):
    name = "shout"
    description = "Upper-case a word"
    parameters = {"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]}

    async def execute(self, tool_call_id, args, signal, on_update, ctx):
        return ToolResult(content=[TextContent(text=args["word"].upper())])


@hookimpl
def register_tools():
    return [Shout()]
"""


def pi(*args: str, script=None, stdin: str | None = None, env: dict | None = None, module=True):
    full_env = dict(os.environ)
    if script is not None:
        full_env["PI_FAUX_SCRIPT"] = json.dumps(script)
    full_env.update(env or {})
    command = [sys.executable, "-m", "pi_host", *args] if module else [str(BIN / "pi"), *args]
    return subprocess.run(
        command,
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        env=full_env,
        timeout=60,
    )


@pytest.fixture
def tool_plugin(tmp_path):
    path = tmp_path / "shout_plugin.py"
    path.write_text(TOOL_PLUGIN)
    return str(path)


def test_version_from_every_entry_point():
    for command in (
        [str(BIN / "pi"), "--version"],
        [str(BIN / "pi-host"), "--version"],
        [sys.executable, "-m", "pi_host", "-v"],
    ):
        out = subprocess.run(command, capture_output=True, text=True, timeout=30)
        assert out.returncode == 0 and out.stdout == f"{__version__}\n"


def test_help_lists_host_options():
    out = pi("--help", module=False)
    assert out.returncode == 0
    for option in (
        "--model",
        "--mode",
        "--print",
        "--tools",
        "--no-tools",
        "--extension",
        "--strict-plugins",
    ):
        assert option in out.stdout


def test_help_lists_the_subcommands_and_examples():
    out = pi("--help", module=False)
    assert out.returncode == 0
    commands = out.stdout.split("Commands:", 1)[1].split("Examples:", 1)
    for name in ("plugins", "install", "remove", "list", "update", "mcp"):
        assert re.search(rf"^\s+pi {name}\s+\S", commands[0], re.MULTILINE), name  # with its description
    examples = commands[1].split("Plugin flags:", 1)[0]
    assert "pi -p " in examples and "pi -c" in examples and "pi install " in examples


def test_plugins_command_lists_builtins_and_failures(tmp_path):
    broken = tmp_path / "broken_plugin.py"
    broken.write_text("raise ImportError('missing dependency foo')\n")
    out = pi("plugins", "-e", str(broken))
    assert out.returncode == 0
    assert "faux" in out.stdout and "[builtin]" in out.stdout and "register_providers" in out.stdout
    assert "broken_plugin" in out.stdout and "missing dependency foo" in out.stdout
    rows = json.loads(pi("plugins", "--json").stdout)
    names = {row["name"]: row for row in rows}
    assert {"faux", "mode-print", "mode-json"} <= set(names)
    assert names["faux"]["source"] == "builtin" and names["faux"]["origin"] == "pi-host"
    assert isinstance(names["faux"]["importMs"], float)
    assert "register_modes" in names["mode-json"]["hooks"]


def test_print_mode_runs_a_tool_and_prints_only_the_answer(tool_plugin):
    script = [
        {"toolCalls": [{"name": "shout", "arguments": {"word": "quiet"}}]},
        {"text": "The tool said {{lastToolResult}}."},
    ]
    out = pi("-p", "--model", "faux/faux-1", "-e", tool_plugin, "--tools", "shout", "say it", script=script)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "The tool said QUIET.\n"
    assert out.stderr == ""


def test_json_mode_prints_header_then_every_event(tool_plugin):
    script = [
        {"toolCalls": [{"name": "shout", "arguments": {"word": "hey"}, "id": "call_1"}]},
        {"text": "done"},
    ]
    out = pi(
        "--mode", "json", "--model", "faux/faux-1", "-e", tool_plugin, "--tools", "shout", "go", script=script
    )
    assert out.returncode == 0, out.stderr
    records = [json.loads(line) for line in out.stdout.split("\n") if line]
    header = records[0]
    assert header["type"] == "session" and header["version"] == 3 and header["cwd"] == os.getcwd()
    types = [r["type"] for r in records[1:]]
    assert types[:2] == ["agent_start", "turn_start"] and types[-2:] == ["agent_end", "agent_settled"]
    updates = [r for r in records if r["type"] == "message_update"]
    assert updates and all(set(u) == {"type", "usage", "assistantMessageEvent"} for u in updates)
    start = next(u for u in updates if u["assistantMessageEvent"]["type"] == "toolcall_start")
    assert start["assistantMessageEvent"] == {
        "type": "toolcall_start",
        "contentIndex": 0,
        "id": "call_1",
        "toolName": "shout",
    }
    tool_end = next(r for r in records if r["type"] == "tool_execution_end")
    assert (
        tool_end["result"] == {"content": [{"type": "text", "text": "HEY"}]} and tool_end["isError"] is False
    )
    first_assistant = next(
        r for r in records if r["type"] == "message_start" and r["message"]["role"] == "assistant"
    )
    assert first_assistant["message"]["stopReason"] == "pending"
    ends = [r["message"] for r in records if r["type"] == "message_end"]
    assert [m["role"] for m in ends] == ["system", "user", "assistant", "toolResult", "assistant"]
    assert ends[2]["stopReason"] == "toolUse" and ends[2]["thinkingLevel"] == "off"
    assert ends[3] == {**ends[3], "toolCallId": "call_1", "toolName": "shout", "isError": False}
    assert records[-1] == {"type": "agent_settled", "aborted": False}
    agent_end = records[-2]
    assert agent_end["willRetry"] is False and len(agent_end["messages"]) == 5


def test_errors_go_to_stderr_with_exit_1():
    out = pi("-p", "--model", "faux/faux-1", "hi", script=[{"error": "invalid request: unknown field foo"}])
    assert out.returncode == 1
    assert out.stdout == ""
    assert out.stderr.strip() == "pi: invalid request: unknown field foo"


def test_length_stop_prints_partial_text_and_exits_1():
    out = pi("-p", "--model", "faux/faux-1", "hi", script=[{"text": "cut sh", "stopReason": "length"}])
    assert out.returncode == 1 and out.stdout == "cut sh\n" and "output token limit" in out.stderr


def test_piped_stdin_becomes_the_prompt_trimmed_as_pi_trims_it():
    out = pi("-p", "--model", "faux/faux-1", stdin="  from stdin\n\n")
    assert out.returncode == 0 and out.stdout == "faux: from stdin\n"
    out = pi("-p", "--model", "faux/faux-1", "and the argument", stdin="from stdin\n")
    assert out.returncode == 0 and out.stdout == "faux: from stdinand the argument\n"  # no separator, as pi


def test_a_broken_plugin_is_named_in_one_line_and_the_run_goes_on(tmp_path):
    broken = tmp_path / "exploding.py"
    broken.write_text(
        textwrap.dedent("""
        from pi_host import hookimpl

        @hookimpl
        def on_agent_start(event):
            raise ValueError("handler blew up")
    """)
    )
    out = pi("-p", "--model", "faux/faux-1", "-e", str(broken), "hello")
    assert out.returncode == 0 and out.stdout == "faux: hello\n"
    lines = out.stderr.strip().splitlines()
    assert lines == ["pi: plugin 'exploding' failed in agent_start: ValueError: handler blew up"]
    out = pi("--mode", "json", "--model", "faux/faux-1", "-e", str(broken), "hello")
    errors = [json.loads(line) for line in out.stdout.splitlines() if '"extension_error"' in line]
    assert errors and errors[0]["event"] == "agent_start" and errors[0]["extensionPath"] == str(broken)
    bad_import = tmp_path / "cannot_import.py"
    bad_import.write_text("import definitely_not_installed_anywhere\n")
    out = pi("-p", "--model", "faux/faux-1", "-e", str(bad_import), "hello")
    assert out.returncode == 0 and "cannot_import" in out.stderr and "definitely_not_installed" in out.stderr
    out = pi("-p", "--strict-plugins", "--model", "faux/faux-1", "-e", str(bad_import), "hello")
    assert out.returncode == 1 and out.stdout == ""


def test_unknown_model_and_missing_model_are_clear_errors():
    out = pi("-p", "--model", "nosuch/model-x", "hi")
    assert out.returncode == 1 and "Model not found" in out.stderr
    out = pi("-p", "hi")  # no key anywhere: one line saying how to configure one
    assert out.returncode == 1
    assert len(out.stderr.strip().splitlines()) == 1
    assert "No API key for provider" in out.stderr and "_API_KEY" in out.stderr and "auth.json" in out.stderr


def test_no_tools_declares_none(tool_plugin):
    out = pi("--mode", "json", "--model", "faux/faux-1", "-e", tool_plugin, "--no-tools", "hi")
    system = next(json.loads(line) for line in out.stdout.splitlines() if '"role":"system"' in line)
    assert system["message"]["toolsAdded"] == []


PI_160_HELP_OPTIONS = (
    "--provider --model --api-key --system-prompt --append-system-prompt --mode --print -p --continue -c "
    "--resume -r --session --session-id --fork --session-dir --no-session --name -n --models --no-tools -nt "
    "--no-builtin-tools -nbt --tools -t --exclude-tools -xt --thinking --extension -e --no-extensions -ne "
    "--no-mcp --skill --no-skills -ns --prompt-template --no-prompt-templates -np --theme --use-theme "
    "--no-themes --no-context-files -nc --export --list-models --verbose --tui-mode --approve -a "
    "--no-approve -na --offline --help -h --version -v"
).split()
"""Every option of pi 1.6.0's ``--help``."""


def test_every_option_of_pis_help_is_known(isolated_environment):
    out = pi("--help")
    assert out.returncode == 0
    listed = set(re.findall(r"(?<![\w-])(-{1,2}[a-z][\w-]*)", out.stdout))
    assert [option for option in PI_160_HELP_OPTIONS if option not in listed] == []


def test_pis_flags_are_options_never_prompt_text(isolated_environment, tmp_path):
    script = [{"text": "{{lastUserMessage}}"}]
    out = pi(
        "-p", "--model", "faux/faux-1", "--no-mcp", "--use-theme", "light", "--theme", str(tmp_path),
        "--no-themes", "--tui-mode", "regular", "--no-context-files", "--no-skills", "hello", script=script,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "--" not in out.stdout and "light" not in out.stdout


def test_tool_patterns_in_tools_and_exclude_tools(isolated_environment):
    script = [{"text": "ok"}]

    def active(*flags: str) -> list[str]:
        out = pi("--mode", "json", "--model", "faux/faux-1", "--no-session", *flags, "hi", script=script)
        assert out.returncode == 0, out.stderr
        starts = [json.loads(line) for line in out.stdout.splitlines() if '"toolsAdded"' in line]
        declared = starts[0]["message"]["toolsAdded"] if starts else []
        return sorted(tool["name"] for tool in declared)

    assert active("--tools", "read,*rit*") == ["read", "write"]
    assert active("--tools", "re?d,ls", "--exclude-tools", "l*") == ["read"]
    assert active("--exclude-tools", "*i*") == ["bash", "read"]  # pi's default set minus edit and write
