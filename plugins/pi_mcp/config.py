"""mcp.json as pi reads it: ``<agent dir>/mcp.json`` and, for trusted projects, ``.pi/mcp.json``.

No MCP SDK here: this module decides whether anything needs the SDK at all.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from dataclasses import dataclass, field
from typing import Any

from pi_host.config import paths
from pi_host.config.json_files import read_json_object

EXPOSURES = ("codemode", "deferred", "direct", "hidden")
ALIASES = {"codemode-deferred": "codemode"}
DEFAULT_TIMEOUT = 60.0
SERVER_NAME = re.compile(r"^[A-Za-z0-9_-]+$")
MAX_TOOL_NAME = 64


def user_file(agent_dir: str | None = None) -> str:
    return os.path.join(agent_dir or paths.agent_dir(), "mcp.json")


def project_file(cwd: str) -> str:
    return os.path.join(cwd, ".pi", "mcp.json")


@dataclass
class ServerConfig:
    name: str
    raw: dict[str, Any]
    source: str
    scope: str
    """``global`` or ``project``."""

    @property
    def kind(self) -> str:
        return "http" if isinstance(self.raw.get("url"), str) and self.raw.get("type") != "stdio" else "stdio"

    @property
    def enabled(self) -> bool:
        return self.raw.get("enabled", True) is not False

    @property
    def timeout(self) -> float:
        value = self.raw.get("timeout")
        return float(value) if isinstance(value, (int, float)) and value > 0 else DEFAULT_TIMEOUT

    @property
    def exposure(self) -> str:
        return _alias(self.raw.get("exposure")) or "codemode"

    @property
    def tool_exposure(self) -> dict[str, str]:
        return {k: _alias(v) for k, v in (self.raw.get("toolExposure") or {}).items()}

    @property
    def description(self) -> str:
        return str(self.raw.get("description") or "")

    @property
    def oauth(self) -> dict[str, Any]:
        value = self.raw.get("oauth")
        return value if isinstance(value, dict) else {}

    @property
    def uses_oauth(self) -> bool:
        """pi's rule: an HTTP server signs in with OAuth unless it sends its own ``Authorization``."""
        headers = self.raw.get("headers") or {}
        return self.kind == "http" and not any(str(k).lower() == "authorization" for k in headers)

    @property
    def transport(self) -> str:
        if self.kind == "http":
            return str(self.raw["url"])
        return " ".join([str(self.raw.get("command", "")), *map(str, self.raw.get("args") or [])])

    def exposure_of(self, tool: str) -> str:
        """pi's rule: an exact name wins, then the first matching ``*`` pattern, then the server's."""
        overrides = self.tool_exposure
        if tool in overrides:
            return overrides[tool]
        for pattern, value in overrides.items():
            if "*" in pattern and re.fullmatch(".*".join(map(re.escape, pattern.split("*"))), tool):
                return value
        return self.exposure


def _alias(value: Any) -> Any:
    return ALIASES.get(value, value) if isinstance(value, str) else value


def _string_map(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())


def validate(name: str, raw: Any) -> str | None:
    """pi's messages for an entry it cannot use (None: usable)."""
    if not SERVER_NAME.match(name):
        return f'invalid server name "{name}" (use letters, digits, "_" and "-")'
    if not isinstance(raw, dict):
        return f'server "{name}" must be an object'
    problem = _base_problem(raw)
    if problem:
        return f'server "{name}": {problem}'
    kind, url, command = raw.get("type"), raw.get("url"), raw.get("command")
    if kind == "sse":
        return f'server "{name}": legacy SSE transport is not supported; use the streamable HTTP URL'
    if isinstance(url, str) and kind in (None, "http", "streamable-http"):
        if not re.match(r"^https?://[^/\s]+", url):
            return f'server "{name}": url must be an http or https URL'
        if raw.get("headers") is not None and not _string_map(raw["headers"]):
            return f'server "{name}": headers must map names to strings'
        problem = _oauth_problem(raw.get("oauth"))
        return f'server "{name}": {problem}' if problem else None
    if isinstance(command, str) and kind in (None, "stdio"):
        args, env, cwd = raw.get("args"), raw.get("env"), raw.get("cwd")
        if args is not None and not (isinstance(args, list) and all(isinstance(a, str) for a in args)):
            return f'server "{name}": args must be an array of strings'
        if env is not None and not _string_map(env):
            return f'server "{name}": env must map names to strings'
        if cwd is not None and not isinstance(cwd, str):
            return f'server "{name}": cwd must be a string'
        return None
    return f'server "{name}" needs either "command" (stdio) or "url" (streamable HTTP)'


LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]")
REGISTRATIONS = ("auto", "dcr", "cimd")


def url_host(url: str) -> str | None:
    """The host of ``url`` as a URL spells it (``[::1]`` with its brackets), lower case."""
    match = re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://(?:[^@/?#]*@)?(\[[^\]]*\]|[^:/?#]*)", url)
    return match.group(1).lower() if match else None


def url_port(url: str) -> int | None:
    match = re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://(?:[^@/?#]*@)?(?:\[[^\]]*\]|[^:/?#]*):(\d+)", url)
    return int(match.group(1)) if match else None


def _loopback_http(url: str) -> bool:
    """An ``http://`` URL on localhost, 127.0.0.1 or [::1] without query or fragment."""
    return (
        url.lower().startswith("http://") and url_host(url) in LOOPBACK_HOSTS and not re.search(r"[?#]", url)
    )


def _oauth_problem(oauth: Any) -> str | None:
    """pi's checks of a server's ``oauth`` object (None: usable)."""
    if oauth is None:
        return None
    if not isinstance(oauth, dict):
        return "oauth must be an object"
    for key in ("clientId", "clientSecret", "scope"):
        if key in oauth and not isinstance(oauth[key], str):
            return f"oauth.{key} must be a string"
    port = oauth.get("callbackPort")
    if "callbackPort" in oauth and (
        isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535
    ):
        return "oauth.callbackPort must be a port number"
    callback = oauth.get("callbackUrl")
    if "callbackUrl" in oauth:
        if not isinstance(callback, str) or not _loopback_http(callback):
            return (
                "oauth.callbackUrl must be an http URI on localhost, 127.0.0.1, or [::1] "
                "without query or fragment"
            )
        if url_port(callback) is not None and port is not None and url_port(callback) != port:
            return "oauth.callbackUrl and oauth.callbackPort name different ports"
    name = oauth.get("clientName")
    if "clientName" in oauth and (not isinstance(name, str) or not name.strip()):
        return "oauth.clientName must be a non-empty string"
    registration = oauth.get("clientRegistration")
    if "clientRegistration" in oauth and registration not in REGISTRATIONS:
        return 'oauth.clientRegistration must be "auto", "dcr", or "cimd"'
    if registration == "cimd":
        if "clientId" in oauth or "clientName" in oauth:
            return (
                'oauth.clientRegistration "cimd" cannot be combined with oauth.clientId or oauth.clientName'
            )
        if isinstance(callback, str) and (
            url_host(callback) == "[::1]" or _url_path(callback) != "/callback"
        ):
            return (
                'oauth.clientRegistration "cimd" requires oauth.callbackUrl on localhost or 127.0.0.1 '
                "with path /callback"
            )
    metadata = oauth.get("authServerMetadataUrl")
    if "authServerMetadataUrl" in oauth and not (
        isinstance(metadata, str)
        and re.match(r"^https?://[^/\s]+", metadata, re.IGNORECASE)
        and (metadata.lower().startswith("https://") or url_host(metadata) in LOOPBACK_HOSTS)
    ):
        return "oauth.authServerMetadataUrl must be an https URL, or http on localhost, 127.0.0.1, or [::1]"
    return None


def _url_path(url: str) -> str:
    rest = re.sub(r"^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*", "", url)
    return re.split(r"[?#]", rest, maxsplit=1)[0] or "/"


def _base_problem(raw: dict[str, Any]) -> str | None:
    enabled, timeout, description = raw.get("enabled"), raw.get("timeout"), raw.get("description")
    if enabled is not None and not isinstance(enabled, bool):
        return "enabled must be a boolean"
    if description is not None and not isinstance(description, str):
        return "description must be a string"
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0
    ):
        return "timeout must be a positive number of seconds"
    quoted = ", ".join(f'"{e}"' for e in EXPOSURES)
    exposure = _alias(raw.get("exposure"))
    if exposure is not None and exposure not in EXPOSURES:
        return f"exposure must be one of {quoted}"
    tool_exposure = raw.get("toolExposure")
    if tool_exposure is not None:
        if not isinstance(tool_exposure, dict):
            return "toolExposure must map tool names to exposures"
        for tool, value in tool_exposure.items():
            if _alias(value) not in EXPOSURES:
                return f'toolExposure "{tool}" must be one of {quoted}'
    return None


