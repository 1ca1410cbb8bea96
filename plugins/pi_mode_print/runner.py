"""Runs each prompt in turn and prints the last assistant text (reference §10.2)."""

from __future__ import annotations

from typing import Any


async def run_print(request: Any) -> int:
    if not request.prompts:
        request.stderr.write("pi: no prompt given (pass a message, pipe stdin, or use @file)\n")
        return 1
    session = await request.open_session()  # headless: dialogs answer their default
    for index, prompt in enumerate(request.prompts):
        images = request.images if index == 0 else None
        try:
            await session.prompt(prompt, images=images, source="print")
            await session.wait_for_idle()  # a command may have started a run of its own
        except Exception as exc:
            request.stderr.write(f"pi: {exc}\n")
            return 1
    final = session.last_assistant()
    if final is None:
        return 0
    if final.stop_reason in ("error", "aborted"):
        if not getattr(request, "interrupted", False):  # a signal: the CLI says so in one line
            request.stderr.write(f"pi: {final.error_message or final.stop_reason}\n")
        return 1
    from pi_host.lib.wire import well_formed

    text = well_formed(final.text())  # a lone surrogate cannot be written as UTF-8: U+FFFD, as Node does
    request.stdout.write(text + "\n")
    request.stdout.flush()
    if final.stop_reason == "length":
        request.stderr.write("pi: the answer was cut off at the output token limit\n")
        return 1
    return 0
