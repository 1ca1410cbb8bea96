"""The members of pi's ``ctx`` and ``pi`` objects, one function each, on pi-host's ``ctx``.

Every function takes the runtime and the calling extension, then the call's arguments as the
bridge sends them (pi's spellings). ``SYNC`` are pi's synchronous getters; ``CALLS`` the
rest (a coroutine's result is the reply).
"""

from __future__ import annotations

import os
from typing import Any

from pi_ts_bridge import registry


def _ctx(runtime: Any) -> Any:
    ctx = runtime.ctx
    if ctx is None or not hasattr(ctx, "session"):
        raise RuntimeError("this needs a session (it is not available while extensions load)")
    return ctx


def _store(runtime: Any) -> Any:
    return _ctx(runtime).session.store


def _entry(runtime: Any, entry_id: str) -> Any:
    store = _store(runtime)
    getter = getattr(store, "get", None)
    if callable(getter):
        return getter(entry_id)
    return next((e for e in store.entries() if e.get("id") == entry_id), None)


def _branch(runtime: Any, from_id: str | None = None) -> list[Any]:
    store = _store(runtime)
    path = getattr(store, "path", None)
    if callable(path):
        return list(path(from_id) if from_id else path())
    return list(store.entries())


def _session_context(runtime: Any) -> dict[str, Any]:
    session = _ctx(runtime).session
    return {
        "messages": list(session.messages),
        "thinkingLevel": session.thinking_level,
        "model": {"provider": session.model.provider, "modelId": session.model.id} if session.model else None,
    }


def _commands(runtime: Any) -> list[dict[str, Any]]:
    session = _ctx(runtime).session
    owners = getattr(session, "_owners", {})
    out = []
    for name, command in session.commands.items():
        record = runtime.host.record(owners.get(id(command), ""))
        path = record.origin if record is not None else ""
        out.append(
            {
                "name": name,
                "description": command.description,
                "source": "extension",
                "sourceInfo": {"path": path, "source": path, "scope": "user", "origin": "top-level"},
            }
        )
    return out


def _editor_text(runtime: Any) -> str:
    getter = getattr(_ctx(runtime).session.ui, "get_editor_text", None)
    return getter() if callable(getter) else ""


def _find_model(runtime: Any, provider: str, model_id: str) -> Any:
    return _ctx(runtime).session.registry.find(provider, model_id)


SYNC: dict[str, Any] = {
    "sm.getSessionDir": lambda rt, ext: os.path.dirname(_ctx(rt).session_file or "") or None,
    "sm.getSessionId": lambda rt, ext: _ctx(rt).session_id,
    "sm.getSessionFile": lambda rt, ext: _ctx(rt).session_file,
    "sm.getSessionName": lambda rt, ext: _ctx(rt).get_session_name(),
    "sm.getHeader": lambda rt, ext: getattr(_store(rt), "header", None),
    "sm.getEntries": lambda rt, ext: _ctx(rt).get_entries(),
    "sm.getEntry": lambda rt, ext, entry_id: _entry(rt, entry_id),
    "sm.getBranch": lambda rt, ext, from_id=None: _branch(rt, from_id),
    "sm.getTree": lambda rt, ext: getattr(_store(rt), "get_tree", lambda: [])(),
    "sm.getLeafId": lambda rt, ext: _store(rt).leaf_id(),
    "sm.getLeafEntry": lambda rt, ext: _entry(rt, _store(rt).leaf_id() or ""),
    "sm.getLabel": lambda rt, ext, entry_id: _ctx(rt).get_label(entry_id),
    "sm.getChildren": lambda rt, ext, entry_id: getattr(_store(rt), "children", lambda _i: [])(entry_id),
    "sm.buildContextEntries": lambda rt, ext: _branch(rt),
    "sm.buildSessionContext": lambda rt, ext: _session_context(rt),
    "sm.buildSessionProjection": lambda rt, ext: _session_context(rt),
    "ctx.model": lambda rt, ext: _ctx(rt).model,
    "ctx.isIdle": lambda rt, ext: _ctx(rt).is_idle(),
    "ctx.hasPendingMessages": lambda rt, ext: _ctx(rt).has_pending_messages(),
    "ctx.getContextUsage": lambda rt, ext: _ctx(rt).get_context_usage(),
    "ctx.getSystemPrompt": lambda rt, ext: _ctx(rt).get_system_prompt() or rt.prompt_hint,
    "ctx.isProjectTrusted": lambda rt, ext: _ctx(rt).is_project_trusted(),
    "ctx.getSystemPromptOptions": lambda rt, ext: {
        "cwd": _ctx(rt).cwd,
        "selectedTools": _ctx(rt).get_active_tools(),
    },
    "pi.getFlag": lambda rt, ext, name: _ctx(rt).get_flag(name),
    "pi.getThinkingLevel": lambda rt, ext: _ctx(rt).get_thinking_level(),
    "pi.getSessionName": lambda rt, ext: _ctx(rt).get_session_name(),
    "pi.getActiveTools": lambda rt, ext: _ctx(rt).get_active_tools(),
    "pi.getAllTools": lambda rt, ext: registry.all_tools(rt),
    "pi.getCommands": lambda rt, ext: _commands(rt),
    "pi.getSettings": lambda rt, ext: dict(_ctx(rt).settings or {}),
    "ui.getEditorText": lambda rt, ext: _editor_text(rt),
    "models.find": lambda rt, ext, provider, model_id: _find_model(rt, provider, model_id),
    "models.all": lambda rt, ext: _ctx(rt).session.registry.models(),
    "models.available": lambda rt, ext: _ctx(rt).session.registry.available(),
    "models.hasAuth": lambda rt, ext, key: _ctx(rt).session.registry.has_auth(key.partition("/")[0]),
}


