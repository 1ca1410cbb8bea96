"""Credentials: config-value syntax and ``auth.json`` (reference §3.10).

Config values (models.json ``apiKey`` and header values, auth.json ``key``):

* ``!command``  run through the shell (10 s timeout); trimmed stdout, or unresolved when the
  output is empty, the exit status non-zero or the time runs out;
* otherwise ``$NAME`` / ``${NAME}`` come from the environment (an unset variable leaves the whole
  value unresolved), ``$$`` is ``$``, ``$!`` is ``!``, everything else is literal.

``auth.json`` lives in the agent dir, is kept at mode 0600 and is written under the lock pi uses
(:mod:`pi_host.config.json_files`), so pi and pi-host can share it. Expiring OAuth tokens are
refreshed as pi does (:mod:`pi_host.config.oauth_refresh`).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from collections.abc import Mapping
from typing import Any

from pi_host.config import paths
from pi_host.config.json_files import update_json_file

COMMAND_TIMEOUT_S = 10
_VAR = re.compile(r"\$(\$|!|\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")
_command_cache: dict[str, str | None] = {}


class _Unresolved(Exception):
    pass


def secret_values(value: Any) -> list[str]:
    """A credential value as error texts may repeat it: whole, and a ``Bearer``/``Basic``/``Token``
    value also without its scheme (a server may echo the token alone)."""
    if not isinstance(value, str):
        return []
    scheme, _, token = value.strip().partition(" ")
    if token and scheme.lower() in ("bearer", "basic", "token"):
        return [value, token.strip()]
    return [value]


def run_command(command: str) -> str | None:
    try:
        done = subprocess.run(
            command,
            shell=True,
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )
    except (subprocess.TimeoutExpired, OSError):
        return None
    value = done.stdout.strip()
    if done.returncode != 0 or not value:
        return None
    return value


def resolve_config_value(
    value: str | None, env: Mapping[str, str] | None = None, *, cache_commands: bool = False
) -> str | None:
    """The resolved value, or None when it cannot be resolved (see the module doc)."""
    if value is None:
        return None
    if not isinstance(value, str):
        return str(value)
    if value.startswith("!"):
        command = value[1:]
        if cache_commands and command in _command_cache:
            return _command_cache[command]
        result = run_command(command)
        if cache_commands:
            _command_cache[command] = result
        return result
    environ = os.environ if env is None else env

    def substitute(match: re.Match[str]) -> str:
        token = match.group(1)
        if token == "$":
            return "$"
        if token == "!":
            return "!"
        name = match.group(2) or match.group(3)
        found = environ.get(name)
        if found is None or found == "":
            raise _Unresolved(name)
        return found

    try:
        resolved = _VAR.sub(substitute, value)
    except _Unresolved:
        return None
    return resolved or None


def resolve_headers(
    headers: Mapping[str, str] | None, env: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Header values resolved like config values; unresolved headers are left out."""
    out: dict[str, str] = {}
    for name, value in (headers or {}).items():
        resolved = resolve_config_value(value, env)
        if resolved is not None:
            out[name] = resolved
    return out


# --- auth.json -------------------------------------------------------------------------------------


def auth_path() -> str:
    return os.path.join(paths.agent_dir(), "auth.json")


class AuthStorage:
    """Reads and writes ``auth.json`` (``{provider: {type: api_key|oauth, ...}}``)."""

    def __init__(self, path: str | None = None) -> None:
        self.path = auth_path() if path is None else path
        """``""``: no file (a catalog built without an agent dir: keys from arguments and the
        environment only)."""
        self.problem: str | None = None
        self.oauth_problems: dict[str, str] = {}
        """Per provider, why its OAuth token could not be refreshed (for the error shown)."""

    def read(self) -> dict[str, Any]:
        if not self.path:
            return {}
        try:
            with open(self.path, encoding="utf-8") as handle:
                data = json.load(handle)
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            self.problem = f"{self.path}: {exc}"
            return {}
        return data if isinstance(data, dict) else {}

    def get(self, provider: str) -> dict[str, Any] | None:
        entry = self.read().get(provider)
        return entry if isinstance(entry, dict) else None

    def update(self, provider: str, credential: dict[str, Any] | None) -> None:
        """Store (or with None remove) one provider's credential, under the shared lock; the
        file stays 0600. An unreadable auth.json is left alone (``ValueError``)."""

        def change(data: dict[str, Any]) -> None:
            if credential is None:
                data.pop(provider, None)
            else:
                data[provider] = credential

        update_json_file(self.path, change, mode=0o600)

    def _oauth_access(self, provider: str, entry: dict[str, Any]) -> str | None:
        """The access token, refreshed first (and written back) when it expires within five
        minutes and pi-host can refresh it (:mod:`pi_host.config.oauth_refresh`); other
        providers' tokens are used until they expire."""
        from pi_host.config import oauth_refresh

        if oauth_refresh.can_refresh(provider) and oauth_refresh.expires_soon(entry):
            try:
                refreshed = oauth_refresh.refresh_stored(self.path, provider)
            except (oauth_refresh.RefreshError, OSError, ValueError) as exc:
                self.oauth_problems[provider] = (
                    f"OAuth refresh failed for {provider}: {exc}; log in again (pi auth login {provider}, or /login)"
                )
                return None
            self.oauth_problems.pop(provider, None)
            access = (refreshed or {}).get("access")
            return str(access) if access else None
        access = entry.get("access")
        expires = entry.get("expires")
        if access and (not isinstance(expires, (int, float)) or expires > time.time() * 1000):
            return str(access)
        return None

    def set_api_key(self, provider: str, key: str) -> None:
        self.update(provider, {"type": "api_key", "key": key})

    def env_for(self, provider: str) -> dict[str, str]:
        return _env_of(self.get(provider) or {})

    def resolve_key(self, provider: str) -> tuple[bool, str | None]:
        """``(stored, key)``: whether a credential is stored, and its resolved key. An entry of
        only ``env`` (a cloud login's choices: /login amazon-bedrock's profile) stores no key:
        the provider's ambient check reads those variables."""
        entry = self.get(provider)
        if entry is None:
            return False, None
        if entry.get("type", "api_key") == "oauth":
            return True, self._oauth_access(provider, entry)
        if "key" not in entry:
            return False, None
        env = {**os.environ, **_env_of(entry)}
        return True, resolve_config_value(entry.get("key"), env, cache_commands=True)


def _env_of(entry: dict[str, Any]) -> dict[str, str]:
    """An auth.json entry's ``env`` (the provider's variables), as strings."""
    env = entry.get("env")
    return {str(k): str(v) for k, v in env.items()} if isinstance(env, dict) else {}
