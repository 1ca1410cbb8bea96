"""OAuth for streamable-HTTP MCP servers: the two halves of sign-in, over pi's credential file
(:mod:`pi_mcp.credentials`).

* :func:`connection_auth` is the ``httpx2.Auth`` of a connection. It sends the stored access token
  and refreshes it (when it is about to expire, or after a 401) with the stored refresh token, but
  never starts a browser flow: when signing in is the only way on it sets ``needs_sign_in`` and
  lets the 401 through, so the connection reports "needs sign-in".
* :func:`sign_in` is ``pi mcp login`` / ``/mcp login``: discovery (RFC 9728 protected resource
  metadata, then RFC 8414 authorization-server metadata, or the configured
  ``authServerMetadataUrl``), a configured client or dynamic client registration, the
  authorization-code flow with PKCE against a loopback callback (or a pasted redirect URL), and
  the token exchange.

The protocol steps are the SDK's (``mcp.client.auth``: its ``OAuthClientProvider`` builds the
requests and checks the answers); this module decides when they run and stores what they return.
Nothing here imports the SDK until an HTTP server needs it. No token or secret is ever logged or
put in an error line.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

from pi_mcp.config import ServerConfig, resolve_value, url_host, url_port
from pi_mcp.credentials import CredentialStore, stored_token

CALLBACK_PATH = "/callback"
CLIENT_NAME = "pi"
LOGIN_TIMEOUT_S = 300.0
REFRESH_SKEW_MS = 30_000
"""Access tokens this close to their expiry are refreshed before they are sent."""
REQUEST_TIMEOUT_S = 30.0
PI_CLIENT_DOCUMENT = "https://pi.dev/oauth/client.json"
"""pi's Client ID Metadata Document (``clientRegistration: "cimd"``)."""


class SignInError(Exception):
    """A sign-in that cannot go on; the message is for the user."""


class SignInCancelled(SignInError):
    pass


# --- pi's file ------------------------------------------------------------------------------


@dataclass
class OAuthSettings:
    server: str
    client_id: str | None = None
    client_secret_value: str | None = None
    callback_port: int | None = None
    callback_url: str | None = None
    scope: str | None = None
    client_name: str | None = None
    registration: str = "auto"
    metadata_url: str | None = None

    @classmethod
    def of(cls, config: ServerConfig) -> OAuthSettings:
        raw = config.oauth
        return cls(
            server=config.name,
            client_id=raw.get("clientId") or None,
            client_secret_value=raw.get("clientSecret") or None,
            callback_port=raw.get("callbackPort"),
            callback_url=raw.get("callbackUrl"),
            scope=raw.get("scope") or None,
            client_name=raw.get("clientName"),
            registration=raw.get("clientRegistration") or "auto",
            metadata_url=raw.get("authServerMetadataUrl"),
        )

    def client_secret(self) -> str | None:
        """``clientSecret`` with ``${NAME}`` / ``!command`` resolved (only when it is needed)."""
        if self.client_secret_value is None:
            return None
        return resolve_value(self.server, "oauth", "clientSecret", self.client_secret_value) or None


def sign_in_hint(name: str, in_session: bool = False) -> str:
    how = f"/mcp login {name}" if in_session else f"pi mcp login {name}"
    return f'MCP server "{name}" needs sign-in: run {how}'


def scrub(text: str, *secrets: str | None) -> str:
    """``text`` with every secret in it replaced (error lines may quote server answers)."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    return text


def state_secrets(state: dict[str, Any]) -> list[str]:
    tokens = state.get("tokens") if isinstance(state.get("tokens"), dict) else {}
    client = state.get("clientInformation") if isinstance(state.get("clientInformation"), dict) else {}
    return [
        str(v)
        for v in (tokens.get("access_token"), tokens.get("refresh_token"), client.get("client_secret"))
        if v
    ]


# --- the loopback callback ------------------------------------------------------------------

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


# --- the SDK side ---------------------------------------------------------------------------

_SDK: Any = None


def _sdk() -> Any:
    global _SDK
    if _SDK is None:
        _SDK = _build_sdk_classes()
    return _SDK


def connection_auth(config: ServerConfig, agent_dir: str | None = None) -> Any:
    """The ``httpx2.Auth`` of one connection to ``config``'s server (see the module docstring)."""
    return _sdk().Provider(config, CredentialStore(config.name, config.raw["url"], agent_dir))


