"""pi-custom-footer: a one-line footer and a bash renderer built on ``pi_host.lib.render`` only.
Drawn directly, then installed by the real ``pi install`` and seen in a real terminal."""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from types import SimpleNamespace

from pi_host import ToolResult
from pi_host.lib.render import (
    FooterInfo,
    RenderContext,
    Theme,
    ToolCallView,
    ToolResultView,
    strip_ansi,
    visible_width,
)
from pi_host.plugins.loading import load_file_plugin
from pi_host.protocol import TextContent
from tests.support.examples import example_module

FOOTER = example_module("pi-custom-footer", "pi_custom_footer")
THEME = Theme(color_system="truecolor")
ERROR_SGR = "38;2;204;102;102"  # THEME.error, #cc6666
SUCCESS_SGR = "38;2;181;189;104"  # THEME.success, #b5bd68


def load_footer():
    """A fresh copy of the plugin (its timings are per module)."""
    return load_file_plugin(FOOTER)


def rc(width: int = 100, expanded: bool = False) -> RenderContext:
    return RenderContext(width=width, theme=THEME, expanded=expanded)


INFO = FooterInfo(
    cwd="/work/project",
    git_branch="feature/x",
    session_name="refactor",
    provider="loop",
    model="loop-1",
    input_tokens=12_345,
    output_tokens=678,
    cost=0.0421,
    context_tokens=32_000,
    context_window=128_000,
    statuses={"lint": "lint ok", "custom-footer.timer": "turn 2.5s"},
)


def plain_footer(plugin, info: FooterInfo, width: int) -> str:
    return strip_ansi(plugin.render_footer(info, rc(width)))


# --- the footer -----------------------------------------------------------------------------


def test_the_footer_is_one_line_with_every_part_in_order():
    plugin = load_footer()
    assert plain_footer(plugin, INFO, 120) == (
        "loop/loop-1 · ↑12k ↓678 · $0.042 · ctx 25% · turn 2.5s · ⎇ feature/x · “refactor” · lint ok"
    )
    thinking = FooterInfo(provider="p", model="m", reasoning=True, thinking_level="high")
    assert plain_footer(plugin, thinking, 80) == "p/m (high) · ↑0 ↓0 · $0.000"


def test_a_narrow_footer_drops_the_least_useful_parts_first():
    plugin = load_footer()
    assert plain_footer(plugin, INFO, 60) == "loop/loop-1 · ↑12k ↓678 · $0.042 · turn 2.5s · ⎇ feature/x"
    assert plain_footer(plugin, INFO, 40) == "loop/loop-1 · ↑12k ↓678 · $0.042"
    assert plain_footer(plugin, INFO, 8) == "loop/lo…"
    for width in range(1, 130):
        text = plugin.render_footer(INFO, rc(width))
        assert "\n" not in text and visible_width(text) <= width, width


def test_the_context_share_turns_red_near_the_window():
    plugin = load_footer()
    full = FooterInfo(provider="p", model="m", context_tokens=120_000, context_window=128_000)
    assert f"\x1b[{ERROR_SGR}mctx 94%" in plugin.render_footer(full, rc(80))


def test_the_turn_time_is_published_as_a_status_that_redraws_the_footer():
    plugin = load_footer()
    statuses: dict[str, str] = {}
    ui = SimpleNamespace(set_status=lambda key, text: statuses.__setitem__(key, text))
    ctx = SimpleNamespace(ui=ui, has_ui=True, mode="print")  # not interactive: no ticking task
    plugin.on_agent_start({}, ctx)
    plugin.on_turn_start({}, ctx)
    assert re.fullmatch(r"turn 0\.\ds…", statuses[plugin.STATUS_KEY])  # running
    plugin.on_turn_end({}, ctx)
    plugin.on_agent_settled({}, ctx)
    assert re.fullmatch(r"turn 0\.\ds", statuses[plugin.STATUS_KEY])
    footer = plain_footer(plugin, FooterInfo(provider="p", model="m", statuses=statuses), 80)
    assert footer == f"p/m · ↑0 ↓0 · $0.000 · {statuses[plugin.STATUS_KEY]}"  # once, in its place


