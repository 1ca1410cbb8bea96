"""The built-in renderers: what they show, and that every line fits the width."""

from __future__ import annotations

import pytest
from pi_render_builtin import messages, tools

from pi_host.lib.render import (
    RenderContext,
    ToolCallView,
    ToolResultView,
    as_rendered,
    default_message,
    default_theme,
    default_tool_call,
    default_tool_result,
    strip_ansi,
    visible_width,
)
from pi_host.protocol.messages import (
    AssistantMessage,
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    UserMessage,
)

THEME = default_theme("truecolor")
WIDTHS = range(20, 121, 7)
GREEN = "\x1b[38;2;181;189;104m"  # the theme's diff_added
RED = "\x1b[38;2;204;102;102m"  # diff_removed / error
DISPLAY_DIFF = " 1 import os\n-2 x = 1\n+2 x = 2\n 3 print(x)\n   ...\n+9 done()"
LONG = "a rather long line of output with many words that must wrap or be cut " * 3


def rc(width: int = 80, **kw) -> RenderContext:
    return RenderContext(width=width, theme=THEME, cwd="/proj", **kw)


def text_of(value) -> str:
    return as_rendered(value).text


def assert_fits(value, width: int) -> None:
    for line in text_of(value).split("\n"):
        assert visible_width(line) <= width, (width, line)


def bash_output(n: int) -> str:
    return "\n".join(f"out {i}" for i in range(1, n + 1))


MESSAGES = [
    (
        messages.render_user,
        UserMessage(content=[TextContent(text=LONG), ImageContent(data="", mime_type="image/png")]),
    ),
    (messages.render_user, UserMessage(content="中文字符 " * 20)),
    (
        messages.render_assistant,
        AssistantMessage(
            content=[
                ThinkingContent(thinking="Consider the options. " * 10),
                TextContent(text="# Plan\n\n" + LONG + "\n\n```python\nprint('x' * 200)\n```"),
                ToolCall(id="c1", name="bash", arguments={"command": "ls"}),
            ],
            stop_reason="error",
            error_message="overloaded " * 10,
        ),
    ),
    (
        messages.render_bash_execution,
        BashExecutionMessage(
            command="make test " + LONG,
            output=bash_output(40) + "\n" + LONG,
            exit_code=2,
            truncated=True,
            full_output_path="/tmp/pi-bash-0123456789abcdef.log",
            exclude_from_context=True,
        ),
    ),
    (
        messages.render_compaction_summary,
        CompactionSummaryMessage(summary=LONG + "\n" + LONG, tokens_before=123456),
    ),
    (messages.render_branch_summary, BranchSummaryMessage(summary=LONG)),
    (messages.render_custom, CustomMessage(custom_type="reminder-" * 5, content=LONG)),
    (default_message, {"role": "somethingNew", "content": LONG}),
]


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("expanded", [False, True])
def test_messages_fit_every_width(width, expanded):
    for render, message in MESSAGES:
        assert_fits(render(message, rc(width, expanded=expanded)), width)


CALL_CASES = [
    ("bash", {"command": "pytest -q tests/ " + LONG, "timeout": 30}),
    ("bash", {"command": "echo one\necho two"}),
    ("edit", {"path": "/proj/src/" + "deep/" * 20 + "x.py", "edits": [{}, {}]}),
    ("write", {"path": "/proj/new.py", "content": "\n".join(f"line {i} {LONG}" for i in range(30))}),
    ("read", {"path": "/proj/a.py", "offset": 10, "limit": 20}),
    ("grep", {"pattern": "needle" * 10, "path": "src", "glob": "*.py"}),
    ("find", {"pattern": "**/*.py", "path": "/proj/src"}),
    ("ls", {"path": "/proj/" + "sub/" * 30}),
    ("unknown", {"x": LONG}),
]


