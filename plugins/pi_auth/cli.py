"""The terminal side of ``pi auth login|logout`` (pi 1.6.0's wording of usage and outcomes; the
flows themselves are :mod:`pi_host.config.oauth_providers`).

The sign-in runs on a worker thread while this thread waits, so Ctrl+C cancels it cleanly
(the flow sees ``cancelled`` at its next step and the callback server is closed). Messages go
to stdout, failures to stderr; no token is ever written to either.
"""

from __future__ import annotations

import sys
import threading
import webbrowser
from typing import Any

USAGE = """Usage:
  pi auth login <provider> [--api-key] [--no-browser]
  pi auth logout <provider>
  pi auth print-api-key [--provider <provider>] [--model <model>]
  pi auth print-bearer-token [--provider <provider>] [--model <model>] [--min-expiry <duration>]
  pi auth check [--provider <provider>] [--model <model>] [--json] [--credentials] [--no-refresh]

Log in to and out of model providers, print their credentials for external clients, or check
that they are ready. Credentials are stored in auth.json in the agent directory
(~/.pi/agent/auth.json), shared with pi.

Commands:
  login <provider>        Sign in with an account in the browser, or save an API key, then exit
  logout <provider>       Remove the stored credentials; environment variables and models.json stay
  print-api-key           Print the resolved API key
  print-bearer-token      Print a resolved OAuth bearer token (refreshes if expired)
  check                   Print ready, not_ready, or invalid; exit with 0, 1, or 2

Options for print-api-key, print-bearer-token, and check (at least one is required):
  --provider <provider>   Resolve credentials for a provider
  --model <model>         Resolve credentials from a model

Options for login:
  --api-key               Save an API key instead of signing in with an account
  --no-browser            Do not open a browser; use another sign-in method, e.g. device code

Other options:
  --min-expiry <duration> Minimum remaining token lifetime for print-bearer-token, e.g. 30m or 1h
  --json                  Print the check result as JSON
  --credentials           Emit the credential from check, or include it in JSON output
  --no-refresh            Do not refresh expired OAuth credentials during check
"""
LOGIN_USAGE = "Usage: pi auth login <provider> [--api-key] [--no-browser]"


