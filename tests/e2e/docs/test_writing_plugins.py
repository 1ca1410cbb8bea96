"""The examples of docs/writing-plugins.md, copied into files and run with the real ``pi`` command
as a reader would: the docs stay true."""

from __future__ import annotations

import glob
import json
import re

from tests.support.paths import DOCS
from tests.support.pi import run_pi

DOC = DOCS / "writing-plugins.md"


def example(heading: str) -> str:
    """The first python block after ``## <heading>``."""
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index(f"## {heading}") :]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_complete_plugin_blocks_sudo(isolated_environment, tmp_path):
    plugin = tmp_path / "my_tools.py"
    plugin.write_text(example("A complete plugin"))
    script = [
        {"toolCalls": [{"name": "bash", "arguments": {"command": "sudo ls"}}]},
        {"text": "{{lastToolResult}}"},
    ]
    out = run_pi(
        "-p",
        "--no-session",
        "--model",
        "faux/faux-1",
        "-e",
        str(plugin),
        "go",
        cwd=isolated_environment["work"],
        script=script,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "no sudo here"
    listing = run_pi("plugins", "--json", "-e", str(plugin), cwd=isolated_environment["work"])
    row = next(r for r in json.loads(listing.stdout) if r["name"] == "my_tools")
    assert row["hooks"] == ["on_tool_call", "register_tools"]


def test_the_mode_example_is_selectable(isolated_environment, tmp_path):
    plugin = tmp_path / "shout_mode.py"
    plugin.write_text(example("Writing a mode"))
    out = run_pi(
        "--mode",
        "shout",
        "--no-session",
        "--model",
        "faux/faux-1",
        "-e",
        str(plugin),
        "hello",
        cwd=isolated_environment["work"],
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout == "FAUX: HELLO\n"


def test_the_command_example_names_the_session(isolated_environment, tmp_path):
    plugin = tmp_path / "rename.py"
    plugin.write_text(example("Commands and flags"))
    work, agent = isolated_environment["work"], isolated_environment["agent"]
    out = run_pi("-p", "--model", "faux/faux-1", "-e", str(plugin), "hi", "/rename my work", cwd=work)
    assert out.returncode == 0, out.stderr
    [path] = glob.glob(str(agent / "sessions" / "*" / "*.jsonl"))
    entries = [json.loads(line) for line in open(path, encoding="utf-8")]
    assert [e["name"] for e in entries if e["type"] == "session_info"] == ["my work"]
    assert "--loud" in run_pi("--help", "-e", str(plugin), cwd=work).stdout
