"""The ``google-vertex`` stream function: Gemini on Vertex AI, the Gemini API's request body and
stream (``pi_provider_google.stream``) on Vertex's endpoint and credentials, as pi 1.6.0 sets
up Google's SDK in Vertex mode.

* With a Google Cloud API key (``GOOGLE_CLOUD_API_KEY``, auth.json): express mode,
  ``https://aiplatform.googleapis.com/v1/publishers/google/models/<id>:streamGenerateContent``
  with ``x-goog-api-key``.
* Otherwise application default credentials (:mod:`pi_provider_google.adc`) as a bearer token,
  with the project (``GOOGLE_CLOUD_PROJECT``, else ``GCLOUD_PROJECT``) and location
  (``GOOGLE_CLOUD_LOCATION``) from auth.json's ``env`` or the environment:
  ``https://<location>-aiplatform.googleapis.com/v1/projects/<p>/locations/<l>/publishers/google/models/<id>:streamGenerateContent``
  (``global`` uses ``aiplatform.googleapis.com``, the ``us``/``eu`` multi-regions
  ``aiplatform.<l>.rep.googleapis.com``).
* A ``baseUrl`` without the ``{location}`` placeholder (models.json: a proxy, a private
  endpoint) is used as is: ``<baseUrl>/v1/publishers/google/models/<id>:...`` (no ``/v1`` when
  the URL already names a version).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Any

from pi_host.lib.llm.builder import MessageBuilder, guard
from pi_host.lib.llm.http import request_headers, user_agent
from pi_host.lib.llm.provider_env import env_value, is_placeholder_key
from pi_provider_google.stream import request_body, send

API = "google-vertex"
_VERSION = re.compile(r"^v\d+(?:beta\d*)?$")
_MULTI_REGIONS = {"us", "eu"}


def _key(options: Any) -> str | None:
    key = (options.api_key or "").strip()
    return None if is_placeholder_key(key) or key == "gcp-vertex-credentials" else key


def _custom_base(model: Any) -> str | None:
    base = (model.base_url or "").strip()
    return None if not base or "{location}" in base else base.rstrip("/")


def _host(location: str) -> str:
    if location == "global":
        return "https://aiplatform.googleapis.com"
    if location in _MULTI_REGIONS:
        return f"https://aiplatform.{location}.rep.googleapis.com"
    return f"https://{location}-aiplatform.googleapis.com"


def endpoint(model: Any, options: Any, *, express: bool) -> str:
    """The request URL (see the module doc); raises ``ValueError`` naming a missing variable."""
    action = f"publishers/google/models/{model.id}:streamGenerateContent?alt=sse"
    base = _custom_base(model)
    if base is not None:
        has_version = any(_VERSION.match(part) for part in base.split("/"))
        return f"{base}/{action}" if has_version else f"{base}/v1/{action}"
    if express:
        return f"https://aiplatform.googleapis.com/v1/{action}"
    project = env_value(options, "GOOGLE_CLOUD_PROJECT") or env_value(options, "GCLOUD_PROJECT")
    if not project:
        raise ValueError("Vertex AI requires a project ID: set GOOGLE_CLOUD_PROJECT (or GCLOUD_PROJECT)")
    location = env_value(options, "GOOGLE_CLOUD_LOCATION")
    if not location:
        raise ValueError("Vertex AI requires a location: set GOOGLE_CLOUD_LOCATION")
    return f"{_host(location)}/v1/projects/{project}/locations/{location}/{action}"


def stream_vertex(model: Any, context: Any, options: Any) -> AsyncIterator[Any]:
    builder = MessageBuilder(model, api=API, options=options)
    return guard(builder, _events(builder, model, context, options), options.signal)


async def _events(builder: MessageBuilder, model: Any, context: Any, options: Any) -> AsyncIterator[Any]:
    key = _key(options)
    base = {"user-agent": user_agent()}
    try:
        url = endpoint(model, options, express=key is not None)
        token = None
        if key is None:
            from pi_provider_google.adc import access_token

            token = await access_token(lambda name: env_value(options, name))
    except ValueError as exc:  # a missing project or location, unusable credentials: said as is
        yield builder.fail(str(exc))
        return
    if token is None:
        base["x-goog-api-key"] = key or ""
    else:
        if isinstance(options.secrets, list):
            options.secrets.append(token.token)  # kept out of error texts like a key
        base["authorization"] = f"Bearer {token.token}"
        if token.quota_project:
            base["x-goog-user-project"] = token.quota_project
    headers = request_headers(model, options, base)
    body = request_body(model, context, options)
    async with aclosing(send(builder, url, body, headers, options)) as events:  # closed with us
        async for event in events:
            yield event
