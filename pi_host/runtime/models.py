"""Choosing the model and the thinking level, once for every mode (``/model``, Ctrl+P and Shift+Tab
in the terminal; ``set_model``, ``cycle_model``, ``set_thinking_level`` and
``cycle_thinking_level`` over RPC; ``ctx.set_model`` / ``ctx.set_thinking_level`` for plugins),
with pi's rules:

* A model switch takes the thinking level given with it (a scoped model's ``:level``), else the
  model's ``modelThinkingLevels`` entry, else ``defaultThinkingLevel``, else the current level,
  clamped to what the model supports.
* A level change is recorded and announced (``thinking_level_changed`` to listeners,
  ``thinking_level_select`` to plugins) only when the effective level changes.
* Cycling goes through the scoped models (``--models`` / ``enabledModels``) that have a usable key,
  or every model with one; a lone model, or a model that does not reason, has nothing to cycle.
"""

from __future__ import annotations

from typing import Any

from pi_host.config.model_scope import scope_patterns, scoped_models
from pi_host.lib.llm.tokens import clamp_thinking_level, supported_levels

DEFAULT_LEVEL = "medium"


def available_levels(session: Any) -> list[str]:
    """The thinking levels the session's model supports (``off`` alone without reasoning)."""
    return supported_levels(session.model) if session.model is not None else ["off"]


def level_for_switch(session: Any, model: Any, explicit: str | None = None) -> str:
    """pi's level for a switch to ``model`` (before clamping)."""
    if explicit:
        return explicit
    settings = session.config.settings if isinstance(session.config.settings, dict) else {}
    per_model = settings.get("modelThinkingLevels")
    if isinstance(per_model, dict) and per_model.get(f"{model.provider}/{model.id}"):
        return str(per_model[f"{model.provider}/{model.id}"])
    return str(settings.get("defaultThinkingLevel") or session.thinking_level or DEFAULT_LEVEL)


async def set_level(session: Any, level: str) -> str:
    """Set the thinking level (clamped to the model); recorded and announced only when it
    changes. Returns the effective level."""
    effective = clamp_thinking_level(session.model, level) if session.model is not None else "off"
    if effective != session.thinking_level:
        await session.set_thinking_level(effective)
    return effective


async def use_model(session: Any, model: Any, level: str | None = None, source: str = "set") -> str:
    """Switch to ``model`` (recorded even when it is the current one, as pi records it;
    ``model_select``) and to its thinking level; that level."""
    wanted = level_for_switch(session, model, level)
    await session.set_model(model, source=source)
    return await set_level(session, wanted)


def cycle_scope(session: Any, cli_patterns: Any = None) -> tuple[list[tuple[Any, str | None]], bool]:
    """The models Ctrl+P / ``cycle_model`` go through, each with its scoped level, and whether
    they are a scope (``--models`` / ``enabledModels``) rather than every model with a key."""
    registry = session.registry
    available = {(m.provider, m.id) for m in registry.available(session.model)}
    settings = session.config.settings if isinstance(session.config.settings, dict) else {}
    patterns = scope_patterns(cli_patterns) or scope_patterns(settings.get("enabledModels"))
    if patterns:
        scoped = [
            (m, lv) for m, lv in scoped_models(registry.models(), patterns) if (m.provider, m.id) in available
        ]
        if scoped:
            return scoped, True
    return [(m, None) for m in registry.available(session.model)], False


def _next(index: int, length: int, step: int) -> int | None:
    if length == 0:
        return None
    if index == -1:
        return 0 if step > 0 else length - 1
    if length == 1:
        return None
    return (index + step) % length


async def cycle_model(session: Any, cli_patterns: Any = None, step: int = 1) -> dict[str, Any] | None:
    """The next model of the scope: ``{model, thinkingLevel, isScoped}``, or None when there is
    nothing to cycle to."""
    scope, is_scoped = cycle_scope(session, cli_patterns)
    keys = [(m.provider, m.id) for m, _ in scope]
    current = (session.model.provider, session.model.id) if session.model is not None else None
    position = _next(keys.index(current) if current in keys else -1, len(scope), step)
    if position is None:
        return None
    model, level = scope[position]
    effective = await use_model(session, model, level, source="cycle")
    return {"model": model, "thinkingLevel": effective, "isScoped": is_scoped}


async def cycle_level(session: Any) -> str | None:
    """The next level the model supports; None for a model that does not reason."""
    if session.model is None or not session.model.reasoning:
        return None
    levels = available_levels(session)
    current = session.thinking_level
    return await set_level(
        session, levels[(levels.index(current) + 1) % len(levels) if current in levels else 0]
    )
