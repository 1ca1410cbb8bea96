"""Commands that need no model stay off the heavy imports (issue 2: start-up cost)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("httpx", "pydantic", "prompt_toolkit", "rich", "anyio", "jiter")

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