# --- the bash tool --------------------------------------------------------------------------


def bash_view(command: str, call_id: str = "call-1") -> ToolCallView:
    return ToolCallView(id=call_id, name="bash", args={"command": command})


def output(lines: int, status: str | None = None) -> str:
    text = "\n".join(f"out-{n}" for n in range(1, lines + 1))
    return text + (f"\n\n{status}" if status else "")


def test_a_failed_command_shows_its_last_lines_in_red_and_its_exit_code():
    plugin = load_footer()
    call = bash_view("make test")
    result = ToolResultView(text=output(9, "Command exited with code 2"), is_error=True)
    drawn = plugin.render_bash_result(call, result, rc(60))
    assert strip_ansi(drawn).splitlines() == [
        "│ … 3 earlier lines (ctrl+o to expand)",
        *[f"│ out-{n}" for n in range(4, 10)],
        "└ ✗ exit 2",
    ]
    assert drawn.splitlines()[-1].startswith(f"\x1b[1;{ERROR_SGR}m")
    assert all(line.startswith(f"\x1b[{ERROR_SGR}m│ ") for line in drawn.splitlines()[:-1])
    expanded = strip_ansi(plugin.render_bash_result(call, result, rc(60, expanded=True)))
    assert "│ out-1" in expanded and "earlier lines" not in expanded


def test_a_successful_command_is_green_and_the_call_is_a_dollar_line():
    plugin = load_footer()
    call = bash_view("ls -la\necho two")
    header = plugin.render_bash_call(call, rc(40))
    assert strip_ansi(header) == "$ ls -la (+1 lines)"
    drawn = plugin.render_bash_result(call, {"content": [{"type": "text", "text": "a\nb\n"}]}, rc(40))
    assert strip_ansi(drawn).splitlines() == ["│ a", "│ b", "└ ✓ exit 0"]
    assert drawn.splitlines()[-1].startswith(f"\x1b[{SUCCESS_SGR}m")


def test_the_exit_code_and_duration_come_from_the_tool_execution_hooks():
    plugin = load_footer()
    result = ToolResult(
        content=[TextContent(text="partial\n")], structured_content={"exit_code": 4, "output": "partial\n"}
    )
    plugin.on_tool_execution_start({"toolCallId": "c9", "toolName": "bash", "args": {}}, None)
    plugin.on_tool_execution_end(
        {"toolCallId": "c9", "toolName": "bash", "result": result, "isError": True, "durationMs": 1530}, None
    )
    drawn = strip_ansi(plugin.render_bash_result(bash_view("x", "c9"), ToolResultView.of(result), rc(40)))
    assert drawn.splitlines()[-1] == "└ ✗ exit 4 · 1.5s"
    running = bash_view("sleep 5", "c10")
    running.running, running.output = True, "l1\nl2\nl3\nl4\n"
    plugin.on_tool_execution_start({"toolCallId": "c10", "toolName": "bash", "args": {}}, None)
    live = strip_ansi(plugin.render_bash_call(running, rc(40))).splitlines()
    assert re.fullmatch(r"\$ sleep 5  running 0\.\ds", live[0]) and live[1:] == ["┆ l2", "┆ l3", "┆ l4"]


def test_the_drawing_module_uses_only_the_public_render_api():
    plugin = load_footer()
    render = importlib.import_module(plugin.__name__ + ".render")
    source = Path(render.__file__).read_text() + Path(plugin.__file__).read_text()
    imports = set(re.findall(r"^\s*(?:from|import) (pi_host[\w.]*)", source, re.M))
    assert imports == {"pi_host", "pi_host.lib.render", "pi_host.plugins.registrations"}


# --- the user's boundary --------------------------------------------------------------------
