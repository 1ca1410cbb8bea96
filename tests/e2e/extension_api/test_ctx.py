"""The extension API on ``ctx`` (issue 17, item 3): pi's ``sendMessage``, ``sendUserMessage``,
``appendEntry``, labels, ``exec``, tools, model and thinking level, context usage, the event bus.

The first tests run the real ``pi -p`` with a plugin file (``-e``) and look at what the user sees:
stdout, stderr, the session file and what the faux model was sent (``{{userMessages}}``)."""

from __future__ import annotations

import asyncio
import json
import sys
import textwrap
from pathlib import Path

from pi_host.runtime.extension_api import ExtensionApi
from tests.support.pi import run_pi
from tests.support.sdk import new_session

PLUGIN = textwrap.dedent(
    """
    import sys

    from pi_host import hookimpl
    from pi_host.plugins.registrations import Command


    def say(*parts):
        print("plugin:", *parts, file=sys.stderr, flush=True)


    @hookimpl
    def on_session_start(event, ctx):
        ctx.events.on("ping", lambda data: say("pong", data["n"]))
        ctx.events.on("ping", lambda data: 1 / 0)
        ctx.events.on("ping", lambda data: say("still delivered"))


    async def demo(args, ctx):
        first = ctx.append_entry("demo-state", {"count": 1})
        ctx.set_label(first["id"], "checkpoint")
        say("label", ctx.get_label(first["id"]))
        await ctx.send_message({"customType": "note", "content": "remember X", "details": {"k": 1}})
        await ctx.send_message({"customType": "later", "content": "next-turn note"}, deliver_as="next_turn")
        await ctx.set_session_name("Demo run")
        say("name", ctx.get_session_name())
        done = await ctx.exec(sys.executable, ["-c", "import sys; print('out'); sys.exit(3)"])
        say("exec", done["stdout"].strip(), done["code"], done["killed"])
        slow = await ctx.exec(sys.executable, ["-c", "import time; time.sleep(30)"], timeout=0.2)
        say("slow", slow["code"], slow["killed"])
        say("all tools", "read" in [t["name"] for t in ctx.get_all_tools()])
        ctx.set_active_tools(["read", "nope"])
        say("active", ",".join(ctx.get_active_tools()))
        say("level", await ctx.set_thinking_level("high"), ctx.get_thinking_level())
        say("model", await ctx.set_model("faux/faux-1"))
        ctx.events.emit("ping", {"n": 7})
        say("entries", [e["customType"] for e in ctx.get_entries() if e["type"] == "custom"])
        say("custom data", ctx.get_custom_entries("demo-state"))
        await ctx.send_user_message("hello there")
        await ctx.wait_for_idle()
        usage = ctx.get_context_usage()
        say("usage", usage["tokens"] > 0, usage["contextWindow"] > 0)


    @hookimpl
    def register_commands():
        return [Command("demo", demo)]
    """
)


def session_file(agent: Path) -> list[dict]:
    files = list((agent / "sessions").rglob("*.jsonl"))
    assert len(files) == 1, files
    return [json.loads(line) for line in files[0].read_text().splitlines()]


