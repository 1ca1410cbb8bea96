"""Errors the session raises to its callers."""


class SessionError(Exception):
    """A prompt or operation the session cannot accept (streaming without a behaviour, no model,
    no compaction support...). The message is one line meant for the user."""
