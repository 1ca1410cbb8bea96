"""Which models exist, which API streams each, and which key to send.

Provider plugins contribute APIs (``register_providers``) and catalog entries
(``register_models``); ``<agent dir>/models.json`` adds custom providers and overrides
(reference §3.11). Keys resolve in pi's order (reference §3.10): a runtime key (``--api-key``),
then ``auth.json``, then the provider's models.json ``apiKey``, then environment variables.

Model patterns (``--model``) follow pi: ``provider/id``, an exact id, then a case-insensitive
substring of id or name (undated aliases preferred, then the newest id); a ``:level`` suffix
selects a thinking level when it names one (ids such as ``qwen3:8b`` keep their colon).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from pi_host.config import paths
from pi_host.config.catalog_entries import CatalogEntries, copy_json, merge_fields, provider_entries
from pi_host.config.json_files import read_json_object

THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh", "max")


@dataclass
class ProviderApi:
    """An implementation of one wire API (``stream`` follows ``pi_host.protocol.StreamFn``)."""

    api: str
    stream: Callable[..., Any]


@dataclass
class ProviderInfo:
    """A provider and its models for the catalog.

    ``models`` holds dicts in models.json's model shape (``id``, ``name``, ``contextWindow``...).
    ``env_keys`` are the environment variables tried for its key, in order.
    """

    id: str
    api: str = ""
    base_url: str = ""
    env_keys: list[str] = field(default_factory=list)
    models: list[dict[str, Any]] = field(default_factory=list)
    headers: dict[str, str] | None = None
    compat: dict[str, Any] | None = None
    needs_key: bool = True
    """False for providers that work without credentials (faux, some local servers)."""
    default_model: str | None = None
    """The model picked when only the provider is known (else its first model)."""
    rank: int = 100
    """Lower ranks are preferred when no model is named and several providers have a key."""
    auto_select: bool = True
    """False keeps the provider out of the default choice (a scripted test provider)."""
    ambient_auth: Callable[[dict[str, str]], str | None] | None = None
    """For providers that can sign in without a key (cloud credential chains): given the
    environment (process env overlaid with auth.json's ``env``), a stand-in credential such as
    ``"<authenticated>"`` when ambient credentials are configured, else None. The provider's
    stream function finds the real credentials itself."""
    prepare: Callable[[Any, Any], tuple[Any, Any]] | None = None
    """``(model, options) -> (model, options)`` before the API's stream function runs: what a
    provider changes about requests of a shared wire API (pi's provider wrappers: endpoint
    placeholders, deployment names, gateway auth headers). ``options.extra["env"]`` already
    holds the provider's auth.json ``env`` then."""
    personalize: Callable[[list[dict[str, Any]], str, str], list[dict[str, Any]]] | None = None
    """``(models, base_url, key) -> models``: the provider's list for one key, fetched on a
    refresh and kept in models-store.json (:mod:`pi_host.config.model_store`)."""
    filter_models: Callable[[list[Any], dict[str, Any] | None], list[Any]] | None = None
    """``(models, stored credential or None) -> models``: what the account behind a stored
    credential may use, out of the models that have a key (pi's ``filterModels``: a Copilot
    login lists only the models its account offers)."""
    model_ids: list[str] | None = None
    load_models: Callable[[], list[dict[str, Any]]] | None = None
    """A catalog read on first use: ``model_ids`` are the ids of the models ``load_models()``
    returns, in order; ``models`` stays empty until something reads them (:meth:`model_dicts`),
    so a run that names its model builds only that provider's entries."""

    def model_dicts(self) -> list[dict[str, Any]]:
        """``models``, read through ``load_models`` first when that has not happened yet."""
        if self.load_models is not None:
            self.models, self.load_models = list(self.load_models()), None
        return self.models


_MODEL_FIELDS = (
    "name api baseUrl reasoning thinkingLevelMap input inputLimits cost promptCache contextWindow maxTokens "
    "samplingParams samplingParamsByThinkingLevel headers compat"
).split()
_CREDENTIAL = re.compile(r"(?i)authorization|cookie|key|token|secret")


def _configured_headers(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``headers`` objects of one models.json provider: its own, its models', its overrides'."""
    found = [spec.get("headers")]
    found += [m.get("headers") for m in spec.get("models") or () if isinstance(m, dict)]
    overrides = spec.get("modelOverrides")
    if isinstance(overrides, dict):
        found += [o.get("headers") for o in overrides.values() if isinstance(o, dict)]
    return [h for h in found if isinstance(h, dict)]


class ModelNotFound(LookupError):
    pass


def _fuzzy(needle: str, haystack: str) -> bool:
    """Every character of ``needle`` appears in ``haystack`` in order (case-insensitive)."""
    position = 0
    haystack = haystack.lower()
    for char in needle.lower():
        position = haystack.find(char, position)
        if position < 0:
            return False
        position += 1
    return True


def _tokens_short(value: int) -> str:
    """pi's listing figures: whole thousands/millions plain (200K, 1M), else one decimal (131.1K)."""
    for unit, suffix in ((1_000_000, "M"), (1000, "K")):
        if value >= unit:
            scaled = value / unit
            return f"{scaled:g}{suffix}" if scaled.is_integer() else f"{scaled:.1f}{suffix}"
    return str(value)


# The root collation order of ASCII punctuation and symbols (before digits, then letters), so
# listings sort like pi's ``localeCompare`` instead of by code point.
_COLLATION_PUNCT = " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$"


def locale_key(text: str) -> tuple:
    """A sort key approximating ICU's root collation: punctuation < digits < letters,
    letters case-insensitive first, lowercase before uppercase on a tie."""
    primary = []
    for char in text:
        at = _COLLATION_PUNCT.find(char)
        if at >= 0:
            primary.append((0, at))
        elif char.isdigit():
            primary.append((1, ord(char)))
        else:
            primary.append((2, ord(char.lower())))
    return (primary, [c.isupper() for c in text])


class ModelRegistry:
    def __init__(
        self,
        apis: Iterable[ProviderApi] = (),
        providers: Iterable[ProviderInfo] = (),
        models_json: str | None = None,
        *,
        agent_dir_files: bool = True,
    ) -> None:
        """``agent_dir_files=False``: neither models.json nor auth.json is read (the LLM library's
        catalog, ``pi_host.ai``: keys come from arguments and the environment only)."""
        from pi_host.config.credentials import AuthStorage

        self.apis: dict[str, Any] = {item.api: item.stream for item in apis if isinstance(item, ProviderApi)}
        self._builtin: list[ProviderInfo] = [i for i in providers if isinstance(i, ProviderInfo)]
        if agent_dir_files:
            self.models_json_path = models_json or os.path.join(paths.agent_dir(), "models.json")
        else:
            self.models_json_path = ""
        self.auth = AuthStorage() if agent_dir_files else AuthStorage("")
        self.runtime_keys: dict[str, str] = {}
        self.runtime_providers: dict[str, dict[str, Any]] = {}
        """Providers plugins add while running (``ctx.register_provider``), in models.json's
        provider shape; applied after models.json."""
        self.problems: list[str] = []
        self.chosen_providers: set[str] = set()
        """Providers named on the command line (``--model``): listed even when hidden."""
        self.reload()

    # --- building the catalog ---------------------------------------------------------------------

    @classmethod
    def from_plugins(cls, host: Any, models_json: str | None = None) -> ModelRegistry:
        """The catalog the plugins of ``host`` register (``register_providers``/``register_models``)."""
        return cls(host.collect("register_providers"), host.collect("register_models"), models_json)

    def reload(self) -> None:
        """(Re)read models.json and rebuild the model list."""
        self.providers: dict[str, ProviderInfo] = {}
        self.custom: dict[str, dict[str, Any]] = {}
        self.problems = []
        self._configured: set[tuple[str, str]] = set()
        raw_models = CatalogEntries()
        from pi_host.config.model_store import store_path, stored_models

        store = store_path(self.models_json_path) if self.models_json_path else ""
        for info in self._builtin:
            self.providers[info.id] = info
            stored = info.personalize and stored_models(info, store)
            if not stored and info.load_models is not None and info.model_ids is not None:
                build = lambda info=info: provider_entries(info, info.model_dicts())  # noqa: E731
                raw_models.add_lazy(info.id, info.model_ids, build)
                continue
            for data in provider_entries(info, stored or info.model_dicts()):
                raw_models[(info.id, data["id"])] = data
        config, error = read_json_object(self.models_json_path) if self.models_json_path else ({}, None)
        if error:
            self.problems.append(error)
        for provider_id, spec in (config.get("providers") or {}).items():
            if not isinstance(spec, dict):
                self.problems.append(f"{self.models_json_path}: provider {provider_id!r} must be an object")
                continue
            self._apply_provider(provider_id, spec, raw_models)
        for provider_id, spec in self.runtime_providers.items():
            self._apply_provider(provider_id, spec, raw_models)
        self._raw = raw_models
        self._checked: dict[tuple[str, str], Any] = {}
        self._all: list[Any] | None = None
        # What models.json and plugins' runtime providers configure is validated now, so its
        # problems are said at start; the built-in catalog (~1,700 entries) only when looked up.
        for key in self._configured:
            self._model(key)

    def _model(self, key: tuple[str, str]) -> Any | None:
        """The validated model of a catalog entry (validated once), None when it is invalid."""
        if key in self._checked:
            return self._checked[key]
        from pi_host.protocol import Model

        data = copy_json(self._raw[key])
        if not data.get("name"):
            data["name"] = key[1]
        try:
            model = Model.model_validate(data)
        except ValueError as exc:
            model = None
            first = str(exc).splitlines()[0]
            self.problems.append(f"{self.models_json_path}: model {key[0]}/{key[1]}: {first}")
        self._checked[key] = model
        return model

    def _validated(self, keys: Iterable[tuple[str, str]]) -> list[Any]:
        return [m for m in map(self._model, keys) if m is not None]

    @property
    def _models(self) -> list[Any]:
        """Every valid model, in catalog order (validates the whole catalog once)."""
        if self._all is None:
            self._all = self._validated(self._raw)
        return self._all

    def provider_models(self, provider: str) -> list[Any]:
        """The valid models of one provider (case-insensitive name), validating only those."""
        lowered = provider.lower()
        return self._validated(k for k in self._raw if k[0].lower() == lowered)

    def _apply_provider(self, provider_id: str, spec: dict[str, Any], raw_models: CatalogEntries) -> None:
        where = f"{self.models_json_path}: provider {provider_id!r}"
        builtin = self.providers.get(provider_id)
        self.custom[provider_id] = spec
        provider_level = {k: spec[k] for k in ("baseUrl", "api", "headers", "compat") if k in spec}
        if spec.get("authHeader"):
            provider_level["authHeader"] = True
        if builtin is None:
            models = spec.get("models") or []
            if not spec.get("baseUrl") and not all(isinstance(m, dict) and m.get("baseUrl") for m in models):
                self.problems.append(f"{where}: a new provider needs baseUrl")
                return
            if not spec.get("api") and not all(isinstance(m, dict) and m.get("api") for m in models):
                self.problems.append(f"{where}: a new provider needs api (on the provider or each model)")
                return
            self.providers[provider_id] = ProviderInfo(
                id=provider_id,
                api=spec.get("api", ""),
                base_url=spec.get("baseUrl", ""),
                env_keys=[],
                headers=spec.get("headers"),
                compat=spec.get("compat"),
                needs_key=True,
            )
        else:
            # A built-in id with baseUrl/headers/compat redirects its built-in models.
            for (pid, mid), data in raw_models.provider_items(provider_id):
                if provider_level:
                    self._configured.add((pid, mid))
                for key, value in provider_level.items():
                    if key == "compat":
                        data["compat"] = {**(data.get("compat") or {}), **value}
                    elif key == "headers":
                        data["headers"] = {**(data.get("headers") or {}), **value}
                    else:
                        data[key] = value
        for model in spec.get("models") or []:
            if not isinstance(model, dict) or not model.get("id"):
                self.problems.append(f"{where}: every model needs an id")
                continue
            cost = model.get("cost")
            if cost is not None and not all(
                k in cost for k in ("input", "output", "cacheRead", "cacheWrite")
            ):
                self.problems.append(
                    f"{where}: model {model['id']!r}: cost needs input, output, cacheRead and cacheWrite"
                )
                continue
            data = {"provider": provider_id, **{k: v for k, v in provider_level.items() if k != "compat"}}
            data.update({k: copy_json(v) for k, v in model.items()})
            data["provider"] = provider_id
            headers = {**(spec.get("headers") or {}), **(model.get("headers") or {})}
            if headers:  # provider headers apply too; the model's win, name by name (as pi)
                data["headers"] = headers
            compat = {**(spec.get("compat") or {}), **(model.get("compat") or {})}
            if compat:
                data["compat"] = compat
            if not data.get("api") and builtin is not None:
                data["api"] = builtin.api
            if not data.get("baseUrl") and builtin is not None:
                data["baseUrl"] = builtin.base_url
            raw_models[(provider_id, model["id"])] = data
            self._configured.add((provider_id, model["id"]))
        for model_id, override in (spec.get("modelOverrides") or {}).items():
            key = (provider_id, model_id)
            if key in raw_models and isinstance(override, dict):
                raw_models[key] = merge_fields(raw_models[key], override)
                self._configured.add(key)

    # --- lookup -----------------------------------------------------------------------------------

    def models(self) -> list[Any]:
        return list(self._models)

    def find(self, provider: str, model_id: str) -> Any | None:
        if (provider, model_id) in self._raw:
            found = self._model((provider, model_id))
            if found is not None:
                return found
        wanted = (provider.lower(), model_id.lower())  # case-insensitive: matched on the keys
        matches = (k for k in self._raw if (k[0].lower(), k[1].lower()) == wanted)
        return next(iter(self._validated(matches)), None)

    def _match(self, pattern: str, candidates: list[Any]) -> Any | None:
        from pi_host.config.model_reference import match

        return match(pattern, candidates, self.has_auth)

    def _rank(self, provider: str) -> int:
        info = self.providers.get(provider)
        return info.rank if info is not None else 1000

    def resolve(self, pattern: str, provider: str | None = None) -> Any:
        """``provider/id``, an exact id or name, then a case-insensitive substring match."""
        model, _ = self.resolve_pattern(pattern, provider)
        return model

    def resolve_pattern(self, pattern: str, provider: str | None = None) -> tuple[Any, str | None]:
        """The model for a pattern and the thinking level named by a ``:level`` suffix."""
        candidates = self._models if provider is None else self.provider_models(provider)
        found = self._match(pattern, candidates)
        if found is not None:
            return found, None
        if ":" in pattern:
            head, _, suffix = pattern.rpartition(":")
            if suffix in THINKING_LEVELS:
                found, _ = self.resolve_pattern(head, provider)
                return found, suffix
        label = pattern if provider is None else f"{provider}/{pattern}"
        raise ModelNotFound(f"Model not found: {label} (see pi --list-models)")

    def default_model(self, provider: str | None = None) -> Any:
        """The model to use when none is named: the provider's default, else the best-ranked
        provider that has a usable key, else the best-ranked provider at all."""
        if provider is not None:
            pool = self.provider_models(provider)
            if not pool:
                raise ModelNotFound(f"Unknown provider: {provider} (see pi --list-models)")
            info = self.providers.get(pool[0].provider)
            wanted = info.default_model if info is not None else None
            return next((m for m in pool if m.id == wanted), pool[0])
        with_models = {pid for pid, _ in self._raw}
        candidates = sorted(
            (p for p in self.providers.values() if p.auto_select and p.id in with_models),
            key=lambda p: p.rank,
        )
        for info in [p for p in candidates if self.get_api_key(p.id)] or candidates:
            return self.default_model(info.id)
        if self._models:
            return self._models[0]
        raise ModelNotFound("No models are registered (no provider plugins loaded)")

    def resolve_cli(self, model_arg: str | None, provider: str | None = None) -> tuple[Any, str | None]:
        """``--model`` / ``--provider`` → ``(model, thinking level from a :suffix or None)``."""
        if not model_arg:
            return self.default_model(provider), None
        found = None
        if provider is None and "/" in model_arg:
            head = model_arg.split("/", 1)[0]
            if head.lower() in (p.lower() for p in self.providers):
                found = self._exact_reference(model_arg, head) or self.resolve_pattern(model_arg)
        found = found or self.resolve_pattern(model_arg, provider)
        self.chosen_providers.add(found[0].provider)  # a hidden provider chosen by name is listed
        return found

    def _exact_reference(self, text: str, head: str) -> tuple[Any, None] | None:
        """``provider/id`` read by pi's exact rule over the only models that rule looks at (the
        provider's, and any whose id is the whole text), so a start-up naming its model
        validates one provider's entries, not the catalog; None when the rule finds nothing."""
        from pi_host.config.model_reference import match_exact

        lowered = text.lower()
        pool = self.provider_models(head) + self._validated(k for k in self._raw if k[1].lower() == lowered)
        found = match_exact(text, pool, self.has_auth)
        return (found, None) if found is not None else None

    def stream_fn(self, model: Any) -> Any:
        fn = self.apis.get(model.api)
        if fn is None:
            raise LookupError(f"No provider plugin implements API {model.api!r} (model {model.key})")
        info = self.providers.get(model.provider)
        prepare = info.prepare if info is not None else None
        env = self.auth.env_for(model.provider)  # auth.json's per-provider variables (pi's ``env``)
        if prepare is None and not env:
            return fn
        from pi_host.config.provider_requests import provider_stream

        return provider_stream(fn, prepare, env)

    # --- keys ---------------------------------------------------------------------------------------

    def needs_key(self, provider: str) -> bool:
        info = self.providers.get(provider)
        return True if info is None else info.needs_key

    def key_hint(self, provider: str) -> str:
        """One line saying where to put a key for ``provider``."""
        if provider in self.auth.oauth_problems:
            return self.auth.oauth_problems[provider]  # already says to log in again
        info = self.providers.get(provider)
        names = info.env_keys if info else []
        auth = self.auth.path
        if provider in self.custom and not names:
            return f'add "apiKey" to provider "{provider}" in {self.models_json_path}, add it to {auth}, or pass --api-key'
        if names:
            # Name the plain API-key variable (OAuth/gateway variables are for special setups).
            main = next((n for n in names if n.endswith("_API_KEY")), names[0])
            return f"set {main}, add it to {auth}, or pass --api-key"
        return f"add it to {auth} or pass --api-key"

    def get_api_key(self, provider: str) -> str | None:
        """``--api-key`` → auth.json → models.json ``apiKey`` → environment variables."""
        from pi_host.config.credentials import resolve_config_value

        if self.runtime_keys.get(provider):
            return self.runtime_keys[provider]
        stored, key = self.auth.resolve_key(provider)
        if stored:
            return key  # a stored credential owns its provider
        spec = self.custom.get(provider)
        if spec and spec.get("apiKey"):
            value = resolve_config_value(spec["apiKey"])
            if value:
                return value
        env = {**os.environ, **self.auth.env_for(provider)}
        info = self.providers.get(provider)
        for name in info.env_keys if info else ():
            value = env.get(name)
            if value:
                return value
        if info is not None and info.ambient_auth is not None:
            return info.ambient_auth(env)
        return None

    def secrets(self) -> list[str]:
        """Every credential the catalog knows without running a command: runtime keys, auth.json
        keys and OAuth tokens, models.json ``apiKey`` values and **every** header value configured
        in models.json (a header's name says nothing about its value: ``X-Org-Auth``), the
        credential-looking header values of plugins' catalogs, and the providers' key variables
        in the environment. The provider layer redacts them from error texts; a ``!command`` key
        is covered when it is the request's own key, a ``!command`` header value once the request
        resolved it (``request_headers``)."""
        from pi_host.config.credentials import resolve_config_value, secret_values

        def plain(value: Any, env: dict[str, str] | None = None) -> str | None:
            if not isinstance(value, str) or value.startswith("!"):
                return None  # commands run per request (reference §3.10), not for a list
            return resolve_config_value(value, env)

        stored = self.auth.read()  # once: this runs for every request
        auth_env = {
            provider: {str(k): str(v) for k, v in entry["env"].items()}
            for provider, entry in stored.items()
            if isinstance(entry, dict) and isinstance(entry.get("env"), dict)
        }
        found: list[str | None] = list(self.runtime_keys.values())
        for provider, entry in stored.items():
            if isinstance(entry, dict):
                env = {**os.environ, **auth_env.get(provider, {})}
                found += [plain(entry.get("key"), env), entry.get("access"), entry.get("refresh")]
        for spec in self.custom.values():
            found.append(plain(spec.get("apiKey")))
            for headers in _configured_headers(spec):
                found += [token for v in headers.values() for token in secret_values(plain(v))]
        for data in self._raw.built_values():  # the catalog's own data: nothing to validate
            # (an entry not built yet is the catalog file's, plus its provider's headers below)
            headers = data.get("headers")
            if isinstance(headers, dict):
                found += [plain(v) for k, v in headers.items() if _CREDENTIAL.search(str(k))]
        pending = self._raw.pending()
        for info in self.providers.values():
            if info.id in pending and info.headers:
                found += [plain(v) for k, v in info.headers.items() if _CREDENTIAL.search(str(k))]
            extra = auth_env.get(info.id, {})
            found += [extra.get(name) or os.environ.get(name) for name in info.env_keys]
        return list(dict.fromkeys(v for v in found if isinstance(v, str) and v))

    def has_auth(self, provider: str) -> bool:
        return not self.needs_key(provider) or bool(self.get_api_key(provider))

    def available(self, current: Any = None, *, every: bool = False) -> list[Any]:
        """Models whose provider has a usable key (or needs none): what pickers, cycling and
        ``get_available_models`` offer. A provider kept out of the default choice (``auto_select``
        false: the scripted ``faux``) is left out too, unless ``current`` (the model in use) is
        one of its models, ``--model`` chose it (:attr:`chosen_providers`) or ``every``."""
        shown = set(self.chosen_providers)
        if current is not None:
            shown.add(current.provider)
        hidden = set() if every else {p.id for p in self.providers.values() if not p.auto_select} - shown
        ready: dict[str, bool] = {}
        out = []
        for model in self._models:
            if model.provider in hidden:
                continue
            if model.provider not in ready:
                ready[model.provider] = self.has_auth(model.provider)
            if ready[model.provider]:
                out.append(model)
        for info in self.providers.values():
            if info.filter_models is not None and any(m.provider == info.id for m in out):
                kept = {
                    id(m)
                    for m in info.filter_models(
                        [m for m in out if m.provider == info.id], self.auth.get(info.id)
                    )
                }
                out = [m for m in out if m.provider != info.id or id(m) in kept]
        return out

    # --- listing ------------------------------------------------------------------------------------

    def format_model_list(self, search: str | None = None) -> str:
        """The ``pi --list-models [search]`` table of models that have a key."""
        models = self.available(every=True)  # a listing asked for: the scripted provider too
        if search:
            terms = search.lower().split()
            exact = [m for m in models if all(t in f"{m.provider}/{m.id} {m.name}".lower() for t in terms)]
            models = exact or [m for m in models if all(_fuzzy(t, m.id) for t in terms)]
        if not models:
            if search:
                return f'No models match "{search}".'
            return (
                "No models available. Configure a key (e.g. set ANTHROPIC_API_KEY) or add a provider to "
                + (self.models_json_path)
            )
        models.sort(key=lambda m: (locale_key(m.provider), locale_key(m.id)))
        rows = [("provider", "model", "context", "max-out", "thinking", "images")]
        for m in models:
            rows.append(
                (
                    m.provider,
                    m.id,
                    _tokens_short(m.context_window),
                    _tokens_short(m.max_tokens),
                    "yes" if m.reasoning else "no",
                    "yes" if m.supports_images() else "no",
                )
            )
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        return "\n".join(
            "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in rows
        )
