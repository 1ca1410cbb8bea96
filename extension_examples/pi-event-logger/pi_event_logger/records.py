"""Turning a session event into a small, secret-free JSON record.

Three rules keep the log safe and short:

- **names**: the value of a field whose name looks like a credential (``apiKey``, ``token``,
  ``Authorization``, ``secret``, ``password``, ``cookie``...) is written ``"[redacted]"``; numbers
  are kept (``totalTokens`` is a count, not a secret);
- **values**: every string is scrubbed of the secrets this process knows (the values of
  environment variables named like credentials, the keys in ``<agent dir>/auth.json`` and
  ``models.json``) and of strings shaped like keys (``sk-...``, ``Bearer ...``, ``ghp_...``);
- **size**: strings are cut to :data:`MAX_STRING` characters, lists to :data:`MAX_ITEMS` items;
  messages become summaries (role, usage, stop reason, each block's type and length, a short
  preview of text), and streamed deltas are counted instead of written.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from typing import Any

MAX_STRING = 200
PREVIEW = 80
MAX_ITEMS = 20
MAX_DEPTH = 6
REDACTED = "[redacted]"

SECRET_NAME = re.compile(r"key|token|secret|passw|authoriz|\bauth\b|cookie|credential|bearer", re.I)
"""Field names whose (string) values are never written."""
SECRET_ENV = re.compile(r"KEY|TOKEN|SECRET|PASSW|AUTH|CREDENTIAL|COOKIE", re.I)
"""Environment variable names whose values are scrubbed from every string."""
SECRET_SHAPES = [
    re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}"),
    re.compile(r"\b(gh[pousr]_[A-Za-z0-9]{16,})"),
    re.compile(r"\bxox[abprs]-[A-Za-z0-9\-]{8,}"),
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),
    re.compile(r"\bAIza[0-9A-Za-z_\-]{20,}"),
]
LABELLED = re.compile(
    r"(?i)\b(((?:proxy-)?authorization\s*[:=]\s*(?:bearer|basic|token)?|bearer|x-api-key\s*[:=]|"
    r"api[_-]?key\s*[:=]|(?:access[_-]?|refresh[_-]?)?token\s*[:=]|password\s*[:=]|secret\s*[:=])\s*)"
    r"([^\s\"',;]{6,})"
)
"""``Bearer abc...``, ``api_key=abc...``: the label stays, the value goes."""


# --- known secrets --------------------------------------------------------------------------


def _plausible_secret(value: str) -> bool:
    return len(value) >= 8 and not value.startswith(("/", "~", ".")) and not any(c.isspace() for c in value)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []


def known_secrets(environ: dict[str, str] | None = None, agent_dir: str | None = None) -> list[str]:
    """Values to scrub: credential-named environment variables, and every string under a
    credential-named field of ``<agent_dir>/auth.json`` and ``models.json`` (``apiKey``, an
    ``Authorization`` header...; not an environment variable's name or a ``!command``, which is
    what a models.json ``apiKey`` may hold instead of the key). Longest first."""
    environ = os.environ if environ is None else environ
    found = {value for name, value in environ.items() if SECRET_ENV.search(name) and _plausible_secret(value)}
    for name in ("auth.json", "models.json") if agent_dir else ():
        try:
            with open(os.path.join(agent_dir, name), encoding="utf-8") as handle:
                data = json.load(handle)
        except (OSError, ValueError):
            continue
        found.update(s for s in _secret_fields(data) if _plausible_secret(s) and not _reference(s))
    return sorted(found, key=len, reverse=True)


def _reference(value: str) -> bool:
    """An environment variable's name or a shell command, not a key."""
    return value.startswith("!") or re.fullmatch(r"[A-Z][A-Z0-9_]*", value) is not None


def _secret_fields(value: Any) -> list[str]:
    if isinstance(value, dict):
        out = []
        for name, item in value.items():
            out += _strings(item) if SECRET_NAME.search(str(name)) else _secret_fields(item)
        return out
    if isinstance(value, list):
        return [s for item in value for s in _secret_fields(item)]
    return []


# --- cleaning -------------------------------------------------------------------------------


