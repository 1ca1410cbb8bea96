"""pi's OAuth credential file for MCP servers, ``<agent dir>/mcp-auth.json``.

One JSON object keyed by ``mcp__<server>|<normalised url>`` (the URL spelled as JavaScript's
``new URL()`` spells it; a legacy key of the URL alone is taken over by the first server that
loads it), each value ``{serverUrl, clientInformation, tokens, tokensExpireAt, discovery, ...}``;
mode 0600, written atomically under pi's ``<file>.lock`` directory, with pi's per-server refresh
lock. Used by :mod:`pi_mcp.oauth` and by ``pi mcp logout`` / ``/mcp logout``.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import ipaddress
import os
import re
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from pi_host.config import paths
from pi_host.config.json_files import file_lock, read_json_object, write_json_atomic
from pi_mcp.config import namespace, url_host, url_port

AUTH_FILE = "mcp-auth.json"
REFRESH_LOCK_STALE_S = 20.0
REFRESH_LOCK_WAIT_S = 25.0


def auth_file(agent_dir: str | None = None) -> str:
    return os.path.join(agent_dir or paths.agent_dir(), AUTH_FILE)


_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443, "ftp": 21}


def _encode(text: str, unsafe: str) -> str:
    """Percent-encode controls, space, non-ASCII and ``unsafe`` (existing ``%XX`` stay)."""
    out = []
    for char in text:
        if ord(char) <= 0x20 or ord(char) >= 0x7F or char in unsafe:
            out.append("".join(f"%{byte:02X}" for byte in char.encode("utf-8")))
        else:
            out.append(char)
    return "".join(out)


def _without_dot_segments(path: str) -> str:
    segments: list[str] = []
    parts = path.split("/")[1:]
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        if part in (".", "%2e", "%2E"):
            if last:
                segments.append("")
        elif part.lower() in ("..", ".%2e", "%2e.", "%2e%2e"):
            if segments:
                segments.pop()
            if last:
                segments.append("")
        else:
            segments.append(part)
    return "/" + "/".join(segments)


def normalize_url(url: str) -> str:
    """``url`` as JavaScript's ``new URL(url).toString()`` spells an http(s) URL: lower-case scheme
    and host, no default port, ``/`` for an empty path, dot segments resolved, unsafe characters
    percent-encoded. Anything that does not parse is returned unchanged."""
    text = re.sub(r"[\t\n\r]", "", re.sub(r"^[\x00-\x20]+|[\x00-\x20]+$", "", url))
    match = re.match(r"^([A-Za-z][A-Za-z0-9+.-]*):", text)
    if not match:
        return url
    scheme = match.group(1).lower()
    special = scheme in _DEFAULT_PORTS
    if special:
        text = text.replace("\\", "/")
    try:
        parts = urlsplit(text)
    except ValueError:
        return url
    if not special or not parts.netloc:
        return url
    netloc = parts.netloc
    userinfo, _, hostport = netloc.rpartition("@")
    host = url_host(f"{scheme}://{hostport}") or ""
    port = url_port(f"{scheme}://{hostport}")
    if host.startswith("["):
        with contextlib.suppress(ValueError):
            host = f"[{ipaddress.IPv6Address(host[1:-1]).compressed}]"
    elif not host.isascii():
        with contextlib.suppress(UnicodeError):
            host = host.encode("idna").decode("ascii")
    if port is not None and port == _DEFAULT_PORTS[scheme]:
        port = None
    result = f"{scheme}://{userinfo + '@' if userinfo else ''}{host}{'' if port is None else f':{port}'}"
    result += _encode(_without_dot_segments(parts.path or "/"), '"<>`{}')
    if parts.query:
        result += "?" + _encode(parts.query, "\"<>'")
    if parts.fragment:
        result += "#" + _encode(parts.fragment, '"<>`')
    return result


def store_keys(server: str, url: str) -> tuple[str, str]:
    """``(key, legacy key)`` of a server's credentials: by name and URL, and by URL alone."""
    legacy = normalize_url(url)
    return f"{namespace(server)}|{legacy}", legacy


