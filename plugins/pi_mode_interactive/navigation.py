"""Moving around sessions (reference §6.10, §7.9): ``/tree`` (also double Escape), ``/fork``,
``/clone`` and ``/import``.

``/tree`` stays in the same file: the leaf moves and, if the user wants, the branch left behind
is summarized by the compaction strategy (``session_before_tree`` / ``session_tree`` fire in
``navigate_tree``). ``/fork`` and ``/clone`` copy a branch into a new file (``session_before_fork``
may refuse) and the run continues on it as a new session (``session_start`` reason ``fork``).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pi_mode_interactive.screen_api import Screen

SUMMARY_CHOICES = [
    ("none", "No summary", ""),
    ("summarize", "Summarize", ""),
    ("custom", "Summarize with custom prompt", ""),
]


def _settings(ui: Screen) -> dict[str, Any]:
    return getattr(ui.session.config, "settings", None) or {}


async def tree(ui: Screen, args: str = "", initial: str | None = None) -> None:
    """Open the navigator; the chosen entry becomes the place the conversation continues from."""
    from pi_mode_interactive.tree_view import TreeDialog, TreeRows

    store = ui.session.store
    get_tree = getattr(store, "get_tree", None)
    roots = get_tree() if get_tree is not None else []
    if not roots:
        ui.notice("No entries in session")
        return
    filter_mode = _settings(ui).get("treeFilterMode")
    rows = TreeRows(roots, store.leaf_id(), filter_mode if isinstance(filter_mode, str) else "default")
    if initial is not None:
        rows.refresh(select=initial)

    def on_label(entry_id: str, label: str | None) -> Any:
        setter = getattr(store, "set_label", None)
        if setter is None:
            ui.notice("This session store cannot keep labels", "error")
            return None
        return setter(entry_id, label)

    from pi_mode_interactive.dialogs import TextDialog
    from pi_mode_interactive.editor.keys import load_keybindings

    async def ask_text(title: str, text: str) -> str | None:
        return await ui.ask(TextDialog(title, text=text))

    keymap, _problems = load_keybindings(ui.agent_dir)
    picked = await ui.ask(TreeDialog(rows, on_label, ask_text, ui.spawn, keymap))
    if picked is None:
        return
    if picked == store.leaf_id():
        ui.notice("Already at this point")
        return
    summarize, focus = False, None
    if (_settings(ui).get("branchSummary") or {}).get("skipPrompt") is not True:
        while True:
            choice = await ui.pick("Summarize branch?", SUMMARY_CHOICES)
            if choice is None:  # back to the tree, on the same entry
                await tree(ui, args, initial=picked)
                return
            summarize = choice != "none"
            if choice == "custom":
                from pi_mode_interactive.dialogs import TextDialog

                focus = await ui.ask(TextDialog("Custom summarization instructions", multiline=True))
                if focus is None:
                    continue
            break
    if ui.session.is_streaming:
        ui.restore_queue()
        await ui.session.abort()
    if summarize:
        ui.set_working("Summarizing the branch…")
    try:
        result = await ui.session.navigate_tree(
            picked, summarize=summarize, custom_instructions=(focus or "").strip() or None
        )
    except Exception as exc:
        ui.notice(f"Navigation failed: {exc}", "error")
        return
    finally:
        if summarize:
            ui.set_working(None)
    if result.get("cancelled"):
        ui.notice("Navigation cancelled")
        return
    ui.notice(
        "Navigated to the selected point" + (" (branch summarized)" if result.get("summaryEntry") else "")
    )
    ui.show_messages(limit=20)
    text = result.get("editorText")
    if text and not ui.editor.text.strip():
        ui.set_editor_text(text)


def _user_messages(ui: Screen) -> list[tuple[str, str, str]]:
    """``(entry id, text, "Message i of n")`` of every user message in the session file, on any
    branch, oldest first (as pi offers them: an abandoned branch can be forked too). Messages
    without text (an image alone) are left out, as pi leaves them out."""
    from pi_host.lib.sessions.projection import editor_text

    store = ui.session.store
    found = []
    for entry in store.entries():
        if entry.get("type") != "message" or (entry.get("message") or {}).get("role") != "user":
            continue
        text = " ".join((editor_text(entry) or "").split())  # one row per message
        if text:
            found.append((entry["id"], text[:200]))
    count = len(found)
    return [(entry_id, text, f"Message {n} of {count}") for n, (entry_id, text) in enumerate(found, 1)]


async def fork(ui: Screen, args: str = "") -> None:
    """Pick a user message (the newest is highlighted); a new session holds the path up to it,
    and the message goes back into the editor to be edited and sent."""
    choices = _user_messages(ui)
    if not choices:
        ui.notice("No messages to fork from")
        return
    picked = await ui.pick("Fork from a message", choices, initial=choices[-1][0])
    if picked is None:
        return
    text = await _branch_into_new_file(ui, picked, "before")
    if text is None:
        return
    ui.set_editor_text(text)
    ui.notice(f"Forked to a new session ({ui.session.store.session_file or 'not saved yet'})")


async def clone(ui: Screen, args: str = "") -> None:
    """A new session holding the whole active branch."""
    leaf = ui.session.store.leaf_id()
    if leaf is None:
        ui.notice("Nothing to clone yet")
        return
    if await _branch_into_new_file(ui, leaf, "at") is not None:
        ui.notice(f"Cloned to a new session ({ui.session.store.session_file or 'not saved yet'})")


async def _branch_into_new_file(ui: Screen, entry_id: str, position: str) -> str | None:
    """``session_before_fork``, then the store copies the branch into a new file and the run
    goes on with a new session on it. Returns the editor text ("" for ``at``), None if it stayed."""
    from pi_host.runtime.switching import SwitchError, fork_session

    if ui.session.is_streaming:
        ui.restore_queue()
    try:
        fresh, text = await fork_session(ui.request.factory, ui.session, entry_id, position)
    except (SwitchError, ValueError, KeyError, OSError) as exc:
        ui.notice(f"Could not {'fork' if position == 'before' else 'clone'}: {exc}", "error")
        return None
    if fresh is None:
        ui.notice("A plugin kept the current session", "warning")
        return None
    ui.switch_session(fresh)
    ui.show_messages(limit=20)
    return text


async def import_session(ui: Screen, args: str) -> None:
    """``/import <file.jsonl>``: open a session file from elsewhere (its id and cwd are kept)."""
    from pi_mode_interactive.switching import switch_session

    path = os.path.expanduser(args.strip())
    if not path:
        ui.notice("Usage: /import <path to a session .jsonl file>", "warning")
        return
    path = os.path.abspath(os.path.join(ui.cwd, path))
    if not os.path.isfile(path):
        ui.notice(f"No session file at {path}", "error")
        return
    try:
        switched = await switch_session(ui, "resume", path)
    except Exception as exc:
        ui.notice(f"Could not import {path}: {exc}", "error")
        return
    if switched:
        ui.show_messages()
        ui.notice(f"Imported {path}")


async def double_escape(ui: Screen) -> None:
    """The ``doubleEscapeAction`` setting: ``tree`` (default), ``fork`` or ``none``."""
    action = _settings(ui).get("doubleEscapeAction", "tree")
    if action == "fork":
        await fork(ui)
    elif action != "none":
        await tree(ui)
