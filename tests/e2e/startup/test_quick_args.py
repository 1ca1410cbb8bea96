"""The typer-free reader of plain command lines agrees with the typer app on every option."""

from __future__ import annotations

import subprocess
import sys


def test_a_plain_run_does_not_import_typer_or_click(tmp_path):
    code = (
        "import sys; from pi_host.cli.args import parse; "
        "parse(['--model', 'faux/faux-1', '-p', 'hi'], []); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('typer', 'click')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