# --- actions ---------------------------------------------------------------------------------------

_PLACEMENT = {"aboveEditor": "above", "belowEditor": "below"}


def _dialog_options(runtime: Any, options: dict[str, Any] | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    options = options or {}
    if isinstance(options.get("timeout"), (int, float)):
        out["timeout"] = options["timeout"] / 1000  # pi's milliseconds, pi-host's seconds
    if options.get("signal"):
        out["signal"] = registry.local_signal(runtime, options["signal"])
    return out


async def _dialog(runtime: Any, kind: str, title: str, second: Any, options: Any) -> Any:
    ui = _ctx(runtime).ui
    return await getattr(ui, kind)(title, second, **_dialog_options(runtime, options))


async def _send_message(runtime: Any, ext: Any, message: Any, options: dict[str, Any]) -> None:
    await _ctx(runtime).send_message(
        message, deliver_as=options.get("deliverAs") or "steer", trigger_turn=bool(options.get("triggerTurn"))
    )


async def _send_user_message(runtime: Any, ext: Any, content: Any, options: dict[str, Any]) -> Any:
    ctx = _ctx(runtime)
    if options.get("deliverAs") is None and ctx.session.is_streaming and ctx.signal is None:
        # sent from agent_settled: pi runs it once every settled handler finished
        await ctx.wait_for_idle()
    if options.get("deliverAs") is None and ctx.session.is_streaming:
        raise RuntimeError(
            "Agent is already processing. Specify deliverAs ('steer' or 'followUp') to queue the message."
        )
    return await ctx.send_user_message(
        content,
        deliver_as=options.get("deliverAs"),
        expand_prompt_templates=bool(options.get("expandPromptTemplates")),
    )


async def _navigate(runtime: Any, ext: Any, target: str, options: dict[str, Any]) -> Any:
    return await _ctx(runtime).navigate_tree(
        target,
        summarize=bool(options.get("summarize")),
        custom_instructions=options.get("customInstructions"),
        replace_instructions=bool(options.get("replaceInstructions")),
        label=options.get("label"),
    )


def _display(runtime: Any, method: str, *args: Any) -> None:
    """A display call (notify, status, widget, title, editor text). A mode with a UI may attach it
    only after ``session_start`` ran (pi-host's RPC mode does): calls made before are kept and
    shown once it is there, in order, as pi shows them."""
    ctx = _ctx(runtime)
    session = ctx.session
    if runtime.ui_backlog or (ctx.has_ui and type(session.ui).__name__ == "HeadlessUI"):
        runtime.ui_backlog.append((method, args))
        if len(runtime.ui_backlog) == 1:
            import asyncio

            asyncio.ensure_future(_flush_ui(runtime, session))
        return
    getattr(ctx.ui, method)(*args)


async def _flush_ui(runtime: Any, session: Any) -> None:
    import asyncio

    for turn in range(520):  # the mode attaches its UI right after the session started
        if type(session.ui).__name__ != "HeadlessUI":
            break
        await asyncio.sleep(0 if turn < 20 else 0.01)
    waiting, runtime.ui_backlog = runtime.ui_backlog, []
    for method, args in waiting:
        getattr(session.ui, method)(*args)


def _abort(runtime: Any, ext: Any) -> None:
    _ctx(runtime).abort()


CALLS: dict[str, Any] = {
    "ctx.abort": _abort,
    "ctx.shutdown": lambda rt, ext: _ctx(rt).shutdown(),
    "ctx.compact": lambda rt, ext, instructions=None: _ctx(rt).compact(instructions),
    "ctx.waitForIdle": lambda rt, ext: _ctx(rt).wait_for_idle(),
    "ctx.newSession": lambda rt, ext: _ctx(rt).new_session(),
    "ctx.fork": lambda rt, ext, entry_id, position="before": _ctx(rt).fork(entry_id, position=position),
    "ctx.switchSession": lambda rt, ext, path: _ctx(rt).switch_session(path),
    "ctx.navigateTree": _navigate,
    "ctx.reload": lambda rt, ext: _ctx(rt).reload(),
    "pi.sendMessage": _send_message,
    "pi.sendUserMessage": _send_user_message,
    "pi.appendEntry": lambda rt, ext, custom_type, data=None: _ctx(rt).append_entry(custom_type, data),
    "pi.setSessionName": lambda rt, ext, name: _ctx(rt).set_session_name(name),
    "pi.setLabel": lambda rt, ext, entry_id, label=None: _ctx(rt).set_label(entry_id, label),
    "pi.setActiveTools": lambda rt, ext, names: _ctx(rt).set_active_tools(list(names)),
    "pi.setModel": lambda rt, ext, key: _ctx(rt).set_model(key),
    "pi.setThinkingLevel": lambda rt, ext, level: _ctx(rt).set_thinking_level(level),
    "pi.registerProvider": lambda rt, ext, name, config: _ctx(rt).register_provider(name, config),
    "pi.unregisterProvider": lambda rt, ext, name: _ctx(rt).unregister_provider(name),
    "ui.select": lambda rt, ext, title, options, opts=None: _dialog(rt, "select", title, options, opts),
    "ui.confirm": lambda rt, ext, title, message="", opts=None: _dialog(rt, "confirm", title, message, opts),
    "ui.input": lambda rt, ext, title, placeholder="", opts=None: _dialog(
        rt, "input", title, placeholder, opts
    ),
    "ui.editor": lambda rt, ext, title, prefill="", opts=None: _dialog(rt, "editor", title, prefill, opts),
    "ui.notify": lambda rt, ext, message, kind="info": _display(rt, "notify", message, kind),
    "ui.setStatus": lambda rt, ext, key, text=None: _display(rt, "set_status", key, text),
    "ui.setWidget": lambda rt, ext, key, lines=None, placement="aboveEditor": _display(
        rt, "set_widget", key, lines, _PLACEMENT.get(placement, "above")
    ),
    "ui.setTitle": lambda rt, ext, title: _display(rt, "set_title", title),
    "ui.setEditorText": lambda rt, ext, text: _display(rt, "set_editor_text", text),
    "llm.complete": lambda rt, ext, key, context, options=None, signal=None: registry.complete(
        rt, key, context, options or {}, signal
    ),
    "bus.listen": lambda rt, ext, name: registry.bus_listen(rt, name),
    "bus.emit": lambda rt, ext, name, data=None: registry.bus_emit(rt, name, data),
    "ext.on": lambda rt, ext, event: registry.subscribe_late(rt, ext, event),
    "tool.register": lambda rt, ext, info: registry.add_tool(rt, ext, info),
    "command.register": lambda rt, ext, info: registry.add_command(rt, ext, info),
    "ext.report": lambda rt, ext, event, error: rt.host.report(ext.name, event, registry.first_line(error)),
    "ext.unsupported": lambda rt, ext, feature: rt.note_unsupported(ext, feature),
    "bridge.error": lambda rt, ext, error: rt.host.report(
        "ts-bridge", "uncaught", registry.first_line(error)
    ),
    "signal.abort": lambda rt, ext, ident: registry.abort_local(rt, ident),
}

WITHOUT_SESSION = {
    "bus.listen",
    "bus.emit",
    "ext.on",
    "tool.register",
    "command.register",
    "ext.report",
    "ext.unsupported",
    "bridge.error",
    "signal.abort",
}
