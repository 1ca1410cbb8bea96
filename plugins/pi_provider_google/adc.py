"""Google application default credentials (ADC) for Vertex AI: an OAuth access token from the
credentials file that ``GOOGLE_APPLICATION_CREDENTIALS`` names, else gcloud's
``application_default_credentials.json`` (under ``CLOUDSDK_CONFIG`` or ``~/.config/gcloud``).

* ``service_account``: a JWT signed with the account's RSA key (RS256, ``cryptography``) is
  exchanged at the file's ``token_uri`` (the jwt-bearer grant);
* ``authorized_user`` (what ``gcloud auth application-default login`` writes): the refresh
  token is exchanged at ``token_uri`` (Google's token endpoint unless the file names one);
  its ``quota_project_id`` is sent as ``x-goog-user-project``;
* ``external_account`` (workload identity federation) and ``impersonated_service_account``:
  :mod:`pi_provider_google.adc_external`.

Without a credentials file, the GCE metadata server (``GCE_METADATA_HOST``, else
``metadata.google.internal``) is asked for the attached service account's token, as google-auth
does. Tokens are kept in this process until a minute before they expire. Neither the private key,
the refresh token nor the access token appears in an error text.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any

SCOPE = "https://www.googleapis.com/auth/cloud-platform"
GOOGLE_TOKEN_URI = "https://oauth2.googleapis.com/token"
JWT_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"
EARLY_S = 60  # renew this long before the expiry the token endpoint gave


class CredentialsError(ValueError):
    pass


@dataclass
class AccessToken:
    token: str
    expires_at: float
    quota_project: str | None = None


_cache: dict[tuple[str, float], AccessToken] = {}


def adc_path(env: Any) -> str:
    """The credentials file pi would use: ``GOOGLE_APPLICATION_CREDENTIALS``, else gcloud's."""
    named = env("GOOGLE_APPLICATION_CREDENTIALS")
    if named:
        return os.path.expanduser(named)
    config = env("CLOUDSDK_CONFIG") or os.path.join(os.path.expanduser("~"), ".config", "gcloud")
    return os.path.join(config, "application_default_credentials.json")


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def sign_jwt(info: dict[str, Any], token_uri: str, now: float | None = None) -> str:
    """The service account's jwt-bearer assertion for the cloud-platform scope."""
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import padding

    issued = int(now if now is not None else time.time())
    header = {"alg": "RS256", "typ": "JWT"}
    if info.get("private_key_id"):
        header["kid"] = info["private_key_id"]
    claims = {
        "iss": info["client_email"],
        "scope": SCOPE,
        "aud": token_uri,
        "iat": issued,
        "exp": issued + 3600,
    }
    signing_input = f"{_b64url(json.dumps(header).encode())}.{_b64url(json.dumps(claims).encode())}"
    try:
        key = serialization.load_pem_private_key(info["private_key"].encode(), password=None)
    except (ValueError, TypeError) as exc:
        raise CredentialsError("the service account's private_key is not a PEM RSA key") from exc
    signature = key.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())  # type: ignore[union-attr,call-arg]
    return f"{signing_input}.{_b64url(signature)}"


def _post_form(url: str, fields: dict[str, str]) -> dict[str, Any]:
    from pi_provider_google.adc_http import call

    data = urllib.parse.urlencode(fields).encode()
    headers = {"content-type": "application/x-www-form-urlencoded", "accept": "application/json"}
    return call(
        urllib.request.Request(url, data=data, headers=headers), "Google token exchange", CredentialsError
    )


