"""The examples of docs/interactive.md, as a user would copy them: the ``ctx.ui`` command runs
headless in print mode (dialogs answer their default) and in the terminal; the renderers draw."""

from __future__ import annotations

import importlib.util
import re

from tests.support.paths import DOCS, REPO

DOC = DOCS / "interactive.md"


def example(heading: str) -> str:
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index(f"## {heading}") :]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_renderer_example_draws_within_the_width(tmp_path):
    from pi_host.lib.render import RenderContext, ToolCallView, ToolResultView, strip_ansi, visible_width
    from pi_host.plugins.registrations import MessageRenderer, ToolRenderer
    from pi_host.protocol.messages import CustomMessage

    path = tmp_path / "renderers.py"
    path.write_text(example("Writing a renderer"))
    spec = importlib.util.spec_from_file_location("doc_renderers", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    message_renderer, tool_renderer = module.register_renderers()
    assert isinstance(message_renderer, MessageRenderer) and message_renderer.custom_type == "deploy"
    assert isinstance(tool_renderer, ToolRenderer) and tool_renderer.tool == "run_tests"
    rc = RenderContext(width=30)
    drawn = message_renderer.render(CustomMessage(custom_type="deploy", content="shipped " * 10), rc)
    assert "shipped" in strip_ansi(drawn) and all(visible_width(line) <= 30 for line in drawn.split("\n"))
    call = ToolCallView(id="1", name="run_tests", args={"path": "tests/"})
    assert strip_ansi(tool_renderer.render_call(call, rc)) == "tests tests/"
    result = ToolResultView(content=[], details=None, is_error=False, text="collected 3\n3 passed")
    assert strip_ansi(tool_renderer.render_result(call, result, rc)) == "3 passed"


def test_every_built_in_command_is_documented_in_the_guide_and_the_readme():
    from pi_mode_interactive.commands import BUILTIN

    guide = DOC.read_text(encoding="utf-8")
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    missing_guide = [name for name in BUILTIN if f"| `/{name}" not in guide]
    missing_readme = [name for name in BUILTIN if f"/{name}" not in readme]
    assert (missing_guide, missing_readme) == ([], [])
