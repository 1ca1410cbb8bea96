"""pi 1.6.0's RPC commands: ``COMMANDS[type](server, record)`` returns the response's ``data``
(``...`` for a response without data) or raises; the exception's text becomes ``error``."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import Any

from pi_host.protocol.messages import ImageContent

NO_DATA: Any = ...
Handler = Callable[[Any, dict[str, Any]], Awaitable[Any]]
COMMANDS: dict[str, Handler] = {}
MODES = ("all", "one-at-a-time")


def command(name: str) -> Callable[[Handler], Handler]:
    def register(handler: Handler) -> Handler:
        COMMANDS[name] = handler
        return handler

    return register


def _text(record: dict[str, Any], key: str = "message") -> str:
    value = record.get(key)
    if not isinstance(value, str):
        raise ValueError(f"{key} must be a string")
    return value


def _images(record: dict[str, Any]) -> list[ImageContent] | None:
    found = record.get("images")
    if not found:
        return None
    if not isinstance(found, list):
        raise ValueError("images must be an array of image contents")
    images = []
    for item in found:
        if not isinstance(item, dict) or not isinstance(item.get("data"), str):
            raise ValueError("each image needs base64 data and a mimeType")
        images.append(ImageContent(data=item["data"], mime_type=str(item.get("mimeType") or "image/png")))
    return images


def model_json(model: Any) -> dict[str, Any] | None:
    """pi's Model object; header values are left out (they may hold credentials)."""
    if model is None:
        return None
    data = model.to_json()
    data.pop("headers", None)
    return data


# --- prompting ---------------------------------------------------------------------------------


@command("prompt")
async def _prompt(server: Any, record: dict[str, Any]) -> Any:
    behaviour = record.get("streamingBehavior")
    if behaviour is not None and behaviour not in ("steer", "followUp"):
        raise ValueError("streamingBehavior must be 'steer' or 'followUp'")
    session = server.session
    if session.compactor is not None and session.compactor.is_busy:
        raise RuntimeError("Compaction in progress: wait for it to finish before sending a prompt")
    disposition = await session.prompt(
        _text(record), images=_images(record), streaming_behavior=behaviour, source="rpc", wait=False
    )
    return {"disposition": disposition}


@command("steer")
async def _steer(server: Any, record: dict[str, Any]) -> Any:
    disposition = await server.session.steer(_text(record), _images(record))
    return {"disposition": "queued" if disposition == "started" else disposition}


@command("follow_up")
async def _follow_up(server: Any, record: dict[str, Any]) -> Any:
    disposition = await server.session.follow_up(_text(record), _images(record))
    return {"disposition": "queued" if disposition == "started" else disposition}


@command("abort")
async def _abort(server: Any, record: dict[str, Any]) -> Any:
    await server.session.abort()
    return NO_DATA


@command("clear_queue")
async def _clear_queue(server: Any, record: dict[str, Any]) -> Any:
    cleared = server.session.clear_queue()
    return {"steering": list(cleared.get("steering", [])), "followUp": list(cleared.get("followUp", []))}


# --- state ---------------------------------------------------------------------------------------


def _session_name(session: Any) -> str | None:
    name = getattr(session.store, "name", None)
    name = name() if callable(name) else name  # a property of the tree stores
    return name if isinstance(name, str) else None


@command("get_state")
async def _get_state(server: Any, record: dict[str, Any]) -> Any:
    session = server.session
    compactor = session.compactor
    state: dict[str, Any] = {}
    if session.model is not None:
        state["model"] = model_json(session.model)
    state.update(
        thinkingLevel=session.thinking_level,
        isStreaming=session.is_streaming,
        isCompacting=bool(compactor is not None and compactor.is_busy),
        steeringMode=session.config.steering_mode,
        followUpMode=session.config.follow_up_mode,
    )
    if session.store.session_file:
        state["sessionFile"] = session.store.session_file
    state["sessionId"] = session.session_id
    name = _session_name(session)
    if name:
        state["sessionName"] = name
    state.update(
        autoCompactionEnabled=bool(compactor is not None and compactor.settings().enabled),
        messageCount=sum(1 for message in session.messages if message is not server.open_message),
        pendingMessageCount=len(session.queues.steering) + len(session.queues.follow_up),
    )
    return state


@command("get_messages")
async def _get_messages(server: Any, record: dict[str, Any]) -> Any:
    return {"messages": [message.to_json() for message in server.session.messages]}


# --- model and thinking ------------------------------------------------------------------------


