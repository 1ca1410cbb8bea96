"""Commands that need no model stay off the heavy imports (issue 2: start-up cost)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("httpx", "pydantic", "prompt_toolkit", "rich", "anyio", "jiter", "mcp", "mcp_types")

PROBE = """
import contextlib, io, json, sys
from pi_host.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    try:
        main({argv!r})
    except SystemExit:
        pass
print(json.dumps(sorted({{name.split('.')[0] for name in sys.modules}})))
"""


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["plugins"]])
def test_cheap_commands_do_not_import_heavy_libraries(argv):
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(argv=argv)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    loaded = set(json.loads(out.stdout.strip().splitlines()[-1]))
    assert not loaded & set(HEAVY), f"{argv} imported {sorted(loaded & set(HEAVY))}"
    if argv == ["--version"]:
        assert not loaded & {"pluggy", "typer", "asyncio"}


RUN_PROBE = """
import atexit, json, sys
def dump():
    with open({out!r}, "w") as handle:
        json.dump(sorted(sys.modules), handle)
atexit.register(dump)
from pi_host.cli import main
sys.exit(main({argv!r}))
"""


@pytest.mark.parametrize("mode", [["-p"], ["--mode", "json"]])
def test_print_and_json_runs_do_not_import_the_interactive_interface(mode, isolated_environment, tmp_path):
    argv = ["--model", "faux/faux-1", "--no-session", *mode, "hello"]
    modules = tmp_path / "modules.json"
    out = subprocess.run(
        [sys.executable, "-c", RUN_PROBE.format(argv=argv, out=str(modules))],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=isolated_environment["work"],
    )
    assert out.returncode == 0, out.stderr
    assert "faux" in out.stdout  # the run really happened
    loaded = set(json.loads(modules.read_text()))
    tops = {name.split(".")[0] for name in loaded}
    # the protocol's classes are plain records: pydantic itself stays out of a -p/json run (only
    # the stand-in for its plugin loader, pi_host/cli/pydantic_plugins.py, is registered)
    assert not {"pydantic", "pydantic_core"} & loaded, sorted(n for n in loaded if n.startswith("pydantic"))
    assert not tops & {"prompt_toolkit", "rich", "pygments", "markdown_it"}, sorted(tops)
    assert not tops & {"mcp", "mcp_types"}, "no mcp.json: the MCP SDK must not load"
    assert "pi_mcp" in loaded and "pi_mcp.manager" not in loaded
    # the mode plugin itself is registered (its entry point loads), its application is not
    assert "pi_mode_interactive" in loaded and "pi_mode_interactive.app" not in loaded
