"""``pi --export <session.jsonl> [out.html]``: one self-contained HTML file, then exit.

Output as pi prints it (``Exported to: <path>``); any failure is one ``pi: ...`` line on stderr
and exit status 1. The export library is imported only here, so other commands never pay for it.
"""

from __future__ import annotations

import sys


def run_export(source: str, destination: str | None) -> int:
    from pi_host.lib.export import ExportError, export_session_file

    def warn(text: str) -> None:
        sys.stderr.write(f"pi: warning: {text}\n")

    try:
        written = export_session_file(source, destination, warn=warn)
    except ExportError as exc:
        sys.stderr.write(f"pi: {exc}\n")
        return 1
    sys.stdout.write(f"Exported to: {written}\n")
    return 0
