"""Choosing the model and the thinking level: ``/model`` and Ctrl+L (a picker over the models whose
provider has usable auth, as pi's),
Ctrl+P (cycle the scoped models: ``--models`` / the ``enabledModels`` setting), ``/scoped-models``,
``/thinking`` and Shift+Tab (the levels the model supports). Every change is recorded as pi's
``model_change`` / ``thinking_level_change`` entry by the session."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pi_host.config.model_scope import scope_patterns, scoped_models
from pi_host.config.models import THINKING_LEVELS
from pi_host.lib.llm.tokens import supported_levels

if TYPE_CHECKING:
    from pi_mode_interactive.screen_api import Screen


def _price(model: Any) -> str:
    cost = getattr(model, "cost", None)
    if cost is None or not (cost.input or cost.output):
        return "free"
    return f"${cost.input:g}/${cost.output:g} per M"


def _window(model: Any) -> str:
    tokens = model.context_window or 0
    return f"{tokens // 1_000_000}M" if tokens >= 1_000_000 else f"{tokens // 1000}k"


class ModelChooser:
    def __init__(self, ui: Screen) -> None:
        self.ui = ui
        settings = ui.session.config.settings if isinstance(ui.session.config.settings, dict) else {}
        cli = self.cli_scope = getattr(getattr(ui.request, "args", None), "models", None)
        self.scope = scoped_models(
            ui.session.registry.models(), scope_patterns(cli) or scope_patterns(settings.get("enabledModels"))
        )

    @property
    def session(self) -> Any:
        return self.ui.session

    async def choose(self, query: str = "") -> None:
        """``/model [pattern]``: set the model a pattern names, or pick one from the list."""
        registry = self.session.registry
        if query:
            try:
                model, level = registry.resolve_pattern(query)
            except LookupError as exc:
                self.ui.notice(str(exc.args[0] if exc.args else exc), "error")
                return
            await self.use(model, level)
            return
        current = self.session.model
        # pi offers the models whose provider has usable auth (and the scripted faux only in use)
        items = [
            (model, f"{model.provider}/{model.id}", f"{_window(model)} ctx · {_price(model)}")
            for model in registry.available(current)
        ]
        if not items:
            self.ui.notice("No models with a key: set one (e.g. ANTHROPIC_API_KEY) or use /login", "warning")
            return
        picked, save = await self._pick_model(items, current)
        if picked is None:
            return
        await self.use(picked)
        if save:  # Ctrl+S: pi's "save as default" in the same picker
            self._save_default(picked)

    async def _pick_model(self, items: list[tuple[Any, str, str]], current: Any) -> tuple[Any, bool]:
        from pi_mode_interactive.dialogs import SelectDialog

        dialog = SelectDialog(
            "Select a model  (enter: use · ctrl+s: use and save as default)", items, current
        )

        @dialog.keys.add("c-s", eager=True)
        def _save(event: Any) -> None:
            dialog.finish(("save", dialog.picker.selected_value))

        answer = await self.ui.ask(dialog)
        if isinstance(answer, tuple) and answer[:1] == ("save",):
            return answer[1], answer[1] is not None
        return answer, False

    def _save_default(self, model: Any) -> None:
        from pi_host.config.settings import update_user_settings, user_settings_path

        changes = {"defaultProvider": model.provider, "defaultModel": model.id}
        try:
            update_user_settings(changes)
        except (OSError, ValueError) as exc:
            self.ui.notice(f"Could not save the default model: {exc}", "error")
            return
        settings = self.session.config.settings
        if isinstance(settings, dict):
            settings.update(changes)
        self.ui.notice(f"Default model {model.provider}/{model.id} saved to {user_settings_path()}")

    async def use(self, model: Any, level: str | None = None) -> None:
        from pi_host.runtime.models import use_model

        effective = await use_model(self.session, model, level)
        self.ui.notice(f"Model: {model.provider}/{model.id} • thinking {effective}")

    async def cycle(self, step: int = 1) -> None:
        """Ctrl+P: the next scoped model (every model with a key when nothing is scoped)."""
        from pi_host.runtime.models import cycle_model

        result = await cycle_model(self.session, self.cli_scope, step)
        if result is None:
            self.ui.notice("No other model to cycle to", "warning")
            return
        model = result["model"]
        self.ui.notice(f"Model: {model.provider}/{model.id} • thinking {result['thinkingLevel']}")

    async def set_level(self, level: str, quiet: bool = False) -> None:
        from pi_host.runtime.models import set_level

        clamped = await set_level(self.session, level)
        if not quiet:
            note = "" if clamped == level else f" ({level} is not supported by this model)"
            self.ui.notice(f"Thinking: {clamped}{note}")

    async def thinking(self, level: str = "") -> None:
        """``/thinking [level]``: set it, or pick one of the levels the model supports."""
        if level:
            if level not in THINKING_LEVELS:
                self.ui.notice(
                    f"Unknown thinking level {level!r} (one of {', '.join(THINKING_LEVELS)})", "error"
                )
                return
            await self.set_level(level)
            return
        from pi_mode_interactive.help_text import THINKING

        levels = supported_levels(self.session.model)
        picked = await self.ui.pick(
            "Thinking level",
            [(name, name, THINKING.get(name, "")) for name in levels],
            initial=self.session.thinking_level,
        )
        if picked is not None:
            await self.set_level(picked)

    async def cycle_thinking(self) -> None:
        """Shift+Tab: the next level the model supports."""
        from pi_host.runtime.models import cycle_level

        level = await cycle_level(self.session)
        if level is None:
            self.ui.notice("This model has no thinking levels", "warning")
        else:
            self.ui.notice(f"Thinking: {level}")

    async def choose_scope(self) -> None:
        """``/scoped-models``: Enter toggles a model in or out of the Ctrl+P cycle, Escape ends;
        the choice can be saved as ``enabledModels`` in the user's settings."""
        chosen = [f"{m.provider}/{m.id}" for m, _ in self.scope]
        last = None
        while True:
            offered = self.session.registry.available(self.session.model)
            items = [
                (key, f"{'[x]' if key in chosen else '[ ]'} {key}", "")
                for key in (f"{m.provider}/{m.id}" for m in offered)
            ]
            picked = await self.ui.pick("Scoped models (enter toggles, esc ends)", items, initial=last)
            if picked is None:
                break
            last = picked
            chosen.remove(picked) if picked in chosen else chosen.append(picked)
        self.scope = scoped_models(self.session.registry.models(), chosen)
        self.ui.notice(
            f"Ctrl+P cycles {len(self.scope)} model(s)"
            if self.scope
            else "Ctrl+P cycles every model with a key"
        )
        if await self.session.ctx.ui.confirm("Save as enabledModels in your settings?"):
            from pi_host.config.settings import DELETE, update_user_settings

            update_user_settings({"enabledModels": chosen or DELETE})
            self.ui.notice("Saved enabledModels")
