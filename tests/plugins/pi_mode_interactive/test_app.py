"""The interactive application driven through prompt-toolkit's pipe input, drawing into a real
VT100 output over a text buffer (no terminal): keys in, session and screen text out."""

from __future__ import annotations

import asyncio
import io
import json
import re
import types

import pytest

pytest.importorskip("prompt_toolkit")

from pi_mode_interactive.screen import widget_text  # noqa: E402
from prompt_toolkit.application import create_app_session  # noqa: E402
from prompt_toolkit.data_structures import Size  # noqa: E402
from prompt_toolkit.input import create_pipe_input  # noqa: E402
from prompt_toolkit.output.vt100 import Vt100_Output  # noqa: E402

from pi_host import hookimpl  # noqa: E402
from pi_host.plugins.registrations import Command, MessageRenderer  # noqa: E402
from pi_host.sdk import SessionOptions  # noqa: E402
from tests.support.interactive import open_app as open_interactive_app  # noqa: E402

ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\x1b[=>]")


class Screen:
    def __init__(self) -> None:
        self.buffer = io.StringIO()
        self.output = Vt100_Output(self.buffer, lambda: Size(rows=30, columns=100), term="xterm-256color")

    def text(self) -> str:
        return ANSI_ESCAPE.sub("", self.buffer.getvalue())


async def open_app(monkeypatch, script, plugins=(), prompts=()):
    monkeypatch.setenv("PI_FAUX_SCRIPT", json.dumps(script))
    options = SessionOptions(
        model="faux/faux-1",
        mode="interactive",
        has_ui=True,
        plugins=list(plugins),
        store_options={"no_session": True},
    )
    return await open_interactive_app(options, tuple(prompts))


async def until(predicate, timeout=10.0):
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("timed out")
        await asyncio.sleep(0.02)


def texts(session, role):
    out = []
    for message in session.messages:
        if getattr(message, "role", None) == role:
            content = getattr(message, "content", "")
            out.append(
                content if isinstance(content, str) else "".join(getattr(b, "text", "") for b in content)
            )
    return out


async def drive(monkeypatch, script, keys_then, plugins=(), prompts=()):
    """Run the app; ``keys_then(pipe, app, session)`` types and checks; returns (code, session, screen)."""
    screen = Screen()
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=screen.output):
        app, session = await open_app(monkeypatch, script, plugins, prompts)
        running = asyncio.ensure_future(app.run())
        try:
            await until(lambda: app.app.is_running)
            await keys_then(pipe, app, session)
            code = await asyncio.wait_for(running, 10)
        finally:
            if not running.done():
                running.cancel()
            await session.close()
    return code, session, screen


async def test_a_prompt_streams_an_answer_and_ctrl_d_exits_zero(isolated_environment, monkeypatch):
    async def keys(pipe, app, session):
        pipe.send_text("hello there\r")
        await until(lambda: texts(session, "assistant") == ["**the** answer"])
        await until(lambda: not app.working)
        pipe.send_text("\x04")

    code, session, screen = await drive(monkeypatch, [{"text": "**the** answer"}], keys)
    assert code == 0
    assert texts(session, "user") == ["hello there"]
    shown = screen.text()
    assert "the answer" in shown and "**" not in shown  # rendered Markdown, not the source
    assert "faux-1" in shown  # the footer's model


async def test_ctrl_d_with_a_draft_does_not_exit_and_ctrl_c_twice_does(isolated_environment, monkeypatch):
    async def keys(pipe, app, session):
        pipe.send_text("draft")
        await until(lambda: app.editor.text == "draft")
        pipe.send_text("\x04")  # a draft: Ctrl+D deletes forward, no exit
        await asyncio.sleep(0.2)
        assert app.app.is_running
        pipe.send_text("\x03")  # clears
        await until(lambda: app.editor.text == "")
        pipe.send_text("\x03")  # twice in a row: exit

    code, _, _ = await drive(monkeypatch, [{"text": "x"}], keys)
    assert code == 0


async def test_enter_during_a_stream_steers_and_alt_enter_follows_up(isolated_environment, monkeypatch):
    script = [
        {"text": " ".join(["word"] * 60), "delayMs": 40, "chunkSize": 5},
        {"text": "after the steer"},
        {"text": "after the follow-up"},
    ]

    async def keys(pipe, app, session):
        pipe.send_text("start\r")
        await until(lambda: session.is_streaming)
        pipe.send_text("steer now\r")
        pipe.send_text("later please\x1b\r")  # Alt+Enter
        await until(lambda: app.queued == (["steer now"], ["later please"]))
        await until(lambda: "after the follow-up" in texts(session, "assistant"), timeout=15)
        await until(lambda: not app.working)
        pipe.send_text("\x04")

    code, session, screen = await drive(monkeypatch, script, keys)
    assert code == 0
    assert texts(session, "user") == ["start", "steer now", "later please"]
    assert "Steering: steer now" in screen.text()


