"""The default session store: pi's v3 JSONL files (reference §6).

Thin on purpose: the implementation is imported only when a session is opened or listed.
"""

from pi_host import hookimpl
from pi_host.plugins.registrations import SessionStoreFactory


def _open(options):
    from pi_session_jsonl.resolve import open_store

    return open_store(options)


def _list(cwd, agent_dir, session_dir=None, all_dirs=False, *, quick=False, progress=None, warn=None):
    """``quick=True``: the session picker's rows (no ``all_messages_text``; rows offer
    ``last_messages()`` and ``text_matches()``), read newest file first, with
    ``progress(done, total, new_rows)`` along the way (False stops) and ``warn(line)`` for the files
    skipped (default: stderr)."""
    from pi_session_jsonl.resolve import list_sessions

    return list_sessions(cwd, agent_dir, session_dir, all_dirs, quick=quick, progress=progress, warn=warn)


@hookimpl
def register_session_stores():
    return [SessionStoreFactory(name="jsonl", open=_open, list_sessions=_list)]
