"""The user's side of an MCP sign-in: the loopback server that receives the authorization response,
opening the browser, and reading a pasted redirect URL from the terminal instead."""

from __future__ import annotations

import asyncio
import contextlib
import re
import sys
import threading
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

from pi_mcp.config import url_host, url_port
from pi_mcp.oauth_settings import CALLBACK_PATH, OAuthSettings, SignInError

_PAGE = (
    "<!doctype html><html><head><meta charset='utf-8'><title>pi</title></head>"
    "<body style='font-family:sans-serif;margin:3em'><p>{}</p></body></html>"
)


class CallbackServer:
    """``http://127.0.0.1:<port>/callback`` (or the configured ``callbackUrl``): waits for the
    authorization response that carries the expected ``state``; other requests get an error page."""

    def __init__(self, settings: OAuthSettings, preferred_port: int | None = None) -> None:
        self.settings = settings
        self.preferred_port = preferred_port
        self.expected_state: str | None = None
        self.redirect_uri = ""
        self.path = CALLBACK_PATH
        self._server: asyncio.base_events.Server | None = None
        self._result: asyncio.Future[dict[str, str]] | None = None

    async def __aenter__(self) -> CallbackServer:
        self._result = asyncio.get_running_loop().create_future()
        configured = self.settings.callback_url
        host = url_host(configured) if configured else "127.0.0.1"
        bind = "::1" if host == "[::1]" else "127.0.0.1"
        port = (url_port(configured) if configured else None) or self.settings.callback_port
        candidates = [port] if port else [self.preferred_port, 0] if self.preferred_port else [0]
        for index, candidate in enumerate(candidates):
            try:
                self._server = await asyncio.start_server(self._handle, bind, candidate)
                break
            except OSError as exc:
                if index == len(candidates) - 1:
                    raise SignInError(f"cannot listen on {bind}:{candidate} for the callback: {exc}") from exc
        assert self._server is not None
        actual = self._server.sockets[0].getsockname()[1]
        if configured:
            self.path = urlsplit(configured).path or "/"
            self.redirect_uri = configured
            if url_port(configured) is None:  # RFC 8252: the loopback port is added
                self.redirect_uri = re.sub(
                    r"^(http://[^/?#]*)", lambda m: f"{m.group(1)}:{actual}", configured
                )
        else:
            self.redirect_uri = f"http://127.0.0.1:{actual}{CALLBACK_PATH}"
        return self

    async def __aexit__(self, *exc: Any) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 1)

    async def wait(self) -> dict[str, str]:
        assert self._result is not None
        return await asyncio.shield(self._result)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
            target = head.split(b"\r\n", 1)[0].split(b" ")[1].decode("latin-1")
            parts = urlsplit(target)
            params = {k: v[0] for k, v in parse_qs(parts.query).items()}
            if parts.path != self.path:
                status, text = "404 Not Found", "Not found"
            elif not params.get("state") or params["state"] != self.expected_state:
                status, text = "400 Bad Request", "Invalid or expired OAuth state"
            elif "error" in params:
                status = "200 OK"
                text = f"Authorization failed: {params.get('error_description') or params['error']}"
            elif not params.get("code"):
                status, text = "400 Bad Request", "Missing authorization code"
            else:
                status, text = "200 OK", "Signed in to the MCP server. You may now close this page."
            if status == "200 OK" and self._result is not None and not self._result.done():
                self._result.set_result(params)
            import html

            body = _PAGE.format(html.escape(text)).encode()
            writer.write(
                f"HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nCache-Control: no-store\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
                + body
            )
            await writer.drain()
        except (TimeoutError, OSError, ValueError, IndexError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()


def open_browser(url: str) -> None:
    """Open ``url`` with :mod:`webbrowser` (``BROWSER`` is honoured) without waiting for it."""

    def work() -> None:
        with contextlib.suppress(Exception):
            import webbrowser

            webbrowser.open(url)

    threading.Thread(target=work, name="pi-mcp-browser", daemon=True).start()


def terminal_paste(prompt: str) -> Callable[[Any], Awaitable[str | None]]:
    """Read a pasted redirect URL from a terminal's stdin (a daemon thread: exiting never waits)."""

    async def paste(signal: Any) -> str | None:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[str | None] = loop.create_future()

        def settle(value: str | None) -> None:
            if not future.done():
                future.set_result(value)

        def read() -> None:
            line = sys.stdin.readline()
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(settle, line)

        def stop() -> None:
            if not future.done():  # the browser answered first: end the prompt's line
                sys.stderr.write("\n")
                settle(None)

        sys.stderr.write(prompt)
        sys.stderr.flush()
        threading.Thread(target=read, name="pi-mcp-paste", daemon=True).start()
        signal.add_listener(stop)
        line = await future
        return line.strip() if line and line.strip() else None

    return paste
