"""``pi_render_builtin`` registers through the plugin machinery, cheaply."""

from __future__ import annotations

import subprocess
import sys


def test_importing_the_plugin_loads_no_heavy_library():
    probe = (
        "import sys, pi_render_builtin; pi_render_builtin.register_renderers(); "
        "print(sorted({m.split('.')[0] for m in sys.modules} & "
        "{'rich', 'pygments', 'markdown_it', 'prompt_toolkit', 'pydantic'}))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
