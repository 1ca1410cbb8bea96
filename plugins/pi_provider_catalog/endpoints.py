"""What some providers change about requests of a shared wire API, as pi 1.6.0 configures them
(``ProviderInfo.prepare``; the wire APIs themselves are other plugins'):

* **Cloudflare** Workers AI and AI Gateway: the ``{CLOUDFLARE_ACCOUNT_ID}`` and
  ``{CLOUDFLARE_GATEWAY_ID}`` placeholders of the base URLs are filled from the provider's
  auth.json ``env``, else the environment. The gateway takes the key as
  ``cf-aig-authorization: Bearer <key>`` and no ``authorization`` / ``x-api-key`` (those would be
  passed on to the upstream vendor).
* **Azure OpenAI**: the endpoint is ``AZURE_OPENAI_BASE_URL``, else
  ``https://<AZURE_OPENAI_RESOURCE_NAME>.openai.azure.com/openai/v1``, else the model's
  ``baseUrl``; a resource root on an Azure host gets ``/openai/v1``. The request names the
  deployment (``AZURE_OPENAI_DEPLOYMENT_NAME_MAP`` = ``model=deployment,...``, else the model
  id), while the answer keeps the catalog id.
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from pi_host.lib.llm.provider_env import env_value

_ACCOUNT = "CLOUDFLARE_ACCOUNT_ID"
_GATEWAY = "CLOUDFLARE_GATEWAY_ID"
_AZURE_HOSTS = (".openai.azure.com", ".cognitiveservices.azure.com", ".ai.azure.com")


def _fill(model: Any, options: Any, names: tuple[str, ...], provider: str) -> Any:
    url = model.base_url
    for name in names:
        placeholder = "{" + name + "}"
        if placeholder not in url:
            continue
        value = env_value(options, name)
        if not value:
            raise ValueError(
                f'{provider} needs {name}: set it in the environment or in auth.json\'s "env" for {provider}'
            )
        url = url.replace(placeholder, value)
    return model if url == model.base_url else model.model_copy(update={"base_url": url})


def cloudflare_workers_ai(model: Any, options: Any) -> tuple[Any, Any]:
    return _fill(model, options, (_ACCOUNT,), "cloudflare-workers-ai"), options


def cloudflare_ai_gateway(model: Any, options: Any) -> tuple[Any, Any]:
    model = _fill(model, options, (_ACCOUNT, _GATEWAY), "cloudflare-ai-gateway")
    headers = dict(options.headers or {})
    if options.api_key:
        headers["cf-aig-authorization"] = f"Bearer {options.api_key}"
    headers.update({"authorization": None, "x-api-key": None})  # None drops the adapter's key header
    return model, dataclasses.replace(options, headers=headers)


# --- Azure OpenAI --------------------------------------------------------------------------------


def deployment_name(model: Any, options: Any) -> str:
    mapping = env_value(options, "AZURE_OPENAI_DEPLOYMENT_NAME_MAP") or ""
    for entry in mapping.split(","):
        model_id, sep, deployment = entry.strip().partition("=")
        if sep and model_id.strip() == model.id and deployment.strip():
            return deployment.strip()
    return model.id


def _normalize_azure(url: str) -> str:
    trimmed = url.strip().rstrip("/")
    parts = urlsplit(trimmed)
    if not parts.scheme or not parts.netloc:
        raise ValueError(f"Invalid Azure OpenAI base URL: {url}")
    path = parts.path.rstrip("/")
    host = (parts.hostname or "").lower()
    if host.endswith(_AZURE_HOSTS) and path in ("", "/openai", "/openai/v1/responses"):
        parts = parts._replace(path="/openai/v1", query="")
    return urlunsplit(parts).rstrip("/")


def azure_base_url(model: Any, options: Any) -> str:
    base = (env_value(options, "AZURE_OPENAI_BASE_URL") or "").strip()
    resource = env_value(options, "AZURE_OPENAI_RESOURCE_NAME")
    if not base and resource:
        base = f"https://{resource}.openai.azure.com/openai/v1"
    base = base or model.base_url
    if not base:
        raise ValueError(
            "Azure OpenAI base URL is required: set AZURE_OPENAI_BASE_URL or AZURE_OPENAI_RESOURCE_NAME "
            '(or "env" in auth.json for azure), or give the model a baseUrl in models.json'
        )
    return _normalize_azure(base)


def azure(model: Any, options: Any) -> tuple[Any, Any]:
    model = model.model_copy(update={"base_url": azure_base_url(model, options)})
    deployment = deployment_name(model, options)
    extra = {**options.extra, "deployment": deployment}
    if deployment == model.id or model.api == "azure-openai-responses":
        return model, dataclasses.replace(options, extra=extra)  # that API names the deployment itself
    hook = options.on_payload

    async def name_deployment(body: dict[str, Any]) -> Any:
        body = {**body, "model": deployment}  # the caller's hook sees what is sent, as in pi
        if hook is None:
            return body
        result = hook(body)
        if inspect.isawaitable(result):
            result = await result
        return body if result is None else result

    return model, dataclasses.replace(options, extra=extra, on_payload=name_deployment)