def _out(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _err(line: str) -> int:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()
    return 1


def _read_line(prompt: str) -> str | None:
    sys.stdout.write(prompt)
    sys.stdout.flush()
    line = sys.stdin.readline()
    return None if line == "" else line.rstrip("\r\n")


class TerminalInteraction:
    """Builds the :class:`~pi_host.config.oauth_login.Interaction` for a terminal; ``browser``
    false is ``--no-browser`` (pi: take the sign-in method after the browser one, open nothing)."""

    def __init__(self, provider: str, browser: bool, ask_every_choice: bool = False) -> None:
        self.provider, self.browser, self.ask_every_choice = provider, browser, ask_every_choice
        self.skipped: list[str] = []

    def select(self, message: str, options: list[tuple[str, str]]) -> str | None:
        first, others = options[0], options[1:]
        if self.ask_every_choice:  # an API-key set-up: every option is offered (pi)
            return self._pick(message, options)
        if self.browser:
            self.skipped = [label for _, label in others]
            return first[0]
        if not others:
            return first[0]
        if len(others) == 1:
            _out(f"{message}: {others[0][1]}")
            return others[0][0]
        return self._pick(message, others)

    @staticmethod
    def _pick(message: str, options: list[tuple[str, str]]) -> str | None:
        _out(message)
        for index, (_, label) in enumerate(options, 1):
            _out(f"  {index}. {label}")
        while True:
            answer = _read_line(f"Select 1-{len(options)}: ")
            if answer is None:
                return None
            if answer.strip().isdigit() and 1 <= int(answer) <= len(options):
                return options[int(answer) - 1][0]
            _out(f"Enter a number from 1 to {len(options)}.")

    def notify(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "auth_url":
            _out(f"Open this URL to sign in:\n  {event['url']}")
            if event.get("instructions"):
                _out(str(event["instructions"]))
            if self.browser:
                webbrowser.open(str(event["url"]))
            if len(self.skipped) == 1:
                _out(f'To use "{self.skipped[0]}" instead, run "pi auth login {self.provider} --no-browser"')
        elif kind == "device_code":
            _out(f"Open {event['verificationUri']} and enter code: {event['userCode']}")
            if self.browser:
                webbrowser.open(str(event["verificationUri"]))
            _out("Waiting for authentication...")
        elif event.get("message"):
            _out(str(event["message"]))
            for link in event.get("links") or ():
                _out(f"  {link['label']}: {link['url']}" if link.get("label") else f"  {link['url']}")

    def text(self, message: str, placeholder: str) -> str | None:
        return _read_line(f"{message}{f' ({placeholder})' if placeholder else ''}: ")

    def manual_code(self, message: str, placeholder: str, done: threading.Event) -> str | None:
        answer = _read_line(f"{message}{f' ({placeholder})' if placeholder else ''}: ")
        if answer is None:  # no terminal input: only the browser callback can finish
            done.wait()
            return None
        return answer


def _name(provider: str) -> str:
    from pi_host.config.oauth_providers import PROVIDERS

    return PROVIDERS[provider].name if provider in PROVIDERS else provider


def login(argv: list[str]) -> int:
    from pi_host.config.cloud_logins import CLOUD_LOGINS
    from pi_host.config.credentials import AuthStorage
    from pi_host.config.oauth_login import Interaction
    from pi_host.config.oauth_providers import ANTHROPIC_REFUSAL, PROVIDERS

    api_key, browser, provider = False, True, ""
    for arg in argv:
        if arg == "--api-key":
            api_key = True
        elif arg == "--no-browser":
            browser = False
        elif arg.startswith("-") or provider:
            return _err(LOGIN_USAGE)
        else:
            provider = arg
    if not provider:
        return _err(LOGIN_USAGE)
    if api_key and not browser:
        return _err("--no-browser only applies to account sign-in; omit it with --api-key.")
    storage = AuthStorage()
    # a cloud set-up is pi's API-key login with questions: every choice is asked, nothing opens
    set_up = (api_key or provider not in PROVIDERS) and provider in CLOUD_LOGINS
    if not set_up and (api_key or provider not in PROVIDERS):
        if not api_key and provider == "anthropic":
            return _err(ANTHROPIC_REFUSAL)
        import getpass

        try:
            key = getpass.getpass(f"API key for {provider}: ") if sys.stdin.isatty() else _read_line("")
        except (EOFError, KeyboardInterrupt):
            return _err("Login cancelled.")
        if not key or not key.strip():
            return _err("No API key entered; nothing saved.")
        storage.set_api_key(provider, key.strip())
        _out(f"Saved API key for {provider}. Credentials saved to {storage.path}")
        return 0
    flow: Any = CLOUD_LOGINS[provider] if set_up else PROVIDERS[provider]
    front = TerminalInteraction(provider, browser and not set_up, ask_every_choice=set_up)
    interaction = Interaction(
        notify=front.notify,
        select=front.select,
        text=front.text,
        manual_code=front.manual_code,
        open_browser=browser and not set_up,
        secret=_secret,
        catalog_ids=_catalog_ids,
    )
    outcome: dict[str, Any] = {}

    def work() -> None:
        try:
            outcome["credential"] = flow.login(interaction)
        except Exception as exc:  # noqa: BLE001 (shown as one line below)
            outcome["error"] = str(exc) or type(exc).__name__

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    try:
        while worker.is_alive():
            worker.join(0.1)
    except KeyboardInterrupt:
        interaction.cancelled.set()
        worker.join(2)
        return _err("Login cancelled.")
    if "error" in outcome:
        if outcome["error"] == "Login cancelled":
            return _err("Login cancelled.")
        return _err(f"Failed to log in to {flow.name}: {outcome['error']}")
    try:
        storage.update(provider, outcome["credential"])
    except (OSError, ValueError, TimeoutError) as exc:
        return _err(f"Could not save the credentials: {exc}")
    _out(
        f"{'Saved API key for' if set_up else 'Logged in to'} {flow.name}. Credentials saved to {storage.path}"
    )
    return 0


def _catalog_ids(provider: str) -> set[str]:
    """The provider's model ids in the catalog of the plugins this command loaded."""
    from pi_host.config.models import ModelRegistry
    from pi_host.plugins.selection import last_loaded

    host = last_loaded()
    return {m.id for m in ModelRegistry.from_plugins(host).provider_models(provider)} if host else set()


def _secret(message: str) -> str | None:
    import getpass

    return getpass.getpass(f"{message}: ") if sys.stdin.isatty() else _read_line(f"{message}: ")


def logout(argv: list[str]) -> int:
    from pi_host.config.credentials import AuthStorage

    if len(argv) != 1 or argv[0].startswith("-"):
        return _err("Usage: pi auth logout <provider>")
    provider = argv[0]
    storage = AuthStorage()
    stored = storage.read()
    entry = stored.get(provider)
    if not isinstance(entry, dict):
        _out(
            f"No stored credentials for {_name(provider)}. Environment variables and models.json config are unchanged."
        )
        return 0
    try:
        storage.update(provider, None)
    except (OSError, ValueError, TimeoutError) as exc:
        return _err(f"Logout failed: {exc}")
    if entry.get("type") == "oauth":
        _out(f"Logged out of {_name(provider)}.")
    else:
        _out(
            f"Removed stored API key for {_name(provider)}. Environment variables and models.json config are unchanged."
        )
    return 0


def _refresh_catalog(provider: str) -> None:
    """After a login, as pi: refresh the provider's model list when it is fetched per key
    (OpenRouter); a failure is one line, the login stands."""
    import os

    from pi_host.config import model_store
    from pi_host.config.models import ModelRegistry
    from pi_host.plugins.selection import PluginRequest, last_loaded, load_plugins

    try:
        host = last_loaded() or load_plugins(PluginRequest(cwd=os.getcwd())).host
        registry = ModelRegistry.from_plugins(host)
        info = registry.providers.get(provider)
        if info is None or info.personalize is None:
            return
        errors = model_store.refresh(registry, [provider])
    except Exception as exc:  # noqa: BLE001 - reported, the login itself succeeded
        errors = {provider: str(exc) or type(exc).__name__}
    if provider in errors:
        _out(f"The {_name(provider)} model catalog could not be refreshed: {errors[provider]}")


def run(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help", "help") or "--help" in argv or "-h" in argv:
        sys.stdout.write(USAGE)
        return 0 if argv else 1
    command, rest = argv[0], argv[1:]
    if command == "login":
        code = login(rest)
        if code == 0 and rest:
            _refresh_catalog(next(a for a in rest if not a.startswith("-")))
        return code
    if command == "logout":
        return logout(rest)
    from pi_auth import credentials_cli

    if command in credentials_cli.KINDS:
        return credentials_cli.run(command, rest)
    return _err(
        f'Error: Unknown auth command "{command}". Use "pi auth login", "pi auth logout", '
        '"pi auth print-api-key", "pi auth print-bearer-token", or "pi auth check".'
    )
