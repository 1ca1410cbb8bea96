"""A session as one self-contained HTML page (``pi --export``, the interactive ``/export``).

The page holds everything inline (CSS, script, images as ``data:`` URIs) and fetches nothing, so
it opens offline from a file. It shows the session header, the conversation of the active branch
with Markdown rendered and code highlighted, and a sidebar tree of every entry that switches the
conversation to another branch. See docs/export.md.

Only session data goes into the page: no environment, settings or credentials.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from pi_host.lib.export.errors import ExportError
from pi_host.lib.export.reader import default_destination, read_session
from pi_host.lib.export.writing import write_page
from pi_host.lib.wire import well_formed

__all__ = ["ExportError", "default_destination", "export_session_file", "render_html", "write_page"]


def render_html(
    header: dict[str, Any],
    entries: list[dict[str, Any]],
    *,
    title: str | None = None,
    leaf_id: str | None = None,
    extra: dict[str, Any] | None = None,
) -> str:
    """The page for a session: ``header`` is the file's first line, ``entries`` the rest in file
    order. The active branch ends at ``leaf_id`` (default, and for an unknown id: the last entry,
    pi's leaf on load). ``title`` replaces the session name as the page title. The entries are
    not modified. The text is well-formed: a lone surrogate (pi writes one when a stream cut an
    emoji) shows as U+FFFD, so the page can be written as UTF-8. The session is also embedded
    as pi embeds it (base64 JSON in ``#session-data``), with ``extra`` keys added to it (pi's
    ``systemPrompt`` and ``tools``)."""
    from pi_host.lib.export.page import build_page

    return well_formed(build_page(header, entries, title=title, leaf_id=leaf_id, extra=extra))


def export_session_file(
    source: str,
    destination: str | None = None,
    *,
    warn: Callable[[str], None] | None = None,
) -> str:
    """Write the page of the session file ``source`` and return the path written.

    Without ``destination`` the file is ``pi-session-<source name minus .jsonl>.html`` in the
    current directory (pi's name); a destination that is a directory gets that name inside it.
    Malformed lines are skipped and reported once through ``warn``. Raises :class:`ExportError`
    (a sentence naming the path) when the source is missing or not a session file, or the
    destination cannot be written (the previous file is then kept, see :func:`write_page`)."""
    source = os.path.expanduser(source)
    session = read_session(source)
    if session.skipped and warn is not None:
        count = len(session.skipped)
        warn(
            f"{source}: skipped {count} malformed line{'s' if count > 1 else ''} (first: line {session.skipped[0]})"
        )
    target = os.path.expanduser(destination) if destination else default_destination(source)
    if os.path.isdir(target):
        target = os.path.join(target, default_destination(source))
    if os.path.exists(target) and os.path.samefile(target, source):
        raise ExportError(f"cannot export {source}: the output {target} is the session file itself")
    page = render_html(session.header, session.entries)
    try:
        write_page(target, page)
    except OSError as exc:
        raise ExportError(f"cannot write {target}: {exc.strerror or exc}") from None
    return target
