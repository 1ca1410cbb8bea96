"""What an SDK listener receives and what happens when it raises (pi's listeners get plain
camelCase objects; pi-host's events are dicts with pi's keys and their messages read the same way)."""

from __future__ import annotations

import pi_host


async def test_a_listener_reads_events_with_pis_field_names():
    session = await pi_host.create_session(model="faux/faux-1", settings={})
    seen: list[tuple[str, str, str]] = []

    def listener(event):
        if event["type"] == "message_end" and event["message"]["role"] == "assistant":
            message = event["message"]
            seen.append(
                (message["stopReason"], message["content"][0]["text"], message.get("errorMessage", "-"))
            )

    session.subscribe(listener)
    try:
        await session.prompt("hi")
    finally:
        await session.close()
    assert seen == [("stop", "faux: hi", "-")]


async def test_a_raising_listener_is_named_in_one_line_and_the_run_goes_on(capsys):
    session = await pi_host.create_session(model="faux/faux-1", settings={})

    def breaks_on_updates(event):
        if event["type"] == "message_update":
            raise KeyError("assistantMessageEvent")

    session.subscribe(breaks_on_updates)
    try:
        await session.prompt("hi")
        assert session.last_assistant().text() == "faux: hi"
    finally:
        await session.close()
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines == [
        "pi: plugin 'listener tests.sdk.test_listeners.test_a_raising_listener_is_named_in_one_line_and_the_run_goes_on"
        ".<locals>.breaks_on_updates' failed in message_update: KeyError: 'assistantMessageEvent'"
    ]
