"""``/settings``, ``/trust``, ``/login`` and ``/logout``: the files pi shares with pi-host,
edited from the terminal.

Settings go to ``<agent dir>/settings.json`` (:mod:`.settings_menu`); the trust decision to
``trust.json``; keys to ``auth.json`` (0600). A key typed into ``/login`` is
never shown, logged or put in the session.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pi_mode_interactive.screen_api import Screen


async def settings(ui: Screen, args: str = "") -> None:
    """pi's settings screen (searchable, described, theme preview): :mod:`.settings_menu`."""
    from pi_mode_interactive.settings_menu import settings as run

    await run(ui, args)


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
    from pi_mode_interactive.oauth_login import offers_set_up, offers_sign_in, sign_in

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
    if offers_sign_in(provider) or offers_set_up(provider):
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
