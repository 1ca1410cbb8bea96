"""The module paths of pi-host 0.1 (documented for plugin authors) still import, as the very
module objects of the layered layout, in a fresh interpreter as a plugin would meet them."""

from __future__ import annotations

import json
import subprocess
import sys

from pi_host._aliases import MOVED, current_name

PROBE = """
import importlib, json, sys
pairs = json.loads(sys.argv[1])
result = {}
for old, new in pairs:
    a = importlib.import_module(old)
    b = importlib.import_module(new)
    result[old] = [a is b, b.__spec__.name]
print(json.dumps(result))
"""

SUBMODULES = [
    "pi_host.llm.http",
    "pi_host.llm.builder",
    "pi_host.toolkit.truncate",
    "pi_host.compaction.compactor",
    "pi_host.agent.loop",
    "pi_host.llm.credentials",
    "pi_host.llm.overflow",
]


def test_every_old_path_is_the_same_module():
    pairs = [(old, current_name(old)) for old in [*MOVED, *SUBMODULES]]
    out = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(pairs)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    result = json.loads(out.stdout)
    assert {old: same for old, (same, _spec) in result.items() if not same} == {}
    # the real module keeps its own spec (the alias must not rename it)
    assert all(spec == current_name(old) for old, (_same, spec) in result.items())


def test_old_from_imports_of_the_docs_work():
    code = (
        "from pi_host.tools import Tool, ToolResult\n"
        "from pi_host.registrations import Command, Mode\n"
        "from pi_host.session_store import TreeStore, MemoryStore, SessionContext\n"
        "from pi_host.llm.http import open_sse\n"
        "from pi_host import paths, hookimpl\n"
        "import pi_host.loop.tools as tools\n"
        "assert Tool is tools.Tool and paths.__name__ == 'pi_host.config.paths'\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "ok", out.stderr