@command("set_model")
async def _set_model(server: Any, record: dict[str, Any]) -> Any:
    session = server.session
    provider, model_id = record.get("provider"), record.get("modelId")
    model = session.registry.find(str(provider), str(model_id))
    if model is None:
        raise LookupError(f"Model not found: {provider}/{model_id}")
    from pi_host.runtime.models import use_model

    await use_model(session, model)
    return model_json(model)


def _cli_scope(server: Any) -> Any:
    return getattr(getattr(server.request, "args", None), "models", None)


@command("cycle_model")
async def _cycle_model(server: Any, record: dict[str, Any]) -> Any:
    from pi_host.runtime.models import cycle_model

    result = await cycle_model(server.session, _cli_scope(server))
    if result is None:
        return None
    return {**result, "model": model_json(result["model"])}


@command("get_available_models")
async def _get_available_models(server: Any, record: dict[str, Any]) -> Any:
    session = server.session
    return {"models": [model_json(model) for model in session.registry.available(session.model)]}


@command("set_thinking_level")
async def _set_thinking_level(server: Any, record: dict[str, Any]) -> Any:
    from pi_host.config.models import THINKING_LEVELS
    from pi_host.runtime.models import set_level

    level = record.get("level")
    if level not in THINKING_LEVELS:
        raise ValueError(f"Invalid thinking level: {level}")
    await set_level(server.session, level)
    return NO_DATA


@command("cycle_thinking_level")
async def _cycle_thinking_level(server: Any, record: dict[str, Any]) -> Any:
    from pi_host.runtime.models import cycle_level

    level = await cycle_level(server.session)
    return {"level": level} if level is not None else None


@command("get_available_thinking_levels")
async def _get_available_thinking_levels(server: Any, record: dict[str, Any]) -> Any:
    from pi_host.runtime.models import available_levels

    return {"levels": available_levels(server.session)}


def _mode(record: dict[str, Any]) -> str:
    mode = record.get("mode")
    if mode not in MODES:
        raise ValueError(f"Invalid mode: {mode} (all or one-at-a-time)")
    return str(mode)


def _save_setting(dotted: str, value: Any) -> None:
    """pi keeps what these commands set in the user's settings.json (unknown keys kept)."""
    from pi_host.config.settings import update_user_settings

    update_user_settings({dotted: value})


@command("set_steering_mode")
async def _set_steering_mode(server: Any, record: dict[str, Any]) -> Any:
    # the agent reads its own copy at each poll: a change mid-run counts from the next poll, as pi
    server.session.config.steering_mode = server.session.agent.steering_mode = mode = _mode(record)
    _save_setting("steeringMode", mode)
    return NO_DATA


@command("set_follow_up_mode")
async def _set_follow_up_mode(server: Any, record: dict[str, Any]) -> Any:
    server.session.config.follow_up_mode = server.session.agent.follow_up_mode = mode = _mode(record)
    _save_setting("followUpMode", mode)
    return NO_DATA


# --- compaction and retry ------------------------------------------------------------------------


@command("compact")
async def _compact(server: Any, record: dict[str, Any]) -> Any:
    instructions = record.get("customInstructions")
    return await server.session.compact(
        instructions if isinstance(instructions, str) and instructions else None
    )


def _set_setting(session: Any, section: str, key: str, value: Any) -> None:
    """Change this run's settings, and the saved ones as pi does."""
    settings = dict(session.config.settings or {})
    part = dict(settings.get(section) or {}) if isinstance(settings.get(section), dict) else {}
    part[key] = value
    settings[section] = part
    session.config.settings = settings
    _save_setting(f"{section}.{key}", value)


@command("set_auto_compaction")
async def _set_auto_compaction(server: Any, record: dict[str, Any]) -> Any:
    _set_setting(server.session, "compaction", "enabled", record.get("enabled") is True)
    return NO_DATA


@command("set_auto_retry")
async def _set_auto_retry(server: Any, record: dict[str, Any]) -> Any:
    server.session.auto_retry_enabled = enabled = record.get("enabled") is True
    _save_setting("retry.enabled", enabled)
    return NO_DATA


@command("abort_retry")
async def _abort_retry(server: Any, record: dict[str, Any]) -> Any:
    retry = getattr(server.session, "_retry", None)
    if retry is not None and (retry.attempt or retry.pending):
        server.session.request_abort()  # cancels the delay: the retry sequence ends failed
    return NO_DATA


# --- bash ---------------------------------------------------------------------------------------


