"""A plugin (loaded with ``-e``) whose commands use the session control, provider, completion
and shortcut parts of ``ctx``; the end-to-end tests drive it in tmux and over RPC."""

from pi_host import hookimpl
from pi_host.plugins.registrations import Command, Shortcut

STATE = {"block_switch": False}


async def mknew(args, ctx):
    old = ctx.session_id

    def setup(store):
        store.append({"type": "custom", "customType": "handoff", "data": {"from": old}})

    async def after(new_ctx):
        handoff = new_ctx.get_custom_entries("handoff")
        new_ctx.ui.notify(
            f"with-session new={new_ctx.session_id != old} handoff={handoff == [{'from': old}]}"
        )

    result = await ctx.new_session(setup=setup, with_session=after)
    ctx.ui.notify(f"mknew cancelled={result['cancelled']}")


async def blocknext(args, ctx):
    STATE["block_switch"] = True
    ctx.ui.notify("next switch blocked")


@hookimpl
def on_session_before_switch(event):
    if STATE["block_switch"]:
        STATE["block_switch"] = False
        return {"cancel": True}
    return None


async def myfork(args, ctx):
    users = [e["id"] for e in ctx.get_branch() if e["type"] == "message" and e["message"]["role"] == "user"]
    result = await ctx.fork(
        users[0], with_session=lambda c: c.ui.notify(f"forked file={bool(c.session_file)}")
    )
    ctx.ui.notify(f"myfork cancelled={result['cancelled']} text={result['text']}")


async def myswitch(args, ctx):
    result = await ctx.switch_session(args, with_session=lambda c: c.ui.notify(f"switched to {c.session_id}"))
    ctx.ui.notify(f"myswitch cancelled={result['cancelled']}")


async def myreload(args, ctx):
    await ctx.reload()
    ctx.ui.notify("reloaded")


async def bye(args, ctx):
    ctx.ui.notify("bye requested")
    ctx.shutdown()


async def addprov(args, ctx):
    keys = ctx.register_provider(
        "rt",
        {
            "baseUrl": args.strip().rstrip("/") + "/v1",
            "api": "openai-completions",
            "apiKey": "runtime-key",
            "models": [{"id": "rt-1", "name": "Runtime One", "contextWindow": 64000, "maxTokens": 2048}],
        },
    )
    ok = await ctx.set_model("rt/rt-1")
    ctx.ui.notify(f"registered {','.join(keys)} selected={ok}")


async def dropprov(args, ctx):
    try:
        removed = ctx.unregister_provider("rt")
    except ValueError as exc:
        ctx.ui.notify(f"refused: {exc}")
        return
    ctx.ui.notify(f"dropped={removed}")


async def pick(args, ctx):
    ctx.ui.notify(f"picked [{args}]")


def complete_pick(prefix):
    items = [
        {"value": "alpha", "label": "alpha", "description": "the first"},
        {"value": "beta", "label": "beta", "description": "the second"},
        {"value": "gamma", "label": "gamma", "description": "the third"},
    ]
    return [item for item in items if item["value"].startswith(prefix)]


def shortcut_fired(ctx):
    ctx.ui.notify(f"shortcut fired idle={ctx.is_idle()}")


@hookimpl
def register_commands():
    return [
        Command("mknew", mknew, "ctx.new_session"),
        Command("blocknext", blocknext, "Block the next session switch"),
        Command("myfork", myfork, "ctx.fork from the first user message"),
        Command("myswitch", myswitch, "ctx.switch_session <path>"),
        Command("myreload", myreload, "ctx.reload"),
        Command("bye", bye, "ctx.shutdown"),
        Command("addprov", addprov, "ctx.register_provider <base url>"),
        Command("dropprov", dropprov, "ctx.unregister_provider"),
        Command("pick", pick, "Pick a letter", complete=complete_pick),
        Shortcut("alt+t", shortcut_fired, "Say the shortcut fired"),
        Shortcut("ctrl+c", shortcut_fired, "Refused: ctrl+c is the editor's"),
    ]
