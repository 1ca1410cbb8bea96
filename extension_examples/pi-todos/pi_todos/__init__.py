"""pi-todos: a ``todo`` tool the model keeps its task list with, and ``/todos`` to show it.

The list lives in the session: every change appends a ``custom`` entry of type ``todos`` holding
the whole list (``ctx.append_entry``), so the current list is the last such entry on the branch.
Resuming a session (``pi -c``) or moving to another branch (``/tree``) rebuilds it from there
(``session_start`` / ``session_tree``); the entries are never sent to the model.
"""

from __future__ import annotations

from typing import Any

from pi_host import Command, Tool, ToolResult, hookimpl
from pi_host.protocol import TextContent

__version__ = "0.1.0"

ENTRY_TYPE = "todos"

_contexts: dict[Any, Any] = {}
"""Session id -> the session's plugin ctx (a tool is given only a ToolContext)."""
_lists: dict[Any, list[dict[str, Any]]] = {}
"""Session id -> its current todo list: ``[{"id": 1, "text": "...", "done": False}]``."""


def _session_id(ctx: Any) -> Any:
    return getattr(ctx.session.store, "session_id", None) or id(ctx.session)


def _restore(ctx: Any) -> list[dict[str, Any]]:
    """The list as of the current branch's last ``todos`` entry."""
    snapshots = [d for d in ctx.get_custom_entries(ENTRY_TYPE) if isinstance(d, dict)]
    items = [dict(item) for item in snapshots[-1].get("items", [])] if snapshots else []
    _lists[_session_id(ctx)] = items
    _contexts[_session_id(ctx)] = ctx
    return items


def _todos(ctx: Any) -> list[dict[str, Any]]:
    key = _session_id(ctx)
    return _lists[key] if key in _lists else _restore(ctx)


def render(items: list[dict[str, Any]]) -> str:
    if not items:
        return "No todos."
    done = sum(1 for item in items if item["done"])
    lines = [f"Todos ({done}/{len(items)} done):"]
    lines += [f"  [{'x' if item['done'] else ' '}] #{item['id']} {item['text']}" for item in items]
    return "\n".join(lines)


def apply(ctx: Any, action: str, text: str | None = None, todo_id: int | None = None) -> str:
    """Run one ``todo`` action against the session's list; changes are stored as an entry."""
    items = _todos(ctx)
    if action == "list":
        return render(items)
    if action == "add":
        if not text or not text.strip():
            raise ValueError("add needs a non-empty text")
        items.append(
            {"id": max((i["id"] for i in items), default=0) + 1, "text": text.strip(), "done": False}
        )
    elif action == "done":
        match = next((item for item in items if item["id"] == todo_id), None)
        if match is None:
            raise ValueError(f"no todo #{todo_id}")
        match["done"] = True
    else:
        raise ValueError(f"unknown action {action!r} (add, list or done)")
    ctx.append_entry(ENTRY_TYPE, {"items": [dict(item) for item in items]})
    return render(items)


class TodoTool(Tool):
    name = "todo"
    label = "Todo"
    description = (
        "Keep a todo list for this session. action=add with text adds an item, action=done with "
        "id marks one finished, action=list shows them all."
    )
    parameters = {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["add", "list", "done"]},
            "text": {"type": "string", "description": "The item, for add"},
            "id": {"type": "integer", "description": "The item's number, for done"},
        },
        "required": ["action"],
    }
    prompt_snippet = "keep a todo list of the steps of a task"

    async def execute(self, tool_call_id, args, signal, on_update, ctx):
        plugin_ctx = _contexts.get(ctx.session_id)
        if plugin_ctx is None and len(_contexts) == 1:
            plugin_ctx = next(iter(_contexts.values()))
        if plugin_ctx is None:
            raise RuntimeError("pi-todos: no session is open")
        text = apply(plugin_ctx, args["action"], args.get("text"), args.get("id"))
        # a copy: the live list changes with the next call, this result's details must not
        items = [dict(item) for item in _todos(plugin_ctx)]
        return ToolResult(content=[TextContent(text=text)], details={"items": items})


@hookimpl
def register_tools():
    return [TodoTool()]


@hookimpl
def on_session_start(event, ctx):
    _restore(ctx)


@hookimpl
def on_session_tree(event, ctx):
    _restore(ctx)


@hookimpl
def on_session_shutdown(event, ctx):
    _lists.pop(_session_id(ctx), None)
    _contexts.pop(_session_id(ctx), None)


def _show(args, ctx):
    text = render(_todos(ctx))
    if ctx.has_ui:
        ctx.ui.notify(text, "info")
    else:
        print(text, flush=True)


@hookimpl
def register_commands():
    return [Command(name="todos", handler=_show, description="Show the session's todo list")]
