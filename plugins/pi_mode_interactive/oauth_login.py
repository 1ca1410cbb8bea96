"""``/login <provider>`` for a subscription: the sign-in flows of
:mod:`pi_host.config.oauth_providers` driven from the terminal UI.

The flow runs on a worker thread (it blocks on HTTP and on the callback server); what it asks
or shows is handed to the UI's event loop. A browser flow shows the URL and, at the same time,
a dialog to paste the redirect URL into; when the browser reaches the callback server first the
dialog closes by itself. Tokens are never shown, logged or put in the session.
"""

from __future__ import annotations

import asyncio
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pi_mode_interactive.screen_api import Screen


def offers_sign_in(provider: str) -> bool:
    from pi_host.config.oauth_providers import PROVIDERS

    return provider in PROVIDERS


def offers_set_up(provider: str) -> bool:
    """A provider whose login asks more than a key (Bedrock, Vertex, Cloudflare)."""
    from pi_host.config.cloud_logins import CLOUD_LOGINS

    return provider in CLOUD_LOGINS


async def sign_in(ui: Screen, provider: str) -> None:
    from pi_host.config.cloud_logins import CLOUD_LOGINS
    from pi_host.config.credentials import AuthStorage
    from pi_host.config.oauth_http import OAuthError
    from pi_host.config.oauth_login import Interaction
    from pi_host.config.oauth_providers import PROVIDERS
    from pi_mode_interactive.dialogs import TextDialog

    loop = asyncio.get_running_loop()
    set_up = provider not in PROVIDERS  # a cloud set-up (pi: an API-key login with questions)
    flow: Any = CLOUD_LOGINS[provider] if set_up else PROVIDERS[provider]

    def on_loop(coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, loop).result()

    def notify(event: dict[str, Any]) -> None:
        if event.get("type") == "auth_url":
            text = f"Open this URL to sign in:\n  {event['url']}\n{event.get('instructions') or ''}".rstrip()
            _open(str(event["url"]))
        elif event.get("type") == "device_code":
            text = f"Open {event['verificationUri']} and enter code: {event['userCode']}\nWaiting for authentication..."
            _open(str(event["verificationUri"]))
        else:
            links = [f"  {link.get('label', '')}: {link['url']}" for link in event.get("links") or ()]
            text = "\n".join([str(event.get("message") or ""), *links]).strip()
        if text:
            loop.call_soon_threadsafe(ui.notice, text)

    def select(message: str, options: list[tuple[str, str]]) -> str | None:
        return on_loop(ui.pick(message, [(key, label, "") for key, label in options]))

    async def ask(message: str, **options: Any) -> Any:
        return await ui.ask(TextDialog(message, **options))  # built on the loop: a dialog needs one

    def text(message: str, placeholder: str) -> str | None:
        return on_loop(ask(message, placeholder=placeholder))

    def manual_code(message: str, placeholder: str, done: threading.Event) -> str | None:
        dialog: dict[str, Any] = {}
        closed = threading.Event()

        async def ask() -> Any:
            if closed.is_set():  # the browser won before the dialog was up: never open it
                return None
            dialog["d"] = TextDialog(message, placeholder=placeholder)
            return await ui.ask(dialog["d"])

        def close() -> None:  # on the loop, like ask(): one of them sees the other's state
            if "d" in dialog:
                dialog["d"].finish(None)

        future = asyncio.run_coroutine_threadsafe(ask(), loop)
        while not future.done():
            if done.wait(0.1):  # the browser won: close the paste dialog
                closed.set()
                loop.call_soon_threadsafe(close)
                return None
        return future.result()

    def secret(message: str) -> str | None:
        return on_loop(ask(message, password=True))

    def catalog_ids(name: str) -> set[str]:
        return {model.id for model in ui.session.registry.provider_models(name)}

    interaction = Interaction(
        notify=notify,
        select=select,
        text=text,
        manual_code=manual_code,
        secret=secret,
        catalog_ids=catalog_ids,
    )
    try:
        credential = await asyncio.to_thread(flow.login, interaction)
    except OAuthError as exc:
        ui.notice(
            "Login cancelled" if str(exc) == "Login cancelled" else f"Failed to log in to {flow.name}: {exc}",
            "error",
        )
        return
    except asyncio.CancelledError:
        interaction.cancelled.set()
        raise
    storage = AuthStorage()
    try:
        storage.update(provider, credential)
    except (OSError, ValueError, TimeoutError) as exc:
        ui.notice(f"Could not save the credentials: {exc}", "error")
        return
    done = "Saved API key for" if set_up else "Logged in to"
    ui.notice(f"{done} {flow.name}. Credentials saved to {storage.path}")


def _open(url: str) -> None:
    import webbrowser

    try:
        webbrowser.open(url)
    except Exception:  # noqa: BLE001 (no browser here: the URL is on the screen)
        pass
