"""``pi auth print-api-key``, ``print-bearer-token`` and ``check``, as pi 1.6.0 has them: hand a
provider's resolved credential to an external client, or say whether it is ready.

* ``print-api-key --provider P [--model M]`` prints the key pi-host would send (``--api-key`` is
  not an input here; auth.json, models.json ``apiKey`` and the environment are).
* ``print-bearer-token`` prints a stored OAuth access token, refreshed first when it has less
  than ``--min-expiry`` (default 30m) left.
* ``check`` prints ``ready``, ``not_ready`` or ``invalid`` and exits 0, 1 or 2; ``--json`` gives
  pi's structured result, ``--credentials`` the credential itself, ``--no-refresh`` leaves an
  expired OAuth token alone.

With ``--model`` alone, only providers with a credential stored in auth.json are searched (as in
pi). These commands print secrets on purpose, to stdout only; errors never contain them.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from typing import Any

USAGE = {
    "check": "pi auth check --provider <provider> [--json] [--credentials] [--no-refresh]",
    "api_key": "pi auth print-api-key --provider <provider> [--model <model>]",
    "bearer_token": "pi auth print-bearer-token --provider <provider> [--model <model>] [--min-expiry <duration>]",
}
NAMES = {"check": "auth check", "api_key": "auth print-api-key", "bearer_token": "auth print-bearer-token"}
KINDS = {"check": "check", "print-api-key": "api_key", "print-bearer-token": "bearer_token"}
DEFAULT_MIN_EXPIRY_MS = 30 * 60_000
_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000}


class CommandError(Exception):
    pass


def _parse(kind: str, argv: list[str]) -> dict[str, Any]:
    opts: dict[str, Any] = {"json": False, "credentials": False, "refresh": True, "min_expiry": None}
    opts.update(provider=None, model=None)
    index = 0
    while index < len(argv):
        arg = argv[index]
        index += 1
        name, eq, inline = arg.partition("=")
        if name in ("--provider", "--model"):
            value = inline if eq else (argv[index] if index < len(argv) else "")
            index += 0 if eq else 1
            opts[name[2:]] = value.strip() or None
        elif arg == "--min-expiry":
            if kind != "bearer_token":
                raise CommandError("--min-expiry is only supported by print-bearer-token")
            found = re.fullmatch(r"(\d+)(ms|s|m|h)", argv[index] if index < len(argv) else "", re.I)
            index += 1
            if not found:
                raise CommandError("--min-expiry must use a duration such as 30m or 1h")
            opts["min_expiry"] = int(found.group(1)) * _UNIT_MS[found.group(2).lower()]
        elif arg in ("--json", "--credentials", "--no-refresh"):
            if kind != "check":
                raise CommandError(f"{arg} is only supported by auth check")
            opts[{"--json": "json", "--credentials": "credentials", "--no-refresh": "refresh"}[arg]] = (
                arg != "--no-refresh"
            )
        elif arg.startswith("-"):
            opts["unknown"] = arg.lstrip("-").partition("=")[0]
            break
        else:
            opts["positional"] = True
    return opts


def _validate(opts: dict[str, Any], kind: str) -> None:
    if opts.get("positional"):
        raise CommandError("Auth commands only accept --provider and --model")
    if not opts["provider"] and not opts["model"]:
        if kind == "check":
            raise CommandError("Auth checks require --provider <provider> or --model <model>")
        raise CommandError("Credential printing requires --provider <provider> or --model <model>")


def _registry() -> Any:
    from pi_host.config.models import ModelRegistry
    from pi_host.plugins.selection import PluginRequest, last_loaded, load_plugins

    host = last_loaded() or load_plugins(PluginRequest(cwd=os.getcwd())).host
    return ModelRegistry.from_plugins(host)


def _stored_types(registry: Any) -> dict[str, str]:
    return {
        provider: str(entry.get("type", "api_key"))
        for provider, entry in registry.auth.read().items()
        if isinstance(entry, dict)
    }


def _bearer(registry: Any, provider: str, min_ms: int, refresh: bool = True) -> str | None:
    """The stored OAuth access token with at least ``min_ms`` left, refreshed when it has less."""
    from pi_host.config import oauth_refresh

    entry = registry.auth.get(provider) or {}
    expires = entry.get("expires")
    fresh = not isinstance(expires, (int, float)) or expires - time.time() * 1000 >= min_ms
    if fresh:
        return entry.get("access") or None
    if not refresh or not oauth_refresh.can_refresh(provider):
        return None
    try:
        entry = oauth_refresh.refresh_stored(registry.auth.path, provider, margin_ms=min_ms) or {}
    except (oauth_refresh.RefreshError, OSError, ValueError):
        return None
    return entry.get("access") or None


def _credential(registry: Any, provider: str, kind: str, min_ms: int) -> str | None:
    if kind == "bearer_token":
        return _bearer(registry, provider, min_ms)
    key = registry.get_api_key(provider)
    return None if not key or key == "<authenticated>" else key  # an ambient chain has no key to print


def _resolve_print(registry: Any, opts: dict[str, Any], kind: str) -> str:
    from pi_host.config.model_reference import match

    types = _stored_types(registry)
    chosen: list[str] = []
    provider, model = opts["provider"], opts["model"]
    if provider:
        known = {p.lower(): p for p in registry.providers}
        if provider.lower() not in known:
            raise CommandError(
                f'Unknown provider "{provider}". Use --list-models to see available providers.'
            )
        provider = known[provider.lower()]
        if model:
            pool = [m for m in registry.models() if m.provider == provider]
            try:
                found = match(model, pool, registry.has_auth)
            except LookupError as exc:
                raise CommandError(str(exc)) from None
            if found is None:
                raise CommandError(f'Model "{model}" not found. Use --list-models to see available models.')
        chosen.append(provider)
    else:
        for info in registry.providers.values():
            if info.id not in types:
                continue
            pool = [m for m in registry.models() if m.provider == info.id]
            try:
                if match(model, pool, lambda _p: True) is not None:
                    chosen.append(info.id)
            except LookupError:
                continue
        if not chosen:
            raise CommandError(f'Model "{model}" not found. Use --list-models to see available models.')
    min_ms = opts["min_expiry"] if opts["min_expiry"] is not None else DEFAULT_MIN_EXPIRY_MS
    found_values = []
    for pid in chosen:
        stored = types.get(pid)
        if (kind == "api_key" and stored == "oauth") or (kind == "bearer_token" and stored != "oauth"):
            continue
        value = _credential(registry, pid, kind, min_ms)
        if value:
            found_values.append((pid, value))
    if len(found_values) == 1:
        return found_values[0][1]
    if not found_values:
        first = chosen[0]
        if opts["provider"] and kind == "api_key" and types.get(first) == "oauth":
            raise CommandError(f'Provider "{first}" is configured with OAuth, not an API key')
        if opts["provider"] and kind == "bearer_token" and types.get(first) != "oauth":
            raise CommandError(f'Provider "{first}" is not configured with an OAuth bearer token')
        raise CommandError(
            f"No usable {'API key' if kind == 'api_key' else 'OAuth bearer token'} is configured"
        )
    names = ", ".join(pid for pid, _ in found_values)
    raise CommandError(f"Multiple configured providers matched ({names}). Specify --provider.")


def _check(registry: Any, opts: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    provider = opts["provider"]
    if opts["model"]:
        model, _ = registry.resolve_cli(opts["model"], provider)
        provider = model.provider
    if registry.problems:
        return {"status": "invalid", "provider": provider, "reason": "invalid_state"}, None
    if provider not in registry.providers:
        return {"status": "not_ready", "provider": provider, "reason": "provider_not_found"}, None
    entry = registry.auth.get(provider) or {}
    not_configured = {"status": "not_ready", "provider": provider, "reason": "credentials_not_configured"}
    if entry.get("type") == "oauth":
        access = (
            _bearer(registry, provider, 0, refresh=opts["refresh"])
            if opts["refresh"]
            else entry.get("access")
        )
        if not access:
            return not_configured, None
        return {"status": "ready", "provider": provider, "authType": "oauth"}, str(access)
    key = registry.get_api_key(provider)
    if not key:
        return not_configured, None
    credential = None if key == "<authenticated>" else key
    return {"status": "ready", "provider": provider, "authType": "api_key"}, credential


def run(command: str, argv: list[str]) -> int:
    kind = KINDS[command]
    try:
        opts = _parse(kind, argv)
    except CommandError as exc:
        sys.stderr.write(f"Error: {exc}\n")
        return 1
    if opts.get("unknown"):
        sys.stderr.write(f'Unknown option --{opts["unknown"]} for "{NAMES[kind]}".\n')
        sys.stderr.write(f'Use "pi --help" or "{USAGE[kind]}".\n')
        return 1
    try:
        _validate(opts, kind)
        if kind != "check":
            sys.stdout.write(_resolve_print(_registry(), opts, kind) + "\n")
            return 0
        try:
            result, credential = _check(_registry(), opts)
        except Exception:  # noqa: BLE001 - any failure to decide is pi's "invalid"
            result, credential = (
                {
                    "status": "invalid",
                    "provider": opts["provider"] or opts["model"],
                    "reason": "invalid_state",
                },
                None,
            )
        if opts["credentials"] and result["status"] == "ready" and not credential:
            result = {
                "status": "not_ready",
                "provider": result["provider"],
                "reason": "credential_not_available",
            }
        shown = credential if opts["credentials"] and result["status"] == "ready" else None
        if opts["json"]:
            payload = {**result, **({"credentials": shown} if shown else {})}
            sys.stdout.write(json.dumps(payload, separators=(",", ":")) + "\n")  # pi's compact JSON
        else:
            sys.stdout.write((shown or result["status"]) + "\n")
        return {"ready": 0, "not_ready": 1}.get(result["status"], 2)
    except CommandError as exc:
        sys.stderr.write(f"Error: {exc}\n")
        return 2 if kind == "check" else 1
    except Exception:  # noqa: BLE001 - never a traceback that could hold a credential
        sys.stderr.write("Error: Failed to resolve credential\n")
        return 2 if kind == "check" else 1