async def test_escape_aborts_and_returns_the_queue_to_the_editor(isolated_environment, monkeypatch):
    script = [{"text": " ".join(["word"] * 200), "delayMs": 50, "chunkSize": 5}]

    async def keys(pipe, app, session):
        pipe.send_text("start\r")
        await until(lambda: session.is_streaming)
        pipe.send_text("queued text\r")
        await until(lambda: app.queued[0] == ["queued text"])
        pipe.send_text("\x1b")
        await until(lambda: not session.is_streaming)
        assert app.editor.text == "queued text"
        await until(lambda: not app.working)
        app.exit(0)

    code, session, _ = await drive(monkeypatch, script, keys)
    assert code == 0
    last = session.messages[-1]
    assert last.role == "assistant" and last.stop_reason == "aborted"


def asking_plugin(record):
    async def ask(args, ctx):
        record["has_ui"] = ctx.has_ui
        record["confirm"] = await ctx.ui.confirm("Really?", "it matters")
        record["select"] = await ctx.ui.select("Pick", ["red", "green", "blue"])
        record["input"] = await ctx.ui.input("Name")
        record["dismissed"] = await ctx.ui.confirm("Again?")
        ctx.ui.set_status("asker", "STATUS-TEXT")
        print("a stray print")

    module = types.ModuleType("asker")

    @hookimpl
    def register_commands():
        return [Command(name="ask", handler=ask, description="asks")]

    module.register_commands = register_commands
    return module


async def test_ctx_ui_dialogs_are_answered_by_keys(isolated_environment, monkeypatch):
    record: dict = {}

    async def keys(pipe, app, session):
        pipe.send_text("/ask\r")
        await until(lambda: app.dialogs)
        pipe.send_text("y")
        await until(lambda: "confirm" in record)
        await until(lambda: app.dialogs)
        pipe.send_text("\x1b[B\r")  # Down, Enter
        await until(lambda: "select" in record)
        await until(lambda: app.dialogs)
        pipe.send_text("bob\r")
        await until(lambda: "input" in record)
        await until(lambda: app.dialogs)
        pipe.send_text("\x1b")
        await until(lambda: "dismissed" in record)
        await until(lambda: "STATUS-TEXT" in screen_of(app))
        app.exit(0)

    def screen_of(app):
        return app.footer_text()

    code, session, screen = await drive(monkeypatch, [{"text": "x"}], keys, plugins=[asking_plugin(record)])
    assert code == 0
    assert record == {"has_ui": True, "confirm": True, "select": "green", "input": "bob", "dismissed": False}
    assert "a stray print" in screen.text()
    assert texts(session, "user") == []  # the command ran instead of becoming a prompt


def broken_renderer_plugin():
    module = types.ModuleType("broken_renderer")

    def render(message, rc):
        raise RuntimeError("boom")

    @hookimpl
    def register_renderers():
        return [MessageRenderer(render=render, role="assistant")]

    module.register_renderers = register_renderers
    return module


async def test_a_raising_renderer_falls_back_and_is_reported_once(isolated_environment, monkeypatch):
    async def keys(pipe, app, session):
        for prompt in ("one", "two"):
            pipe.send_text(prompt + "\r")
            await until(lambda: not session.is_streaming and len(texts(session, "assistant")) >= 1)
            await until(lambda: not app.working)
            await asyncio.sleep(0.1)
        await until(lambda: len(texts(session, "assistant")) == 2)
        await asyncio.sleep(0.2)
        app.exit(0)

    code, _, screen = await drive(monkeypatch, [{"text": "first reply"}, {"text": "second reply"}], keys,
                                  plugins=[broken_renderer_plugin()])  # fmt: skip
    shown = screen.text()
    assert code == 0
    assert "first reply" in shown and "second reply" in shown  # the built-in renderer drew them
    assert shown.count("boom") == 1


