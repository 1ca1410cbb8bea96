"""Unit tests of the ``ctx`` additions (issue 17, item 3): exec's env and input, agent_dir,
compact's callbacks, runtime subscriptions, runtime providers, session control without a mode,
sub-sessions, argument completion and plugin shortcuts."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from pi_host import hookimpl
from pi_host.plugins.registrations import Command, Shortcut
from pi_host.runtime.switching import SessionControl, SwitchError
from tests.support.sdk import new_session


def run(coroutine):
    return asyncio.run(coroutine)


def failures(session) -> list[dict]:
    found: list[dict] = []
    session.host.on_error(found.append)
    return found


def test_agent_dir_cwd_and_session_file_are_public(isolated_environment):
    async def main():
        session = await new_session(cwd=str(isolated_environment["work"]), store_options={"no_session": True})
        ctx = session.ctx
        values = ctx.agent_dir, ctx.cwd, ctx.session_file, ctx.session_id
        await session.close()
        return values

    agent_dir, cwd, session_file, session_id = run(main())
    assert agent_dir == str(isolated_environment["agent"])
    assert cwd == str(isolated_environment["work"])
    assert session_file is None and session_id


def test_compact_takes_pis_callbacks_and_can_still_be_awaited():
    async def main():
        session = await new_session()
        ctx = session.ctx
        errors: list[BaseException] = []
        done: list[object] = []
        task = ctx.compact(on_complete=done.append, on_error=errors.append)
        assert isinstance(task, asyncio.Future)  # started without waiting
        await task
        with pytest.raises(Exception, match="Nothing to compact"):
            await ctx.compact("focus")
        await session.close()
        return errors, done

    errors, done = run(main())
    assert done == [] and len(errors) == 1 and "Nothing to compact" in str(errors[0])


def test_on_subscribes_unsubscribes_and_isolates_a_failing_handler():
    async def main():
        session = await new_session()
        ctx = session.ctx
        reported = failures(session)
        seen: list[str] = []
        off = ctx.on("agent_end", lambda event: seen.append(event["type"]))
        ctx.on("turn_start", lambda event, ctx: 1 / 0)
        ctx.on("agent_end", lambda event: seen.append("second"))
        await session.prompt("one")
        off()
        await session.prompt("two")
        with pytest.raises(ValueError, match="did you mean 'agent_end'"):
            ctx.on("agent_ned", print)
        await session.close()
        return seen, reported

    seen, reported = run(main())
    assert seen == ["agent_end", "second", "second"]
    assert [(f["event"], f["plugin"]) for f in reported] == [("turn_start", __name__)]
    assert "ZeroDivisionError" in reported[0]["error"]


def test_a_runtime_handler_return_follows_the_event_rule():
    async def main():
        session = await new_session()
        off = session.ctx.on(
            "input", lambda event: {"action": "handled"} if "secret" in event["text"] else None
        )
        handled = await session.prompt("a secret")
        off()
        started = await session.prompt("a secret")
        await session.close()
        return handled, started

    assert run(main()) == ("handled", "started")  # the stop rule of input, then nothing


def test_register_provider_refuses_what_the_catalog_cannot_use_and_keeps_it_unchanged():
    async def main():
        session = await new_session()
        ctx = session.ctx
        before = [m.key for m in session.registry.models()]
        with pytest.raises(ValueError, match="No provider plugin implements API 'nope'"):
            ctx.register_provider("bad", {"api": "nope", "baseUrl": "http://x", "models": [{"id": "a"}]})
        with pytest.raises(ValueError, match="needs baseUrl"):
            ctx.register_provider("bad", {"api": "openai-completions", "models": [{"id": "a"}]})
        with pytest.raises(ValueError, match="without '/'"):
            ctx.register_provider("a/b", {})
        after = [m.key for m in session.registry.models()]
        keys = ctx.register_provider(
            "rt",
            {
                "api": "openai-completions",
                "baseUrl": "http://127.0.0.1:9/v1",
                "apiKey": "k",
                "models": [{"id": "m"}],
            },
        )
        assert await ctx.set_model("rt/m") and ctx.model.key == "rt/m"
        with pytest.raises(ValueError, match="in use by the current model rt/m"):
            ctx.unregister_provider("rt")
        await ctx.set_model("faux/faux-1")
        removed, again = ctx.unregister_provider("rt"), ctx.unregister_provider("rt")
        await session.close()
        return before, after, keys, removed, again, session.registry.find("rt", "m")

    before, after, keys, removed, again, found = run(main())
    assert before == after and keys == ["rt/m"]
    assert removed is True and again is False and found is None


def test_session_control_needs_a_mode_that_can_switch_and_shutdown_is_a_no_op_without_one():
    async def main():
        session = await new_session()
        ctx = session.ctx
        with pytest.raises(SwitchError, match="ctx.new_session needs a mode .* this is 'sdk'"):
            await ctx.new_session()
        with pytest.raises(SwitchError, match="ctx.reload"):
            await ctx.reload()
        ctx.shutdown()  # print / JSON / SDK: nothing to do
        await session.close()

    run(main())


class Blocker:
    def __init__(self) -> None:
        self.block = False
        self.events: list[dict] = []

    @hookimpl
    def on_session_before_switch(self, event):
        self.events.append(dict(event))
        return {"cancel": True} if self.block else None


def test_new_session_through_a_control_runs_setup_with_session_and_honours_a_cancel():
    blocker = Blocker()

    async def main():
        shown: list[object] = []

        class Factory:
            async def new(self, session_file=None, **kwargs):
                return await new_session(
                    host=old.host, registry=old.registry, start_reason="new", control=control
                )

        control = SessionControl(Factory(), shown.append)
        old = await new_session(plugins=[blocker], control=control)

        def setup(store):
            store.append(
                {"type": "message", "message": {"role": "user", "content": "carried over", "timestamp": 1}}
            )

        contexts: list[object] = []
        result = await old.ctx.new_session(setup=setup, with_session=contexts.append)
        blocker.block = True
        fresh = shown[0]
        cancelled = await fresh.ctx.new_session()
        texts = [m.text() if hasattr(m, "text") else m.content for m in fresh.messages]
        await fresh.close()
        return result, cancelled, shown, contexts, texts, fresh

    result, cancelled, shown, contexts, texts, fresh = run(main())
    assert result == {"cancelled": False} and cancelled == {"cancelled": True}
    assert len(shown) == 1 and contexts == [fresh.ctx]
    assert any("carried over" in str(t) for t in texts)
    assert [e["reason"] for e in blocker.events] == ["new", "new"]


def test_a_subsession_has_its_own_prompt_and_the_parents_catalog():
    async def main():
        parent = await new_session()
        sub = await parent.ctx.create_subsession(
            system_prompt="You are a sub-agent.", append_system_prompt="Be brief."
        )
        await sub.prompt("hi")
        prompt, answer = sub.system_prompt_text(), sub.last_assistant().text()
        same = sub.registry is parent.registry and sub.model == parent.model and sub.store is not parent.store
        await sub.close()
        parent_prompt = parent.system_prompt_text()
        fresh = await parent.ctx.create_subsession(plugins=[], tools=["read"])
        fresh_host = fresh.host is not parent.host and list(fresh.active_tools) == ["read"]
        await fresh.close()
        await parent.close()
        return prompt, answer, same, parent_prompt, fresh_host

    prompt, answer, same, parent_prompt, fresh_host = run(main())
    assert prompt == "You are a sub-agent.\n\nBe brief." and answer
    assert same and "sub-agent" not in parent_prompt and fresh_host


def test_session_tree_carries_the_target_id():
    seen: list[dict] = []

    class Watch:
        @hookimpl
        def on_session_tree(self, event):
            seen.append(dict(event))

    async def main():
        session = await new_session(plugins=[Watch()])
        await session.prompt("one")
        first = next(e for e in session.store.entries() if e["type"] == "message")
        await session.ctx.navigate_tree(first["id"])
        await session.close()
        return first["id"]

    target = run(main())
    assert seen and seen[0]["targetId"] == target


def test_argument_completion_sync_and_async():
    from pi_mode_interactive.editor.completion import PiCompleter

    async def slow(prefix):
        await asyncio.sleep(0)
        return [{"value": "prod", "label": "prod", "description": "production"}]

    commands = {
        "deploy": lambda prefix: [v for v in ("dev", "staging") if v.startswith(prefix)],
        "slow": slow,
    }
    completer = PiCompleter(lambda: [("deploy", ""), ("slow", "")], ".", arguments_provider=commands.get)
    sync = list(completer.get_completions(Document("/deploy st"), CompleteEvent()))
    assert [(c.text, c.start_position) for c in sync] == [("staging", -2)]
    assert list(completer.get_completions(Document("/slow p"), CompleteEvent())) == []  # only async waits

    async def gather(text):
        return [c async for c in completer.get_completions_async(Document(text), CompleteEvent())]

    found = asyncio.run(gather("/slow p"))
    assert [(c.text, c.display_meta_text) for c in found] == [("prod", "production")]
    assert [c.text for c in asyncio.run(gather("/dep"))] == ["/deploy "]  # names still complete


def test_plugin_shortcuts_follow_pis_conflict_rules():
    from pi_mode_interactive.editor.keys import default_keys
    from pi_mode_interactive.shortcuts import plugin_shortcuts

    def handler(ctx):
        return None

    class Keys:
        @hookimpl
        def register_commands(self):
            return [
                Command("x", lambda a, c: None),
                Shortcut("ctrl+c", handler),  # app.clear: reserved
                Shortcut("ctrl+y", handler, "yank it"),  # tui.editor.yank: replaced, with a warning
                Shortcut("alt+t", handler),
                Shortcut("ctrl+shift+t", handler),  # a terminal cannot tell it from ctrl+t
                Shortcut("nonsense+q", handler),
            ]

    async def main():
        session = await new_session(plugins=[Keys()])
        ui = SimpleNamespace(session=session)
        chosen, problems = plugin_shortcuts(ui, default_keys())
        await session.close()
        return chosen, problems

    chosen, problems = run(main())
    # the built-in permissions plugin binds alt+m
    mine = sorted(key for key, (plugin, _item) in chosen.items() if plugin != "permissions")
    assert mine == ["alt+t", "ctrl+y"]
    text = "\n".join(problems)
    assert "'ctrl+c'" in text and "conflicts with built-in app.clear; skipped" in text
    assert "'ctrl+y'" in text and "replaces built-in tui.editor.yank" in text
    assert "'ctrl+shift+t'" in text and "'nonsense+q'" in text
    assert len(problems) == 4