async def sign_in(
    config: ServerConfig,
    *,
    show_url: Callable[[str], Any],
    paste: Callable[[Any], Awaitable[str | None]] | None = None,
    challenge: dict[str, str] | None = None,
    timeout: float = LOGIN_TIMEOUT_S,
    agent_dir: str | None = None,
) -> None:
    """Sign in to ``config``'s server and store the tokens. ``show_url`` gets the authorization URL
    (and opens it); ``paste(signal)`` may return a pasted redirect URL (None: none; raise
    :class:`SignInCancelled` to give up). Raises :class:`SignInError` or ``TimeoutError``."""
    store = CredentialStore(config.name, config.raw["url"], agent_dir)
    provider = _sdk().Provider(config, store)
    try:
        await asyncio.wait_for(provider.sign_in(show_url, paste, challenge or {}), timeout)
    except (SignInError, TimeoutError):
        raise
    except Exception as exc:  # the SDK's OAuth errors, HTTP errors, an unreadable file
        text = " ".join((str(exc) or type(exc).__name__).split())
        raise SignInError(scrub(text, *provider.secrets())) from None


def _build_sdk_classes() -> Any:
    from types import SimpleNamespace

    import httpx2
    from mcp.client.auth import OAuthClientProvider
    from mcp.client.auth.oauth2 import check_registration_usable
    from mcp.client.auth.utils import (
        build_oauth_authorization_server_metadata_discovery_urls,
        build_protected_resource_metadata_discovery_urls,
        create_client_info_from_metadata_url,
        create_client_registration_request,
        create_oauth_metadata_request,
        extract_field_from_www_auth,
        get_client_metadata_scopes,
        handle_auth_metadata_response,
        handle_protected_resource_response,
        handle_registration_response,
        issuers_match,
        union_scopes,
        validate_metadata_issuer,
    )
    from mcp.shared._httpx_utils import next_request_within_origin
    from mcp.shared.auth import (
        AuthorizationCodeResult,
        OAuthClientInformationFull,
        OAuthClientMetadata,
        OAuthMetadata,
        OAuthToken,
        ProtectedResourceMetadata,
    )
    from mcp_types import LATEST_PROTOCOL_VERSION
    from pydantic import AnyUrl, ValidationError

    from pi_host.protocol.abort import AbortController

    async def send(http: Any, request: Any) -> Any:
        """Send, following redirects only within the request's origin (as the SDK does)."""
        for _ in range(5):
            response = await http.send(request)
            follow = next_request_within_origin(response)
            if follow is None:
                return response
            request = follow
        return response

    def model(cls: Any, value: Any) -> Any:
        if not isinstance(value, dict):
            return None
        try:
            return cls.model_validate(value)
        except ValidationError:
            return None

    def dump(value: Any, **kw: Any) -> dict[str, Any]:
        return value.model_dump(mode="json", exclude_none=True, **kw)

    class Storage:
        """The SDK's ``TokenStorage`` over :class:`CredentialStore`."""

        def __init__(self, provider: Provider) -> None:
            self.provider = provider

        async def get_tokens(self) -> Any:
            return model(OAuthToken, self.provider.store.peek().get("tokens"))

        async def set_tokens(self, tokens: Any) -> None:
            def change(state: dict[str, Any]) -> None:
                state["tokens"] = dump(tokens)
                if tokens.expires_in:
                    state["tokensExpireAt"] = int(time.time() * 1000 + float(tokens.expires_in) * 1000)
                else:
                    state.pop("tokensExpireAt", None)
                state.pop("codeVerifier", None)
                state.pop("oauthState", None)

            self.provider.store.update(change)

        async def get_client_info(self) -> Any:
            return self.provider.client_info(self.provider.store.peek())

        async def set_client_info(self, info: Any) -> None:
            if self.provider.settings.client_id:
                return  # a configured client is not stored

            def change(state: dict[str, Any]) -> None:
                state["clientInformation"] = dump(info, exclude={"issuer"})

            self.provider.store.update(change)

    class Provider(OAuthClientProvider):
        def __init__(
            self, config: ServerConfig, store: CredentialStore, redirect_uri: str | None = None
        ) -> None:
            self.config, self.store = config, store
            self.settings = OAuthSettings.of(config)
            metadata = OAuthClientMetadata(
                redirect_uris=[redirect_uri or f"http://127.0.0.1{CALLBACK_PATH}"],
                client_name=self.settings.client_name or CLIENT_NAME,
                scope=self.settings.scope,
                token_endpoint_auth_method="client_secret_post"
                if self.settings.client_secret_value
                else "none",
            )
            super().__init__(config.raw["url"], metadata, Storage(self))
            self.context.protocol_version = LATEST_PROTOCOL_VERSION
            self._initialized = True  # state is read from the file for every request instead
            self.needs_sign_in = False
            """Set when the server refused the stored credentials and no refresh could help."""
            self.challenge: dict[str, str] = {}
            """The last 401/403 challenge: ``resource_metadata``, ``scope``, ``error``."""
            self._resource_metadata_url: str | None = None

        # --- state -----------------------------------------------------------------------

        def client_info(self, state: dict[str, Any]) -> Any:
            if self.settings.client_id:
                secret = self.settings.client_secret()
                return OAuthClientInformationFull(
                    client_id=self.settings.client_id,
                    client_secret=secret,
                    token_endpoint_auth_method="client_secret_post" if secret else "none",
                    redirect_uris=self.context.client_metadata.redirect_uris,
                )
            return model(OAuthClientInformationFull, state.get("clientInformation"))

        def apply(self, state: dict[str, Any]) -> None:
            """Put the stored tokens, client and discovery into the SDK's context."""
            ctx = self.context
            ctx.current_tokens = model(OAuthToken, state.get("tokens"))
            expires = state.get("tokensExpireAt")
            ctx.token_expiry_time = expires / 1000 if isinstance(expires, (int, float)) else None
            ctx.client_info = self.client_info(state)
            discovery = state.get("discovery") if isinstance(state.get("discovery"), dict) else {}
            ctx.oauth_metadata = model(OAuthMetadata, discovery.get("authorizationServerMetadata"))
            resource = model(ProtectedResourceMetadata, discovery.get("resourceMetadata"))
            ctx.protected_resource_metadata = resource or ctx.protected_resource_metadata
            ctx.auth_server_url = discovery.get("authorizationServerUrl") or ctx.auth_server_url

        def discovery_state(self) -> dict[str, Any]:
            ctx = self.context
            found: dict[str, Any] = {"authorizationServerUrl": ctx.auth_server_url or self._expected_issuer()}
            if ctx.oauth_metadata is not None:
                found["authorizationServerMetadata"] = dump(ctx.oauth_metadata)
            if ctx.protected_resource_metadata is not None:
                found["resourceMetadata"] = dump(ctx.protected_resource_metadata)
            if self._resource_metadata_url:
                found["resourceMetadataUrl"] = self._resource_metadata_url
            return found

        def secrets(self) -> list[str]:
            found = state_secrets(self.store.peek())
            ctx = self.context
            if ctx.current_tokens is not None:
                found += [t for t in (ctx.current_tokens.access_token, ctx.current_tokens.refresh_token) if t]
            if ctx.client_info is not None and ctx.client_info.client_secret:
                found.append(ctx.client_info.client_secret)
            return found

        # --- connections ------------------------------------------------------------------

        async def _auth_flow(self, request: Any) -> Any:
            version = request.headers.get("mcp-protocol-version")
            if version:
                self.context.protocol_version = version
            token = await self._usable_token()
            if token:
                request.headers["Authorization"] = f"Bearer {token}"
            response = yield request
            step_up = (
                response.status_code == 403
                and extract_field_from_www_auth(response, "error") == "insufficient_scope"
            )
            if response.status_code != 401 and not step_up:
                if response.status_code < 400:
                    self.needs_sign_in = False
                return
            self.challenge = {
                key: value
                for key in ("resource_metadata", "scope", "error")
                if (value := extract_field_from_www_auth(response, key))
            }
            fresh = None if step_up else await self._refreshed(token)  # more scope needs a sign-in
            if fresh is None:
                self.needs_sign_in = True
                return
            request.headers["Authorization"] = f"Bearer {fresh}"
            response = yield request
            if response.status_code == 401:
                self.needs_sign_in = True

        def stored_token(self) -> str | None:
            return stored_token(self.store.peek())

        async def _usable_token(self) -> str | None:
            state = self.store.peek()
            token = stored_token(state)
            expires = state.get("tokensExpireAt")
            refresh = (state.get("tokens") or {}).get("refresh_token")
            if token and refresh and isinstance(expires, (int, float)):
                if expires - REFRESH_SKEW_MS <= time.time() * 1000:
                    return await self._refreshed(token) or token  # failed: the server decides
            return token

        async def _refreshed(self, stale: str | None) -> str | None:
            """A new access token from the stored refresh token, or None. Tokens that changed since
            ``stale`` was read (another process refreshed, or signed in) are used as they are."""
            async with self.context.lock:
                try:
                    async with self.store.refresh_lock():
                        state = self.store.load()
                        current = stored_token(state)
                        if current and current != stale:
                            return current
                        if not (state.get("tokens") or {}).get("refresh_token"):
                            return None
                        self.apply(state)
                        if self.context.client_info is None:
                            return None
                        async with httpx2.AsyncClient(timeout=REQUEST_TIMEOUT_S) as http:
                            if self.context.oauth_metadata is None:
                                await self.discover(http)
                                discovery = self.discovery_state()
                                self.store.update(lambda s: s.__setitem__("discovery", discovery))
                            response = await send(http, await self._refresh_token())
                            if response.status_code == 200 and await self._handle_refresh_response(response):
                                return self.context.current_tokens.access_token
                except Exception:  # noqa: BLE001 - no refresh: the user signs in again
                    pass
                return None

        # --- discovery -------------------------------------------------------------------

        async def discover(self, http: Any) -> None:
            """Protected resource metadata (RFC 9728), then the authorization server's (RFC 8414),
            or the configured ``authServerMetadataUrl`` (trusted as configured)."""
            ctx = self.context
            hinted = self.challenge.get("resource_metadata")
            for url in build_protected_resource_metadata_discovery_urls(hinted, ctx.server_url):
                resource = await handle_protected_resource_response(
                    await send(http, create_oauth_metadata_request(url))
                )
                if resource is not None:
                    await self._validate_resource_match(resource)
                    ctx.protected_resource_metadata = resource
                    ctx.auth_server_url = str(resource.authorization_servers[0])
                    self._resource_metadata_url = url
                    break
            if self.settings.metadata_url:
                response = await send(http, create_oauth_metadata_request(self.settings.metadata_url))
                if response.status_code != 200:
                    raise SignInError(
                        f"authorization server metadata {self.settings.metadata_url}: HTTP {response.status_code}"
                    )
                ctx.oauth_metadata = OAuthMetadata.model_validate_json(response.content)
                ctx.auth_server_url = ctx.auth_server_url or str(ctx.oauth_metadata.issuer)
                return
            expected = self._expected_issuer()
            for url in build_oauth_authorization_server_metadata_discovery_urls(
                ctx.auth_server_url, ctx.server_url
            ):
                ok, metadata = await handle_auth_metadata_response(
                    await send(http, create_oauth_metadata_request(url))
                )
                if not ok:
                    break
                if metadata is not None:
                    if ctx.auth_server_url is None and issuers_match(str(metadata.issuer), expected):
                        expected = str(metadata.issuer)
                    validate_metadata_issuer(metadata, expected)
                    ctx.oauth_metadata = metadata
                    break

        # --- sign-in ---------------------------------------------------------------------

        async def sign_in(
            self, show_url: Callable[[str], Any], paste: Any, challenge: dict[str, str]
        ) -> None:
            self.challenge = dict(challenge)
            state = self.store.load()
            preferred = None
            stored_client = state.get("clientInformation") or {}
            for uri in stored_client.get("redirect_uris") or []:  # keep a registered redirect URI
                if url_host(uri) == "127.0.0.1" and urlsplit(uri).path == CALLBACK_PATH:
                    preferred = url_port(uri)
            async with CallbackServer(self.settings, preferred) as callback:
                ctx = self.context
                ctx.client_metadata.redirect_uris = [AnyUrl(callback.redirect_uri)]
                ctx.current_tokens = model(OAuthToken, state.get("tokens"))

                async def redirect(url: str) -> None:
                    callback.expected_state = (parse_qs(urlsplit(url).query).get("state") or [None])[0]
                    result = show_url(url)
                    if asyncio.iscoroutine(result):
                        await result

                async def receive() -> Any:
                    params = await self._wait_for_response(callback, paste)
                    if params.get("error"):
                        raise SignInError(
                            f"the authorization server refused: {params.get('error_description') or params['error']}"
                        )
                    return AuthorizationCodeResult(
                        code=params.get("code") or "", state=params.get("state"), iss=params.get("iss")
                    )

                ctx.redirect_handler, ctx.callback_handler = redirect, receive
                async with httpx2.AsyncClient(timeout=REQUEST_TIMEOUT_S) as http:
                    await self.discover(http)
                    self._choose_scope(state)
                    await self._choose_client(http, state, callback.redirect_uri)
                    code, verifier = await self._perform_authorization_code_grant()
                    response = await send(http, await self._exchange_token_authorization_code(code, verifier))
                    await self._handle_token_response(response)
                discovery = self.discovery_state()
                self.store.update(lambda s: s.__setitem__("discovery", discovery))

        def _choose_scope(self, state: dict[str, Any]) -> None:
            """The advertised scopes, else the configured ``scope``; a request for more scope is
            added to what was asked before."""
            ctx = self.context
            advertised = get_client_metadata_scopes(
                self.challenge.get("scope"),
                ctx.protected_resource_metadata,
                ctx.oauth_metadata,
                ctx.client_metadata.grant_types,
            )
            if self.challenge.get("error") == "insufficient_scope":
                granted = (state.get("tokens") or {}).get("scope")
                ctx.client_metadata.scope = union_scopes(
                    union_scopes(self.settings.scope, granted), advertised
                )
            else:
                ctx.client_metadata.scope = advertised or self.settings.scope

        async def _choose_client(self, http: Any, state: dict[str, Any], redirect_uri: str) -> None:
            ctx = self.context
            mode = self.settings.registration
            if self.settings.client_id:
                ctx.client_info = self.client_info(state)
                return
            stored = self.client_info(state)
            if stored is not None and redirect_uri in [str(u) for u in stored.redirect_uris or []]:
                if (mode == "cimd") == (stored.client_id == PI_CLIENT_DOCUMENT):
                    ctx.client_info = stored  # registered before: used while its redirect URI matches
                    return
            if mode == "cimd":
                if not (ctx.oauth_metadata and ctx.oauth_metadata.client_id_metadata_document_supported):
                    raise SignInError(
                        "the authorization server does not support Client ID Metadata Documents "
                        '(oauth.clientRegistration "cimd"); use "dcr" or a registered oauth.clientId'
                    )
                info = create_client_info_from_metadata_url(
                    PI_CLIENT_DOCUMENT, redirect_uris=ctx.client_metadata.redirect_uris
                )
            else:
                origin = ctx.get_authorization_base_url(ctx.server_url)
                request = create_client_registration_request(ctx.oauth_metadata, ctx.client_metadata, origin)
                info = await handle_registration_response(await send(http, request))
                check_registration_usable(info)
            ctx.client_info = info
            await ctx.storage.set_client_info(info)

        async def _wait_for_response(self, callback: CallbackServer, paste: Any) -> dict[str, str]:
            """The browser's callback or, when ``paste`` is given, a pasted redirect URL."""
            controller = AbortController()
            waiting = {asyncio.ensure_future(callback.wait())}
            pasting = asyncio.ensure_future(paste(controller.signal)) if paste is not None else None
            if pasting is not None:
                waiting.add(pasting)
            try:
                while True:
                    done, _pending = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
                    for future in done:
                        waiting.discard(future)
                        if future is not pasting:
                            return future.result()
                        text = future.result()  # SignInCancelled propagates
                        if not text:
                            continue  # nothing pasted: the browser may still call back
                        params = {k: v[0] for k, v in parse_qs(urlsplit(text.strip()).query).items()}
                        if params.get("state") != callback.expected_state:
                            raise SignInError(
                                "the pasted URL is not the redirect of this sign-in (state differs)"
                            )
                        return params
            finally:
                controller.abort()
                for future in waiting:
                    future.cancel()

    return SimpleNamespace(Provider=Provider, Storage=Storage)
