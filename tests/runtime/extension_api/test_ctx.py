"""The extension API on ``ctx`` (issue 17, item 3): pi's ``sendMessage``, ``sendUserMessage``,
``appendEntry``, labels, ``exec``, tools, model and thinking level, context usage, the event bus.

The first tests run the real ``pi -p`` with a plugin file (``-e``) and look at what the user sees:
stdout, stderr, the session file and what the faux model was sent (``{{userMessages}}``)."""

from __future__ import annotations

import asyncio

import pi_provider_faux
import pytest

from pi_host import hookimpl
from pi_host.protocol import CustomMessage
from pi_host.runtime.extension_api import as_custom_message, event_bus
from tests.support.sdk import SleepTool, new_session

# --- in process --------------------------------------------------------------------------------


class Steerer:
    """Sends a custom message when the first tool starts (the run is streaming then)."""

    __name__ = "steerer"

    def __init__(self, **options):
        self.options = options

    @hookimpl
    async def on_tool_execution_start(self, event, ctx):
        if event["toolName"] == "sleep":
            await ctx.send_message({"customType": "steered", "content": "steer note"}, **self.options)


def sleep_then_echo():
    return [
        {"toolCalls": [{"name": "sleep", "arguments": {"seconds": 0.05, "label": "z"}}]},
        {"text": "saw: {{userMessages}}"},
    ]


@pytest.mark.parametrize("deliver_as", ["steer", "follow_up"])
def test_send_message_while_streaming_is_delivered_in_the_run(deliver_as):
    async def main():
        pi_provider_faux.set_responses(sleep_then_echo() + [{"text": "follow-up answer"}])
        session = await new_session(SleepTool(), plugins=[Steerer(deliver_as=deliver_as, trigger_turn=True)])
        await session.prompt("go")
        texts = [getattr(m, "content", None) for m in session.messages if m.role == "custom"]
        return session.last_assistant().text(), texts

    answer, texts = asyncio.run(main())
    assert texts == ["steer note"]
    if deliver_as == "steer":
        assert answer == "saw: go | steer note"
    else:  # a follow-up waits until the run would stop, then goes with one more request
        assert answer == "follow-up answer"


def test_send_message_without_trigger_while_streaming_waits_for_the_run():
    async def main():
        pi_provider_faux.set_responses(sleep_then_echo())
        session = await new_session(SleepTool(), plugins=[Steerer(trigger_turn=False)])
        await session.prompt("go")
        return session.last_assistant().text(), [m.role for m in session.messages]

    answer, roles = asyncio.run(main())
    assert answer == "saw: go"  # the model never saw it during the run
    assert roles[-1] == "custom"


def test_send_message_with_trigger_turn_when_idle_starts_a_run():
    async def main():
        pi_provider_faux.set_responses([{"text": "answer: {{userMessages}}"}])
        session = await new_session()
        await session.ctx.send_message(CustomMessage(custom_type="x", content="wake up"), trigger_turn=True)
        await session.ctx.wait_for_idle()
        return session.last_assistant().text()

    assert asyncio.run(main()) == "answer: wake up"


def test_send_user_message_while_streaming_needs_deliver_as_and_is_reported():
    failures = []

    async def main():
        pi_provider_faux.set_responses(
            [{"text": "slow", "delayMs": 20}, {"text": "second: {{userMessages}}"}]
        )
        session = await new_session()
        session.host.on_error(failures.append)
        await session.prompt("first", wait=False)
        assert await session.ctx.send_user_message("no mode") is None
        assert await session.ctx.send_user_message("queued", deliver_as="follow_up") == "queued"
        await session.ctx.wait_for_idle()
        return session.last_assistant().text()

    assert asyncio.run(main()) == "second: first | queued"
    assert failures and failures[0]["event"] == "send_user_message"


def test_send_user_message_does_not_run_commands_unless_asked():
    ran = []

    class Commands:
        __name__ = "commands"

        @hookimpl
        def register_commands(self):
            from pi_host.plugins.registrations import Command

            return [Command("hello", lambda args, ctx: ran.append(args))]

    async def main():
        pi_provider_faux.set_responses([{"text": "model: {{userMessages}}"}])
        session = await new_session(plugins=[Commands()])
        assert await session.ctx.send_user_message("/hello there") == "started"
        await session.ctx.wait_for_idle()
        assert await session.ctx.send_user_message("/hello again", expand_prompt_templates=True) == "handled"
        return session.last_assistant().text()

    assert asyncio.run(main()) == "model: /hello there"
    assert ran == ["again"]


def test_set_model_without_a_key_is_false_and_keeps_the_model():
    async def main():
        session = await new_session()
        keyless = next(m for m in session.registry.models() if session.registry.needs_key(m.provider))
        ok = await session.ctx.set_model(keyless)
        return ok, session.model.provider

    assert asyncio.run(main()) == (False, "faux")


def test_event_bus_is_one_per_host_and_unsubscribes():
    async def main():
        session = await new_session()
        bus = session.ctx.events
        assert bus is event_bus(session.host)
        seen = []
        off = bus.on("topic", seen.append)
        bus.emit("topic", 1)
        off()
        off()
        bus.emit("topic", 2)
        return seen

    assert asyncio.run(main()) == [1]


def test_an_async_bus_handler_failure_is_reported():
    failures = []

    async def main():
        session = await new_session()
        session.host.on_error(failures.append)

        async def handler(data):
            raise RuntimeError(f"bad {data}")

        session.ctx.events.on("t", handler, owner="mine")
        session.ctx.events.emit("t", 5)
        await asyncio.sleep(0.01)

    asyncio.run(main())
    assert failures[0]["plugin"] == "mine" and "bad 5" in failures[0]["error"]


def test_as_custom_message_accepts_pi_shapes():
    message = as_custom_message({"customType": "t", "content": None, "display": False})
    assert message.custom_type == "t" and message.content == [] and message.display is False
    with pytest.raises(ValueError):
        as_custom_message({"content": "x"})
