"""Start-up, resources and the session's life: trust, start, discovery, compaction, tree moves,
renames, shutdown (reference §9.3, §7.8, §7.9)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NotRequired, TypedDict

from pi_host.plugins.hookspecs._marker import hookspec
from pi_host.plugins.rules import IGNORED, BadReturn, Corrected, Rule, expect_dict, flag, returns

__all__ = [
    "on_mcp_servers_change",
    "on_project_trust",
    "on_resources_discover",
    "on_session_before_compact",
    "on_session_before_tree",
    "on_session_compact",
    "on_session_compact_failed",
    "on_session_info_changed",
    "on_session_shutdown",
    "on_session_start",
    "on_session_tree",
]


if TYPE_CHECKING:  # payload types, for type checkers and readers (free at run time)

    class ProjectTrustEvent(TypedDict):
        cwd: str

    class TrustVote(TypedDict):
        trusted: str
        """``yes``, ``no`` or ``undecided``."""
        remember: NotRequired[bool]
        """Save a yes/no in ``trust.json``; otherwise it holds for this process only."""


def _check_vote(event: dict[str, Any], result: Any) -> TrustVote:
    vote = expect_dict(result)
    if vote.get("trusted") not in ("yes", "no", "undecided"):
        raise BadReturn(f'trusted must be "yes", "no" or "undecided", got {vote.get("trusted")!r}')
    return vote  # type: ignore[return-value]


@hookspec
@returns(Rule("first yes/no wins", check=_check_vote, stop=lambda vote: vote["trusted"] != "undecided"))
def on_project_trust(event: ProjectTrustEvent, ctx: Any) -> TrustVote | None:
    """Before the project's protected resources load (``.pi/`` settings, extensions, skills,
    templates...), when no ``-a``/``-na`` decided. Only plugins from outside the project take
    part. ``ctx`` is a :class:`pi_host.plugins.selection.TrustContext`."""


if TYPE_CHECKING:

    class SessionStartEvent(TypedDict):
        reason: str
        """``startup``, ``reload``, ``new``, ``resume`` or ``fork``."""
        previousSessionFile: NotRequired[str]


@hookspec
@returns(IGNORED)
def on_session_start(event: SessionStartEvent, ctx: Any) -> None:
    """The session is open (its store restored, tools and sources registered)."""


if TYPE_CHECKING:

    class ResourcesDiscoverEvent(TypedDict):
        cwd: str
        reason: str
        """``startup`` or ``reload``."""

    class DiscoveredPaths(TypedDict, total=False):
        skillPaths: list[str]
        promptPaths: list[str]
        themePaths: list[str]


PATH_KEYS = ("skillPaths", "promptPaths", "themePaths")


def _check_paths(event: dict[str, Any], result: Any) -> DiscoveredPaths:
    found = expect_dict(result)
    for key in PATH_KEYS:
        value = found.get(key)
        if value is not None and not (isinstance(value, list) and all(isinstance(p, str) for p in value)):
            raise BadReturn(f"{key} must be a list of paths")
    return found  # type: ignore[return-value]


def _concatenate(results: list[Any]) -> DiscoveredPaths:
    return {key: [path for result in results for path in result.get(key) or ()] for key in PATH_KEYS}  # type: ignore[return-value]


@hookspec
@returns(Rule("all concatenated", check=_check_paths, combine=_concatenate))
def on_resources_discover(event: ResourcesDiscoverEvent, ctx: Any) -> DiscoveredPaths | None:
    """Once per session, right after ``session_start`` (again on reload): more skill, prompt
    template and theme paths. ``ctx.discovered_paths(key)`` gives every plugin the result."""


if TYPE_CHECKING:

    class SessionBeforeCompactEvent(TypedDict):
        preparation: Any
        """A :class:`pi_host.lib.compaction.CompactionPreparation` (the cut, the messages)."""
        branchEntries: list[dict[str, Any]]
        reason: str
        willRetry: bool
        signal: Any
        customInstructions: NotRequired[str]

    class SuppliedCompaction(TypedDict, total=False):
        cancel: bool
        compaction: dict[str, Any]
        """``{summary, firstKeptEntryId?, tokensBefore?, details?, usage?}`` (stored ``fromHook``)."""


def _check_compaction(event: dict[str, Any], result: Any) -> Any:
    result = expect_dict(result)
    compaction = result.get("compaction")
    if compaction is None:
        return result if result.get("cancel") else None
    summary = (
        compaction.get("summary") if isinstance(compaction, dict) else getattr(compaction, "summary", None)
    )
    if not isinstance(summary, str) or not summary.strip():
        raise BadReturn("a compaction without a summary")
    first_kept = compaction.get("firstKeptEntryId") if isinstance(compaction, dict) else None
    if first_kept is not None and first_kept not in {e.get("id") for e in event["branchEntries"]}:
        corrected = {**result, "compaction": {k: v for k, v in compaction.items() if k != "firstKeptEntryId"}}
        raise Corrected(
            f"firstKeptEntryId {first_kept!r} is not on the current branch; the prepared cut is used",
            corrected,
        )
    return result


@hookspec
@returns(Rule("a cancel stops; the last compaction wins", check=_check_compaction, stop=flag("cancel")))
def on_session_before_compact(event: SessionBeforeCompactEvent, ctx: Any) -> SuppliedCompaction | None:
    """Before a compaction: cancel it, or supply the summary instead of the strategy."""


@hookspec
@returns(IGNORED)
def on_session_compact(event: dict[str, Any], ctx: Any) -> None:
    """``{compactionEntry, fromExtension, reason, willRetry}`` after a compaction."""


@hookspec
@returns(IGNORED)
def on_session_compact_failed(event: dict[str, Any], ctx: Any) -> None:
    """``{reason, errorMessage?, aborted, willRetry, fromExtension}`` when a compaction failed
    or was cancelled."""


if TYPE_CHECKING:

    class SessionBeforeTreeEvent(TypedDict):
        preparation: Any
        """A :class:`pi_host.lib.compaction.BranchPreparation`: ``targetId``, ``oldLeafId``,
        ``entriesToSummarize``, ``userWantsSummary``, ``customInstructions``, ``label``..."""
        signal: Any

    class TreeDecision(TypedDict, total=False):
        cancel: bool
        summary: dict[str, Any]
        """``{summary, details?, usage?}`` for the branch left behind."""
        customInstructions: str
        replaceInstructions: bool
        label: str


_OVERRIDES = {
    "customInstructions": "custom_instructions",
    "replaceInstructions": "replace_instructions",
    "label": "label",
}


def _check_tree(event: dict[str, Any], result: Any) -> Any:
    result = expect_dict(result)
    summary = result.get("summary")
    if summary is not None:
        text = summary.get("summary") if isinstance(summary, dict) else getattr(summary, "summary", None)
        if not isinstance(text, str) or not text.strip():
            raise BadReturn("a summary without summary text")
    return result


def _fold_tree(event: dict[str, Any], result: Any) -> None:
    for key, attribute in _OVERRIDES.items():
        if key in result:
            value = result[key]
            setattr(event["preparation"], attribute, bool(value) if key == "replaceInstructions" else value)


@hookspec
@returns(
    Rule(
        "a cancel stops; overrides chain; the last summary wins",
        check=_check_tree,
        stop=flag("cancel"),
        fold=_fold_tree,
        combine=lambda results: next((r for r in reversed(results) if r.get("summary") is not None), None),
    )
)
def on_session_before_tree(event: SessionBeforeTreeEvent, ctx: Any) -> TreeDecision | None:
    """Before the leaf moves to another entry (``ctx.navigate_tree``, ``/tree``)."""


@hookspec
@returns(IGNORED)
def on_session_tree(event: dict[str, Any], ctx: Any) -> None:
    """``{newLeafId, oldLeafId, summaryEntry?, fromExtension?}`` after the leaf moved."""


@hookspec
@returns(IGNORED)
def on_mcp_servers_change(event: dict[str, Any], ctx: Any) -> None:
    """``{servers}`` (each server's name, status and tools) when an MCP server connects, fails,
    goes away or restarts (the built-in ``mcp`` plugin)."""


@hookspec
@returns(IGNORED)
def on_session_info_changed(event: dict[str, Any], ctx: Any) -> None:
    """``{name?}`` after the session's name was set (``ctx.set_session_name``); also a session
    event."""


@hookspec
@returns(IGNORED)
def on_session_shutdown(event: dict[str, Any], ctx: Any) -> None:
    """``{reason: quit|reload|new|resume|fork, targetSessionFile?}`` before the session closes."""