def config_files(cwd: str, trusted: bool, agent_dir: str | None = None) -> list[tuple[str, str]]:
    """The mcp.json files that exist and may be read: ``(path, scope)``, user first."""
    found = [(user_file(agent_dir), "global")]
    if trusted:
        found.append((project_file(cwd), "project"))
    return [(path, scope) for path, scope in found if os.path.isfile(path)]


def load_servers(
    cwd: str, trusted: bool, agent_dir: str | None = None
) -> tuple[list[ServerConfig], list[str]]:
    """Every configured server (a project entry replaces or overrides a user one) and the
    configuration errors, each ``<file>: <problem>``."""
    servers: dict[str, ServerConfig] = {}
    errors: list[str] = []
    for path, scope in config_files(cwd, trusted, agent_dir):
        data, error = read_json_object(path)
        if error:
            errors.append(f"{path}: {error}")
            continue
        entries = data.get("mcpServers")
        if entries is None:
            continue
        if not isinstance(entries, dict):
            errors.append(f"{path}: mcpServers must be an object")
            continue
        for name, raw in entries.items():
            base = servers.get(name)
            if (
                scope == "project"
                and base is not None
                and isinstance(raw, dict)
                and not any(k in raw for k in ("command", "url", "type"))
            ):
                # an override: enabled / exposure / toolExposure only, the rest stays the user's
                merged = dict(base.raw)
                merged.update({k: raw[k] for k in ("enabled", "exposure", "toolExposure") if k in raw})
                raw = merged
            problem = validate(name, raw)
            if problem:
                errors.append(f"{path}: {problem}")
                continue
            key = name.replace("-", "_")
            clash = next((n for n in servers if n != name and n.replace("-", "_") == key), None)
            if clash is not None and servers[clash].scope == scope:
                errors.append(f'{path}: server "{name}" has the same tool names as "{clash}"')
                continue
            if clash is not None:
                del servers[clash]
            servers[name] = ServerConfig(name, raw, path, scope)
    return list(servers.values()), errors


_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def resolve_value(server: str, what: str, key: str, value: str, env: dict[str, str] | None = None) -> str:
    """``${NAME}`` from the environment; a value that starts with ``!`` runs as a shell command."""
    environ = os.environ if env is None else env
    if value.startswith("!"):
        done = subprocess.run(value[1:], shell=True, capture_output=True, text=True, timeout=30)
        if done.returncode != 0:
            raise ValueError(f'Failed to resolve MCP server "{server}" {what} "{key}" from command')
        return done.stdout.strip()

    def variable(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in environ:
            raise ValueError(
                f'Failed to resolve MCP server "{server}" {what} "{key}" from environment variable: {name}'
            )
        return environ[name]

    return _VARIABLE.sub(variable, value)


def expand_home(value: str) -> str:
    return os.path.expanduser(value) if value.startswith("~/") else value


def namespace(server: str) -> str:
    """``mcp__<server>`` with ``-`` as ``_``: a server's prefix in the system prompt's
    ``mcp_servers`` section and in ``mcp-auth.json`` keys, as pi spells it."""
    return f"mcp__{server.replace('-', '_')}"


def tool_name(server: str, tool: str, taken: set[str] | frozenset[str] = frozenset()) -> str:
    """``mcp__<server>__<tool>`` with every character but letters, digits and ``_`` made ``_``;
    too long or already taken: shortened with a hash of the pair, as pi names it."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", f"mcp__{server}__{tool}")
    if len(name) <= MAX_TOOL_NAME and name not in taken:
        return name
    digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:8]
    return f"{name[: MAX_TOOL_NAME - len(digest) - 1]}_{digest}"


@dataclass
class Summary:
    """What the cheap start-up check found (no SDK imported)."""

    servers: list[ServerConfig] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
