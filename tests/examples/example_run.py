"""Running ``pi`` as a subprocess with an ``extension_examples/`` plugin loaded by ``-e``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "extension_examples"


def example_module(package: str, module: str) -> str:
    """The package directory of an example, for ``-e`` (loaded without installing it)."""
    return str(EXAMPLES / package / module)


def pi(*args: str, script=None, env: dict | None = None, cwd=None) -> subprocess.CompletedProcess:
    full_env = dict(os.environ)
    if script is not None:
        full_env["PI_FAUX_SCRIPT"] = json.dumps(script)
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "pi_host", *args],
        input="",
        capture_output=True,
        text=True,
        env=full_env,
        cwd=cwd,
        timeout=60,
    )
