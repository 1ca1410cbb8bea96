"""The examples of docs/interactive.md, as a user would copy them: the ``ctx.ui`` command runs
headless in print mode (dialogs answer their default) and in the terminal; the renderers draw."""

from __future__ import annotations

import re

from tests.support.paths import DOCS
from tests.support.pi import run_pi

DOC = DOCS / "interactive.md"


def example(heading: str) -> str:
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index(f"## {heading}") :]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_ctx_ui_example_runs_headless_in_print_mode(isolated_environment, tmp_path):
    plugin = tmp_path / "deploy.py"
    plugin.write_text(example("`ctx.ui` for plugins"))
    out = run_pi(
        "--model",
        "faux/faux-1",
        "--no-session",
        "-e",
        str(plugin),
        "-p",
        "/deploy",
        cwd=isolated_environment["work"],
    )
    assert out.returncode == 0, out.stderr
    assert out.stderr == "" and out.stdout == ""  # confirm said no at once; notify shows nothing headless
