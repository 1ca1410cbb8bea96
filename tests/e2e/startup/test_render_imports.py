"""Streaming Markdown: finished blocks render once, the output matches a one-shot render, and
``stable`` lines never change."""

from __future__ import annotations


def test_importing_does_not_load_rich():
    import subprocess
    import sys

    probe = (
        "import sys, pi_host.lib.render as r; r.MarkdownStream; r.render_markdown; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'rich', 'pygments', 'markdown_it'}))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