class Cleaner:
    """Makes values JSON-ready, redacted and short. ``secrets``: exact values to scrub."""

    def __init__(self, secrets: list[str] | None = None) -> None:
        self.secrets = [s for s in (secrets or []) if s]

    def scrub(self, text: str) -> str:
        for secret in self.secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        for shape in SECRET_SHAPES:
            text = shape.sub(REDACTED, text)
        return LABELLED.sub(lambda m: m.group(1) + REDACTED, text)

    def text(self, value: str, limit: int = MAX_STRING) -> str:
        value = self.scrub(value)
        return value if len(value) <= limit else f"{value[:limit]}… [{len(value)} chars]"

    def clean(self, value: Any, *, secret: bool = False, depth: int = 0) -> Any:
        """``value`` as JSON data: objects through ``to_json()`` / dataclass fields, secrets
        redacted, strings and lists cut."""
        if value is None or isinstance(value, bool | int | float):
            return value
        if isinstance(value, str | bytes):
            if secret:
                return REDACTED
            if isinstance(value, bytes):
                return f"<{len(value)} bytes>"
            return self.text(value)
        if depth >= MAX_DEPTH:
            return "…"
        value = plain(value)
        if isinstance(value, dict):
            return {
                str(name): self.clean(
                    item, secret=secret or bool(SECRET_NAME.search(str(name))), depth=depth + 1
                )
                for name, item in value.items()
            }
        if isinstance(value, list | tuple | set | frozenset):
            items = list(value)
            out = [self.clean(item, secret=secret, depth=depth + 1) for item in items[:MAX_ITEMS]]
            if len(items) > MAX_ITEMS:
                out.append(f"… {len(items) - MAX_ITEMS} more")
            return out
        return self.text(repr(value))

    # --- messages ---------------------------------------------------------------------------

    def block(self, block: Any) -> Any:
        block = plain(block)
        if not isinstance(block, dict):
            return self.clean(block)
        kind = block.get("type")
        if kind == "text":
            text = str(block.get("text") or "")
            return {"type": "text", "chars": len(text), "preview": self.text(text, PREVIEW)}
        if kind == "thinking":
            return {"type": "thinking", "chars": len(str(block.get("thinking") or ""))}
        if kind == "toolCall":
            return {
                "type": "toolCall",
                "id": block.get("id"),
                "name": block.get("name"),
                "arguments": self.clean(block.get("arguments")),
            }
        if kind == "image":
            return {"type": "image", "mimeType": block.get("mimeType")}
        return {"type": kind}

    def content(self, content: Any) -> Any:
        if isinstance(content, str):
            return {"chars": len(content), "preview": self.text(content, PREVIEW)}
        if isinstance(content, list):
            return [self.block(b) for b in content[:MAX_ITEMS]]
        return self.clean(content)

    def message(self, message: Any) -> Any:
        """A message without its bulk: role and metadata, usage, each block summarised."""
        data = plain(message)
        if not isinstance(data, dict):
            return self.clean(data)
        out = {}
        for name, value in data.items():
            if name == "content":
                out["content"] = self.content(value)
            elif name in ("details", "structuredContent"):
                out[name] = self.clean(value, depth=MAX_DEPTH - 2)
            elif isinstance(value, dict) and value and all(isinstance(v, str) for v in value.values()):
                out[name] = {str(k): {"chars": len(v)} for k, v in value.items()}  # system sections
            elif (
                isinstance(value, list) and value and all(isinstance(v, dict) and "name" in v for v in value)
            ):
                out[name] = [self.clean(v["name"]) for v in value[:MAX_ITEMS]]  # declared tools
            else:
                out[name] = self.clean(value, secret=bool(SECRET_NAME.search(name)))
        return out

    def result(self, result: Any) -> Any:
        """A tool result (``{content, details?}``): content summarised, details cleaned."""
        data = plain(result)
        if not isinstance(data, dict):
            return self.clean(data)
        out: dict[str, Any] = {"content": self.content(data.get("content") or [])}
        for name in ("details", "structuredContent", "structured_content", "isError", "is_error"):
            if data.get(name) is not None:
                out[name] = self.clean(data[name], depth=MAX_DEPTH - 3)
        return out


