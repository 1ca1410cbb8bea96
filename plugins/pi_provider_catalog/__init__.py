"""pi 1.6.0's built-in provider catalog: every provider and chat model, as data.

``catalog/<provider>.json`` holds one provider (id, display name, default wire API and base URL,
key variables, default model, preference rank) and its models in models.json's model shape; a
model names its own ``api``/``baseUrl`` only when it differs from the provider's. The files are
generated from pi-ai 1.6.0's model data (``python -m tests.support.providers.pi_catalog``), so
ids, prices, windows, compat flags and thinking maps are pi's. The wire APIs themselves are
implemented by the other provider plugins; this one only registers the catalog.
``catalog_index.json`` (generated with them) lists each provider's fields and model ids, so a
start parses only the files of the providers it uses.
"""

import functools

from pi_host import hookimpl


def _bedrock_ambient(env):
    # pi 1.6.0 counts Bedrock as configured when any source of the AWS chain is named in the
    # environment; the request itself resolves the chain (profiles, SSO, instance roles).
    if (
        env.get("AWS_PROFILE")
        or (env.get("AWS_ACCESS_KEY_ID") and env.get("AWS_SECRET_ACCESS_KEY"))
        or env.get("AWS_BEARER_TOKEN_BEDROCK")
        or env.get("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")
        or env.get("AWS_CONTAINER_CREDENTIALS_FULL_URI")
        or env.get("AWS_WEB_IDENTITY_TOKEN_FILE")
    ):
        return "<authenticated>"
    return None


def _vertex_ambient(env):
    # Application default credentials count only with a project and a location, as in pi.
    import os

    path = env.get("GOOGLE_APPLICATION_CREDENTIALS") or os.path.join(
        os.path.expanduser("~"), ".config", "gcloud", "application_default_credentials.json"
    )
    project = env.get("GOOGLE_CLOUD_PROJECT") or env.get("GCLOUD_PROJECT")
    if project and env.get("GOOGLE_CLOUD_LOCATION") and os.path.isfile(path):
        return "<authenticated>"
    return None


_AMBIENT = {"amazon-bedrock": _bedrock_ambient, "google-vertex": _vertex_ambient}


def _prepare(name):
    # The request-time set-up lives in endpoints.py, imported on a request of that provider only.
    def prepare(model, options):
        from pi_provider_catalog import endpoints

        return getattr(endpoints, name)(model, options)

    return prepare


def _copilot(model, options, context):
    # A GitHub Copilot token names its account's API host (proxy-ep=...), as pi reads it; the
    # catalog's URL is the individual plan's, kept when models.json chose another one.
    import dataclasses

    key = options.api_key or ""
    if "proxy-ep=" in key and model.base_url.rstrip("/") == "https://api.individual.githubcopilot.com":
        from pi_host.config.oauth_providers import copilot_base_url

        model = model.model_copy(update={"base_url": copilot_base_url(key)})
    # Copilot bills a request by who started it: the user (the last message is theirs) or the
    # agent (a follow-up after tool results), and wants to be told when images are sent.
    spoken = [m for m in context.messages if getattr(m, "role", None) != "system"]
    headers = {
        "X-Initiator": "agent" if spoken and spoken[-1].role != "user" else "user",
        "Openai-Intent": "conversation-edits",
    }
    if any(
        getattr(block, "type", None) == "image"
        for m in spoken
        if m.role in ("user", "toolResult") and isinstance(m.content, list)
        for block in m.content
    ):
        headers["Copilot-Vision-Request"] = "true"
    if model.api == "anthropic-messages" and key:
        headers.update({"authorization": f"Bearer {key}", "x-api-key": None})  # Copilot takes a bearer
    headers.update(options.headers or {})  # the caller's headers win, as in pi
    return model, dataclasses.replace(options, headers=headers)


def _openrouter_personalize(models, base_url, key):
    from pi_provider_catalog.openrouter import personalize

    return personalize(models, base_url, key)


def _radius_personalize(models, base_url, key):
    from pi_provider_catalog.radius_gateway import personalize

    return personalize(models, base_url, key)


_PERSONALIZE = {"openrouter": _openrouter_personalize, "radius": _radius_personalize}


def _copilot_account_models(models, credential):
    # A Copilot login stores the ids its account may use (availableModelIds, from the login's
    # and each refresh's /models answer); a token from the environment lists everything.
    ids = (credential or {}).get("availableModelIds") if (credential or {}).get("type") == "oauth" else None
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        return models
    return [m for m in models if m.id in set(ids)]


_FILTER = {"github-copilot": _copilot_account_models}

_PREPARE = {
    "github-copilot": _copilot,
    "azure": _prepare("azure"),
    "cloudflare-workers-ai": _prepare("cloudflare_workers_ai"),
    "cloudflare-ai-gateway": _prepare("cloudflare_ai_gateway"),
}


def _read_models(path):
    import orjson  # ~3x json's speed on these files

    with open(path, "rb") as handle:
        return orjson.loads(handle.read())["models"]


@hookimpl
def register_models():
    import json
    import os

    from pi_host.plugins.registrations import ProviderInfo

    # catalog_index.json names each provider and its model ids (generated with the files): a
    # provider's file is parsed only when one of its models is used or all are listed.
    here = os.path.dirname(__file__)
    with open(os.path.join(here, "catalog_index.json"), "rb") as handle:
        index = json.loads(handle.read())
    return [
        ProviderInfo(
            id=data["id"],
            api=data["api"],
            base_url=data.get("baseUrl", ""),
            env_keys=list(data.get("envKeys") or ()),
            model_ids=list(data["models"]),
            load_models=functools.partial(_read_models, os.path.join(here, "catalog", f"{data['id']}.json")),
            default_model=data.get("defaultModel"),
            rank=data.get("rank", 100),
            ambient_auth=_AMBIENT.get(data["id"]),
            prepare=_PREPARE.get(data["id"]),
            personalize=_PERSONALIZE.get(data["id"]),
            filter_models=_FILTER.get(data["id"]),
        )
        for data in index["providers"]
    ]