@command("bash")
async def _bash(server: Any, record: dict[str, Any]) -> Any:
    from pi_host.protocol.abort import AbortController
    from pi_host.runtime.user_bash import run_user_bash

    command_text = _text(record, "command")
    ident = record.get("id")

    def on_data(chunk: bytes) -> None:
        update: dict[str, Any] = {"type": "bash_execution_update"}
        if ident is not None:
            update["id"] = ident
        update["delta"] = chunk.decode("utf-8", errors="replace")
        server.send(update)

    controller = AbortController()
    server.bash_controller = controller
    server.muted_bash += 1
    try:
        result = await run_user_bash(
            server.session, command_text, record.get("excludeFromContext") is True, on_data, controller.signal
        )
    finally:
        server.muted_bash -= 1
        if server.bash_controller is controller:
            server.bash_controller = None
    return result.to_json()


@command("abort_bash")
async def _abort_bash(server: Any, record: dict[str, Any]) -> Any:
    if server.bash_controller is not None:
        server.bash_controller.abort("Cancelled")
    return NO_DATA


# --- session ------------------------------------------------------------------------------------


@command("get_session_stats")
async def _get_session_stats(server: Any, record: dict[str, Any]) -> Any:
    """pi's totals: every message entry of the session file, whichever branch it is on and
    whether or not a compaction summarised it, so they only grow during a session."""
    session = server.session
    counts = {"user": 0, "assistant": 0, "toolResult": 0}
    tool_calls = total = 0
    tokens = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}
    cost = 0.0

    def add(usage: Any) -> None:
        nonlocal cost
        if not isinstance(usage, dict):
            return
        for key in tokens:
            value = usage.get(key)
            tokens[key] += value if isinstance(value, int | float) else 0
        spent = usage.get("cost").get("total") if isinstance(usage.get("cost"), dict) else None
        cost += spent if isinstance(spent, int | float) else 0

    for entry in session.store.entries():
        kind = entry.get("type")
        if kind == "usage" or kind in ("compaction", "branch_summary"):
            add(entry.get("usage"))
        if kind != "message":
            continue
        total += 1
        message = entry.get("message") or {}
        role = message.get("role")
        if role in counts:
            counts[role] += 1
        if role in ("assistant", "toolResult"):
            add(message.get("usage"))
        if role == "assistant" and isinstance(message.get("content"), list):
            tool_calls += sum(
                1 for b in message["content"] if isinstance(b, dict) and b.get("type") == "toolCall"
            )
    stats: dict[str, Any] = {
        "sessionFile": session.store.session_file,
        "sessionId": session.session_id,
        "userMessages": counts["user"],
        "assistantMessages": counts["assistant"],
        "toolCalls": tool_calls,
        "toolResults": counts["toolResult"],
        "totalMessages": total,
        "tokens": {**tokens, "total": sum(tokens.values())},
        "cost": cost,
    }
    if session.model is not None and session.compactor is not None:
        stats["contextUsage"] = session.compactor.context_usage()
    return stats


@command("export_html")
async def _export_html(server: Any, record: dict[str, Any]) -> Any:
    from pi_host.lib.export import default_destination, render_html, write_page

    session = server.session
    store = session.store
    source = store.session_file or f"{session.session_id}.jsonl"
    wanted = record.get("outputPath")
    # pi answers with the path as given (~ expanded), or its relative default name
    path = os.path.expanduser(wanted) if isinstance(wanted, str) and wanted else default_destination(source)
    header = dict(
        getattr(store, "header", None) or {"type": "session", "version": 3, "id": session.session_id}
    )
    tools = [
        {"name": t.name, "description": t.description, "parameters": t.parameters}
        for t in session.active_tools.values()
    ]
    extra = {"systemPrompt": session.system_prompt_text(), "tools": tools}
    page = render_html(header, store.entries(), leaf_id=store.leaf_id(), extra=extra)
    write_page(os.path.join(session.config.cwd, path), page)  # a temp file renamed: never half written
    return {"path": path}


@command("new_session")
async def _new_session(server: Any, record: dict[str, Any]) -> Any:
    from pi_host.runtime.switching import new_session

    fresh = await new_session(server.request.factory, server.session)
    if fresh is None:
        return {"cancelled": True}
    server.attach(fresh)
    return {"cancelled": False}


@command("switch_session")
async def _switch_session(server: Any, record: dict[str, Any]) -> Any:
    from pi_host.runtime.switching import resume_session

    path = _text(record, "sessionPath")
    path = os.path.abspath(os.path.join(server.session.config.cwd, os.path.expanduser(path)))
    # A path with no file yet is a new session there, as pi opens it (the file appears with the
    # first answer).
    fresh = await resume_session(server.request.factory, server.session, path)
    if fresh is None:
        return {"cancelled": True}
    server.attach(fresh)
    return {"cancelled": False}


