"""Streams session events as strict JSONL (reference §10.3)."""

from __future__ import annotations

import sys
from typing import Any

from pi_host.lib.wire import encode_line
from pi_host.loop import events


async def run_json(request: Any) -> int:
    out = getattr(request.stdout, "buffer", None) or sys.stdout.buffer
    session = await request.open_session()  # headless: dialogs answer their default

    closed = False

    def write(record: dict[str, Any]) -> None:
        nonlocal closed
        if closed:
            return
        try:
            out.write(encode_line(record))
            out.flush()
        except BrokenPipeError:
            # the reader went away (e.g. `| head`): stop the run instead of failing every event
            closed = True
            session.request_abort()

    if request.header is not None:
        write(request.header)
    for error in request.load_errors:
        write(events.extension_error(error))
    session.host.on_error(lambda failure: write(events.extension_error(failure)))
    session.subscribe(write)
    for index, prompt in enumerate(request.prompts):
        try:
            await session.prompt(prompt, images=request.images if index == 0 else None, source="json")
            await session.wait_for_idle()  # a command may have started a run of its own
        except Exception as exc:
            request.stderr.write(f"pi: {exc}\n")
            return 1
    return 0