def _token_answer(info: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The token endpoint's answer for a key or a refresh token, and that endpoint."""
    kind = info.get("type")
    token_uri = info.get("token_uri") or GOOGLE_TOKEN_URI
    if kind == "service_account":
        return _post_form(
            token_uri, {"grant_type": JWT_GRANT, "assertion": sign_jwt(info, token_uri)}
        ), token_uri
    fields = {
        "grant_type": "refresh_token",
        "client_id": info.get("client_id", ""),
        "client_secret": info.get("client_secret", ""),
        "refresh_token": info.get("refresh_token", ""),
    }
    return _post_form(token_uri, fields), token_uri


def _plain_token(info: dict[str, Any]) -> tuple[str, float]:
    """The access token and its lifetime (s) of a service account key or an authorized user."""
    answer, token_uri = _token_answer(info)
    if not answer.get("access_token"):
        raise CredentialsError(f"Google token endpoint {token_uri} answered without an access_token")
    return str(answer["access_token"]), float(answer.get("expires_in") or 3600)


def _source_token(info: dict[str, Any]) -> str:
    """Impersonation's source credentials: a key or an authorized user only."""
    if info.get("type") not in ("service_account", "authorized_user"):
        raise CredentialsError(f"Google source credentials of type {info.get('type')!r} are not supported")
    return _plain_token(info)[0]


def fetch_token(path: str) -> AccessToken:
    """A fresh access token for the credentials file at ``path`` (blocking)."""
    try:
        with open(path, encoding="utf-8") as handle:
            info = json.load(handle)
    except OSError as exc:
        raise CredentialsError(f"Cannot read Google credentials {path}: {exc.strerror or exc}") from None
    except ValueError:
        raise CredentialsError(f"Google credentials {path} are not JSON") from None
    kind = info.get("type")
    quota = info.get("quota_project_id")
    if kind in ("external_account", "impersonated_service_account"):
        from pi_provider_google import adc_external

        if kind == "external_account":
            token, expires_at = adc_external.external_account(info, CredentialsError)
        else:
            token, expires_at = adc_external.impersonated_service_account(
                info, _source_token, CredentialsError
            )
        return AccessToken(token, expires_at, quota)
    if kind not in ("service_account", "authorized_user"):
        raise CredentialsError(
            f"Google credentials of type {kind!r} ({path}) are not supported: use a service account key, "
            "workload identity federation or `gcloud auth application-default login`"
        )
    token, lifetime = _plain_token(info)
    return AccessToken(token, time.time() + lifetime, quota)


METADATA_PATH = "/computeMetadata/v1/instance/service-accounts/default/token"
METADATA_TIMEOUT_S = 3  # off Google Cloud the name does not resolve or nothing answers


def metadata_token(host: str) -> AccessToken:
    """The attached service account's token from the GCE metadata server (Compute Engine, GKE,
    Cloud Run...), which google-auth uses when no credentials file exists."""
    request = urllib.request.Request(f"http://{host}{METADATA_PATH}", headers={"Metadata-Flavor": "Google"})
    try:
        with urllib.request.urlopen(request, timeout=METADATA_TIMEOUT_S) as response:  # noqa: S310
            answer = json.loads(response.read() or b"{}")
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise CredentialsError(f"no GCE metadata server at {host} ({getattr(exc, 'reason', exc)})") from None
    if not answer.get("access_token"):
        raise CredentialsError(f"the GCE metadata server at {host} answered without an access_token")
    return AccessToken(str(answer["access_token"]), time.time() + float(answer.get("expires_in") or 3600))


async def access_token(env: Any) -> AccessToken:
    """The cached token for the ADC file (else the GCE metadata server), renewed in a worker
    thread when it is due."""
    path = adc_path(env)
    try:
        key: tuple[str, float] = (path, os.stat(path).st_mtime)
    except OSError:
        key = ("metadata", 0.0)
    cached = _cache.get(key)
    if cached is not None and cached.expires_at - EARLY_S > time.time():
        return cached
    if key[0] == "metadata":
        host = env("GCE_METADATA_HOST") or "metadata.google.internal"
        try:
            token = await asyncio.to_thread(metadata_token, host)
        except CredentialsError as exc:
            raise CredentialsError(
                f"No Google application default credentials at {path} and {exc}: set "
                "GOOGLE_APPLICATION_CREDENTIALS or run `gcloud auth application-default login`"
            ) from None
    else:
        token = await asyncio.to_thread(fetch_token, path)
    _cache[key] = token
    return token
