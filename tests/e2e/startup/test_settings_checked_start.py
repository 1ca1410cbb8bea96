"""A start whose settings.json is unchanged since a start that checked it does not import
pydantic (pi_host/config/settings_checked.py)."""

from __future__ import annotations

import json
import subprocess
import sys


def test_a_start_with_unchanged_settings_does_not_import_pydantic(isolated_environment):
    agent = isolated_environment["agent"]
    (agent / "settings.json").write_text(json.dumps({"defaultThinkingLevel": "low", "quietStartup": True}))
    probe = (
        "import atexit, sys\n"
        "atexit.register(lambda: print('PYDANTIC' if 'pydantic_core' in sys.modules else 'NONE', file=sys.stderr))\n"
        "from pi_host.cli import main\n"
        "sys.exit(main(['--model', 'faux/faux-1', '--no-session', '-p', 'hi']))\n"
    )
    seen = []
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "-c", probe],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=isolated_environment["work"],
        )
        assert done.returncode == 0 and "faux" in done.stdout, done.stderr
        seen.append(done.stderr.strip().splitlines()[-1])
    assert seen[1] == "NONE"
    assert seen[0] in ("PYDANTIC", "NONE")  # NONE when the shared test cache already knew it