async def test_bang_command_is_recorded_and_double_bang_is_left_out_of_context(
    isolated_environment, monkeypatch
):
    async def keys(pipe, app, session):
        pipe.send_text("!echo visible-output\r")
        await until(lambda: any(getattr(m, "role", "") == "bashExecution" for m in session.messages))
        pipe.send_text("!!echo hidden-output\r")
        await until(lambda: sum(getattr(m, "role", "") == "bashExecution" for m in session.messages) == 2)
        await asyncio.sleep(0.2)
        app.exit(0)

    code, session, screen = await drive(monkeypatch, [{"text": "x"}], keys)
    runs = [m for m in session.messages if getattr(m, "role", "") == "bashExecution"]
    assert code == 0
    assert [(r.command, r.output.strip(), r.exit_code, r.exclude_from_context) for r in runs] == [
        ("echo visible-output", "visible-output", 0, None),
        ("echo hidden-output", "hidden-output", 0, True),
    ]
    assert "visible-output" in screen.text()


async def test_initial_prompts_are_sent_at_start(isolated_environment, monkeypatch):
    async def keys(pipe, app, session):
        await until(lambda: texts(session, "assistant") == ["started reply"])
        await until(lambda: not app.working)
        app.exit(0)

    code, session, _ = await drive(
        monkeypatch, [{"text": "started reply"}], keys, prompts=["from the command line"]
    )
    assert code == 0
    assert texts(session, "user") == ["from the command line"]


def hook_plugin(record):
    module = types.ModuleType("hooks_probe")

    @hookimpl
    def on_user_bash(event, ctx):
        record.setdefault("user_bash", []).append(event)
        if event["command"] == "pretend":
            return {"result": {"output": "pretended output", "exitCode": 3}}
        return None

    @hookimpl
    def on_session_before_switch(event, ctx):
        record.setdefault("switch", []).append(event["reason"])
        if len(record["switch"]) == 1:
            return {"cancel": True}
        return None

    @hookimpl
    def on_session_start(event, ctx):
        record.setdefault("start", []).append(event.get("reason"))

    module.on_user_bash = on_user_bash
    module.on_session_before_switch = on_session_before_switch
    module.on_session_start = on_session_start
    return module


async def test_user_bash_and_session_switch_hooks_fire_from_the_editor(isolated_environment, monkeypatch):
    record: dict = {}

    async def keys(pipe, app, session):
        pipe.send_text("!pretend\r")
        await until(lambda: any(getattr(m, "role", "") == "bashExecution" for m in app.session.messages))
        pipe.send_text("/new\r")  # the first switch is cancelled by the plugin
        await until(lambda: record.get("switch") == ["new"])
        await asyncio.sleep(0.1)
        assert app.session is session
        pipe.send_text("/new\r")
        await until(lambda: app.session is not session)
        await until(lambda: record.get("start", [])[-1:] == ["new"])
        app.exit(0)

    plugin = hook_plugin(record)
    screen = Screen()
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=screen.output):
        app, session = await open_app(monkeypatch, [{"text": "x"}], [plugin])
        running = asyncio.ensure_future(app.run())
        await until(lambda: app.app.is_running)
        await keys(pipe, app, session)
        assert await asyncio.wait_for(running, 10) == 0
        [run] = [m for m in session.messages if getattr(m, "role", "") == "bashExecution"]
        await app.session.close()
    assert (run.output, run.exit_code) == ("pretended output", 3)
    assert record["user_bash"][0] == {
        "command": "pretend",
        "excludeFromContext": False,
        "cwd": session.config.cwd,
    }
    assert record["switch"] == ["new", "new"]
    assert app.session.messages == [] or all(
        getattr(m, "role", "") != "bashExecution" for m in app.session.messages
    )
    assert "pretended output" in screen.text()


async def test_builtin_commands_name_session_hotkeys_and_copy(isolated_environment, monkeypatch):
    async def keys(pipe, app, session):
        pipe.send_text("hello\r")
        await until(lambda: texts(session, "assistant") == ["copied answer"])
        await until(lambda: not app.working)
        pipe.send_text("/name my session\r")
        await until(lambda: app.session_name == "my session")
        pipe.send_text("/session\r")
        pipe.send_text("/hotkeys\r")
        pipe.send_text("/copy\r")
        await until(lambda: "Copied the last answer" in screen.text())
        pipe.send_text("/quit\r")

    screen = Screen()
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=screen.output):
        monkeypatch.setenv("PATH", "/nonexistent")  # no clipboard tool: OSC 52
        app, session = await open_app(monkeypatch, [{"text": "copied answer"}])
        running = asyncio.ensure_future(app.run())
        await until(lambda: app.app.is_running)
        await keys(pipe, app, session)
        code = await asyncio.wait_for(running, 10)
        await session.close()
    shown = screen.text()
    raw = screen.buffer.getvalue()
    assert code == 0
    assert "Session named 'my session'" in shown
    assert "1 user, 1 assistant" in shown and "id:" in shown
    assert "app.interrupt" in shown and "escape" in shown  # /hotkeys lists pi's action ids
    import base64

    assert "\x1b]52;c;" + base64.b64encode(b"copied answer").decode() in raw