def plain(value: Any) -> Any:
    """Protocol models as their JSON (``to_json()``), dataclasses as dicts; others unchanged."""
    to_json = getattr(value, "to_json", None)
    if callable(to_json) and not isinstance(value, type):
        try:
            return to_json()
        except Exception:
            return repr(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    return value


def model_key(model: Any) -> str | None:
    """``provider/id`` of a model (object, dict or string), never its headers or key."""
    if model is None:
        return None
    if isinstance(model, str):
        return model
    provider = getattr(model, "provider", None)
    ident = getattr(model, "id", None)
    if isinstance(model, dict):
        provider, ident = model.get("provider"), model.get("id")
    if ident is None:
        return None
    return f"{provider}/{ident}" if provider else str(ident)


# --- one record per event -------------------------------------------------------------------


def summarise(kind: str, event: dict[str, Any], cleaner: Cleaner) -> dict[str, Any]:
    """The fields written for event ``kind`` (``type``, time and sequence are added by the log)."""
    c = cleaner
    if kind == "message_end":
        return {"message": c.message(event.get("message"))}
    if kind == "message_start":  # the whole message follows in message_end
        message = plain(event.get("message"))
        keep = ("role", "toolCallId", "toolName", "customType", "provider", "model", "timestamp")
        return {
            "message": {k: c.clean(message[k]) for k in keep if isinstance(message, dict) and k in message}
        }
    if kind == "turn_end":  # the message was written by its message_end
        message = plain(event.get("message"))
        message = message if isinstance(message, dict) else {}
        return {"stopReason": message.get("stopReason"), "toolResults": len(event.get("toolResults") or [])}
    if kind == "agent_end":
        messages = event.get("messages") or []
        roles = [
            getattr(m, "role", None) or (m.get("role") if isinstance(m, dict) else None) for m in messages
        ]
        return {"messages": len(messages), "roles": roles[:MAX_ITEMS], "willRetry": event.get("willRetry")}
    if kind == "tool_execution_start":
        return {
            "toolCallId": event.get("toolCallId"),
            "toolName": event.get("toolName"),
            "args": c.clean(event.get("args")),
        }
    if kind == "tool_execution_end":
        return {
            "toolCallId": event.get("toolCallId"),
            "toolName": event.get("toolName"),
            "isError": event.get("isError"),
            "durationMs": event.get("durationMs"),
            "result": c.result(event.get("result")),
        }
    if kind == "queue_update":
        return {"steering": len(event.get("steering") or []), "followUp": len(event.get("followUp") or [])}
    if kind == "entry_appended":
        entry = event.get("entry") or {}
        entry = entry if isinstance(entry, dict) else plain(entry)
        keep = ("id", "parentId", "type", "customType", "label", "name")
        return {"entry": {k: c.clean(entry.get(k)) for k in keep if isinstance(entry, dict) and k in entry}}
    if kind == "compaction_end":
        out = {
            k: c.clean(event.get(k)) for k in ("reason", "aborted", "willRetry", "errorMessage") if k in event
        }
        result = plain(event.get("result"))
        if isinstance(result, dict):
            summary = str(result.get("summary") or "")
            out["result"] = {
                "summaryChars": len(summary),
                "tokensBefore": result.get("tokensBefore"),
                "firstKeptEntryId": result.get("firstKeptEntryId"),
            }
        return out
    if kind in ("session_compact", "session_tree"):
        out = {}
        for name, value in event.items():
            data = plain(value)
            if isinstance(data, dict):  # compactionEntry / summaryEntry: no summary text
                out[name] = {k: c.clean(v) for k, v in data.items() if k not in ("summary", "details")}
                if "summary" in data:
                    out[name]["summaryChars"] = len(str(data["summary"] or ""))
            else:
                out[name] = c.clean(data)
        return out
    if kind == "model_select":
        return {
            "model": model_key(event.get("model")),
            "previousModel": model_key(event.get("previousModel")),
            "source": c.clean(event.get("source")),
        }
    return {
        name: c.clean(value, secret=bool(SECRET_NAME.search(name)))
        for name, value in event.items()
        if name != "type"
    }
