"""Every extension point of pi-host, declared in one place.

A plugin is a module (or object) with functions named after these specs and decorated with
``pi_host.hookimpl``. An implementation may accept any subset of a spec's arguments.

Two kinds of hook:

* **Registration hooks** (``register_*``) return a list of things (tools, providers, commands...).
  The host collects the lists of all plugins in load order. A plugin that raises is reported and
  skipped; the others still register.
* **Event hooks** (``on_*``) receive ``event`` (a dict shaped like pi's event payload, with pi's
  field names) and ``ctx`` (an :class:`pi_host.session.ExtensionContext`). Handlers run one at a
  time in load order; ``async def`` handlers are awaited. Returns follow one rule everywhere:

  - ``None`` means "no opinion";
  - a *stop* value ends the chain at once: a dict (or object) with a truthy ``cancel`` or
    ``block``, or ``action == "handled"``;
  - otherwise the **last non-None return wins**. Events documented as *chained* also fold each
    return into ``event`` before the next handler sees it.

  A handler that raises is reported (one line naming the plugin and event; ``extension_error`` in
  JSON mode) and the chain goes on, except where the spec says a raise blocks.

Load order: built-in plugins, installed third-party plugins (sorted by entry-point name),
``<agent dir>/extensions/*.py``, ``.pi/extensions/*.py``, then ``-e`` paths in the order given.
"""

from __future__ import annotations

from typing import Any

import pluggy

hookspec = pluggy.HookspecMarker("pi_host")

# ============================================================================================
# Registration hooks
# ============================================================================================


@hookspec
def register_providers() -> list[Any]:
    """Provider APIs this plugin implements: :class:`pi_host.plugins.registrations.ProviderApi` items.

    Each pairs an API name (``anthropic-messages``, ``openai-completions``...) with a stream
    function following :class:`pi_host.protocol.StreamFn`.
    """


@hookspec
def register_models() -> list[Any]:
    """Models and providers for the catalog: :class:`pi_host.plugins.registrations.ProviderInfo` items
    (a provider id, its base URL, API, key environment variables and models)."""


@hookspec
def register_tools(ctx: Any) -> list[Any]:
    """Tools (:class:`pi_host.loop.tools.Tool`) for a session. A tool named like a built-in replaces it
    (later plugins win). ``ctx`` is the session's :class:`pi_host.loop.tools.ToolContext`."""


@hookspec
def register_commands() -> list[Any]:
    """Slash commands: :class:`pi_host.plugins.registrations.Command` items. Duplicate names across
    plugins get ``:1``, ``:2`` suffixes in load order."""


@hookspec
def register_cli_flags() -> list[Any]:
    """Extra long CLI flags: :class:`pi_host.plugins.registrations.CliFlag` items; read them back with
    ``ctx.get_flag(name)``."""


@hookspec
def register_context_sources() -> list[Any]:
    """Sources of context: :class:`pi_host.plugins.registrations.ContextSource` items that contribute
    named system-prompt sections and may expand user input (skills, prompt templates)."""


@hookspec
def register_compaction_strategies() -> list[Any]:
    """Compaction and branch-summary strategies:
    :class:`pi_host.plugins.registrations.CompactionStrategy` items. The host decides when and where to
    cut; the strategy writes the summary. The setting ``compaction.strategy`` picks one by name."""


@hookspec
def register_modes() -> list[Any]:
    """Run modes and renderers (print, json, rpc, interactive...):
    :class:`pi_host.plugins.registrations.Mode` items, chosen by ``--mode`` / ``-p``."""


@hookspec
def register_session_stores() -> list[Any]:
    """Session stores: :class:`pi_host.plugins.registrations.SessionStoreFactory` items. The setting
    ``sessionStore`` picks one by name (default ``jsonl``); the host falls back to memory."""


@hookspec
def register_subcommands() -> list[Any]:
    """CLI subcommands (``pi <name> ...``): :class:`pi_host.plugins.registrations.Subcommand` items."""


# ============================================================================================
# Event hooks (reference §9.3). Each receives ``event`` (dict) and ``ctx``.
# ============================================================================================

# --- resources and session lifecycle --------------------------------------------------------


@hookspec
def on_project_trust(event: dict, ctx: Any) -> Any:
    """``{cwd}`` before project resources load. Return ``{"trusted": "yes"|"no"|"undecided",
    "remember": bool}``; the first yes/no wins (a stop)."""