def result_for(name: str) -> ToolResultView:
    if name == "edit":
        return ToolResultView(
            content=[TextContent(text="Replaced 1 block.")], details={"diff": DISPLAY_DIFF + LONG}
        )
    if name == "bash":
        text = (
            bash_output(30) + "\n" + LONG + "\n\n[Showing lines 1-30 of 99. Full output: /tmp/pi-bash-x.log]"
        )
        return ToolResultView(
            content=[TextContent(text=text)], details={"fullOutputPath": "/tmp/pi-bash-x.log"}
        )
    return ToolResultView(content=[TextContent(text=bash_output(25) + "\n" + LONG)])


def call_renderer(name):
    return getattr(tools, f"{name}_call", default_tool_call)


def result_renderer(name):
    return getattr(tools, f"{name}_result", default_tool_result)


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("expanded", [False, True])
def test_tool_calls_and_results_fit_every_width(width, expanded):
    for name, args in CALL_CASES:
        context = rc(width, expanded=expanded)
        for call in (
            ToolCallView(id="1", name=name, args=args, partial=True),
            ToolCallView(id="1", name=name, args=args, running=True, output=bash_output(12) + LONG),
        ):
            assert_fits(call_renderer(name)(call, context), width)
        call = ToolCallView(id="1", name=name, args=args)
        assert_fits(result_renderer(name)(call, result_for(name), context), width)
        error = ToolResultView(content=[TextContent(text="failed: " + LONG)], is_error=True)
        assert_fits(result_renderer(name)(call, error, context), width)


# --- user and assistant -------------------------------------------------------------------


def test_user_message_has_a_background_and_shows_images():
    out = messages.render_user(
        UserMessage(content=[TextContent(text="hi"), ImageContent(data="", mime_type="x")]), rc(30)
    )
    assert "\x1b[48;2;" in out
    assert "[image]" in strip_ansi(out)
    plain = messages.render_user(
        UserMessage(content="hi"), RenderContext(width=30, theme=default_theme(None))
    )
    assert strip_ansi(plain).startswith("> hi")
    assert "\x1b[48" not in plain


def test_assistant_streaming_stable_and_final():
    context = rc(60)
    text = "First paragraph.\n\nSecond paragraph is open"
    streaming = AssistantMessage(
        content=[ThinkingContent(thinking="hmm"), TextContent(text=text)], stop_reason="pending"
    )
    out = messages.render_assistant(streaming, context)
    plain = strip_ansi(out.text).split("\n")
    assert plain[0] == "hmm"
    # thinking (1 line), blank, the first paragraph are stable; the open paragraph is not
    assert out.stable == 3
    assert plain[out.stable - 1] == "First paragraph."
    done = messages.render_assistant(
        AssistantMessage(
            content=[ThinkingContent(thinking="hmm"), TextContent(text=text + ".")], stop_reason="stop"
        ),
        context,
    )
    assert done.stable == len(done.lines)
    # the same stream was reused from rc.state
    assert len(context.state["markdown_streams"]) == 1


def test_assistant_thinking_collapses_and_tool_calls_are_not_drawn():
    message = AssistantMessage(
        content=[
            ThinkingContent(thinking="secret reasoning\nmore"),
            TextContent(text="Answer"),
            ToolCall(id="1", name="bash", arguments={"command": "rm -rf build"}),
        ]
    )
    shown = strip_ansi(messages.render_assistant(message, rc(40)).text)
    assert "secret reasoning" in shown and "rm -rf" not in shown
    hidden = strip_ansi(messages.render_assistant(message, rc(40, show_thinking=False)).text)
    assert "secret" not in hidden
    assert hidden.split("\n")[0] == "Thinking…"


def test_assistant_error_and_abort():
    error = messages.render_assistant(
        AssistantMessage(
            content=[TextContent(text="partial")], stop_reason="error", error_message="rate limited"
        ),
        rc(),
    )
    assert RED + "Error: rate limited" in error.text
    aborted = messages.render_assistant(AssistantMessage(content=[], stop_reason="aborted"), rc())
    assert strip_ansi(aborted.text) == "Aborted"
    assert "\x1b[2" in aborted.text  # dim


