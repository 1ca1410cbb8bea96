"""``pi`` in a real terminal (tmux) against the loopback OpenAI-compatible server: what a user
types and sees, and what reaches the model and the session file."""

from __future__ import annotations

import json
import re
import subprocess
import sys

from tests.support.interactive import (
    LOOP_THINK,
    entries,
    requires_tmux,
    session_files,
    terminal_pi,
    user_texts,
)
from tests.support.loopback import LoopbackServer, Reply, write_models_json
from tests.support.terminal import Terminal

pytestmark = requires_tmux


def test_a_typed_prompt_streams_the_answer_and_the_footer_names_the_model(world):
    with LoopbackServer([Reply("The **answer** is forty-two.", delay=0.01)]) as server:
        with terminal_pi(world, server) as term:
            assert "loop/loop-1" in term.screen() or "loop-1" in term.screen()
            term.send("what is the answer? ✓ café 日本")  # multi-byte keys decode incrementally
            term.press("Enter")
            # the answer, then the footer with the model under it, on the same screen
            screen = term.wait_for(re.compile(r"answer is forty-two\.(.|\n)*loop-1"), scrollback=False)
            assert "**" not in screen  # drawn as Markdown
            term.press("C-d")
            assert term.wait_exit() == 0
        assert user_texts(server.requests[0])[-1] == "what is the answer? ✓ café 日本"


def test_a_steering_message_typed_during_a_slow_stream_reaches_the_model(world):
    replies = [
        Reply.tool("bash", {"command": "sleep 1.5; echo tool-done"}, delay=0.01),
        Reply("finished after steering"),
    ]
    with LoopbackServer(replies) as server:
        with terminal_pi(world, server) as term:
            term.send("run the slow tool")
            term.press("Enter")
            term.wait_for("sleep 1.5")
            term.send("please also say hi")
            term.press("Enter")
            term.wait_for("Steering: please also say hi")
            term.wait_for("finished after steering", timeout=20)
            term.press("C-d")
            assert term.wait_exit() == 0
        second = server.requests[1]
        roles = [m["role"] for m in second["messages"]]
        # the steer comes after the whole tool batch: assistant call, its result, then the steer
        assert roles[-3:] == ["assistant", "tool", "user"]
        assert user_texts(second)[-1] == "please also say hi"


def test_escape_aborts_mid_stream_and_the_session_records_the_aborted_answer(world):
    with LoopbackServer([Reply.slow(2000, delay=0.01)]) as server:
        with terminal_pi(world, server) as term:
            term.send("write a lot")
            term.press("Enter")
            server.wait_streaming()
            term.wait_for("quick brown")
            term.press("Escape")
            term.wait_gone("esc to interrupt", timeout=10)
            term.press("C-d")
            assert term.wait_exit() == 0
        server.wait(lambda: server.exchanges[0].status == "aborted", what="the server saw the hang-up")
    [path] = session_files(world)
    [assistant] = [e["message"] for e in entries(path) if e.get("message", {}).get("role") == "assistant"]
    assert assistant["stopReason"] == "aborted"
    assert "quick brown" in "".join(b.get("text", "") for b in assistant["content"])


CONFIRMING_PLUGIN = """
from pi_host import hookimpl
from pi_host.plugins.registrations import Command

async def deploy(args, ctx):
    if await ctx.ui.confirm("Deploy to production?", "This pushes the build"):
        ctx.ui.notify("deploying now")
    else:
        ctx.ui.notify("deploy cancelled")

@hookimpl
def register_commands():
    return [Command(name="deploy", handler=deploy, description="Deploy the build")]
"""


def test_a_plugins_confirm_is_answered_by_keys(world):
    extensions = world["agent"] / "extensions"
    extensions.mkdir()
    (extensions / "deployer.py").write_text(CONFIRMING_PLUGIN)
    with LoopbackServer([]) as server:
        with terminal_pi(world, server) as term:
            term.send("/depl")
            term.wait_for("Deploy the build")  # completion with the command's description
            term.press("Escape")
            # the menu closes first: Escape and "o" arriving in one read would be Alt+O (the view)
            term.wait_gone("Deploy the build")
            term.send("oy")
            term.press("Enter")
            term.wait_for("Deploy to production?")
            term.send("y")
            term.wait_for("deploying now")
            term.send("/deploy")
            term.press("Enter")
            term.wait_for("Deploy to production?")
            term.press("Escape")
            term.wait_for("deploy cancelled")
            term.press("C-d")
            assert term.wait_exit() == 0
        assert server.requests == []  # commands never became prompts


def test_ctrl_d_exits_zero_and_the_session_resumes_with_continue(world):
    with LoopbackServer([Reply("first answer"), Reply("second answer")]) as server:
        with terminal_pi(world, server) as term:
            term.send("first question")
            term.press("Enter")
            term.wait_for("first answer")
            term.wait_gone("esc to interrupt")
            term.press("C-d")
            assert term.wait_exit() == 0
        with terminal_pi(world, server, "-c") as term:
            term.wait_for("first answer")  # the resumed transcript is shown
            term.send("second question")
            term.press("Enter")
            term.wait_for("second answer")
            term.press("C-d")
            assert term.wait_exit() == 0
        assert user_texts(server.requests[1]) == ["first question", "second question"]
    assert len(session_files(world)) == 1