def widget_plugin(record):
    module = types.ModuleType("widgets_probe")

    async def note(args, ctx):
        record["editor"] = await ctx.ui.editor("Write a note", "first line")
        ctx.ui.set_widget("notes", ["WIDGET-ABOVE"])
        ctx.ui.set_widget("below", ["WIDGET-BELOW"], placement="below")
        ctx.ui.set_editor_text("prefilled by the plugin")

    @hookimpl
    def register_commands():
        return [Command(name="note", handler=note)]

    module.register_commands = register_commands
    return module


async def test_editor_dialog_widgets_and_editor_text(isolated_environment, monkeypatch):
    record: dict = {}
    screen = Screen()
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=screen.output):
        app, session = await open_app(monkeypatch, [{"text": "x"}], [widget_plugin(record)])
        running = asyncio.ensure_future(app.run())
        await until(lambda: app.app.is_running)
        pipe.send_text("/note\r")
        await until(lambda: app.dialogs)
        pipe.send_text("\rsecond line\x13")  # Enter is a new line in the editor dialog; Ctrl+S saves
        await until(lambda: "editor" in record)
        await until(lambda: app.editor.text == "prefilled by the plugin")
        above, below = widget_text(app, "above"), widget_text(app, "below")
        app.exit(0)
        assert await asyncio.wait_for(running, 10) == 0
        await session.close()
    assert record["editor"] == "first line\nsecond line"
    assert (above, below) == ("WIDGET-ABOVE", "WIDGET-BELOW")


async def test_compact_command_shows_the_summary(isolated_environment, monkeypatch):
    agent = isolated_environment["agent"]
    (agent / "settings.json").write_text(json.dumps({"compaction": {"keepRecentTokens": 1}}))
    script = [{"text": "first answer"}, {"text": "second answer"}, {"text": "## Goal\nTHE-SUMMARY-TEXT"}]

    async def keys(pipe, app, session):
        for prompt, count in (("one", 1), ("two", 2)):
            pipe.send_text(prompt + "\r")
            await until(lambda count=count: len(texts(session, "assistant")) == count)
            await until(lambda: not app.working)
        pipe.send_text("/compact keep it short\r")
        await until(lambda: any(getattr(m, "role", "") == "compactionSummary" for m in session.messages))
        await asyncio.sleep(0.3)
        app.exit(0)

    code, session, screen = await drive(monkeypatch, script, keys)
    assert code == 0
    assert "THE-SUMMARY-TEXT" in screen.text()


def model_changes(session):
    return [
        (e.get("provider"), e.get("modelId"))
        for e in session.store.entries()
        if e.get("type") == "model_change"
    ]


def level_changes(session):
    return [e["thinkingLevel"] for e in session.store.entries() if e.get("type") == "thinking_level_change"]


async def test_model_picker_thinking_keys_and_commands(isolated_environment, monkeypatch):
    async def keys(pipe, app, session):
        pipe.send_text("\x0c")  # Ctrl+L: the model picker
        await until(lambda: app.dialogs)
        pipe.send_text("reasoner")  # type to filter
        await asyncio.sleep(0.1)
        pipe.send_text("\r")
        await until(lambda: session.model.id == "faux-reasoner")
        assert session.thinking_level == "off"  # kept from faux-1 (clamped)
        pipe.send_text("\x1b[Z")  # Shift+Tab: the next thinking level
        await until(lambda: session.thinking_level != "off")
        before = session.thinking_level
        pipe.send_text("/thinking high\r")
        await until(lambda: session.thinking_level == "high")
        pipe.send_text("/model faux/faux-1\r")
        await until(lambda: session.model.id == "faux-1")
        await until(lambda: session.thinking_level == "off")  # clamped: faux-1 does not reason
        record["before"] = before
        app.exit(0)

    record: dict = {}
    code, session, screen = await drive(monkeypatch, [{"text": "x"}], keys)
    assert code == 0
    assert model_changes(session)[-2:] == [("faux", "faux-reasoner"), ("faux", "faux-1")]
    assert "high" in level_changes(session) and level_changes(session)[-1] == "off"
    assert record["before"] != "off"
    assert "Model: faux/faux-reasoner" in screen.text()


