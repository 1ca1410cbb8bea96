"""``/settings``, ``/trust``, ``/login`` and ``/logout``: the files pi shares with pi-host,
edited from the terminal.

Settings go to ``<agent dir>/settings.json`` (re-read under its lock, unknown keys kept); the
trust decision to ``trust.json``; keys to ``auth.json`` (0600). A key typed into ``/login`` is
never shown, logged or put in the session.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pi_mode_interactive.screen_api import Screen

LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh"]
BOOL = [True, False]


@dataclass
class Setting:
    key: str
    """Dotted key in settings.json."""
    label: str
    choices: list[Any] | Callable[[Screen], list[Any]] | None
    """The values to pick from (None: a model picker)."""
    default: Any


def _themes(ui: Screen) -> list[Any]:
    from pi_host.lib.render.themes import available_themes

    trusted = bool(getattr(ui.session.config, "project_trusted", True))
    return ["system", *[name for name in available_themes(ui.agent_dir, ui.cwd, trusted) if name != "system"]]


SETTINGS = [
    Setting("defaultThinkingLevel", "Default thinking level", LEVELS, "medium"),
    Setting("defaultModel", "Default model", None, None),
    Setting("compaction.enabled", "Auto-compaction", BOOL, True),
    Setting("steeringMode", "Steering mode (Enter while working)", ["one-at-a-time", "all"], "one-at-a-time"),
    Setting("followUpMode", "Follow-up mode (Alt+Enter)", ["one-at-a-time", "all"], "one-at-a-time"),
    Setting("theme", "Theme", _themes, "system"),
    Setting("quietStartup", "Quiet start-up", BOOL, False),
    Setting("hideThinkingBlock", "Hide thinking blocks", BOOL, False),
    Setting("doubleEscapeAction", "Double Escape", ["tree", "fork", "none"], "tree"),
    Setting(
        "treeFilterMode",
        "Tree filter",
        ["default", "no-tools", "user-only", "labeled-only", "all"],
        "default",
    ),
    Setting("branchSummary.skipPrompt", "Skip the branch-summary question", BOOL, False),
    Setting("retry.enabled", "Retry failed requests", BOOL, True),
    Setting("images.autoResize", "Resize images", BOOL, True),
    Setting("images.blockImages", "Never send images", BOOL, False),
    Setting("enableSkillCommands", "Skills as /skill: commands", BOOL, True),
]


def _get(data: dict[str, Any], dotted: str, default: Any) -> Any:
    node: Any = data
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return default
        node = node[part]
    return node


def _set(data: dict[str, Any], dotted: str, value: Any) -> None:
    parts = dotted.split(".")
    node = data
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = node[part] = {}
        node = child
    node[parts[-1]] = value


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    return "(none)" if value in (None, "") else str(value)


async def settings(ui: Screen, args: str = "") -> None:
    """A list of the common settings; picking one offers its values and saves the choice."""
    from pi_host.config.settings import update_user_settings, user_settings_path

    while True:
        if ui.session.config.settings is None:
            ui.session.config.settings = {}
        current = ui.session.config.settings
        items = []
        for setting in SETTINGS:
            value = _get(current, setting.key, setting.default)
            if setting.key == "defaultModel" and current.get("defaultProvider"):
                value = f"{current['defaultProvider']}/{value}" if value else None
            items.append((setting, setting.label, _show(value)))
        chosen = await ui.pick("Settings (saved to the user settings.json)", items)
        if chosen is None:
            return
        if chosen.key == "defaultModel":
            model = await _pick_model(ui)
            if model is None:
                continue
            changes = {"defaultProvider": model.provider, "defaultModel": model.id}
        else:
            options = chosen.choices(ui) if callable(chosen.choices) else list(chosen.choices or [])
            value = _get(current, chosen.key, chosen.default)
            picked = await ui.pick(
                f"Set {chosen.label}", [(option, _show(option), "") for option in options], initial=value
            )
            if picked is None:
                continue
            changes = {chosen.key: picked}
        try:
            update_user_settings(changes)
        except (OSError, ValueError) as exc:
            ui.notice(f"Could not save settings: {exc}", "error")
            return
        for key, value in changes.items():
            _set(current, key, value)  # this run follows the new value where it reads settings live
        _apply_now(ui, changes)
        shown = ", ".join(f"{key} = {_show(value)}" for key, value in changes.items())
        ui.notice(f"Saved {shown} to {user_settings_path()}")


async def _pick_model(ui: Screen) -> Any:
    registry = ui.session.registry
    ready = {f"{m.provider}/{m.id}" for m in registry.available()}
    items = [
        (
            model,
            f"{model.provider}/{model.id}",
            "key ✓" if f"{model.provider}/{model.id}" in ready else "no key",
        )
        for model in registry.models()
    ]
    return await ui.pick("Default model", items)


def _apply_now(ui: Screen, changes: dict[str, Any]) -> None:
    """Settings the open session can follow at once; the rest apply to the next session."""
    if "hideThinkingBlock" in changes:
        ui.transcript.show_thinking = not changes["hideThinkingBlock"]
    if "theme" in changes and hasattr(ui, "apply_theme"):
        ui.apply_theme(changes["theme"])
    config = ui.session.config
    for key, attribute in (("steeringMode", "steering_mode"), ("followUpMode", "follow_up_mode")):
        if key in changes and hasattr(config, attribute):
            setattr(config, attribute, changes[key])
            setattr(ui.session.agent, attribute, changes[key])  # read at each poll of a run


async def trust(ui: Screen, args: str = "") -> None:
    """Show whether this project's own resources load, and change the saved decision."""
    from pi_host.config.trust import protected_resources, save_trust_decision, saved_decision

    trusted = bool(getattr(ui.session.config, "project_trusted", True))
    resources = protected_resources(ui.cwd)
    saved = saved_decision(ui.cwd)
    lines = [f"Project {ui.cwd} is {'trusted' if trusted else 'not trusted'}"]
    if saved is not None:
        lines.append(f"  saved decision: {'trust' if saved[0] else 'do not trust'} ({saved[1]})")
    if resources:
        lines.append("  protected resources: " + ", ".join(os.path.relpath(p, ui.cwd) for p in resources))
    else:
        lines.append("  no project resources (.pi/settings.json, .pi/extensions, .pi/skills, ...) to protect")
    ui.notice("\n".join(lines))
    choice = await ui.pick(
        "Trust this project?",
        [
            (True, "Trust it", "its .pi/ settings, extensions, skills and prompts load"),
            (False, "Do not trust it", "its protected resources are skipped"),
        ],
        initial=trusted,
    )
    if choice is None:
        return
    try:
        save_trust_decision(ui.cwd, bool(choice))
    except (OSError, ValueError) as exc:
        ui.notice(f"Could not save the decision: {exc}", "error")
        return
    ui.notice(
        f"Saved: {'trust' if choice else 'do not trust'} {ui.cwd}"
        + (" (takes effect after /reload or on the next start)" if bool(choice) != trusted else "")
    )