def test_a_message_on_the_command_line_is_sent_at_start(world):
    with LoopbackServer([Reply("started from argv")]) as server:
        write_models_json(world["agent"], server.url)
        argv = [sys.executable, "-m", "pi_host", "--model", "loop/loop-1", "hello from argv"]
        with Terminal(argv, env=world["env"], cwd=world["work"]) as term:
            term.wait_for("started from argv", timeout=20)
            term.press("C-d")
            assert term.wait_exit() == 0
        assert user_texts(server.requests[0])[-1] == "hello from argv"


def test_copy_puts_the_last_answer_on_the_clipboard(world):
    """``/copy`` through ``clipboard.py``: no clipboard tool on this PATH and no display, so OSC 52,
    which a tmux with ``set-clipboard on`` keeps as a paste buffer."""
    with LoopbackServer([Reply("older answer"), Reply("line one of the answer\nline two")]) as server:
        write_models_json(world["agent"], server.url)
        argv = [sys.executable, "-m", "pi_host", "--model", "loop/loop-1"]
        env = {k: v for k, v in world["env"].items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
        env["PATH"] = "/usr/bin:/bin"
        config = "set -s set-clipboard on\n"
        with Terminal(argv, env=env, cwd=world["work"], config=config) as term:
            term.wait_for("ctrl+d exit", timeout=20)
            term.send("/copy")
            term.press("Enter")
            term.wait_for("Nothing to copy yet")
            for question, answer in (("first", "older answer"), ("second", "line two")):
                term.send(question)
                term.press("Enter")
                term.wait_for(answer)
                term.wait_gone("esc to interrupt")
            term.send("/copy")
            term.press("Enter")
            term.wait_for("Copied the last answer (OSC 52)")
            assert term.tmux("show-buffer").rstrip("\n") == "line one of the answer\nline two"
            term.press("C-d")
            assert term.wait_exit() == 0


def test_bang_command_output_is_shown_and_stored(world):
    with LoopbackServer([Reply("hello")]) as server:
        with terminal_pi(world, server) as term:
            term.send("hi")  # pi writes a session file once there is an answer
            term.press("Enter")
            term.wait_for("hello")
            term.wait_gone("esc to interrupt")
            term.send("!echo from-the-shell")
            term.press("Enter")
            term.wait_for(re.compile(r"^\s*from-the-shell\s*$", re.M))  # the output, not the typed command
            term.press("C-d")
            assert term.wait_exit() == 0
    [path] = session_files(world)
    [run] = [e["message"] for e in entries(path) if e.get("message", {}).get("role") == "bashExecution"]
    assert run["command"] == "echo from-the-shell" and run["output"].strip() == "from-the-shell"


def test_redirected_streams_keep_print_mode(world):
    with LoopbackServer([Reply("printed answer")]) as server:
        write_models_json(world["agent"], server.url)
        out = subprocess.run(
            [sys.executable, "-m", "pi_host", "--model", "loop/loop-1", "--no-session", "question"],
            env=world["env"], cwd=world["work"], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
        )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert out.stdout == "printed answer\n"


def test_ctrl_g_edits_the_draft_in_the_external_editor(world, tmp_path):
    editor = tmp_path / "fake-editor.sh"
    editor.write_text('#!/bin/sh\nprintf "edited by the editor" > "$1"\n')
    editor.chmod(0o755)
    world["env"]["VISUAL"] = str(editor)
    with LoopbackServer([Reply("got it")]) as server:
        with terminal_pi(world, server) as term:
            term.send("a draft")
            term.press("C-g")
            term.wait_for("› edited by the editor")
            term.press("Enter")
            term.wait_for("got it")
            term.press("C-d")
            assert term.wait_exit() == 0
        assert user_texts(server.requests[0])[-1] == "edited by the editor"


def test_history_is_shared_across_sessions_and_remapped_keys_apply(world):
    (world["agent"] / "keybindings.json").write_text(json.dumps({"app.exit": ["ctrl+q"]}))
    with LoopbackServer([Reply("one"), Reply("two")]) as server:
        with terminal_pi(world, server) as term:
            term.send("remember this prompt")
            term.press("Enter")
            term.wait_for("one")
            term.press("C-d")  # no longer exits: remapped
            term.press("C-q")
            assert term.wait_exit() == 0
        with terminal_pi(world, server, "--no-session") as term:
            term.press("Up")
            term.wait_for("› remember this prompt", scrollback=False)
            term.press("C-c")
            term.wait_gone("› remember this prompt")
            term.press("C-r")
            term.send("rememb")
            term.wait_for("I-search backward: rememb", scrollback=False)
            term.press("Enter")  # accept the search
            term.wait_for("› remember this prompt", scrollback=False)
            term.press("Enter")  # send
            term.wait_for("two")
            term.press("C-q")
            assert term.wait_exit() == 0
        assert user_texts(server.requests[1]) == ["remember this prompt"]
    lines = (world["agent"] / "prompt-history.jsonl").read_text().splitlines()
    assert [json.loads(line)["text"] for line in lines] == ["remember this prompt"]  # no repeated entries


VERSIONED_PLUGIN = """
from pi_host import hookimpl
from pi_host.plugins.registrations import Command

async def which(args, ctx):
    ctx.ui.notify("plugin says {version}")

@hookimpl
def register_commands():
    return [Command(name="which", handler=which, description="Which version")]
"""


def test_reload_picks_up_an_edited_plugin_and_keeps_the_conversation(world):
    extensions = world["agent"] / "extensions"
    extensions.mkdir()
    plugin = extensions / "versioned.py"
    plugin.write_text(VERSIONED_PLUGIN.replace("{version}", "VERSION-ONE"))
    with LoopbackServer([Reply("before reload"), Reply("after reload")]) as server:
        with terminal_pi(world, server) as term:
            term.send("first")
            term.press("Enter")
            term.wait_for("before reload")
            term.wait_gone("esc to interrupt")  # the run has settled
            term.send("/which")
            term.press("Enter")
            term.wait_for("plugin says VERSION-ONE")
            plugin.write_text(VERSIONED_PLUGIN.replace("{version}", "VERSION-TWO"))
            term.send("/reload")
            term.press("Enter")
            term.wait_for("Reloaded plugins")
            term.send("/which")
            term.press("Enter")
            term.wait_for("plugin says VERSION-TWO")
            term.send("second")
            term.press("Enter")
            term.wait_for("after reload")
            term.press("C-d")
            assert term.wait_exit() == 0
        assert user_texts(server.requests[1]) == ["first", "second"]
    [path] = session_files(world)
    roles = [e["message"]["role"] for e in entries(path) if e.get("type") == "message"]
    assert [r for r in roles if r in ("user", "assistant")] == ["user", "assistant", "user", "assistant"]


def test_model_picker_and_thinking_keys_change_the_footer_and_the_session(world):
    with LoopbackServer([Reply("answer one")]) as server:
        with terminal_pi(world, server, models=[LOOP_THINK]) as term:
            term.send("hello")
            term.press("Enter")
            term.wait_for("answer one")
            term.press("C-l")
            term.wait_for("Select a model")
            assert "faux" not in term.screen()  # a scripted provider is offered only while in use
            term.send("loop-think")
            term.wait_for("(1/1)")
            term.press("Enter")
            term.wait_for(re.compile(r"loop/loop-think • \w+\s*$", re.M), scrollback=False)  # the footer
            term.press("BTab")  # Shift+Tab: next thinking level
            term.wait_for("Thinking: minimal")
            term.send("/thinking high")
            term.press("Enter")
            term.wait_for("loop/loop-think • high", scrollback=False)
            term.press("C-d")
            assert term.wait_exit() == 0
    [path] = session_files(world)
    changes = [e for e in entries(path) if e.get("type") in ("model_change", "thinking_level_change")]
    assert {"type": "model_change", "provider": "loop", "modelId": "loop-think"}.items() <= changes[
        -3
    ].items()
    assert [e.get("thinkingLevel") for e in changes[-2:]] == ["minimal", "high"]


def test_ctrl_s_in_the_model_picker_uses_the_model_and_saves_it_as_the_default(world):
    """As pi: Ctrl+S in /model's picker switches and writes defaultProvider/defaultModel."""
    with LoopbackServer([Reply("answer one")]) as server:
        with terminal_pi(world, server, models=[LOOP_THINK]) as term:
            term.send("/model")
            term.press("Enter")
            term.wait_for("ctrl+s")
            term.send("loop-think")
            term.wait_for("(1/1)")
            term.press("C-s")
            term.wait_for("Default model loop/loop-think saved")
            term.wait_for(re.compile(r"loop/loop-think • \w+\s*$", re.M), scrollback=False)
            term.press("C-d")
            assert term.wait_exit() == 0
    settings = json.loads((world["agent"] / "settings.json").read_text())
    assert (settings["defaultProvider"], settings["defaultModel"]) == ("loop", "loop-think")


def test_resume_picks_another_session_and_continues_it(world):
    with LoopbackServer(
        [Reply("answer in the old session"), Reply("answer in the new one"), Reply("continued")]
    ) as server:
        with terminal_pi(world, server) as term:
            term.send("the old question")
            term.press("Enter")
            term.wait_for("answer in the old session")
            term.press("C-d")
            assert term.wait_exit() == 0
        with terminal_pi(world, server) as term:
            term.send("a newer question")
            term.press("Enter")
            term.wait_for("answer in the new one")
            term.wait_gone("esc to interrupt")
            term.send("/resume")
            term.press("Enter")
            term.wait_for("Resume a session")
            term.wait_for("the old question")
            term.press("Enter")
            term.wait_for("Session resumed")
            term.send("go on")
            term.press("Enter")
            term.wait_for("continued")
            term.press("C-d")
            assert term.wait_exit() == 0
        assert user_texts(server.requests[2]) == ["the old question", "go on"]
    assert len(session_files(world)) == 2
