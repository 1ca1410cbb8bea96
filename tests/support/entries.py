"""Builders for session entries (pi's JSON shapes) with a linear parent chain."""

from __future__ import annotations

from typing import Any

USAGE = {
    "input": 10,
    "output": 5,
    "cacheRead": 0,
    "cacheWrite": 0,
    "totalTokens": 15,
    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
}


class Chain:
    """Appends entries as children of the previous one; ids are ``e1``, ``e2``..."""

    def __init__(self) -> None:
        self.entries: list[dict[str, Any]] = []

    @property
    def last(self) -> str | None:
        return self.entries[-1]["id"] if self.entries else None

    def add(self, kind: str, **fields: Any) -> dict[str, Any]:
        n = len(self.entries) + 1
        entry = {
            "type": kind,
            "id": fields.pop("id", f"e{n}"),
            "parentId": fields.pop("parentId", self.last),
            "timestamp": f"2026-12-02T09:{n // 60:02d}:{n % 60:02d}.000Z",
            **fields,
        }
        self.entries.append(entry)
        return entry

    def message(self, message: dict[str, Any], **fields: Any) -> dict[str, Any]:
        return self.add("message", message={"timestamp": 1, **message}, **fields)

    def system(self) -> dict[str, Any]:
        return self.message({"role": "system", "content": "", "sections": {"preamble": "be helpful"}})

    def user(self, text: str, **fields: Any) -> dict[str, Any]:
        return self.message({"role": "user", "content": [{"type": "text", "text": text}]}, **fields)

    def assistant(
        self,
        text: str = "",
        calls: list[dict] | None = None,
        usage: dict | None = None,
        stop: str | None = None,
        **fields: Any,
    ) -> dict[str, Any]:
        content: list[dict] = [{"type": "text", "text": text}] if text else []
        for i, call in enumerate(calls or ()):
            content.append(
                {
                    "type": "toolCall",
                    "id": call.get("id", f"c{len(self.entries)}_{i}"),
                    "name": call["name"],
                    "arguments": call.get("arguments", {}),
                }
            )
        return self.message(
            {
                "role": "assistant",
                "content": content,
                "api": "faux",
                "provider": "faux",
                "model": "faux-small",
                "usage": usage or USAGE,
                "stopReason": stop or ("toolUse" if calls else "stop"),
            },
            **fields,
        )

    def result(self, text: str, name: str = "dump", call_id: str = "c") -> dict[str, Any]:
        return self.message(
            {
                "role": "toolResult",
                "toolCallId": call_id,
                "toolName": name,
                "content": [{"type": "text", "text": text}],
                "isError": False,
            }
        )

    def turn(self, prompt: str, *results: str, answer: str = "ok") -> None:
        """A user prompt, one tool call + result per text in ``results``, then an answer."""
        self.user(prompt)
        for text in results:
            self.assistant(calls=[{"name": "dump"}])
            self.result(text)
        self.assistant(answer)
