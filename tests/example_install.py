"""Installing an ``extension_examples/`` package the way a user would, into a private directory."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "extension_examples"


def pip_install_example(name: str, target: Path) -> Path:
    """``pip install ./extension_examples/<name>`` into ``target`` (offline: no deps, no build
    isolation); put ``target`` on ``sys.path`` or ``PYTHONPATH`` to use it."""
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation"]
        + ["--target", str(target), str(EXAMPLES / name)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return target