# --- bash -------------------------------------------------------------------------------


def test_user_bash_shows_the_tail_unless_expanded():
    message = BashExecutionMessage(
        command="seq 30", output=bash_output(30), exit_code=1, exclude_from_context=True
    )
    short = strip_ansi(messages.render_bash_execution(message, rc()))
    assert short.startswith("$$ seq 30")
    assert "out 30" in short and "out 11" in short and "out 10\n" not in short
    assert "10 earlier lines" in short
    assert "exit code 1" in short
    assert "not sent to the model" in short
    full = strip_ansi(messages.render_bash_execution(message, rc(expanded=True)))
    assert "out 1\n" in full and "earlier lines" not in full
    ok = strip_ansi(messages.render_bash_execution(BashExecutionMessage(command="true", exit_code=0), rc()))
    assert "exit code" not in ok


def test_bash_tool_live_tail_and_result():
    call = ToolCallView(id="1", name="bash", args={"command": "make"}, running=True, output=bash_output(12))
    live = strip_ansi(tools.bash_call(call, rc()))
    assert live.split("\n")[0] == "$ make"
    assert [line.strip() for line in live.split("\n")[-5:]] == [f"out {i}" for i in range(8, 13)]
    done = ToolCallView(id="1", name="bash", args={"command": "make"})
    assert strip_ansi(tools.bash_call(done, rc())) == "$ make"
    text = (
        bash_output(30)
        + "\n\n[Showing lines 1-30 of 900. Full output: /tmp/full.log]\n\nCommand exited with code 3"
    )
    result = ToolResultView(
        content=[TextContent(text=text)], details={"fullOutputPath": "/tmp/full.log"}, is_error=True
    )
    short = strip_ansi(tools.bash_result(done, result, rc()))
    lines = [line.strip() for line in short.split("\n")]
    assert "out 21" in lines and "out 20" not in lines and "out 30" in lines
    assert "Command exited with code 3" in lines
    assert any("/tmp/full.log" in line for line in lines)
    expanded = strip_ansi(tools.bash_result(done, result, rc(expanded=True)))
    assert "out 1\n" in expanded + "\n" and "earlier lines" not in expanded


# --- edit / write / read / listings ------------------------------------------------------------


def test_edit_diff_is_coloured():
    result = ToolResultView(content=[TextContent(text="ok")], details={"diff": DISPLAY_DIFF})
    out = tools.edit_result(ToolCallView(id="1", name="edit", args={"path": "/proj/a.py"}), result, rc())
    lines = out.split("\n")
    added = next(line for line in lines if "x = 2" in line)
    removed = next(line for line in lines if "x = 1" in line)
    assert GREEN in added and RED in removed
    assert strip_ansi(added).strip().startswith("+2")  # line numbers kept
    title = strip_ansi(
        tools.edit_call(ToolCallView(id="1", name="edit", args={"path": "/proj/src/a.py"}), rc())
    )
    assert title == "edit src/a.py"


def test_unified_patch_is_coloured():
    from pi_host.lib.render import render_diff

    patch = "--- a.py\n+++ a.py\n@@ -1,2 +1,2 @@\n keep\n-old\n+new\n"
    out = render_diff(patch, THEME, 40).split("\n")
    assert GREEN in out[5] and RED in out[4]
    assert "\x1b[1" in out[0]


def test_write_shows_the_line_count_and_a_preview():
    content = "\n".join(f"line {i}" for i in range(1, 31)) + "\n"
    call = ToolCallView(id="1", name="write", args={"path": "/proj/new.txt", "content": content})
    out = tools.write_call(call, rc())
    plain = strip_ansi(out)
    assert plain.split("\n")[0] == "write new.txt (30 lines)"
    assert "line 10" in plain and "line 11" not in plain and "20 more lines" in plain
    assert GREEN in out
    assert "line 30" in strip_ansi(tools.write_call(call, rc(expanded=True)))
    assert tools.write_result(call, ToolResultView(content=[TextContent(text="Wrote new.txt")]), rc()) == ""


