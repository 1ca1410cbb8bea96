"""The SDK side of MCP OAuth: ``mcp.client.auth``'s ``OAuthClientProvider`` over pi's credential file.

The SDK builds the protocol's requests and checks the answers (discovery, registration, PKCE, the
token exchange, refresh); the :class:`Provider` built here decides when they run and stores what
they return. The classes are built on first use (:func:`build_sdk_classes`), so nothing imports the
SDK until an HTTP server needs it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

from pi_mcp.config import ServerConfig, url_host, url_port
from pi_mcp.credentials import CredentialStore, stored_token
from pi_mcp.oauth_callback import CallbackServer
from pi_mcp.oauth_settings import (
    CALLBACK_PATH,
    CLIENT_NAME,
    PI_CLIENT_DOCUMENT,
    REFRESH_SKEW_MS,
    REQUEST_TIMEOUT_S,
    OAuthSettings,
    SignInError,
    state_secrets,
)


def build_sdk_classes() -> Any:
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
