"""Leaving a branch with ``/tree``, optionally summarizing it (reference §6.10, §7.9).

:func:`navigate_tree` moves the leaf. Choosing a user message (or custom message) moves the leaf to
its parent and hands its text back for the editor; any other entry becomes the leaf. When the
caller wants a summary, the entries between the old leaf and the common ancestor are gathered
newest first within ``contextWindow - branchSummary.reserveTokens`` tokens (tool results left
out, context edits honoured), ``session_before_tree`` may cancel, supply the summary or override
the instructions/label, and a strategy's ``summarize_branch`` writes it. The summary is stored as
a ``branch_summary`` entry at the new position.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pi_host.lib.compaction.config import DEFAULT_CONTEXT_WINDOW, resolve_branch_settings
from pi_host.lib.compaction.errors import CompactionError
from pi_host.lib.compaction.estimate import estimate_message_tokens
from pi_host.lib.compaction.files import FileOps
from pi_host.lib.compaction.projection import entry_getter, path_to, project_entries
from pi_host.lib.compaction.results import json_value, strategy_summary, summary_of
from pi_host.lib.sessions.tree import navigation_target
from pi_host.protocol.abort import AbortController, AbortError

Entry = dict[str, Any]

EMPTY_BRANCH_SUMMARY = "No content to summarize."
_SUMMARY_ROLES = frozenset({"compactionSummary", "branchSummary"})


@dataclass
class BranchPreparation:
    target_id: str
    old_leaf_id: str | None
    common_ancestor_id: str | None
    entries_to_summarize: list[Entry]
    messages: list[Any]
    """What fits the budget, oldest first (tool results and omitted messages left out)."""
    file_ops: FileOps
    token_budget: int
    user_wants_summary: bool
    custom_instructions: str | None = None
    replace_instructions: bool = False
    label: str | None = None
    signal: Any = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "targetId": self.target_id,
            "oldLeafId": self.old_leaf_id,
            "commonAncestorId": self.common_ancestor_id,
            "entriesToSummarize": self.entries_to_summarize,
            "userWantsSummary": self.user_wants_summary,
        }
        if self.custom_instructions is not None:
            data["customInstructions"] = self.custom_instructions
        if self.replace_instructions:
            data["replaceInstructions"] = True
        if self.label is not None:
            data["label"] = self.label
        return data


def select_branch_messages(entries: list[Entry], edits_from: list[Entry], budget: int) -> list[Any]:
    """Newest first within ``budget`` tokens; a summary that overflows still fits while the total
    is under 90 % of the budget. Returned oldest first."""
    edits = [e for e in edits_from if e["type"] == "context_edit"]
    projected = project_entries(edits + entries, every_compaction=True)[len(edits) :]
    chosen: list[Any] = []
    total = 0
    for item in reversed(projected):
        for message in reversed(item.messages):
            role = getattr(message, "role", None)
            if role in ("toolResult", "system"):
                continue
            tokens = estimate_message_tokens(message)
            if total + tokens > budget:
                if role in _SUMMARY_ROLES and total < 0.9 * budget:
                    chosen.append(message)
                    total += tokens
                    continue
                chosen.reverse()
                return chosen
            chosen.append(message)
            total += tokens
    chosen.reverse()
    return chosen


def branch_file_ops(entries: list[Entry], messages: list[Any]) -> FileOps:
    ops = FileOps()
    for item in project_entries(entries):
        ops.add_messages(item.messages)
    for entry in entries:
        if entry["type"] == "branch_summary" and not entry.get("fromHook"):
            ops.add_details(entry.get("details"))
    return ops


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
    if compactor is not None:
        if compactor.is_busy:
            raise CompactionError("Compaction in progress: wait for it to finish")
        compactor._busy = True
        compactor._controller = controller
    try:
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
    finally:
        if compactor is not None:
            compactor._busy = False
            compactor._controller = None
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
