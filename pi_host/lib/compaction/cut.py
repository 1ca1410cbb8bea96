"""Where to cut: pi's cut-point rules and the prepared compaction (reference §7.3).

Over the projected entries from the previous compaction's retained tail (or the start) to the
leaf:

1. valid cut points are entries whose projection holds a user, assistant, bashExecution, custom,
   branchSummary or compactionSummary message (never a tool result: a result must stay with its
   call);
2. walking back from the leaf, the first entry where the estimates reach ``keepRecentTokens``
   picks the first cut point at or after it (else the last cut point); when the budget is never
   reached the cut is the first cut point (everything kept);
3. a trailing run of entries that project to nothing (omitted attempts, metadata) is not kept;
4. the cut moves back over directly preceding non-contributing entries (model changes, labels...);
5. a cut that does not start a turn splits that turn: its start goes to a separate prefix summary.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pi_host.lib.compaction.config import CompactionSettings
from pi_host.lib.compaction.estimate import estimate_message_tokens
from pi_host.lib.compaction.files import FileOps
from pi_host.lib.compaction.projection import ProjectedEntry, project_entries
from pi_host.lib.sessions.tree import context_entries

Entry = dict[str, Any]

CUT_ROLES = frozenset({"user", "assistant", "bashExecution", "custom", "branchSummary", "compactionSummary"})
TURN_START_ROLES = frozenset({"user", "bashExecution", "custom", "branchSummary", "compactionSummary"})
_CONTRIBUTING_TYPES = frozenset({"message", "custom_message", "branch_summary", "compaction"})

ALREADY_COMPACTED = "Already compacted"
NOTHING_TO_COMPACT = "Nothing to compact (session too small)"


@dataclass
class CutPoint:
    first_kept_index: int
    """Index into the projected entries; ``len(entries)`` keeps nothing (retain-none)."""
    turn_start_index: int = -1
    is_split_turn: bool = False


@dataclass
class CompactionPreparation:
    """Everything a strategy (and ``session_before_compact``) needs to write a summary."""

    first_kept_entry_id: str | None
    """None = keep nothing: the compaction entry then names itself (retain-none)."""
    messages_to_summarize: list[Any]
    """History before the kept part (before the split turn's start), system messages left out."""
    turn_prefix_messages: list[Any]
    """The start of a split turn (turn start → cut); empty unless ``is_split_turn``."""
    is_split_turn: bool
    tokens_before: int
    previous_summary: str | None
    file_ops: FileOps
    settings: CompactionSettings
    entries_to_summarize: list[Entry] = field(default_factory=list)
    kept_entries: list[Entry] = field(default_factory=list)
    reason: str = "manual"
    """``manual``, ``threshold`` or ``overflow``."""
    will_retry: bool = False
    custom_instructions: str | None = None
    signal: Any = None
    previous_compaction: Entry | None = None

    def to_json(self) -> dict[str, Any]:
        """pi's preparation shape (for logging and JSON bridges)."""
        return {
            "firstKeptEntryId": self.first_kept_entry_id,
            "messagesToSummarize": [m.to_json() for m in self.messages_to_summarize],
            "turnPrefixMessages": [m.to_json() for m in self.turn_prefix_messages],
            "isSplitTurn": self.is_split_turn,
            "tokensBefore": self.tokens_before,
            "previousSummary": self.previous_summary,
            "fileOps": {
                "read": sorted(self.file_ops.read),
                "written": sorted(self.file_ops.written),
                "edited": sorted(self.file_ops.edited),
            },
            "settings": self.settings.to_json(),
        }


def _is_cut_point(item: ProjectedEntry) -> bool:
    # decided on the raw entry: an omitted attempt can still be where the cut lands (rule 3)
    return any(role in CUT_ROLES for role in item.raw_roles)


def _starts_turn(item: ProjectedEntry) -> bool:
    return any(role in TURN_START_ROLES for role in item.roles())


def _tokens(item: ProjectedEntry) -> int:
    return sum(estimate_message_tokens(m) for m in item.messages if getattr(m, "role", None) != "system")


def find_cut_point(items: list[ProjectedEntry], keep_recent_tokens: int) -> CutPoint | None:
    """The cut over ``items`` (no leading compaction), or None when nothing can be a cut point."""
    cut_points = [i for i, item in enumerate(items) if _is_cut_point(item)]
    if not cut_points:
        return None
    cut = cut_points[0]
    total = 0
    for index in range(len(items) - 1, -1, -1):
        if items[index].type not in _CONTRIBUTING_TYPES:
            continue
        total += _tokens(items[index])
        if total >= keep_recent_tokens:
            cut = next((c for c in cut_points if c >= index), cut_points[-1])
            break
    # 3. a tail that projects to nothing (omitted attempts, metadata) is not worth keeping
    if not any(item.messages for item in items[cut:]):
        return CutPoint(len(items))
    # 4. keep the model/thinking changes, labels... that directly precede the kept part
    while cut > 0 and items[cut - 1].type not in _CONTRIBUTING_TYPES:
        cut -= 1
    first = next(i for i in range(cut, len(items)) if items[i].messages)
    if _starts_turn(items[first]):
        return CutPoint(cut)
    start = next((i for i in range(first - 1, -1, -1) if _starts_turn(items[i])), -1)
    return CutPoint(cut, start, start >= 0)


def _messages(items: list[ProjectedEntry]) -> list[Any]:
    return [m for item in items for m in item.messages if getattr(m, "role", None) != "system"]


def prepare_compaction(
    path: list[Entry], settings: CompactionSettings, tokens_before: int
) -> CompactionPreparation | str:
    """The prepared cut for the branch ``path``, or the reason there is nothing to do
    (:data:`ALREADY_COMPACTED` / :data:`NOTHING_TO_COMPACT`)."""
    if path and path[-1]["type"] == "compaction":
        return ALREADY_COMPACTED
    entries = context_entries(path)
    previous = entries[0] if entries and entries[0]["type"] == "compaction" else None
    items = project_entries(entries)
    if previous is not None:
        items = items[1:]
    cut = find_cut_point(items, settings.keep_recent_tokens)
    if cut is None:
        return NOTHING_TO_COMPACT
    history_end = cut.turn_start_index if cut.is_split_turn else cut.first_kept_index
    history = items[:history_end]
    prefix = items[cut.turn_start_index : cut.first_kept_index] if cut.is_split_turn else []
    to_summarize = _messages(history)
    prefix_messages = _messages(prefix)
    if not to_summarize and not prefix_messages:
        return NOTHING_TO_COMPACT
    file_ops = FileOps().add_messages(to_summarize).add_messages(prefix_messages)
    if previous is not None and not previous.get("fromHook"):
        file_ops.add_details(previous.get("details"))
    kept = items[cut.first_kept_index :]
    return CompactionPreparation(
        first_kept_entry_id=kept[0].id if kept else None,
        messages_to_summarize=to_summarize,
        turn_prefix_messages=prefix_messages,
        is_split_turn=cut.is_split_turn,
        tokens_before=tokens_before,
        previous_summary=(previous.get("summary") or "") if previous is not None else None,
        file_ops=file_ops,
        settings=settings,
        entries_to_summarize=[item.entry for item in items[: cut.first_kept_index]],
        kept_entries=[item.entry for item in kept],
        previous_compaction=previous,
    )