def test_read_summarises_unless_expanded():
    call = ToolCallView(id="1", name="read", args={"path": "/proj/a.py", "offset": 5, "limit": 3})
    assert strip_ansi(tools.read_call(call, rc())) == "read a.py:5-7"
    result = ToolResultView(content=[TextContent(text="alpha\nbeta\ngamma")])
    short = strip_ansi(tools.read_result(call, result, rc()))
    assert "3 lines" in short and "beta" not in short
    assert "beta" in strip_ansi(tools.read_result(call, result, rc(expanded=True)))


@pytest.mark.parametrize(
    ("name", "text", "summary", "args"),
    [
        ("grep", "a.py:1: needle\nb.py:7: needle", "2 matches", {"pattern": "needle"}),
        (
            "grep",
            "a.py-1- before\na.py:2: needle\na.py-3- after",
            "1 match",
            {"pattern": "needle", "context": 1},
        ),
        ("find", "a.py\nsrc/b.py\nsrc/c.py", "3 files", {"pattern": "*.py"}),
        ("ls", "a.py\nsrc/\n\n[500 entries limit reached. Use limit=1000 for more.]", "2 entries", {}),
    ],
)
def test_listings_count_and_list_only_when_expanded(name, text, summary, args):
    call = ToolCallView(id="1", name=name, args=args)
    result = ToolResultView(content=[TextContent(text=text)])
    short = strip_ansi(result_renderer(name)(call, result, rc()))
    assert short.strip().startswith(summary)
    assert "a.py" not in short
    assert "a.py" in strip_ansi(result_renderer(name)(call, result, rc(expanded=True)))
    if "limit reached" in text:
        assert "limit reached" in short


def test_grep_call_title():
    call = ToolCallView(id="1", name="grep", args={"pattern": "TODO", "path": "/proj/src", "glob": "*.py"})
    assert strip_ansi(tools.grep_call(call, rc())) == "grep /TODO/ in src (*.py)"


def test_fallbacks_for_unknown_tools_and_messages():
    call = ToolCallView(id="1", name="deploy", args={"env": "prod", "dry": True})
    assert strip_ansi(default_tool_call(call, rc())) == 'deploy {"env": "prod", "dry": true}'
    result = ToolResultView(content=[TextContent(text=bash_output(15))])
    short = strip_ansi(default_tool_result(call, result, rc()))
    assert "out 10" in short and "out 11" not in short and "5 more lines" in short
    error = default_tool_result(call, ToolResultView(content=[TextContent(text="nope")], is_error=True), rc())
    assert RED in error
    shown = strip_ansi(default_message(CustomMessage(custom_type="x", content="hello"), rc()))
    assert "custom: x" in shown and "hello" in shown


def test_summaries_collapse_unless_expanded():
    message = CompactionSummaryMessage(
        # summaries are Markdown: one list item a line (plain lines would join into a paragraph)
        summary="\n".join(f"- point {i}" for i in range(10)),
        tokens_before=45000,
    )
    short = strip_ansi(messages.render_compaction_summary(message, rc()))
    assert "Compacted 45,000 tokens" in short.split("\n")[0]
    assert "point 2" in short and "point 3" not in short
    assert "point 9" in strip_ansi(messages.render_compaction_summary(message, rc(expanded=True)))
    branch = strip_ansi(messages.render_branch_summary(BranchSummaryMessage(summary="went left"), rc()))
    assert "Branch summary" in branch and "went left" in branch
    assert messages.render_custom(CustomMessage(custom_type="x", content="y", display=False), rc()) == ""
