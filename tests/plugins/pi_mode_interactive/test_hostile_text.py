"""Escape sequences in a model's answer or in what a plugin shows never reach the terminal: the
application drawn into a VT100 output over a text buffer, whose every byte is checked."""

from __future__ import annotations

import asyncio
import io
import json
import types

import pytest

pytest.importorskip("prompt_toolkit")

from pi_mode_interactive.screen import widget_text  # noqa: E402
from prompt_toolkit.application import create_app_session  # noqa: E402
from prompt_toolkit.data_structures import Size  # noqa: E402
from prompt_toolkit.input import create_pipe_input  # noqa: E402
from prompt_toolkit.output.vt100 import Vt100_Output  # noqa: E402

from pi_host import hookimpl  # noqa: E402
from pi_host.lib.render import RenderContext, default_theme  # noqa: E402
from pi_host.plugins.registrations import Command, FooterRenderer  # noqa: E402
from pi_host.sdk import SessionOptions  # noqa: E402
from tests.support.interactive import open_app  # noqa: E402

BAD = (
    "\x1b]52;c;SEFDS0VE\x07\x1b]0;PWNED\x07\x1b]2;PWNED\x1b\\\x1b[?1049h\x1b[6n\x1b[21t"
    "\x1b]8;;http://evil.example/\x1b\\link\x1b]8;;\x1b\\"
    "\u009b?1049h\u009d2;PWNED\u009c\u0090PWNED\u009c\x1b(0\x1bc\x01\x1b]52;c;SEFDS0VE\x07\x02"
)
FORBIDDEN = ["\x1b]52", "\x1b]0;", "PWNED", "\x1b[?1049h", "\x1b[21t", "\x1b]8;", "\x1bc", "\x1b(0"]
FORBIDDEN += ["\u009b", "\u009d", "\u0090", "\u009c", "SEFDS0VE", "\x01", "\x02"]


async def until(predicate, timeout=10.0):
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("timed out")
        await asyncio.sleep(0.02)


async def drive(monkeypatch, script, keys_then, plugins=()):
    """Run the app on the faux model; ``keys_then(pipe, app, session)`` types and waits; returns
    everything written to the terminal."""
    monkeypatch.setenv("PI_FAUX_SCRIPT", json.dumps(script))
    buffer = io.StringIO()
    output = Vt100_Output(buffer, lambda: Size(rows=40, columns=100), term="xterm-256color")
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=output):
        app, session = await open_app(
            SessionOptions(
                model="faux/faux-1",
                mode="interactive",
                has_ui=True,
                plugins=list(plugins),
                store_options={"no_session": True},
            )
        )

        running = asyncio.ensure_future(app.run())
        try:
            await until(lambda: app.app.is_running)
            await keys_then(pipe, app, session)
            app.exit(0)
            assert await asyncio.wait_for(running, 10) == 0
        finally:
            if not running.done():
                running.cancel()
            await session.close()
    return buffer.getvalue()


def leaked(written: str) -> list[str]:
    return [pattern for pattern in FORBIDDEN if pattern in written]


async def test_a_hostile_answer_reaches_the_terminal_without_its_escapes(isolated_environment, monkeypatch):
    answer = f"Intro {BAD} shown-one\n\n```\ncode {BAD} shown-two\n```\n\nFinal {BAD} shown-three"
    script = [
        {"text": answer, "chunkSize": 7},
        {"thinking": f"think {BAD}", "text": f"again {BAD} shown-four"},
    ]

    async def keys(pipe, app, session):
        for count, prompt in enumerate(("first", "second"), 1):
            pipe.send_text(prompt + "\r")
            await until(lambda n=count: len([m for m in session.messages if m.role == "assistant"]) == n)
            await until(lambda: not session.is_streaming and not app.working)
        await asyncio.sleep(0.2)  # the last lines reach the scrollback

    written = await drive(monkeypatch, script, keys)
    assert leaked(written) == []
    for shown in ("shown-one", "shown-two", "shown-three", "shown-four", "link"):
        assert shown in written


def showing_plugin():
    async def show(args, ctx):
        ctx.ui.set_status("evil", "\x1b[32mstatus-ok\x1b[0m" + BAD)
        ctx.ui.set_widget("evil", ["widget-above" + BAD])
        ctx.ui.set_widget("evil2", ["widget-below" + BAD], placement="below")
        ctx.ui.set_title("title-ok" + BAD)
        ctx.ui.notify("notice-ok" + BAD)

    module = types.ModuleType("shower")

    @hookimpl
    def register_commands():
        return [Command(name="show", handler=show, description="shows")]

    module.register_commands = register_commands
    return module


async def test_plugin_statuses_widgets_titles_and_notices_are_cleaned(isolated_environment, monkeypatch):
    seen: dict = {}

    async def keys(pipe, app, session):
        pipe.send_text("/show\r")
        await until(lambda: "evil" in app.statuses)
        await asyncio.sleep(0.2)
        seen.update(status=app.statuses["evil"], above=widget_text(app, "above"))

    written = await drive(monkeypatch, [{"text": "x"}], keys, [showing_plugin()])
    assert leaked(written) == []
    assert seen["status"] == "\x1b[32mstatus-ok\x1b[0mlink"  # the plugin's colours stay
    assert seen["above"] == "widget-abovelink"
    assert "\x1b]2;title-oklink\x07" in written
    for shown in ("status-ok", "widget-above", "widget-below", "notice-ok"):
        assert shown in written


def footer_plugin():
    module = types.ModuleType("footer_drawer")

    @hookimpl
    def register_renderers():
        return [FooterRenderer(render=lambda info, rc: "\x1b[33mfooter-ok\x1b[0m" + BAD)]

    module.register_renderers = register_renderers
    return module


async def test_a_plugins_footer_is_drawn_without_its_escapes(isolated_environment, monkeypatch):
    async def keys(pipe, app, session):
        await asyncio.sleep(0.3)

    written = await drive(monkeypatch, [{"text": "x"}], keys, [footer_plugin()])
    # prompt-toolkit draws the bottom area itself (text between \x01 and \x02 it writes raw)
    assert leaked(written) == []
    assert "footer-ok" in written


def test_the_transcript_lets_only_styles_and_plain_links_through_whatever_a_renderer_returns():
    from pi_mode_interactive.transcript import Item, Transcript

    transcript = Transcript()
    link = "\x1b]8;;https://example.com\x1b\\ok\x1b]8;;\x1b\\"
    transcript.add(Item(lambda rc: f"\x1b[1mbold\x1b[0m {link} {BAD}\rover", done=True))
    transcript.add(Item(lambda rc: f"live {BAD}", done=False))

    def rc_for(state):
        return RenderContext(width=80, theme=default_theme("truecolor"), state=state)

    scrollback, live = transcript.take(rc_for)
    # a plain OSC 8 link is a renderer's own and stays; the rest of BAD goes, payloads included
    kept = "\x1b]8;;http://evil.example/\x1b\\link\x1b]8;;\x1b\\"
    assert scrollback[0] == f"\x1b[1mbold\x1b[0m {link} {kept}over"
    assert live == [f"live {kept}"]
