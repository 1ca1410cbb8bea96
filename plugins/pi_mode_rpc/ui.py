"""``ctx.ui`` over RPC: dialogs become ``extension_ui_request`` records answered by the client's
``extension_ui_response``; display calls are sent and not answered (pi's method names)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from typing import Any

from pi_host.session.ui import HeadlessUI

Send = Callable[[dict[str, Any]], None]


class RpcUI(HeadlessUI):
    def __init__(self, send: Send) -> None:
        self.send = send
        self.pending: dict[str, asyncio.Future[dict[str, Any]]] = {}

    def answer(self, record: dict[str, Any]) -> None:
        """An ``extension_ui_response`` from the client (unknown ids are ignored, as in pi)."""
        future = self.pending.pop(str(record.get("id")), None)
        if future is not None and not future.done():
            future.set_result(record)

    def cancel_all(self) -> None:
        """Shutting down: every open dialog gets its default."""
        for future in self.pending.values():
            if not future.done():
                future.set_result({"cancelled": True})
        self.pending.clear()

    async def _ask(
        self, method: str, fields: dict[str, Any], timeout: float | None, signal: Any
    ) -> dict[str, Any]:
        ident = str(uuid.uuid4())
        record: dict[str, Any] = {"type": "extension_ui_request", "id": ident, "method": method, **fields}
        if timeout:
            record["timeout"] = int(timeout * 1000)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.pending[ident] = future
        remove = (
            signal.add_listener(lambda: self.answer({"id": ident, "cancelled": True})) if signal else None
        )
        self.send(record)
        try:
            return await asyncio.wait_for(asyncio.shield(future), timeout) if timeout else await future
        except TimeoutError:
            return {"cancelled": True}
        finally:
            self.pending.pop(ident, None)
            if remove is not None:
                remove()

    @staticmethod
    def _value(answer: dict[str, Any]) -> str | None:
        if answer.get("cancelled"):
            return None
        value = answer.get("value")
        return value if isinstance(value, str) else None

    async def select(
        self, title: str, options: list[str], timeout: float | None = None, signal: Any = None, **_: Any
    ) -> str | None:
        answer = await self._ask("select", {"title": title, "options": list(options)}, timeout, signal)
        return self._value(answer)

    async def confirm(
        self, title: str, message: str = "", timeout: float | None = None, signal: Any = None, **_: Any
    ) -> bool:
        answer = await self._ask("confirm", {"title": title, "message": message}, timeout, signal)
        return False if answer.get("cancelled") else answer.get("confirmed") is True

    async def input(
        self, title: str, placeholder: str = "", timeout: float | None = None, signal: Any = None, **_: Any
    ) -> str | None:
        fields = {"title": title, **({"placeholder": placeholder} if placeholder else {})}
        return self._value(await self._ask("input", fields, timeout, signal))

    async def editor(
        self, title: str, prefill: str = "", timeout: float | None = None, signal: Any = None, **_: Any
    ) -> str | None:
        fields = {"title": title, **({"prefill": prefill} if prefill else {})}
        return self._value(await self._ask("editor", fields, timeout, signal))

    def _tell(self, method: str, **fields: Any) -> None:
        self.send({"type": "extension_ui_request", "id": str(uuid.uuid4()), "method": method, **fields})

    def notify(self, message: str, kind: str = "info") -> None:
        self._tell(
            "notify", message=message, notifyType=kind if kind in ("info", "warning", "error") else "info"
        )

    def set_status(self, key: str, text: str | None) -> None:
        self._tell("setStatus", statusKey=key, **({"statusText": text} if text is not None else {}))

    def set_widget(self, key: str, lines: list[str] | None, placement: str = "above") -> None:
        fields: dict[str, Any] = {"widgetKey": key}
        if lines is not None:
            fields["widgetLines"] = [str(line) for line in lines]
        fields["widgetPlacement"] = "belowEditor" if placement == "below" else "aboveEditor"
        self._tell("setWidget", **fields)

    def set_title(self, title: str) -> None:
        self._tell("setTitle", title=title)

    def set_editor_text(self, text: str) -> None:
        self._tell("set_editor_text", text=text)