@hookspec
def on_session_start(event: dict, ctx: Any) -> Any:
    """``{reason: startup|reload|new|resume|fork, previousSessionFile?}``. Return ignored."""


@hookspec
def on_resources_discover(event: dict, ctx: Any) -> Any:
    """``{cwd, reason}``. Return ``{skillPaths?, promptPaths?, themePaths?}``; all concatenated."""


@hookspec
def on_session_before_switch(event: dict, ctx: Any) -> Any:
    """``{reason: new|resume, targetSessionFile?}``. ``{"cancel": True}`` stops the switch."""


@hookspec
def on_session_before_fork(event: dict, ctx: Any) -> Any:
    """``{entryId, position: before|at}``. ``{"cancel": True}`` or ``{"skipConversationRestore": True}``."""


@hookspec
def on_session_before_compact(event: dict, ctx: Any) -> Any:
    """``{preparation, branchEntries, customInstructions?, reason, willRetry, signal}`` before a
    compaction. ``{"cancel": True}`` cancels; ``{"compaction": {summary, firstKeptEntryId,
    tokensBefore, usage?, details?}}`` supplies the summary (stored with ``fromHook``); the last
    returned compaction wins."""


@hookspec
def on_session_compact(event: dict, ctx: Any) -> Any:
    """``{compactionEntry, fromExtension, reason, willRetry}`` after a compaction. Ignored."""


@hookspec
def on_session_compact_failed(event: dict, ctx: Any) -> Any:
    """``{reason, errorMessage?, aborted, willRetry, fromExtension}``. Ignored."""


@hookspec
def on_session_before_tree(event: dict, ctx: Any) -> Any:
    """``{preparation: {targetId, oldLeafId, commonAncestorId, entriesToSummarize,
    userWantsSummary, customInstructions?, replaceInstructions?, label?}, signal}`` before the leaf
    moves. ``{"cancel": True}``, or ``{"summary": {summary, details?, usage?}}``, or overrides of
    ``customInstructions`` / ``replaceInstructions`` / ``label``."""


@hookspec
def on_session_tree(event: dict, ctx: Any) -> Any:
    """``{newLeafId, oldLeafId, summaryEntry?, fromExtension?}`` after the leaf moved. Ignored."""


@hookspec
def on_session_info_changed(event: dict, ctx: Any) -> Any:
    """``{name?}`` when the session name changes. Ignored."""


@hookspec
def on_session_shutdown(event: dict, ctx: Any) -> Any:
    """``{reason: quit|reload|new|resume|fork, targetSessionFile?}``. Ignored."""


# --- input and prompt ------------------------------------------------------------------------


@hookspec
def on_input(event: dict, ctx: Any) -> Any:
    """``{text, images?, source: interactive|rpc|extension|print, streamingBehavior?}``.
    ``{"action": "handled"}`` stops the prompt (a stop); ``{"action": "transform", "text",
    "images"?}`` replaces the input (chained); ``{"action": "continue"}`` or None goes on."""


@hookspec
def on_before_agent_start(event: dict, ctx: Any) -> Any:
    """``{messageType, prompt?, images?, message?, systemPrompt, systemPromptOptions}`` before a
    run. Return ``{"message"?: custom message, "systemPrompt"?: str}``: messages accumulate, the
    system prompt chains."""


# --- agent, turn and message events ---------------------------------------------------------


@hookspec
def on_agent_start(event: dict, ctx: Any) -> Any:
    """``{}`` when a run starts. Ignored."""


@hookspec
def on_agent_end(event: dict, ctx: Any) -> Any:
    """``{messages}`` when a run ends (not an idle signal; see ``agent_settled``). Ignored."""


@hookspec
def on_agent_before_settle(event: dict, ctx: Any) -> Any:
    """``{outcome, entries, continue, context}`` before the session settles (skipped after
    abort). Return ``{"entries"?, "continue"?}``; each replaces only that field (chained)."""


@hookspec
def on_agent_settled(event: dict, ctx: Any) -> Any:
    """``{aborted}`` when the session is idle again. Ignored."""


@hookspec
def on_turn_start(event: dict, ctx: Any) -> Any:
    """``{turnIndex, timestamp}``. Ignored."""


@hookspec
def on_turn_end(event: dict, ctx: Any) -> Any:
    """``{turnIndex, message, toolResults, ...}``. Return ``{"entries"?, "continue"?}`` (chained);
    ``continue: True`` guarantees one more provider request."""