def test_a_command_uses_the_extension_api_end_to_end(tmp_path, isolated_environment):
    plugin = tmp_path / "demo_plugin.py"
    plugin.write_text(PLUGIN)
    script = [{"text": "got: {{userMessages}}"}]
    result = run_pi("-p", "--model", "faux/faux-1", "-e", str(plugin), "/demo", script=script)
    assert result.returncode == 0, result.stderr
    # The model saw the stored custom message, the user message, then the next-turn message.
    assert result.stdout == "got: remember X | hello there | next-turn note\n"
    lines = [line for line in result.stderr.splitlines() if line.startswith("plugin:")]
    assert lines == [
        "plugin: label checkpoint",
        "plugin: name Demo run",
        "plugin: exec out 3 False",
        "plugin: slow 143 True",
        "plugin: all tools True",
        "plugin: active read",
        "plugin: level off off",  # faux-1 does not reason: clamped
        "plugin: model True",
        "plugin: pong 7",
        "plugin: still delivered",
        "plugin: entries ['demo-state']",
        "plugin: custom data [{'count': 1}]",
        "plugin: usage True True",
    ]
    assert "events:ping" in result.stderr and "ZeroDivisionError" in result.stderr
    entries = session_file(isolated_environment["agent"])
    custom = next(e for e in entries if e["type"] == "custom")
    assert custom["customType"] == "demo-state" and custom["data"] == {"count": 1}
    label = next(e for e in entries if e["type"] == "label")
    assert label["targetId"] == custom["id"] and label["label"] == "checkpoint"
    messages = [e for e in entries if e["type"] == "custom_message"]
    assert [(m["customType"], m["content"]) for m in messages] == [
        ("note", "remember X"),
        ("later", "next-turn note"),
    ]
    assert messages[0]["details"] == {"k": 1}
    assert any(e["type"] == "session_info" and e["name"] == "Demo run" for e in entries)
    roles = [e["message"]["role"] for e in entries if e["type"] == "message"]
    assert [r for r in roles if r != "system"] == ["user", "assistant"]


def test_custom_entries_and_labels_survive_resume(tmp_path, isolated_environment):
    plugin = tmp_path / "state_plugin.py"
    plugin.write_text(
        textwrap.dedent(
            """
            import sys
            from pi_host import hookimpl

            @hookimpl
            def on_session_start(event, ctx):
                print("restored:", ctx.get_custom_entries("counter"), file=sys.stderr)

            @hookimpl
            def on_agent_settled(event, ctx):
                count = len(ctx.get_custom_entries("counter"))
                ctx.append_entry("counter", {"n": count + 1})
            """
        )
    )
    script = [{"text": "one"}, {"text": "two"}]
    first = run_pi("-p", "--model", "faux/faux-1", "-e", str(plugin), "hi", script=script)
    assert first.returncode == 0, first.stderr
    assert "restored: []" in first.stderr
    second = run_pi("-p", "-c", "--model", "faux/faux-1", "-e", str(plugin), "again", script=script[1:])
    assert second.returncode == 0, second.stderr
    assert "restored: [{'n': 1}]" in second.stderr
    counters = [e["data"] for e in session_file(isolated_environment["agent"]) if e["type"] == "custom"]
    assert counters == [{"n": 1}, {"n": 2}]


def test_exec_abort_signal_kills_and_missing_program_is_127():
    async def main():
        from pi_host.protocol.abort import AbortController

        session = await new_session()
        assert isinstance(session.ctx, ExtensionApi)
        controller = AbortController()
        asyncio.get_running_loop().call_later(0.1, controller.abort)
        aborted = await session.ctx.exec(
            sys.executable, ["-c", "import time; time.sleep(30)"], signal=controller.signal
        )
        missing = await session.ctx.exec("/nonexistent/program")
        here = await session.ctx.exec(sys.executable, ["-c", "import os; print(os.getcwd())"], cwd="/")
        return aborted, missing, here

    aborted, missing, here = asyncio.run(main())
    assert aborted["killed"] and aborted["code"] == 143
    assert missing["code"] == 127 and not missing["killed"]
    assert here["stdout"].strip() == "/"


def test_print_mode_waits_for_a_run_a_command_started(tmp_path, isolated_environment):
    plugin = tmp_path / "ask_plugin.py"
    plugin.write_text(
        textwrap.dedent(
            """
            from pi_host import hookimpl
            from pi_host.plugins.registrations import Command

            async def ask(args, ctx):
                await ctx.send_user_message(f"asked: {args}")  # no wait: the mode waits

            @hookimpl
            def register_commands():
                return [Command(name="ask", handler=ask)]
            """
        )
    )
    result = run_pi(
        "-p", "--model", "faux/faux-1", "-e", str(plugin), "/ask why", script=[{"text": "{{userMessages}}"}]
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "asked: why\n"