@command("fork")
async def _fork(server: Any, record: dict[str, Any]) -> Any:
    from pi_host.runtime.switching import fork_session

    entry_id = _text(record, "entryId")
    if not hasattr(server.session.store, "get") or server.session.store.get(entry_id) is None:
        raise ValueError("Invalid entry ID for forking")
    try:
        fresh, text = await fork_session(server.request.factory, server.session, entry_id, "before")
    except ValueError:
        raise ValueError("Invalid entry ID for forking") from None
    if fresh is None:
        return {"cancelled": True}
    server.attach(fresh)
    return {"text": text, "cancelled": False}


@command("clone")
async def _clone(server: Any, record: dict[str, Any]) -> Any:
    from pi_host.runtime.switching import fork_session

    leaf = server.session.store.leaf_id()
    if leaf is None:
        raise ValueError("Nothing to clone yet")
    fresh, _text_unused = await fork_session(server.request.factory, server.session, leaf, "at")
    if fresh is None:
        return {"cancelled": True}
    server.attach(fresh)
    return {"cancelled": False}


@command("get_fork_messages")
async def _get_fork_messages(server: Any, record: dict[str, Any]) -> Any:
    """As pi: every user message of the session file, on any branch (an abandoned one can be
    forked too), in file order, with its whole text; messages without text are left out."""
    from pi_host.lib.sessions.projection import editor_text

    found = []
    for entry in server.session.store.entries():
        if entry.get("type") != "message" or (entry.get("message") or {}).get("role") != "user":
            continue
        text = editor_text(entry)
        if text:
            found.append({"entryId": entry["id"], "text": text})
    return {"messages": found}


@command("get_entries")
async def _get_entries(server: Any, record: dict[str, Any]) -> Any:
    store = server.session.store
    entries = store.entries()
    since = record.get("since")
    if since is not None:
        position = next((index for index, entry in enumerate(entries) if entry.get("id") == since), None)
        if position is None:
            raise LookupError(f"Entry not found: {since}")
        entries = entries[position + 1 :]
    return {"entries": entries, "leafId": store.leaf_id()}


@command("get_tree")
async def _get_tree(server: Any, record: dict[str, Any]) -> Any:
    store = server.session.store
    roots = store.get_tree() if hasattr(store, "get_tree") else []
    return {"tree": [node.to_json() for node in roots], "leafId": store.leaf_id()}


@command("get_last_assistant_text")
async def _get_last_assistant_text(server: Any, record: dict[str, Any]) -> Any:
    for message in reversed(server.session.messages):
        if getattr(message, "role", None) != "assistant":
            continue
        text = "".join(
            getattr(block, "text", "") for block in message.content if getattr(block, "type", "") == "text"
        )
        if text.strip():
            return {"text": text}
    return {}  # pi's text is undefined then, so the key is absent


@command("set_session_name")
async def _set_session_name(server: Any, record: dict[str, Any]) -> Any:
    name = record.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ValueError("Session name cannot be empty")
    await server.session.set_session_name(name.strip())
    return NO_DATA


@command("get_commands")
async def _get_commands(server: Any, record: dict[str, Any]) -> Any:
    import inspect

    from pi_host.lib.resources import source_info

    session = server.session
    cwd = session.config.cwd
    named = getattr(getattr(server.request, "args", None), "extensions", None) or ()
    # a file given with -e is pi's "cli" source; any other plugin file is "local"
    from_cli = {
        os.path.realpath(os.path.join(cwd, os.path.expanduser(p))) for p in named if isinstance(p, str)
    }
    found: list[dict[str, Any]] = []
    for name, registered in session.commands.items():
        if getattr(registered, "source", "extension") == "builtin":
            continue  # pi lists no built-in command (its /compact is the TUI's)
        try:
            path = inspect.getsourcefile(registered.handler) or ""
        except TypeError:
            path = ""
        entry: dict[str, Any] = {"name": name}
        if registered.description:
            entry["description"] = registered.description
        entry["source"] = "extension"
        entry["sourceInfo"] = source_info(os.path.abspath(path) if path else "", "extension")
        if path and os.path.realpath(path) in from_cli:
            entry["sourceInfo"]["source"] = "cli"
        found.append(entry)
    from pi_host.runtime.context_commands import context_source_commands

    found.extend(await context_source_commands(session))
    order = {"extension": 0, "prompt": 1, "skill": 2}
    found.sort(key=lambda item: order.get(item.get("source"), 3))
    return {"commands": found}
