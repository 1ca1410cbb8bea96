"""The public libraries stay light in a fresh interpreter: ``import pi_host.ai`` /
``pi_host.agent`` load nothing heavy (names load on first use), and using them loads no pydantic
(the protocol's classes are plain records), CLI, session, plugin machinery or terminal code (figures: docs/performance.md)."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = (
    "pydantic",
    "typer",
    "prompt_toolkit",
    "rich",
    "pluggy",
    "pi_host.session",
    "pi_host.cli",
    "pi_host.runtime",
)
PROBE = """
import json, sys
{code}
heavy = {heavy!r}
print(json.dumps(sorted({{m.split('.')[0] if not m.startswith('pi_host') else '.'.join(m.split('.')[:2])
                         for m in sys.modules if m.startswith(heavy)}})))
"""


def loaded(code: str) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(code=code, heavy=HEAVY)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(out.stdout)


def test_importing_the_packages_loads_nothing_heavy():
    assert loaded("import pi_host.ai, pi_host.agent") == []


def test_using_the_names_loads_no_cli_session_or_terminal_code():
    code = (
        "from pi_host.ai import Context, UserMessage, stream, complete, get_model, tool\n"
        "from pi_host.agent import Agent, define_tool, JsonlStore\n"
    )
    assert loaded(code) == []  # the protocol's classes are plain records (pi_host/_record.py)
