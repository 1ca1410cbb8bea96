"""What every subscription sign-in needs besides HTTP: the conversation with the user, a loopback
callback server for browser flows, and the RFC 8628 device-code poller.

Flows are blocking functions run on a worker thread; the front end (``pi auth login`` on a
terminal, ``/login`` in the interactive mode) hands them an :class:`Interaction`. A browser flow
waits for whichever comes first: the browser reaching the callback server, or the user pasting
the redirect URL (the browser may be on another machine, over SSH). The paste prompt is told to
stop through ``done`` when the callback won.

Test hook: ``PI_HOST_OAUTH_CALLBACK_PORT`` (pi has none) binds every callback server to that
port (``0``: any free one) and the redirect URI names the port actually bound, so tests can run
in parallel and next to a real login on 1455.
"""

from __future__ import annotations

import html
import os
import queue
import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from pi_host.config.oauth_http import OAuthError

CALLBACK_PORT_ENV = "PI_HOST_OAUTH_CALLBACK_PORT"
CANCELLED = "Login cancelled"
MINIMUM_INTERVAL_S = 1.0
"""Device polling never runs faster than this (tests lower it in-process)."""
DEFAULT_INTERVAL_S = 5.0  # RFC 8628 §3.2, when the server names no interval
SLOW_DOWN_STEP_S = 5.0  # RFC 8628 §3.5


@dataclass
class Interaction:
    """The user's side of a sign-in. Every callable may be called from the flow's thread.

    ``notify(event)`` gets pi's event shapes: ``{"type": "auth_url", "url", "instructions"}``,
    ``{"type": "device_code", "userCode", "verificationUri"}``, ``{"type": "progress", "message"}``.
    ``select(message, [(id, label)])`` returns an id; ``text(message, placeholder)`` a line;
    ``manual_code(message, placeholder, done)`` a pasted line, or None once ``done`` is set;
    ``{"type": "info", "message", "links": [{"label", "url"}]}`` comes from the cloud set-ups
    (:mod:`pi_host.config.cloud_logins`).
    """

    notify: Callable[[dict[str, Any]], None]
    select: Callable[[str, list[tuple[str, str]]], str | None]
    text: Callable[[str, str], str | None]
    manual_code: Callable[[str, str, threading.Event], str | None]
    cancelled: threading.Event = field(default_factory=threading.Event)
    open_browser: bool = True
    secret: Callable[[str], str | None] | None = None
    """A line typed without echo (a key or token); ``text`` when None."""
    catalog_ids: Callable[[str], set[str]] | None = None
    """The model ids a provider's catalog lists (a Copilot login switches on only those)."""

    def check(self) -> None:
        if self.cancelled.is_set():
            raise OAuthError(CANCELLED)


def _page(title: str, detail: str = "") -> bytes:
    body = f"<h1>{html.escape(title)}</h1>" + (f"<p>{html.escape(detail)}</p>" if detail else "")
    return f"<!doctype html><html><head><meta charset='utf-8'><title>pi</title></head><body>{body}</body></html>".encode()


class CallbackServer:
    """A one-shot loopback server for ``path``: the first request there with the right ``state``
    (when one is expected) and a ``code`` or ``error`` is handed to :meth:`wait`."""

    def __init__(self, provider: str, host: str, port: int, path: str, state: str | None) -> None:
        self.results: queue.Queue[tuple[str, Any]] = queue.Queue()
        self.path, self.state, self.provider = path, state, provider
        self.claimed = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # the query carries the code: never logged
                pass

            def do_GET(self) -> None:  # noqa: N802 (http.server API)
                status, page = outer.handle(self.path)
                self.send_response(status)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Cache-Control", "no-store")
                self.send_header("Content-Length", str(len(page)))
                self.end_headers()
                self.wfile.write(page)

        self.httpd = ThreadingHTTPServer((host, port), Handler)
        self.httpd.daemon_threads = True
        bound = self.httpd.server_address[1]
        shown = f"[{host}]" if ":" in host else host
        self.redirect_uri = f"http://{shown}:{bound}{path}"
        self.port = bound
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()

    def handle(self, raw_path: str) -> tuple[int, bytes]:
        url = urllib.parse.urlsplit(raw_path)
        query = {k: v[0] for k, v in urllib.parse.parse_qs(url.query).items()}
        if url.path != self.path:
            return 404, _page("Callback route not found.")
        if self.state is not None and query.get("state") != self.state:
            return 400, _page("State mismatch.")
        if "error" in query:
            detail = query.get("error_description") or query["error"]
            if self.claimed.acquire(blocking=False):
                self.results.put(("error", f"{self.provider} authorization failed: {detail}"))
            return 400, _page(f"{self.provider} authorization failed.", detail)
        if not query.get("code"):
            return 400, _page("Missing authorization code.")
        if not self.claimed.acquire(blocking=False):
            return 409, _page("This sign-in has already been handled.")
        self.results.put(("callback", query))
        return 200, _page(f"Signed in to {self.provider}. You may close this page.")

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def callback_host() -> str:
    return os.environ.get("PI_OAUTH_CALLBACK_HOST") or "127.0.0.1"  # pi's own variable