@hookspec
def on_message_start(event: dict, ctx: Any) -> Any:
    """``{message}`` (any role). Ignored."""


@hookspec
def on_message_update(event: dict, ctx: Any) -> Any:
    """``{message, assistantMessageEvent}`` for each streamed assistant event. Ignored."""


@hookspec
def on_message_end(event: dict, ctx: Any) -> Any:
    """``{message}``. Return ``{"message": m}`` to replace it (same role; chained)."""


@hookspec
def on_tool_execution_start(event: dict, ctx: Any) -> Any:
    """``{toolCallId, toolName, args}``. Ignored."""


@hookspec
def on_tool_execution_update(event: dict, ctx: Any) -> Any:
    """``{toolCallId, toolName, args, partialResult}``. Ignored."""


@hookspec
def on_tool_execution_end(event: dict, ctx: Any) -> Any:
    """``{toolCallId, toolName, result, isError, durationMs?}``. Ignored."""


@hookspec
def on_event(event: dict, ctx: Any) -> Any:
    """Every session event as JSON mode prints it (``event["type"]`` names it), after the
    specific hook. For renderers, loggers and bridges. Ignored."""


# --- context and provider --------------------------------------------------------------------


@hookspec
def on_context(event: dict, ctx: Any) -> Any:
    """``{messages}``: a copy of the context without system messages, before each request.
    Return ``{"messages": [...]}`` to replace it (chained)."""


@hookspec
def on_context_with_system(event: dict, ctx: Any) -> Any:
    """``{messages}``: the full transcript. Return ``{"messages": [...]}`` (chained; keep a system
    message at index 0)."""


@hookspec
def on_before_provider_headers(event: dict, ctx: Any) -> Any:
    """``{headers}`` (mutable; set a value to None to delete it). Return ignored."""


@hookspec
def on_before_provider_request(event: dict, ctx: Any) -> Any:
    """``{payload}``: the request body. Any non-None return replaces it (chained)."""


@hookspec
def on_after_provider_response(event: dict, ctx: Any) -> Any:
    """``{status, headers}``. Ignored."""


@hookspec
def on_provider_stream_event(event: dict, ctx: Any) -> Any:
    """``{provider, api, model, data}`` for each raw stream chunk. Ignored."""


@hookspec
def on_cache_warming_decision(event: dict, ctx: Any) -> Any:
    """``{warmCost, missCost, continuationProbability, action}``. ``{"action"}``: last wins."""


@hookspec
def on_model_select(event: dict, ctx: Any) -> Any:
    """``{model, previousModel?, source: set|cycle}``. Ignored."""


@hookspec
def on_thinking_level_select(event: dict, ctx: Any) -> Any:
    """``{level, previousLevel}``. Ignored."""


# --- tools ------------------------------------------------------------------------------------


@hookspec
def on_tool_call(event: dict, ctx: Any) -> Any:
    """``{toolCallId, toolName, input, parentToolCallId?}`` with validated, mutable ``input``.
    ``{"block": True, "reason"?, "terminate"?}`` blocks the call (a stop). A handler that raises
    also blocks it, with the error as the result text."""


@hookspec
def on_tool_result(event: dict, ctx: Any) -> Any:
    """``{toolCallId, toolName, input, content, details, structuredContent?, isError, usage?}``.
    Return a partial patch of ``content``/``details``/``structuredContent``/``isError``/``usage``/
    ``terminate`` (chained); replacing ``content`` without ``structuredContent`` drops it."""


@hookspec
def on_user_bash(event: dict, ctx: Any) -> Any:
    """``{command, excludeFromContext, cwd}`` for ``!command`` input. ``{"result": ...}`` records
    a result without running; ``{"operations": ...}`` runs through a custom backend. A raise
    blocks the command."""


# --- UI and integrations ---------------------------------------------------------------------


@hookspec
def on_ui_prompt_start(event: dict, ctx: Any) -> Any:
    """``{reason: "ui_prompt", kind, title?}``. Ignored."""


@hookspec
def on_ui_prompt_end(event: dict, ctx: Any) -> Any:
    """``{reason: "ui_prompt", kind, title?}``. Ignored."""


@hookspec
def on_mcp_servers_change(event: dict, ctx: Any) -> Any:
    """``{servers}``. Ignored."""


EVENT_HOOKS: tuple[str, ...] = tuple(
    name[3:] for name in dir() if name.startswith("on_") and name != "on_event"
)
"""Every event name that has a specific ``on_<name>`` hook."""
