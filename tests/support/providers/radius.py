"""A loopback Radius gateway: the pi-messages endpoint (``POST /v1/messages``, scripted answers as
SSE), the account's config (``GET /v1/config``) and the OAuth client APIs (``GET /v1/oauth``, the
authorization page it names, ``POST /v1/oauth/token`` and ``/v1/oauth/device``). It records every
request. Answers follow pi 1.6.0's Radius code (pi-ai ``api/pi-messages.js``,
``providers/radius-config.js``, ``auth/oauth/radius.js``).

    with RadiusGateway() as gateway:
        gateway.turns = [tool_call_turn("ls", {"path": "."}), text_turn("Done")]
        ...  # point radius's baseUrl at gateway.url + "/v1"

``python -m tests.support.providers.radius`` serves it by hand (prints its URL).
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

from tests.support.http_record import Seen, Served

KEY = "rk-loopback-radius-0123"

USAGE = {
    "input": 120, "output": 30, "cacheRead": 40, "cacheWrite": 0, "totalTokens": 190,
    "cost": {"input": 0.00036, "output": 0.00045, "cacheRead": 0.000012, "cacheWrite": 0, "total": 0.000822},
}  # fmt: skip


def text_turn(text: str, *, thinking: str | None = None, reason: str = "stop") -> list[dict[str, Any]]:
    """One answer: optional thinking, then ``text`` in two deltas, then ``done``."""
    events: list[dict[str, Any]] = [{"type": "start"}]
    index = 0
    if thinking is not None:
        events += [
            {"type": "thinking_start", "contentIndex": 0},
            {"type": "thinking_delta", "contentIndex": 0, "delta": thinking},
            {"type": "thinking_end", "contentIndex": 0, "content": thinking, "contentSignature": "sig-think"},
        ]
        index = 1
    half = len(text) // 2
    events += [
        {"type": "text_start", "contentIndex": index},
        {"type": "text_delta", "contentIndex": index, "delta": text[:half]},
        {"type": "text_delta", "contentIndex": index, "delta": text[half:]},
        {"type": "text_end", "contentIndex": index, "content": text},
        {
            "type": "done",
            "reason": reason,
            "usage": USAGE,
            "responseId": "resp-text",
            "responseModel": "upstream-1",
        },
    ]
    return events


def tool_call_turn(
    name: str, arguments: dict[str, Any], *, call_id: str = "call_radius_1"
) -> list[dict[str, Any]]:
    """A short text, then a tool call whose arguments arrive in 5-character pieces."""
    raw = json.dumps(arguments)
    pieces = [raw[i : i + 5] for i in range(0, len(raw), 5)]
    return [
        {"type": "start"},
        {"type": "thinking_start", "contentIndex": 0},
        {"type": "thinking_delta", "contentIndex": 0, "delta": "Look first."},
        {"type": "thinking_end", "contentIndex": 0, "content": "Look first.", "contentSignature": "sig-1"},
        {"type": "text_start", "contentIndex": 1},
        {"type": "text_delta", "contentIndex": 1, "delta": "Checking."},
        {"type": "text_end", "contentIndex": 1, "content": "Checking."},
        {"type": "toolcall_start", "contentIndex": 2, "id": call_id, "toolName": name},
        *({"type": "toolcall_delta", "contentIndex": 2, "delta": piece} for piece in pieces),
        {"type": "toolcall_end", "contentIndex": 2,
         "toolCall": {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}},
        {"type": "done", "reason": "toolUse", "usage": USAGE, "responseId": "resp-tool"},
    ]  # fmt: skip


def sse(events: list[dict[str, Any]]) -> bytes:
    return b"".join(f"data: {json.dumps(event)}\n\n".encode() for event in events)


GATEWAY_MODEL = {
    "id": "team-model", "name": "Team Model", "reasoning": True, "input": ["text"],
    "cost": {"input": 1, "output": 2, "cacheRead": 0.1, "cacheWrite": 0},
    "contextWindow": 200000, "maxTokens": 32000,
}  # fmt: skip


@dataclass
class RadiusGateway(Served):
    turns: list[Any] = field(default_factory=list)
    """Answers of ``/v1/messages`` in order: a list of events, or ``(status, json body)``."""
    models: list[dict[str, Any]] = field(default_factory=lambda: [GATEWAY_MODEL])
    config_status: int = 200
    pending_polls: int = 1
    revoked: set[str] = field(default_factory=set)
    requests: list[Seen] = field(default_factory=list)
    challenges: dict[str, str] = field(default_factory=dict)
    counter: itertools.count = field(default_factory=lambda: itertools.count(1))

    def __post_init__(self) -> None:
        self.serve()

    def messages(self) -> list[Seen]:
        return [r for r in self.requests if r.path.endswith("/messages")]

    # --- answers -------------------------------------------------------------------------------

    def answer(self, seen: Seen) -> tuple[int, dict[str, str], bytes]:
        status, reply = self.route(seen)
        if isinstance(reply, tuple):
            return status, reply[0], reply[1]
        return status, {"Content-Type": "application/json"}, json.dumps(reply).encode()

    def tokens(self) -> dict[str, Any]:
        n = next(self.counter)
        return {"access_token": f"radius-access-{n}", "refresh_token": f"radius-refresh-{n}",
                "expires_in": 3600, "scope": "gateway offline_access", "token_type": "Bearer"}  # fmt: skip

    def route(self, seen: Seen) -> tuple[int, Any]:
        path = seen.path
        if path.endswith("/messages") and seen.method == "POST":
            turn = self.turns.pop(0) if self.turns else text_turn("ok")
            if isinstance(turn, tuple):
                return turn
            return 200, ({"Content-Type": "text/event-stream"}, sse(turn))
        if path == "/v1/config":
            if self.config_status != 200:
                return self.config_status, {"error": {"message": "config refused"}}
            return 200, {"baseUrl": self.url + "/v1", "models": [*self.models, {"id": "broken"}]}
        if path == "/v1/oauth":
            return 200, {"authorizationEndpoint": self.url + "/authorize"}
        if path == "/authorize":
            code = f"code-{next(self.counter)}"
            self.challenges[code] = seen.query["code_challenge"]
            target = (
                seen.query["redirect_uri"]
                + "?"
                + urllib.parse.urlencode({"code": code, "state": seen.query["state"]})
            )
            return 302, ({"Location": target}, b"")
        if path == "/v1/oauth/device":
            return 200, {"device_code": "radius-dc-1", "user_code": "RAD-1",
                         "verification_uri": "https://example.test/radius/device", "expires_in": 60}  # fmt: skip
        if path == "/v1/oauth/token":
            form = seen.form()
            grant = form.get("grant_type")
            if grant == "refresh_token":
                if form["refresh_token"] in self.revoked:
                    return 400, {"error": "invalid_grant", "error_description": "refresh token revoked"}
                self.revoked.add(form["refresh_token"])
                return 200, self.tokens()
            if grant == "urn:ietf:params:oauth:grant-type:device_code":
                if self.pending_polls > 0:
                    self.pending_polls -= 1
                    return 400, {"error": "authorization_pending"}
                return 200, self.tokens()
            verifier = form.get("code_verifier", "")
            digest = (
                base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
            )
            if self.challenges.get(form.get("code", "")) != digest:
                return 400, {"error": "invalid_grant", "error_description": "PKCE verification failed"}
            return 200, self.tokens()
        return 404, {"error": {"message": "not found"}}


if __name__ == "__main__":
    import time

    with RadiusGateway() as server:
        print(server.url, flush=True)
        while True:
            time.sleep(3600)
