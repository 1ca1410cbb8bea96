"""What a branch summary is made from when ``/tree`` leaves a branch (reference §6.10, §7.9):
the :class:`BranchPreparation` a strategy's ``summarize_branch`` receives, the messages chosen
newest first within ``contextWindow - branchSummary.reserveTokens`` tokens (tool results left
out, context edits honoured), and the files they read or changed. Moving the leaf and asking the
plugins is the runtime's part (:mod:`pi_host.runtime.tree_navigation`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pi_host.lib.compaction.estimate import estimate_message_tokens
from pi_host.lib.compaction.files import FileOps
from pi_host.lib.compaction.projection import project_entries

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
