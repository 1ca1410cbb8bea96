"""The subject token of an ``external_account`` credential for AWS (``credential_source``
``environment_id`` ``aws1``), made as google-auth makes it: a SigV4-signed AWS STS
``GetCallerIdentity`` request, serialized, which Google's STS sends on to AWS to learn who the
caller is. No AWS request is sent from here other than to the instance metadata service (IMDS).

* Region: ``AWS_REGION``, else ``AWS_DEFAULT_REGION``, else the availability zone at
  ``region_url`` without its last letter (``us-east-2b`` -> ``us-east-2``).
* Credentials: ``AWS_ACCESS_KEY_ID`` / ``AWS_SECRET_ACCESS_KEY`` (and ``AWS_SESSION_TOKEN``), else
  the role name at ``url`` and that role's ``AccessKeyId`` / ``SecretAccessKey`` / ``Token`` at
  ``<url>/<role>``.
* When the metadata service is needed and ``imdsv2_session_token_url`` is given, an IMDSv2
  session token (PUT, 300 s) goes with every metadata request.
* The request: POST ``regional_cred_verification_url`` (``{region}`` filled in), signed for the
  service its host names (``sts``) with botocore's SigV4 signer (extra ``pi-host[bedrock]``, the
  signer Bedrock requests use). The token is the URL-quoted compact JSON ``{"headers": [{"key",
  "value"}...], "method", "url"}``, headers sorted by name, ``x-goog-cloud-target-resource`` (the
  audience) among them.

Like google-auth, the variables are read from the process environment. Neither the secret key,
the session token nor the signature appears in an error text.
"""

from __future__ import annotations

import json
import os
import re
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from pi_provider_google.adc_http import Fail, fetch

IMDS_TIMEOUT_S = 10  # off AWS the link-local address does not answer: fail soon
SESSION_TTL_S = "300"
_ENVIRONMENT = re.compile(r"^aws(\d+)$")


def _fetch(
    url: str, what: str, fail: Fail, method: str = "GET", headers: dict[str, str] | None = None
) -> str:
    request = urllib.request.Request(url, headers=headers or {}, method=method)
    return fetch(request, what, fail, IMDS_TIMEOUT_S).decode("utf-8", "replace")


def _environment_credentials() -> dict[str, str | None] | None:
    key, secret = os.environ.get("AWS_ACCESS_KEY_ID"), os.environ.get("AWS_SECRET_ACCESS_KEY")
    if key and secret:
        return {"key": key, "secret": secret, "token": os.environ.get("AWS_SESSION_TOKEN")}
    return None


def _environment_region() -> str | None:
    return os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")


def _session_header(source: dict[str, Any], fail: Fail) -> dict[str, str]:
    """IMDSv2's session header, when the file names its endpoint and the metadata service will
    be asked for something (a region or credentials the environment lacks)."""
    url = source.get("imdsv2_session_token_url")
    if not url or (_environment_region() and _environment_credentials()):
        return {}
    token = _fetch(
        url,
        "The AWS IMDSv2 session token request",
        fail,
        "PUT",
        {"X-aws-ec2-metadata-token-ttl-seconds": SESSION_TTL_S},
    ).strip()
    return {"X-aws-ec2-metadata-token": token}


def _region(source: dict[str, Any], session: dict[str, str], fail: Fail) -> str:
    found = _environment_region()
    if found:
        return found
    url = source.get("region_url")
    if not url:
        raise fail("Cannot tell the AWS region: set AWS_REGION or give region_url in credential_source")
    zone = _fetch(url, "The AWS region request", fail, headers=session).strip()
    if len(zone) < 2:
        raise fail(f"The AWS metadata service at {url} answered without an availability zone")
    return zone[:-1]


def _credentials(source: dict[str, Any], session: dict[str, str], fail: Fail) -> dict[str, str | None]:
    found = _environment_credentials()
    if found:
        return found
    url = source.get("url")
    if not url:
        raise fail(
            "No AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY or give the "
            "security-credentials url in credential_source"
        )
    role = _fetch(url, "The AWS role name request", fail, headers=session).strip()
    if not role:
        raise fail(f"The AWS metadata service at {url} names no role")
    role_url = f"{url.rstrip('/')}/{role}"
    raw = _fetch(
        role_url,
        "The AWS security credentials request",
        fail,
        headers={"Content-Type": "application/json", **session},
    )
    try:
        answer = json.loads(raw)
        return {
            "key": answer["AccessKeyId"],
            "secret": answer["SecretAccessKey"],
            "token": answer.get("Token"),
        }
    except (ValueError, KeyError, TypeError):
        raise fail(f"The AWS metadata service at {role_url} answered without credentials") from None


def _host(url: str) -> str:
    # What SigV4 signs as the host: the port only when it is not the scheme's default.
    parts = urllib.parse.urlsplit(url)
    default = {"https": 443, "http": 80}.get(parts.scheme)
    return parts.hostname if parts.port in (None, default) else f"{parts.hostname}:{parts.port}"  # type: ignore[return-value]


def signed_request(url: str, region: str, credentials: dict[str, str | None], fail: Fail) -> dict[str, str]:
    """The headers of a SigV4-signed, empty POST to ``url`` (service: the host's first label)."""
    try:
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest
        from botocore.credentials import Credentials
    except ImportError:
        raise fail(
            "Google external_account credentials for AWS need botocore to sign the request: "
            "pip install 'pi-host[bedrock]'"
        ) from None
    host = _host(url)
    request = AWSRequest(method="POST", url=url, data=b"", headers={})
    signer = Credentials(credentials["key"], credentials["secret"], credentials["token"])
    SigV4Auth(signer, host.split(".")[0], region).add_auth(request)
    headers = {"Authorization": request.headers["Authorization"], "host": host}
    headers["x-amz-date"] = request.headers["X-Amz-Date"]
    if credentials["token"]:
        headers["x-amz-security-token"] = credentials["token"]
    return headers


def aws_subject_token(info: dict[str, Any], source: dict[str, Any], fail: Fail) -> str:
    """The serialized, signed GetCallerIdentity request (blocking: may ask the IMDS)."""
    match = _ENVIRONMENT.match(str(source.get("environment_id") or ""))
    verification = source.get("regional_cred_verification_url")
    if match is None or not verification:
        raise fail(
            "Google external_account credentials for AWS need environment_id and regional_cred_verification_url"
        )
    if match.group(1) != "1":
        raise fail(f"Google external_account credentials for AWS version {match.group(1)} are not supported")
    session = _session_header(source, fail)
    region = _region(source, session, fail)
    credentials = _credentials(source, session, fail)
    url = str(verification).replace("{region}", region)
    if urllib.parse.urlsplit(url).scheme != "https" or not urllib.parse.urlsplit(url).hostname:
        raise fail(f"The AWS verification URL {url} is not an https URL")
    headers = signed_request(url, region, credentials, fail)
    headers["x-goog-cloud-target-resource"] = str(info.get("audience", ""))
    serialized = {
        "headers": [{"key": name, "value": headers[name]} for name in sorted(headers)],
        "method": "POST",
        "url": url,
    }
    return urllib.parse.quote(json.dumps(serialized, separators=(",", ":"), sort_keys=True))
