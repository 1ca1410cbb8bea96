"""Application default credentials that are not a key or a refresh token (Vertex AI).

* ``external_account`` (workload identity federation: GitHub Actions, GitLab, Azure, an OIDC
  provider of your own): a subject token read from ``credential_source`` (a ``file`` or a ``url``,
  text or JSON with ``format.subject_token_field_name``) is exchanged at ``token_url`` (Google's
  STS, the RFC 8693 token-exchange grant) for a federated token, which is then exchanged for a
  service account's token at ``service_account_impersonation_url`` when the file names one.
  An ``executable`` source (run only when ``GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES=1``) is
  :mod:`pi_provider_google.adc_executable`; an AWS source (``environment_id`` ``aws1``: a signed
  GetCallerIdentity request) is :mod:`pi_provider_google.adc_aws`.
* ``impersonated_service_account`` (``gcloud auth application-default login
  --impersonate-service-account``): the ``source_credentials`` token is exchanged at
  ``service_account_impersonation_url`` (``delegates`` passed on).

Neither the subject token nor any access token appears in an error text.
"""

from __future__ import annotations

import base64
import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from datetime import datetime
from typing import Any

from pi_provider_google.adc_http import Fail, call, fetch

SCOPE = "https://www.googleapis.com/auth/cloud-platform"
STS_URL = "https://sts.googleapis.com/v1/token"
EXCHANGE_GRANT = "urn:ietf:params:oauth:grant-type:token-exchange"
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"


def _subject_token(info: dict[str, Any], fail: Fail) -> str:
    """The external identity's token, as ``credential_source`` describes it."""
    source = dict(info.get("credential_source") or {})
    if "executable" in source:
        from pi_provider_google.adc_executable import executable_subject_token

        return executable_subject_token(info, source["executable"], fail)
    if str(source.get("environment_id") or "").startswith("aws"):
        from pi_provider_google.adc_aws import aws_subject_token

        return aws_subject_token(info, source, fail)
    if "file" in source:
        try:
            with open(source["file"], encoding="utf-8") as handle:
                raw = handle.read()
        except OSError as exc:
            raise fail(
                f"Cannot read the subject token file {source['file']}: {exc.strerror or exc}"
            ) from None
    elif "url" in source:
        request = urllib.request.Request(source["url"], headers=dict(source.get("headers") or {}))
        raw = fetch(request, "The subject token request", fail).decode("utf-8", "replace")
    else:
        raise fail("Google external_account credentials name no credential_source file or url")
    form = source.get("format") or {}
    if form.get("type") == "json":
        field = form.get("subject_token_field_name") or "access_token"
        try:
            token = json.loads(raw)[field]
        except (ValueError, KeyError, TypeError):
            raise fail(f"The subject token source holds no JSON field {field!r}") from None
    else:
        token = raw.strip()
    if not isinstance(token, str) or not token:
        raise fail("The subject token source is empty")
    return token


def _impersonate(url: str, token: str, info: dict[str, Any], fail: Fail) -> tuple[str, float]:
    """A service account's token for ``token`` (iamcredentials ``generateAccessToken``)."""
    lifetime = int((info.get("service_account_impersonation") or {}).get("token_lifetime_seconds") or 3600)
    body: dict[str, Any] = {"scope": [SCOPE], "lifetime": f"{lifetime}s"}
    if info.get("delegates"):
        body["delegates"] = list(info["delegates"])
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"authorization": f"Bearer {token}", "content-type": "application/json"},
        method="POST",
    )
    answer = call(request, "Service account impersonation", fail)
    access = answer.get("accessToken")
    if not access:
        raise fail(f"Service account impersonation at {url} answered without an accessToken")
    try:
        expires = datetime.fromisoformat(str(answer.get("expireTime")).replace("Z", "+00:00")).timestamp()
    except ValueError:
        expires = time.time() + lifetime
    return str(access), expires


def external_account(info: dict[str, Any], fail: Fail) -> tuple[str, float]:
    """An access token and its expiry (epoch seconds) for ``external_account`` credentials."""
    subject = _subject_token(info, fail)
    fields = {
        "grant_type": EXCHANGE_GRANT,
        "audience": str(info.get("audience", "")),
        "scope": SCOPE,
        "requested_token_type": ACCESS_TOKEN_TYPE,
        "subject_token": subject,
        "subject_token_type": str(info.get("subject_token_type", "")),
    }
    headers = {"content-type": "application/x-www-form-urlencoded", "accept": "application/json"}
    if info.get("client_id"):
        pair = f"{info['client_id']}:{info.get('client_secret', '')}".encode()
        headers["authorization"] = "Basic " + base64.b64encode(pair).decode("ascii")
    elif info.get("workforce_pool_user_project"):
        fields["options"] = json.dumps({"userProject": info["workforce_pool_user_project"]})
    url = info.get("token_url") or STS_URL
    request = urllib.request.Request(url, data=urllib.parse.urlencode(fields).encode(), headers=headers)
    answer = call(request, "Google token exchange", fail)
    token = answer.get("access_token")
    if not token:
        raise fail(f"Google token exchange at {url} answered without an access_token")
    impersonation = info.get("service_account_impersonation_url")
    if impersonation:
        return _impersonate(impersonation, str(token), info, fail)
    return str(token), time.time() + float(answer.get("expires_in") or 3600)


def impersonated_service_account(
    info: dict[str, Any], source_token: Callable[[dict[str, Any]], str], fail: Fail
) -> tuple[str, float]:
    """An access token and its expiry for ``impersonated_service_account`` credentials;
    ``source_token`` turns the ``source_credentials`` dict into a token (adc.py's flows)."""
    url = info.get("service_account_impersonation_url")
    source = info.get("source_credentials")
    if not url or not isinstance(source, dict):
        raise fail(
            "Google impersonated_service_account credentials need source_credentials and an impersonation URL"
        )
    return _impersonate(url, source_token(source), info, fail)
