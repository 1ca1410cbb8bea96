"""``/login openai-codex`` in the interactive mode, in-process: the browser flow against the
loopback authorization server; the paste dialog closes by itself when the browser reached the
callback server; the credential lands in auth.json and no token is shown."""

from __future__ import annotations

import asyncio
import json
import threading
import urllib.request
from typing import Any

from tests.config.test_oauth_flows import auth_server  # noqa: F401 - fixture
from tests.support.oauth_server import ACCOUNT


class FakeUI:
    def __init__(self) -> None:
        self.notices: list[str] = []
        self.dialogs: list[Any] = []

    def notice(self, text: str, kind: str = "info") -> None:
        self.notices.append(text)
        if text.startswith("Open this URL"):  # the user's browser follows the link
            url = text.splitlines()[1].strip()
            threading.Thread(target=lambda: urllib.request.urlopen(url).read(), daemon=True).start()

    async def pick(self, title: str, items: list[tuple[Any, str, str]], initial: Any = None) -> Any:
        return items[0][0]  # the browser login

    async def ask(self, dialog: Any, timeout: float | None = None, signal: Any = None) -> Any:
        self.dialogs.append(dialog)
        return await dialog.answer  # answered only by finish(): the flow closes it


async def test_login_signs_in_with_the_browser(auth_server, isolated_environment, monkeypatch):  # noqa: F811
    import webbrowser

    from pi_mode_interactive.settings_cmd import login

    monkeypatch.setattr(webbrowser, "open", lambda url: True)
    ui = FakeUI()
    await login(ui, "openai-codex")  # type: ignore[arg-type]
    entry = json.loads((isolated_environment["agent"] / "auth.json").read_text())["openai-codex"]
    assert entry["type"] == "oauth" and entry["accountId"] == ACCOUNT
    assert ui.notices[-1].startswith("Logged in to OpenAI (ChatGPT Plus/Pro).")
    await asyncio.sleep(0)  # the close scheduled on the loop by the login thread
    assert len(ui.dialogs) <= 1 and all(d.answer.done() for d in ui.dialogs)  # no paste dialog left
    assert not any(entry["access"] in n or entry["refresh"] in n for n in ui.notices)


async def test_login_anthropic_says_why_there_is_no_subscription_sign_in(isolated_environment):
    from pi_mode_interactive.settings_cmd import login

    ui = FakeUI()

    async def ask(dialog: Any, timeout: float | None = None, signal: Any = None) -> Any:
        return None  # the API-key dialog, dismissed

    ui.ask = ask  # type: ignore[method-assign]
    await login(ui, "anthropic")  # type: ignore[arg-type]
    assert "does not allow third-party harnesses" in ui.notices[0]
