"""Compaction and branch summaries: the host's mechanism (reference §7).

The host decides *when* to compact (token threshold, provider overflow, ``/compact``) and *where*
to cut (pi's cut-point rules); a :class:`pi_host.plugins.registrations.CompactionStrategy` plugin decides
*what* the summary says. The session creates a :class:`Compactor` and calls it before prompts,
between turns and after runs.

Public helpers for strategy authors: :class:`CompactionPreparation` and
:class:`BranchPreparation` (what a strategy receives), :func:`serialize_conversation`,
:class:`FileOps` (read/modified file lists), :func:`complete_summary` (one summarization request
with pi's options and retry policy) and the token estimates.
"""

from pi_host.lib.compaction.branch import EMPTY_BRANCH_SUMMARY, BranchPreparation, navigate_tree
from pi_host.lib.compaction.compactor import Compactor, branch_context_tokens
from pi_host.lib.compaction.config import (
    BranchSummarySettings,
    CompactionSettings,
    CompactionSettingsError,
    resolve_branch_settings,
    resolve_settings,
    should_compact,
)
from pi_host.lib.compaction.cut import (
    ALREADY_COMPACTED,
    NOTHING_TO_COMPACT,
    CompactionPreparation,
    CutPoint,
    find_cut_point,
    prepare_compaction,
)
from pi_host.lib.compaction.errors import CompactionCancelled, CompactionError
from pi_host.lib.compaction.estimate import (
    estimate_context_tokens,
    estimate_message_tokens,
    estimate_messages_tokens,
)
from pi_host.lib.compaction.files import FileOps
from pi_host.lib.compaction.request import SummarizationError, SummaryResponse, add_usage, complete_summary
from pi_host.lib.compaction.serialize import serialize_conversation

__all__ = [
    "ALREADY_COMPACTED",
    "EMPTY_BRANCH_SUMMARY",
    "NOTHING_TO_COMPACT",
    "BranchPreparation",
    "BranchSummarySettings",
    "CompactionCancelled",
    "CompactionError",
    "CompactionPreparation",
    "CompactionSettings",
    "CompactionSettingsError",
    "Compactor",
    "CutPoint",
    "FileOps",
    "SummarizationError",
    "SummaryResponse",
    "add_usage",
    "branch_context_tokens",
    "complete_summary",
    "estimate_context_tokens",
    "estimate_message_tokens",
    "estimate_messages_tokens",
    "find_cut_point",
    "navigate_tree",
    "prepare_compaction",
    "resolve_branch_settings",
    "resolve_settings",
    "serialize_conversation",
    "should_compact",
]
