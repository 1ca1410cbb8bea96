"""Leaving a branch with ``/tree``, optionally summarizing it (reference §6.10, §7.9).

:func:`navigate_tree` moves the leaf. Choosing a user message (or custom message) moves the leaf to
its parent and hands its text back for the editor; any other entry becomes the leaf. When the
caller wants a summary, :mod:`pi_host.lib.compaction.branch` gathers what the summary is made from,
``session_before_tree`` may cancel, supply the summary or override the instructions/label, and a
strategy's ``summarize_branch`` writes it. The summary is stored as a ``branch_summary`` entry at
the new position.
"""

from __future__ import annotations

import contextlib
from typing import Any

from pi_host.lib.compaction.branch import (
    EMPTY_BRANCH_SUMMARY,
    BranchPreparation,
    branch_file_ops,
    select_branch_messages,
)
from pi_host.lib.compaction.config import DEFAULT_CONTEXT_WINDOW, resolve_branch_settings
from pi_host.lib.compaction.errors import CompactionError
from pi_host.lib.compaction.files import FileOps
from pi_host.lib.compaction.projection import entry_getter, path_to
from pi_host.lib.compaction.results import json_value, strategy_summary, summary_of
from pi_host.lib.sessions.tree import navigation_target
from pi_host.protocol.abort import AbortController, AbortError


async def navigate_tree(
    session: Any,
    target_id: str,
    summarize: bool = False,
    custom_instructions: str | None = None,
    label: str | None = None,
    replace_instructions: bool = False,
) -> dict[str, Any]:
    """Move the leaf to ``target_id``; returns ``{cancelled, editorText?, summaryEntry?, newLeafId}``.

    Raises ``KeyError`` for an unknown entry and :class:`CompactionError` when the summary failed
    (the leaf then stays where it was).
    """
    store = session.store
    get = entry_getter(store)
    target = get(target_id)
    if target is None:
        raise KeyError(f"Entry {target_id} not found")
    if getattr(session, "is_streaming", False):
        raise CompactionError("Cannot change branches while the agent is running")
    old_leaf = store.leaf_id()
    if target_id == old_leaf:
        return {"cancelled": False, "newLeafId": old_leaf}
    new_leaf, editor_text = navigation_target(target, get)
    old_path = path_to(store, old_leaf)
    target_ids = {e["id"] for e in path_to(store, target_id)}
    common = next((e["id"] for e in reversed(old_path) if e["id"] in target_ids), None)
    start = next((i + 1 for i, e in enumerate(old_path) if e["id"] == common), 0)
    entries = old_path[start:]
    settings = resolve_branch_settings(session.config.settings)
    wants = bool(summarize) and not settings.skip_prompt
    window = getattr(session.model, "context_window", None) or DEFAULT_CONTEXT_WINDOW
    budget = max(0, window - settings.reserve_tokens)
    controller = AbortController()
    compactor = getattr(session, "compactor", None)
    prep = BranchPreparation(
        target_id=target_id,
        old_leaf_id=old_leaf,
        common_ancestor_id=common,
        entries_to_summarize=entries,
        messages=select_branch_messages(entries, old_path, budget) if wants else [],
        file_ops=branch_file_ops(entries, []) if wants else FileOps(),
        token_budget=budget,
        user_wants_summary=wants,
        custom_instructions=custom_instructions,
        replace_instructions=replace_instructions,
        label=label,
        signal=controller.signal,
    )
    hold = compactor.exclusive(controller) if compactor is not None else contextlib.nullcontext()
    try:
        with hold:
            supplied, cancelled = await _before_tree(session, prep)
            if cancelled:
                return {"cancelled": True, "newLeafId": old_leaf}
            summary: dict[str, Any] | None = None
            from_hook = False
            if prep.user_wants_summary:
                if supplied is not None:
                    summary, from_hook = supplied, True
                elif not prep.messages:
                    summary = {"summary": EMPTY_BRANCH_SUMMARY}
                else:
                    summary = await _summarize_branch(session, prep)
                controller.signal.throw_if_aborted()
    except AbortError:
        return {"cancelled": True, "newLeafId": old_leaf}
    store.branch(new_leaf)
    entry = None
    if summary is not None:
        fields: dict[str, Any] = {
            "type": "branch_summary",
            "fromId": old_leaf or "root",
            "summary": summary["summary"],
        }
        for key in ("details", "usage"):
            value = summary.get(key)
            if value is not None:
                fields[key] = json_value(value)
        if from_hook:
            fields["fromHook"] = True
        entry = store.append(fields)
    if prep.label:
        store.append({"type": "label", "targetId": entry["id"] if entry else target_id, "label": prep.label})
    session.messages[:] = store.build_context().messages
    event: dict[str, Any] = {"newLeafId": store.leaf_id(), "oldLeafId": old_leaf, "targetId": target_id}
    if entry is not None:
        event["summaryEntry"] = entry
        event["fromExtension"] = from_hook
    await session.host.dispatch("session_tree", event, session.ctx)
    result: dict[str, Any] = {"cancelled": False, "newLeafId": store.leaf_id()}
    if editor_text is not None:
        result["editorText"] = editor_text
    if entry is not None:
        result["summaryEntry"] = entry
    return result


async def _before_tree(session: Any, prep: BranchPreparation) -> tuple[dict[str, Any] | None, bool]:
    """``session_before_tree``: ``(supplied summary, cancelled)``; overrides of the instructions
    and label land on ``prep`` (the event's rule folds them)."""
    outcome = await session.host.dispatch(
        "session_before_tree", {"preparation": prep, "signal": prep.signal}, session.ctx
    )
    if outcome is None:
        return None, False
    if outcome.get("cancel"):
        return None, True
    return summary_of(outcome["summary"]), False


async def _summarize_branch(session: Any, prep: BranchPreparation) -> dict[str, Any]:
    compactor = getattr(session, "compactor", None)
    if compactor is None:
        raise CompactionError("No compaction support is installed")
    name = compactor.settings().strategy
    return await strategy_summary(
        compactor.strategy(name, branch=True),
        "summarize_branch",
        prep,
        session.ctx,
        failed="Branch summary failed: strategy {name}: {error}",
        empty="Branch summary failed: strategy {name} returned no summary",
        on_error=compactor.report_strategy,
    )
