"""Compaction and branch summaries: the host's mechanism (reference §7).

The host decides *when* to compact (token threshold, provider overflow, ``/compact``) and *where*
to cut (pi's cut-point rules); a :class:`pi_host.plugins.registrations.CompactionStrategy` plugin decides
*what* the summary says. This package holds the pieces (settings, cut points, estimates, requests,
serialization); the driver the session calls before prompts, between turns and after runs is the
runtime's :class:`pi_host.runtime.compactor.Compactor`.

Public helpers for strategy authors: :class:`CompactionPreparation` and
:class:`BranchPreparation` (what a strategy receives), :func:`serialize_conversation`,
:class:`FileOps` (read/modified file lists), :func:`complete_summary` (one summarization request
with pi's options and retry policy) and the token estimates.
"""

from pi_host._exports import lazy_exports

# Names load on first use: a session makes a Compactor on every run, but most runs never
# summarize anything (requests, serialization and branch summaries stay unimported).
_EXPORTS = {
    **dict.fromkeys(("EMPTY_BRANCH_SUMMARY", "BranchPreparation"), ".branch"),
    **dict.fromkeys(
        (
            "BranchSummarySettings",
            "CompactionSettings",
            "CompactionSettingsError",
            "resolve_branch_settings",
            "resolve_settings",
            "should_compact",
        ),
        ".config",
    ),
    **dict.fromkeys(
        (
            "ALREADY_COMPACTED",
            "NOTHING_TO_COMPACT",
            "CompactionPreparation",
            "CutPoint",
            "find_cut_point",
            "prepare_compaction",
        ),
        ".cut",
    ),
    **dict.fromkeys(("CompactionCancelled", "CompactionError"), ".errors"),
    **dict.fromkeys(
        (
            "branch_context_tokens",
            "estimate_context_tokens",
            "estimate_message_tokens",
            "estimate_messages_tokens",
        ),
        ".estimate",
    ),
    "FileOps": ".files",
    **dict.fromkeys(("SummarizationError", "SummaryResponse", "add_usage", "complete_summary"), ".request"),
    "serialize_conversation": ".serialize",
}

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
    "prepare_compaction",
    "resolve_branch_settings",
    "resolve_settings",
    "serialize_conversation",
    "should_compact",
]
__getattr__ = lazy_exports("pi_host.lib.compaction", _EXPORTS)
