"""Where a Bedrock request goes and how it is authorized, as pi 1.6.0 sets up the AWS SDK.

* **Bearer token** (a Bedrock API key: the stored key, or ``AWS_BEARER_TOKEN_BEDROCK``):
  ``Authorization: Bearer``; no AWS library is loaded.
* Otherwise **SigV4** with botocore (extra ``pi-host[bedrock]``, imported on the first such
  request): the standard credential chain (``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY``/
  ``AWS_SESSION_TOKEN``, ``AWS_PROFILE`` and the shared config/credentials files, SSO token
  cache, ``credential_process``, web identity, container and instance roles), keys from the
  provider's env winning unless a profile was chosen there. botocore refreshes temporary
  credentials itself; one session per profile is kept.
* ``AWS_BEDROCK_SKIP_AUTH=1`` (a proxy that needs no credentials) sends the request unsigned.

Region: an inference-profile ARN's own, else ``AWS_REGION`` / ``AWS_DEFAULT_REGION``, else the
region of a standard endpoint used as is, else the profile's, else ``us-east-1``. Endpoint: the
model's ``baseUrl`` when it is not a standard ``bedrock-runtime.<region>.amazonaws.com`` host, or
when no region or profile is configured; otherwise that region's standard endpoint.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any
from urllib.parse import urlsplit

from pi_host.lib.llm.provider_env import env_value, is_placeholder_key, scoped_env

SERVICE = "bedrock"  # SigV4's signing name for bedrock-runtime
_ARN_REGION = re.compile(r"^arn:aws(?:-[a-z0-9-]+)?:bedrock:([a-z0-9-]+):")
_STANDARD_HOST = re.compile(r"^bedrock-runtime(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?$")
_sessions: dict[str | None, Any] = {}


class CredentialsError(ValueError):
    pass


def bearer_token(options: Any) -> str | None:
    if env_value(options, "AWS_BEDROCK_SKIP_AUTH") == "1":
        return None
    key = options.api_key
    if key and not is_placeholder_key(key):
        return key
    return env_value(options, "AWS_BEARER_TOKEN_BEDROCK")


def _standard_region(base_url: str) -> str | None:
    match = _STANDARD_HOST.match((urlsplit(base_url).hostname or "").lower())
    return match.group(1) if match else None


def _configured_region(options: Any) -> str | None:
    return env_value(options, "AWS_REGION") or env_value(options, "AWS_DEFAULT_REGION")


def _uses_model_endpoint(model: Any, options: Any) -> bool:
    if _standard_region(model.base_url) is None:
        return True
    return not _configured_region(options) and not env_value(options, "AWS_PROFILE")


def region_for(model: Any, options: Any, profile_region: Any = None) -> str:
    match = _ARN_REGION.match(model.id)
    if match:
        return match.group(1)
    region = _configured_region(options)
    if region:
        return region
    if _uses_model_endpoint(model, options) and _standard_region(model.base_url):
        return _standard_region(model.base_url) or "us-east-1"
    if env_value(options, "AWS_PROFILE") and profile_region is not None:
        found = profile_region()
        if found:
            return found
    return "us-east-1"


def endpoint(model: Any, options: Any, region: str) -> str:
    if _uses_model_endpoint(model, options):
        return model.base_url.rstrip("/")
    return f"https://bedrock-runtime.{region}.amazonaws.com"


def _session(profile: str | None) -> Any:
    session = _sessions.get(profile)
    if session is None:
        import botocore.session

        session = botocore.session.Session(profile=profile)
        _sessions[profile] = session
    return session


def _profile(options: Any) -> str | None:
    return env_value(options, "AWS_PROFILE")


def profile_region(options: Any) -> Any:
    """A callable giving the profile's configured region (botocore loads only when asked)."""
    return lambda: _session(_profile(options)).get_config_variable("region")


def _credentials(options: Any) -> Any:
    from botocore.credentials import Credentials

    scoped_profile = scoped_env(options).get("AWS_PROFILE")
    key, secret = env_value(options, "AWS_ACCESS_KEY_ID"), env_value(options, "AWS_SECRET_ACCESS_KEY")
    if key and secret and not scoped_profile:
        return Credentials(key, secret, env_value(options, "AWS_SESSION_TOKEN"))
    try:
        found = _session(_profile(options)).get_credentials()
    except (
        Exception
    ) as exc:  # botocore's chain raises its own errors (a missing profile, an SSO login to renew)
        raise CredentialsError(f"AWS credentials could not be loaded: {exc}") from None
    if found is None:
        raise CredentialsError(
            "No AWS credentials found: set AWS_PROFILE, AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or "
            "AWS_BEARER_TOKEN_BEDROCK"
        )
    return found.get_frozen_credentials()


def sign(url: str, body: bytes, headers: dict[str, str], credentials: Any, region: str) -> dict[str, str]:
    """``headers`` plus SigV4's (``X-Amz-Date``, ``X-Amz-Security-Token``, ``Authorization``)
    for a POST of ``body`` to ``url``; the headers given are all signed, so nothing may change
    them afterwards."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest

    request = AWSRequest(method="POST", url=url, data=body, headers=dict(headers))
    SigV4Auth(credentials, SERVICE, region).add_auth(request)
    return dict(request.headers.items())


async def authorize(
    url: str, body: bytes, headers: dict[str, str], options: Any, region: str
) -> dict[str, str]:
    """The headers to send: a bearer token, SigV4, or nothing (``AWS_BEDROCK_SKIP_AUTH``)."""
    token = bearer_token(options)
    if token:
        return {**headers, "authorization": f"Bearer {token}"}
    if env_value(options, "AWS_BEDROCK_SKIP_AUTH") == "1":
        return headers
    # The chain may read files or ask a container/instance endpoint: not on the event loop.
    credentials = await asyncio.to_thread(_credentials, options)
    secrets = getattr(options, "secrets", None)
    if isinstance(secrets, list):
        secrets.extend(v for v in (credentials.secret_key, credentials.token) if v)
    return sign(url, body, headers, credentials, region)