class CredentialStore:
    """One server's entry of ``mcp-auth.json``."""

    def __init__(self, server: str, url: str, agent_dir: str | None = None) -> None:
        self.path = auth_file(agent_dir)
        self.server_url = normalize_url(url)
        self.key, self.legacy_key = store_keys(server, url)
        self._cache: tuple[tuple[int, int], dict[str, Any]] | None = None

    def _states(self) -> dict[str, Any]:
        data, error = read_json_object(self.path)
        if error:
            raise ValueError(error)
        return data

    def _own(self, value: Any) -> dict[str, Any]:
        """Stored state for another URL is ignored, so credentials never go to another server."""
        if isinstance(value, dict) and value.get("serverUrl") == self.server_url:
            return dict(value)
        return {"serverUrl": self.server_url}

    def _write(self, states: dict[str, Any]) -> None:
        write_json_atomic(self.path, states, mode=0o600)
        self._cache = None

    def load(self) -> dict[str, Any]:
        """This server's state; a legacy entry is moved to the new key when there is none."""
        states = self._states()
        if self.key not in states and self.legacy_key in states:
            with file_lock(self.path):
                states = self._states()
                if self.key not in states and self.legacy_key in states:
                    states[self.key] = states.pop(self.legacy_key)
                    self._write(states)
        return self._own(states.get(self.key))

    def peek(self) -> dict[str, Any]:
        """The state as stored now (legacy entry included), without writing; cheap to repeat."""
        try:
            stat = os.stat(self.path)
        except OSError:
            return self._own(None)
        signature = (stat.st_mtime_ns, stat.st_size)
        if self._cache is None or self._cache[0] != signature:
            try:
                states = self._states()
            except ValueError:
                return self._own(None)
            self._cache = (signature, states)
        states = self._cache[1]
        return self._own(states.get(self.key, states.get(self.legacy_key)))

    def update(self, change: Callable[[dict[str, Any]], None]) -> None:
        with file_lock(self.path):
            states = self._states()
            state = self._own(states.get(self.key, states.get(self.legacy_key)))
            states.pop(self.legacy_key, None)
            change(state)
            states[self.key] = state
            self._write(states)

    def remove(self) -> bool:
        """Delete the stored credentials; False when there were none."""
        if not os.path.exists(self.path):
            return False
        with file_lock(self.path):
            states = self._states()
            stored = (
                self.key if self.key in states else self.legacy_key if self.legacy_key in states else None
            )
            if stored is None:
                return False
            del states[stored]
            self._write(states)
            return True

    @contextlib.asynccontextmanager
    async def refresh_lock(self) -> Any:
        """pi's per-server refresh lock (``mcp-auth-refresh-<hash>.lock``): refresh tokens are often
        single-use, so two processes must not refresh with the same one."""
        digest = hashlib.sha256(self.key.encode()).hexdigest()[:16]
        lock = os.path.join(os.path.dirname(self.path), f"mcp-auth-refresh-{digest}.lock")
        deadline = time.monotonic() + REFRESH_LOCK_WAIT_S
        while True:
            try:
                os.mkdir(lock)
                break
            except FileNotFoundError:
                os.makedirs(os.path.dirname(lock), mode=0o700, exist_ok=True)
            except FileExistsError:
                with contextlib.suppress(OSError):
                    if time.time() - os.stat(lock).st_mtime > REFRESH_LOCK_STALE_S:
                        os.rmdir(lock)
                        continue
                if time.monotonic() > deadline:
                    raise TimeoutError("another process is refreshing the credentials") from None
                await asyncio.sleep(0.1)
        try:
            yield
        finally:
            with contextlib.suppress(OSError):
                os.rmdir(lock)


def stored_token(state: dict[str, Any]) -> str | None:
    tokens = state.get("tokens")
    return tokens.get("access_token") if isinstance(tokens, dict) else None
