"""A loopback authorization server for the subscription sign-ins: every endpoint pi 1.6.0's OAuth
flows call, by path (the flows reach it through ``PI_HOST_OAUTH_ORIGIN``, or pi's own
``KIMI_CODE_OAUTH_HOST``), plus the Codex responses endpoint answering a streamed Responses
reply. It issues tokens, rotates refresh tokens, refuses revoked ones with ``invalid_grant``,
checks PKCE, and records every request."""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import time
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.support.http_record import Seen, Served, read_request, send_answer

ACCOUNT = "acct-loopback-1"


def jwt(claims: dict[str, Any]) -> str:
    def part(value: Any) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()

    return f"{part({'alg': 'none'})}.{part(claims)}.c2lnbmF0dXJlLW5vdC1jaGVja2Vk"


@dataclass
class AuthServer(Served):
    requests: list[Seen] = field(default_factory=list)
    revoked: set[str] = field(default_factory=set)
    challenges: dict[str, str] = field(default_factory=dict)  # code -> PKCE challenge
    pending_polls: int = 1  # device polls answered authorization_pending first
    device_interval: float = 0  # 0: the client's default (tests lower it in-process); 1 for CLI runs
    codex_tool_call: bool = True  # False: the Codex answer is text only (a CLI run ends)
    # A tests.support.codex_socket.SocketScript accepts WebSocket upgrades of /codex/responses;
    # None answers them as any GET (200 and an SSE body: no upgrade, so clients fall back to SSE).
    # Either way an upgrade request is kept in ``upgrades``, not ``requests``.
    websocket: Any = None
    upgrades: list[Seen] = field(default_factory=list)
    counter: itertools.count = field(default_factory=lambda: itertools.count(1))

    def __post_init__(self) -> None:
        self.serve()

    def handle(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        seen = read_request(handler, method)
        upgrade = method == "GET" and seen.headers.get("upgrade", "").lower() == "websocket"
        (self.upgrades if upgrade else self.requests).append(seen)
        if upgrade and self.websocket is not None and seen.path == "/codex/responses":
            self.websocket.serve(handler)
            return
        send_answer(handler, *self.answer(seen))

    # --- answers -------------------------------------------------------------------------------

    def tokens(self, **extra: Any) -> dict[str, Any]:
        n = next(self.counter)
        access = jwt({"https://api.openai.com/auth": {"chatgpt_account_id": ACCOUNT}, "n": n})
        return {"access_token": access, "refresh_token": f"refresh-{n}", "expires_in": 3600, **extra}

    def refresh_or_refuse(self, refresh: str, **extra: Any) -> tuple[int, dict[str, Any]]:
        if refresh in self.revoked:
            return 400, {
                "error": "invalid_grant",
                "error_description": f"refresh token {refresh} was revoked",
            }
        self.revoked.add(refresh)  # rotation: a refresh token works once
        return 200, self.tokens(**extra)

    def code_for(self, challenge: str) -> str:
        code = f"code-{next(self.counter)}"
        self.challenges[code] = challenge
        return code

    def pkce_ok(self, code: str, verifier: str) -> bool:
        digest = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        return self.challenges.get(code) == digest

    def poll_pending(self) -> bool:
        if self.pending_polls > 0:
            self.pending_polls -= 1
            return True
        return False

    def answer(self, seen: Seen) -> tuple[int, dict[str, str], bytes]:
        status, reply = self.route(seen)
        if isinstance(reply, tuple):  # (headers, raw body)
            return status, reply[0], reply[1]
        return status, {"Content-Type": "application/json"}, json.dumps(reply).encode()

    def route(self, seen: Seen) -> tuple[int, Any]:
        is_form = "x-www-form-urlencoded" in seen.headers.get("content-type", "")
        path, form = seen.path, seen.form() if is_form else {}
        if path in ("/oauth/authorize", "/api/accounts/authorize"):
            params = {"code": self.code_for(seen.query["code_challenge"]), "state": seen.query["state"]}
            if path == "/api/accounts/authorize":
                params["client_id"] = "issued-client-9"
            target = seen.query["redirect_uri"] + "?" + urllib.parse.urlencode(params)
            return 302, ({"Location": target}, b"")
        if path == "/auth":  # OpenRouter: callback_url, no state
            target = seen.query["callback_url"] + "?code=" + self.code_for(seen.query["code_challenge"])
            return 302, ({"Location": target}, b"")
        if path in ("/oauth/token", "/api/accounts/oauth/token"):
            extra = (
                {"scope": "openid chatgpt.tokens.use.direct", "id_token": jwt({})}
                if "accounts" in path
                else {}
            )
            if form.get("grant_type") == "refresh_token":
                return self.refresh_or_refuse(form["refresh_token"], **extra)
            if form.get("code", "").startswith("device-code") or self.pkce_ok(
                form["code"], form["code_verifier"]
            ):
                return 200, self.tokens(**extra)
            return 400, {"error": "invalid_grant", "error_description": "PKCE verification failed"}
        if path == "/api/accounts/deviceauth/usercode":
            return 200, {"device_auth_id": "dev-1", "user_code": "CODE-1", "interval": "0"}
        if path == "/api/accounts/deviceauth/token":
            if self.poll_pending():
                return 403, {"error": {"code": "deviceauth_authorization_pending"}}
            return 200, {"authorization_code": "device-code-1", "code_verifier": "v"}
        if path in (
            "/login/device/code",
            "/api/oauth/device_authorization",
            "/oauth2/device/code",
            "/oidc/device/authorization/",
        ):
            return 200, {
                "device_code": "dc-1", "user_code": "USER-1", "verification_uri": "https://example.test/device",
                "verification_uri_complete": "https://example.test/device?c=USER-1", "interval": self.device_interval,
                "expires_in": 60,
            }  # fmt: skip
        if path == "/login/oauth/access_token":
            if self.poll_pending():
                return 200, {"error": "authorization_pending"}
            return 200, {"access_token": "gho_github_user_token_1", "token_type": "bearer"}
        if path in ("/api/oauth/token", "/oauth2/token", "/oidc/device/token/"):
            if form.get("grant_type") == "refresh_token":
                return self.refresh_or_refuse(form["refresh_token"])
            if self.poll_pending():
                return 400, {"error": "authorization_pending"}
            return 200, self.tokens()
        if path == "/copilot_internal/v2/token":
            github = seen.headers.get("authorization", "").removeprefix("Bearer ")
            if github in self.revoked:
                return 401, {"message": "Bad credentials"}
            n = next(self.counter)
            token = f"tid=t{n};exp={int(time.time()) + 1800};proxy-ep=proxy.business.githubcopilot.com;sku=x"
            return 200, {"token": token, "expires_at": int(time.time()) + 1800}
        if path == "/models":
            return 200, {"data": [
                {"id": "gpt-4.1", "model_picker_enabled": True, "policy": {"state": "enabled"}},
                {"id": "hidden-model", "model_picker_enabled": False},
            ]}  # fmt: skip
        if path == "/muse-code/key":
            if seen.headers.get("authorization", "").removeprefix("Bearer ") in self.revoked:
                return 401, {"error": "invalid_token"}
            return 200, {"api_key": f"meta-key-{next(self.counter)}"}
        if path == "/api/v1/auth/keys":
            body = seen.json()
            if not self.pkce_ok(body["code"], body["code_verifier"]):
                return 400, {"error": {"message": "bad verifier"}}
            return 200, {"key": "sk-or-v1-loopback", "user_id": "u1"}
        if path.endswith("/chat/completions"):  # Kimi Code's OpenAI-compatible endpoint
            chunk = {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "m",
                     "choices": [{"index": 0, "delta": {"role": "assistant", "content": "kimi answer"},
                                  "finish_reason": "stop"}]}  # fmt: skip
            return 200, (
                {"Content-Type": "text/event-stream"},
                f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode(),
            )
        if path == "/codex/responses" and self.websocket is not None:  # the script answers SSE too
            return 200, ({"Content-Type": "text/event-stream"}, self.websocket.sse(seen))
        if path == "/codex/responses":
            return 200, ({"Content-Type": "text/event-stream"}, codex_stream(self.codex_tool_call))
        return 404, {"error": "not_found"}


def codex_stream(tool_call: bool = True) -> bytes:
    """A Codex-backend answer: a text, then (``tool_call``) a tool call, ended by ``response.done``."""
    events = [
        {"type": "response.created", "response": {"id": "resp_1", "status": "in_progress"}},
        {"type": "response.output_item.added", "output_index": 0,
         "item": {"type": "message", "id": "msg_1", "role": "assistant", "content": []}},
        {"type": "response.output_text.delta", "output_index": 0, "item_id": "msg_1", "delta": "Reading it."},
        {"type": "response.output_item.done", "output_index": 0, "item": {
            "type": "message", "id": "msg_1", "role": "assistant",
            "content": [{"type": "output_text", "text": "Reading it."}]}},
        {"type": "response.output_item.added", "output_index": 1, "item": {
            "type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "read", "arguments": ""}},
        {"type": "response.function_call_arguments.delta", "output_index": 1, "item_id": "fc_1",
         "delta": '{"path": "a.txt"}'},
        {"type": "response.output_item.done", "output_index": 1, "item": {
            "type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "read",
            "arguments": '{"path": "a.txt"}'}},
        {"type": "response.done", "response": {"id": "resp_1", "status": "completed",
         "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}}},
    ]  # fmt: skip
    if not tool_call:
        events = events[:4] + events[-1:]
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)