def start_callback_server(
    provider: str, port: int, path: str, state: str | None, host: str | None = None
) -> CallbackServer:
    """Raises ``OSError`` when the port is taken (the caller decides what that means)."""
    override = os.environ.get(CALLBACK_PORT_ENV)
    if override is not None and override.strip().isdigit():
        port = int(override)
    return CallbackServer(provider, host or callback_host(), port, path, state)


def parse_pasted(value: str) -> tuple[str | None, str | None]:
    """``(code, state)`` from what a user pastes: the redirect URL, ``code#state``, a query
    string (with or without ``?``), or the bare code."""
    value = value.strip()
    if not value:
        return None, None
    parts = urllib.parse.urlsplit(value)
    if parts.scheme and parts.netloc:
        query = parts.query
    elif "#" in value:
        code, state = value.split("#", 1)
        return code, state
    elif "code=" in value:
        query = value.lstrip("?")
    else:
        return value, None
    fields = urllib.parse.parse_qs(query)
    return (fields.get("code") or [None])[0], (fields.get("state") or [None])[0]


def authorization_code(kind: str, value: Any, state: str | None) -> str:
    """The code of a browser sign-in, from the callback or from what the user pasted (a pasted
    state must be the one sent)."""
    if kind == "callback":
        code = value.get("code")
    else:
        code, pasted_state = parse_pasted(value)
        if pasted_state and pasted_state != state:
            raise OAuthError("State mismatch")
    if not code:
        raise OAuthError("Missing authorization code")
    return code


def wait_for_callback_or_paste(
    interaction: Interaction,
    server: CallbackServer | None,
    message: str,
    placeholder: str,
    timeout_s: float | None = None,
) -> tuple[str, Any]:
    """``("callback", query)`` when the browser reached ``server`` first, ``("manual", text)``
    when the user pasted something first; errors from the callback are raised."""
    results: queue.Queue[tuple[str, Any]] = server.results if server else queue.Queue()
    done = threading.Event()

    def ask() -> None:
        try:
            answer = interaction.manual_code(message, placeholder, done)
        except Exception as exc:  # noqa: BLE001 (the prompt's failure ends the wait, as a cancel)
            results.put(("error", str(exc) or CANCELLED))
            return
        if not done.is_set():
            results.put(("manual", answer) if answer is not None else ("error", CANCELLED))

    threading.Thread(target=ask, daemon=True).start()
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    try:
        while True:
            interaction.check()
            if deadline is not None and time.monotonic() > deadline:
                raise OAuthError(f"{server.provider if server else 'The'} sign-in timed out")
            try:
                kind, value = results.get(timeout=0.1)
            except queue.Empty:
                continue
            if kind == "error":
                raise OAuthError(value)
            return kind, value
    finally:
        done.set()


def poll_device(
    interaction: Interaction,
    poll: Callable[[], tuple[str, Any]],
    interval_s: float | None,
    expires_in_s: float | None,
    *,
    wait_first: bool = False,
) -> Any:
    """Poll until ``poll()`` answers ``("complete", value)``; ``("pending", None)`` waits,
    ``("slow_down", seconds or None)`` waits longer (the server's interval, else five seconds
    more), ``("failed", message)`` ends the sign-in."""
    deadline = time.monotonic() + expires_in_s if expires_in_s else float("inf")
    interval = max(MINIMUM_INTERVAL_S, interval_s or DEFAULT_INTERVAL_S)
    slowed = False

    def sleep(seconds: float) -> None:
        end = time.monotonic() + min(seconds, max(0.0, deadline - time.monotonic()))
        while time.monotonic() < end:
            interaction.check()
            time.sleep(min(0.05, max(0.0, end - time.monotonic())))

    if wait_first:
        sleep(interval)
    while time.monotonic() < deadline:
        interaction.check()
        status, value = poll()
        if status == "complete":
            return value
        if status == "failed":
            raise OAuthError(str(value))
        if status == "slow_down":
            slowed = True
            interval = max(MINIMUM_INTERVAL_S, value) if value else interval + SLOW_DOWN_STEP_S
        sleep(interval)
    if slowed:
        raise OAuthError(
            "Device flow timed out after slow_down answers; a drifting clock (WSL, VMs) often causes this"
        )
    raise OAuthError("Device flow timed out")