def _providers(ui: Screen) -> list[str]:
    registry = ui.session.registry
    names = sorted({model.provider for model in registry.models()})
    return [name for name in names if registry.needs_key(name)]


async def login(ui: Screen, args: str = "") -> None:
    """``/login [provider]``: sign in with a subscription, or store an API key in auth.json."""
    from pi_host.config.credentials import AuthStorage
    from pi_mode_interactive.dialogs import TextDialog
    from pi_mode_interactive.oauth_login import offers_sign_in, sign_in

    provider = args.strip()
    if not provider:
        registry = ui.session.registry
        items = [(name, name, "key ✓" if registry.has_auth(name) else "no key") for name in _providers(ui)]
        # subscriptions (ChatGPT, Copilot...) sign in through the browser or a device code
        items = [
            (n, label, f"{note} · subscription" if offers_sign_in(n) else note) for n, label, note in items
        ]
        if not items:
            ui.notice("No provider needs a key")
            return
        provider = await ui.pick("Log in to a provider", items)
        if provider is None:
            return
    if offers_sign_in(provider):
        await sign_in(ui, provider)
        return
    if provider == "anthropic":
        from pi_host.config.oauth_providers import ANTHROPIC_REFUSAL

        ui.notice(ANTHROPIC_REFUSAL, "warning")
    key = await ui.ask(TextDialog(f"API key for {provider}", password=True))
    if key is None or not key.strip():
        ui.notice("Nothing saved")
        return
    storage = AuthStorage()
    try:
        storage.set_api_key(provider, key.strip())
    except (OSError, ValueError) as exc:
        ui.notice(f"Could not save the key: {exc}", "error")
        return
    ui.notice(f"Saved an API key for {provider} in {storage.path}")


async def logout(ui: Screen, args: str = "") -> None:
    """``/logout [provider]``: remove a provider's stored credential from auth.json."""
    from pi_host.config.credentials import AuthStorage

    storage = AuthStorage()
    stored = sorted(storage.read())
    provider = args.strip()
    if not provider:
        if not stored:
            ui.notice(f"No credentials are stored in {storage.path}")
            return
        provider = await ui.pick("Log out of a provider", [(name, name, "") for name in stored])
        if provider is None:
            return
    if provider not in stored:
        ui.notice(f"No credential for {provider} in {storage.path}", "warning")
        return
    try:
        storage.update(provider, None)
    except (OSError, ValueError) as exc:
        ui.notice(f"Could not update {storage.path}: {exc}", "error")
        return
    ui.notice(f"Removed the credential for {provider} from {storage.path}")
