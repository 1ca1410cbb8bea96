"""``pi --export <session.jsonl> [out.html]``: one self-contained HTML file, then exit."""

from __future__ import annotations

import sys


def run_export(source: str, destination: str | None) -> int:
    from pi_host.lib.export import ExportError, export_session_file

    try:
        written = export_session_file(source, destination)
    except ExportError as exc:
        sys.stderr.write(f"pi: {exc}\n")
        return 1
    sys.stdout.write(f"Exported to {written}\n")
    return 0