async def test_ctrl_p_cycles_the_scoped_models_with_their_pinned_levels(isolated_environment, monkeypatch):
    agent = isolated_environment["agent"]
    (agent / "settings.json").write_text(
        json.dumps(
            {
                "enabledModels": ["faux/faux-reasoner:low", "faux-1"],
                "modelThinkingLevels": {"faux/faux-reasoner": "high"},
            }
        )
    )

    async def keys(pipe, app, session):
        pipe.send_text("\x10")  # Ctrl+P
        await until(lambda: session.model.id == "faux-reasoner")
        await until(lambda: session.thinking_level == "low")  # the pattern pins it
        pipe.send_text("\x10")
        await until(lambda: session.model.id == "faux-1")
        app.exit(0)

    code, session, _ = await drive(monkeypatch, [{"text": "x"}], keys)
    assert code == 0
    assert model_changes(session)[-2:] == [("faux", "faux-reasoner"), ("faux", "faux-1")]


async def test_scoped_models_toggles_and_saves_enabled_models(isolated_environment, monkeypatch):
    agent = isolated_environment["agent"]
    (agent / "settings.json").write_text(json.dumps({"theme": "dark"}))

    async def keys(pipe, app, session):
        pipe.send_text("/scoped-models")
        await asyncio.sleep(0.2)
        pipe.send_text("\r")
        await until(lambda: app.dialogs)
        pipe.send_text("reasoner")
        await asyncio.sleep(0.1)
        first = app.dialogs[-1]
        pipe.send_text("\r")  # toggles faux-reasoner in; the picker opens again
        await until(lambda: app.dialogs and app.dialogs[-1] is not first)
        await asyncio.sleep(0.1)
        pipe.send_text("\x03")  # ends the picker (Ctrl+C, like Escape: tui.select.cancel)
        await until(lambda: app.dialogs and "Save" in app.dialogs[-1].title)
        pipe.send_text("y")
        await until(lambda: "enabledModels" in json.loads((agent / "settings.json").read_text()))
        app.exit(0)

    code, _, _ = await drive(monkeypatch, [{"text": "x"}], keys)
    saved = json.loads((agent / "settings.json").read_text())
    assert code == 0
    assert saved == {"theme": "dark", "enabledModels": ["faux/faux-reasoner"]}


async def test_a_prompt_without_a_key_says_so_in_one_line(isolated_environment, monkeypatch):
    screen = Screen()
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=screen.output):
        app, session = await open_interactive_app(
            SessionOptions(
                model="anthropic/claude-opus-4-5",
                mode="interactive",
                has_ui=True,
                store_options={"no_session": True},
            )  # fmt: skip
        )

        running = asyncio.ensure_future(app.run())
        await until(lambda: app.app.is_running)
        pipe.send_text("hello\r")
        await until(lambda: "No API key for provider anthropic" in screen.text())
        app.exit(0)
        assert await asyncio.wait_for(running, 10) == 0
        await session.close()
    assert "SessionError" not in screen.text() and "Traceback" not in screen.text()


async def test_the_theme_setting_colours_the_transcript_and_a_missing_theme_is_named(
    isolated_environment, monkeypatch
):
    from pi_host.lib.render.theme import builtin_theme

    settings = isolated_environment["agent"] / "settings.json"
    light = builtin_theme("light")

    async def keys(pipe, app, session):
        assert app.theme.name == "light"
        pipe.send_text("hello\r")
        await until(lambda: texts(session, "assistant") == ["answer"])
        await until(lambda: not app.working)
        pipe.send_text("\x04")

    settings.write_text(json.dumps({"theme": "light"}))
    monkeypatch.setenv("COLORTERM", "truecolor")
    code, _session, screen = await drive(monkeypatch, [{"text": "answer"}], keys)
    assert code == 0
    r, g, b = (int(light.user_bg[i : i + 2], 16) for i in (1, 3, 5))
    assert f"48;2;{r};{g};{b}" in screen.buffer.getvalue()  # the light user-message background

    async def quit_at_once(pipe, app, session):
        assert app.theme.name in ("dark", "light")
        pipe.send_text("\x04")

    settings.write_text(json.dumps({"theme": "no-such-theme"}))
    code, _session, screen = await drive(monkeypatch, [], quit_at_once)
    assert code == 0 and "no-such-theme" in screen.text()
