"""The compaction mechanism the session drives (reference §7.1, §7.5-§7.8).

The session creates one :class:`Compactor` and calls it at four points: before a prompt
(:meth:`before_prompt`), between the turns of a run (:meth:`between_turns`), when a run ends
(:meth:`will_retry` while emitting ``agent_end``, then :meth:`after_run`) and on ``/compact``
(:meth:`compact`). The compactor decides *when* (token threshold, overflow) and *where* (the cut,
:mod:`pi_host.lib.compaction.cut`); a :class:`pi_host.plugins.registrations.CompactionStrategy` plugin or a
``session_before_compact`` handler decides *what* the summary says.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from pi_host.lib.compaction.config import (
    CompactionSettings,
    CompactionSettingsError,
    resolve_settings,
    should_compact,
)
from pi_host.lib.compaction.errors import CompactionCancelled, CompactionError
from pi_host.lib.compaction.estimate import (  # noqa: F401 (branch_context_tokens: the old import path)
    Entry,
    branch_context_tokens,
    context_tokens_back,
    estimate_fresh,
    last_assistant_predates_compaction,
    usage_is_valid,
)
from pi_host.lib.compaction.projection import branch_path, walk_back
from pi_host.lib.compaction.results import field_of, json_value, strategy_summary, summary_of
from pi_host.loop import events
from pi_host.protocol.abort import AbortController, AbortError
from pi_host.session.retry import omit_answer

if TYPE_CHECKING:  # the cut is imported by the first compaction, not by every session
    from pi_host.lib.compaction.cut import CompactionPreparation

RECOVERY_EXHAUSTED = (
    "Context overflow recovery failed: the context still did not fit after one compact-and-retry "
    "attempt. Start a new session or compact with a narrower focus."
)
_FAILURE_PREFIX = {
    "threshold": "Auto-compaction failed: ",
    "overflow": "Context overflow recovery failed: ",
    "manual": "Compaction failed: ",
}


class Compactor:
    def __init__(self, session: Any) -> None:
        self.session = session
        self._strategies: dict[str, Any] | None = None
        self._plugins: dict[int, str] = {}
        self._controller: AbortController | None = None
        self._busy = False
        self._recovery_attempted = False
        self._reported_settings: str | None = None

    # --- configuration ------------------------------------------------------------------------

    @property
    def is_busy(self) -> bool:
        """A compaction or branch summary is running."""
        return self._busy

    def settings(self) -> CompactionSettings:
        """The effective settings for the current model; bad values are reported once and the
        defaults used instead."""
        try:
            return resolve_settings(self.session.config.settings, self.session.model)
        except CompactionSettingsError as exc:
            if self._reported_settings != str(exc):
                self._reported_settings = str(exc)
                self.session.warn(f"settings: {exc}; the defaults are used")
            return CompactionSettings()

    def strategies(self) -> dict[str, Any]:
        """Registered strategies by name, in load order (a later one with the same name wins)."""
        if self._strategies is None:
            found: dict[str, Any] = {}
            for plugin, item in self.session.host.collect_named("register_compaction_strategies"):
                if callable(getattr(item, "summarize", None)) and isinstance(
                    getattr(item, "name", None), str
                ):
                    found.pop(item.name, None)
                    found[item.name] = item
                    self._plugins[id(item)] = plugin
            self._strategies = found
        return self._strategies

    def report_strategy(self, strategy: Any, method: str, error: BaseException) -> None:
        """Name the plugin whose strategy failed (its ``summarize``/``summarize_branch``)."""
        self.session.host.report(self._plugins.get(id(strategy), strategy.name), method, error)

    def strategy(self, name: str | None = None, branch: bool = False) -> Any:
        """The strategy named by ``compaction.strategy``; without a setting, the last registered
        one (third-party plugins load after the built-in ``llm``, so installing one replaces it)."""
        strategies = self.strategies()
        usable = {
            key: s
            for key, s in strategies.items()
            if not branch or callable(getattr(s, "summarize_branch", None))
        }
        if name:
            if name in usable:
                return usable[name]
            if name not in strategies:
                installed = ", ".join(strategies) or "none"
                raise CompactionError(f"No compaction strategy named {name!r} (installed: {installed})")
        if not usable:
            raise CompactionError(
                "No compaction strategy is installed (the built-in one is the pi_compaction_llm plugin)"
            )
        return list(usable.values())[-1]

    @contextlib.contextmanager
    def exclusive(self, controller: AbortController) -> Iterator[None]:
        """Hold the compactor for another summarizing job (a ``/tree`` branch summary): a second
        one is refused and :meth:`abort` reaches ``controller``."""
        if self._busy:
            raise CompactionError("Compaction in progress: wait for it to finish")
        self._busy, self._controller = True, controller
        try:
            yield
        finally:
            self._busy, self._controller = False, None

    def abort(self) -> None:
        """Cancel a running compaction or branch summary."""
        if self._controller is not None:
            self._controller.abort("Compaction cancelled")

    def context_tokens(self, path: list[Entry] | None = None) -> int:
        """The branch's context size now (usage-based where valid, §7.2)."""
        back = walk_back(self.session.store) if path is None else reversed(path)
        return context_tokens_back(back, self.session.messages)

    def context_usage(self) -> dict[str, Any]:
        """``{tokens, contextWindow, percent}``; tokens/percent are None right after a compaction,
        until a response reports usage again (§7.5)."""
        window = getattr(self.session.model, "context_window", None) or 0
        for entry in walk_back(self.session.store):
            if entry["type"] == "compaction":
                return {"tokens": None, "contextWindow": window, "percent": None}
            message = entry.get("message")
            if entry["type"] == "message" and isinstance(message, dict) and usage_is_valid(message):
                break
        tokens = self.context_tokens()
        percent = round(tokens / window * 100, 1) if window else None
        return {"tokens": tokens, "contextWindow": window, "percent": percent}

    def _over_threshold(self, settings: CompactionSettings) -> bool:
        window = getattr(self.session.model, "context_window", None)
        if not settings.enabled or not window:
            return False
        return should_compact(self.context_tokens(), window, settings)

    # --- the session's integration points ------------------------------------------------------

    async def before_prompt(self) -> None:
        """Pre-prompt threshold check (§7.1 b); also starts a new overflow-recovery budget."""
        if self._busy:
            raise CompactionError("Compaction in progress: wait for it to finish before prompting")
        self._recovery_attempted = False
        settings = self.settings()
        if not settings.enabled:
            return
        if last_assistant_predates_compaction(walk_back(self.session.store)):
            return
        if self._over_threshold(settings):
            await self._auto("threshold", False)

    async def between_turns(self, turn: dict[str, Any]) -> dict[str, Any] | None:
        """``prepare_next_turn``: compact mid-run when the context crossed the threshold."""
        settings = self.settings()
        if self._busy or not settings.enabled:
            return None
        if not self._over_threshold(settings):
            return None
        result = await self._auto("threshold", False, self._run_signal())
        if result is None:
            return None
        return {"context": list(self.session.messages)}

    def will_retry(self, final: Any) -> bool:
        """At ``agent_end``: will :meth:`after_run` compact and retry this prompt?"""
        return self._recovery_kind(final) == "retry"

    async def after_run(self, new_messages: list[Any], signal: Any = None) -> bool:
        """Overflow / length recovery (§7.6), else the post-run threshold check.

        Returns True when the context was compacted and the prompt should be retried.
        """
        if signal is not None and signal.aborted:
            return False
        final = next((m for m in reversed(new_messages) if getattr(m, "role", None) == "assistant"), None)
        kind = self._recovery_kind(final)
        if kind == "silent":
            await self._auto("overflow", False, signal)
            return False
        if kind == "exhausted":
            await self.session.emit_event(events.compaction_end("overflow", error_message=RECOVERY_EXHAUSTED))
            return False
        if kind == "retry":
            self._recovery_attempted = True
            await self._omit(final)
            # on failure the omission stays (file and context agree); the session still reports
            # the failed answer as the prompt's result through last_assistant()
            result = await self._auto("overflow", True, signal)
            return result is not None
        if final is None or final.stop_reason == "aborted":
            return False
        settings = self.settings()
        if settings.enabled and not last_assistant_predates_compaction(walk_back(self.session.store)):
            if self._over_threshold(settings):
                await self._auto("threshold", False, signal)
        return False

    async def compact(
        self, custom_instructions: str | None = None, *, raise_on_cancel: bool = True
    ) -> dict[str, Any] | None:
        """Manual compaction (§7.7): the result dict, or :class:`CompactionError` with pi's
        messages (``Already compacted``, ``Nothing to compact (session too small)``,
        ``Compaction cancelled``). Without ``raise_on_cancel`` a cancel returns None."""
        try:
            return await self.run("manual", False, custom_instructions)
        except CompactionCancelled:
            if raise_on_cancel:
                raise
            return None

    async def navigate_tree(self, target_id: str, **options: Any) -> dict[str, Any]:
        """Move the leaf to another branch, optionally summarizing the one left (§7.9); the
        options (``summarize``, ``custom_instructions``, ``label``, ``replace_instructions``) and
        the result are :func:`pi_host.runtime.tree_navigation.navigate_tree`'s."""
        from pi_host.runtime.tree_navigation import navigate_tree

        return await navigate_tree(self.session, target_id, **options)

    # --- recovery ------------------------------------------------------------------------------

    def _recovery_kind(self, final: Any) -> str | None:
        model = self.session.model
        if final is None or model is None or getattr(final, "role", None) != "assistant":
            return None
        if final.stop_reason == "aborted":
            return None
        if final.provider != model.provider or final.model != model.id:
            return None
        try:
            from pi_host.protocol.failures import is_context_overflow, is_recoverable_length_stop
        except ImportError:
            return None
        overflow = is_context_overflow(final, model.context_window)
        if not overflow and not is_recoverable_length_stop(final, model):
            return None
        if not self.settings().enabled:
            return None
        if final.stop_reason == "stop":
            return "silent"
        if self._recovery_attempted:
            return "exhausted"
        # Only promise a retry that can happen: a session too small to compact keeps the
        # failed answer as the result (print mode still reports the error / length stop).
        return "retry" if self._can_compact_without(final) else None

    def _can_compact_without(self, final: Any) -> bool:
        path = branch_path(self.session.store)
        last = getattr(self.session, "_last_entry", None)
        if last and last[0] is final and last[1]:
            path = [*path, {"type": "context_edit", "id": "?", "targetId": last[1], "replacement": None}]
        from pi_host.lib.compaction.cut import prepare_compaction

        return not isinstance(prepare_compaction(path, self.settings(), 0), str)

    async def _omit(self, final: Any) -> int | None:
        """Hide the failed attempt from the model (it stays in the file; ``entry_appended``
        announces the edit) and from the context; returns where it was in the context."""
        session = self.session
        await omit_answer(session, final)
        messages = session.messages
        for index in range(len(messages) - 1, -1, -1):
            if messages[index] is final:
                del messages[index]
                return index
        return None

    def _run_signal(self) -> Any:
        return getattr(self.session.ctx, "signal", None)

    # --- one compaction ------------------------------------------------------------------------

    async def _auto(self, reason: str, will_retry: bool, signal: Any = None) -> dict[str, Any] | None:
        try:
            return await self.run(reason, will_retry, None, signal)
        except CompactionError:
            return None  # already reported through compaction_end / session_compact_failed

    async def run(
        self,
        reason: str,
        will_retry: bool,
        custom_instructions: str | None = None,
        signal: Any = None,
    ) -> dict[str, Any]:
        """Prepare, let plugins cancel or supply a summary, summarize, append, rebuild."""
        session = self.session
        if self._busy:
            raise CompactionError("Compaction already in progress")
        if signal is not None and signal.aborted:
            raise CompactionCancelled()
        settings = self.settings()
        path = branch_path(session.store)
        from pi_host.lib.compaction.cut import prepare_compaction

        prepared = prepare_compaction(path, settings, self.context_tokens())
        if isinstance(prepared, str) and reason != "manual":
            # pi attempts no automatic compaction then: no compaction_start / _end pair
            raise CompactionError(prepared)
        self._busy = True
        controller = self._controller = AbortController()
        unlink = signal.add_listener(lambda: controller.abort("Compaction cancelled")) if signal else None
        from_hook = False
        await session.emit_event(events.compaction_start(reason))
        try:
            if isinstance(prepared, str):
                raise _NothingToDo(prepared)
            prepared.reason = reason
            prepared.will_retry = will_retry
            prepared.custom_instructions = custom_instructions
            prepared.signal = controller.signal
            supplied = await self._before_compact(prepared, path)
            controller.signal.throw_if_aborted()
            if supplied is not None:
                from_hook = True
                compaction = supplied
            else:
                compaction = await self._summarize(prepared, settings)
            controller.signal.throw_if_aborted()
            entry, result = self._append(compaction, prepared, from_hook)
        except _NothingToDo as exc:  # manual compaction only
            await self._failed(reason, str(exc), False, False)
            raise CompactionError(str(exc)) from None
        except (CompactionCancelled, AbortError):
            await self._failed(reason, "Compaction cancelled", True, from_hook, prefix=False)
            raise CompactionCancelled() from None
        except CompactionError as exc:
            await self._failed(reason, str(exc), False, from_hook)
            raise
        except Exception as exc:  # a store that cannot write, a broken provider...
            await self._failed(reason, f"{type(exc).__name__}: {exc}", False, from_hook)
            raise CompactionError(f"{type(exc).__name__}: {exc}") from exc
        finally:
            if unlink is not None:
                unlink()
            self._controller = None
            self._busy = False
        await session.host.dispatch(
            "session_compact",
            {"compactionEntry": entry, "fromExtension": from_hook, "reason": reason, "willRetry": will_retry},
            session.ctx,
        )
        await session.emit_event(events.compaction_end(reason, will_retry=will_retry, result=result))
        return result

    async def _before_compact(
        self, prepared: CompactionPreparation, path: list[Entry]
    ) -> dict[str, Any] | None:
        """``session_before_compact``: a cancel stops at once; the last supplied compaction wins
        (the event's rule checks it and names a plugin whose return is unusable)."""
        session = self.session
        event: dict[str, Any] = {
            "preparation": prepared,
            "branchEntries": path,
            "reason": prepared.reason,
            "willRetry": prepared.will_retry,
            "signal": prepared.signal,
        }
        if prepared.custom_instructions is not None:
            event["customInstructions"] = prepared.custom_instructions
        outcome = await session.host.dispatch("session_before_compact", event, session.ctx)
        if outcome is None:
            return None
        if _is_cancel(outcome):
            raise CompactionCancelled()
        compaction = outcome["compaction"]
        return {
            **summary_of(compaction),
            "firstKeptEntryId": field_of(compaction, "firstKeptEntryId") or prepared.first_kept_entry_id,
            "tokensBefore": field_of(compaction, "tokensBefore") or prepared.tokens_before,
        }

    async def _summarize(
        self, prepared: CompactionPreparation, settings: CompactionSettings
    ) -> dict[str, Any]:
        found = await strategy_summary(
            self.strategy(settings.strategy),
            "summarize",
            prepared,
            self.session.ctx,
            failed="strategy {name} failed: {error}",
            empty="strategy {name} returned no summary",
            on_error=self.report_strategy,
        )
        return {
            **found,
            "firstKeptEntryId": prepared.first_kept_entry_id,
            "tokensBefore": prepared.tokens_before,
        }

    def _append(
        self, compaction: dict[str, Any], prepared: CompactionPreparation, from_hook: bool
    ) -> tuple[Entry, dict[str, Any]]:
        from pi_host.lib.sessions.tree import current_system_message

        session = self.session
        store = session.store
        fields: dict[str, Any] = {
            "type": "compaction",
            "summary": compaction["summary"],
            "firstKeptEntryId": compaction.get("firstKeptEntryId"),
            "tokensBefore": int(compaction.get("tokensBefore") or 0),
        }
        if compaction.get("details") is not None:
            fields["details"] = compaction["details"]
        if compaction.get("usage") is not None:
            fields["usage"] = json_value(compaction["usage"])
        if from_hook:
            fields["fromHook"] = True
        system = current_system_message(store.build_context().messages)
        if system is not None:
            fields["systemMessage"] = system
        entry = store.append(fields)
        session.messages[:] = store.build_context().messages
        result: dict[str, Any] = {
            "summary": entry["summary"],
            "firstKeptEntryId": entry["firstKeptEntryId"],
            "tokensBefore": entry["tokensBefore"],
            "estimatedTokensAfter": estimate_fresh(session.messages),
        }
        if "usage" in entry:
            result["usage"] = entry["usage"]
        result["details"] = entry.get("details")
        return entry, result

    async def _failed(
        self, reason: str, message: str, aborted: bool, from_hook: bool, prefix: bool = True
    ) -> None:
        session = self.session
        text = (_FAILURE_PREFIX.get(reason, "") if prefix else "") + message
        await session.host.dispatch(
            "session_compact_failed",
            {
                "reason": reason,
                "errorMessage": text,
                "aborted": aborted,
                "willRetry": False,
                "fromExtension": from_hook,
            },
            session.ctx,
        )
        await session.emit_event(events.compaction_end(reason, aborted=aborted, error_message=text))


class _NothingToDo(CompactionError):
    """``Already compacted`` / ``Nothing to compact (session too small)``."""


def _is_cancel(result: Any) -> bool:
    return bool(field_of(result, "cancel"))
