"""A store that cannot write (a full disk, a file gone) must not stop the conversation: the run
ends as usual, each lost message is said in one line, and what was saved stays a valid tree."""

from __future__ import annotations

import asyncio

from pi_host.lib.sessions.store import MemoryStore, SessionWriteError
from tests.support.context import make_session


class FullDisk(MemoryStore):
    """Writes everything but messages, as a disk that filled up after the session started."""

    def append(self, entry):
        if entry["type"] == "message":
            raise SessionWriteError("Cannot write to session file /x.jsonl: No space left on device")
        return super().append(entry)


async def test_a_message_that_cannot_be_saved_is_said_and_the_run_ends(isolated_environment):
    work = isolated_environment["work"]
    lines: list[str] = []
    events: list[str] = []
    session = await make_session(work, store=FullDisk(str(work)), warn=lines.append)
    session.subscribe(lambda event: events.append(event["type"]))
    try:
        await asyncio.wait_for(session.prompt("hello"), timeout=10)
        assert session.last_assistant() is not None
        assert not session.is_streaming
        assert events[-2:] == ["agent_end", "agent_settled"]
        assert lines == [  # once, not once per message
            "Cannot write to session file /x.jsonl: No space left on device"
            " (messages are not saved until the file can be written again)"
        ]
        assert [e["type"] for e in session.store.entries()] == ["model_change", "thinking_level_change"]
    finally:
        await session.close()
