"""Workload identity federation from AWS (``credential_source`` ``environment_id`` ``aws1``) on
Vertex AI: the region and credentials from the environment or from loopback IMDS endpoints (with
an IMDSv2 session token), the signed GetCallerIdentity request serialized as the subject token and
exchanged at a loopback STS. The signature is checked with an independent SigV4 computation."""

from __future__ import annotations

import hashlib
import hmac
import json
import urllib.parse

import pytest
from pi_provider_google import adc, adc_aws
from pi_provider_google.adc import CredentialsError

from pi_host.config.models import ModelRegistry
from pi_host.plugins.selection import PluginRequest, load_plugins
from tests.support.providers.openai_google import (  # noqa: F401 - fixtures
    collect,
    context,
    final,
    module_server_fixture,
    options,
    sse_fixture,
)
from tests.support.providers.sse import Reply

TOKEN = "ya29.loopback-aws-federated-token"
AUDIENCE = "//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/p/providers/aws"
VERIFY = "https://sts.{region}.amazonaws.com?Action=GetCallerIdentity&Version=2011-06-15"
SECRET = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
ROLE_SECRET = "role-secret-key-0123456789abcdef"
ROLE_TOKEN = "role-session-token-IQoJb3JpZ2luX2Vj"
IMDS_SESSION = "imds-v2-session-token-AQAEAG"
CREDENTIALS_PATH = "/latest/meta-data/iam/security-credentials"


@pytest.fixture(autouse=True)
def no_ambient_aws(monkeypatch):
    for name in (
        "AWS_REGION",
        "AWS_DEFAULT_REGION",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
    ):
        monkeypatch.delenv(name, raising=False)
    adc._cache.clear()


def source(base, **extra):
    return {
        "environment_id": "aws1",
        "region_url": base + "/latest/meta-data/placement/availability-zone",
        "url": base + CREDENTIALS_PATH,
        "regional_cred_verification_url": VERIFY,
        **extra,
    }


def credentials_file(tmp_path, token_url, credential_source):
    data = {
        "type": "external_account",
        "audience": AUDIENCE,
        "subject_token_type": "urn:ietf:params:aws:token-type:aws4_request",
        "token_url": token_url,
        "credential_source": credential_source,
    }
    path = tmp_path / "aws-wif.json"
    path.write_text(json.dumps(data))
    return path


def text(body: str) -> Reply:
    return Reply(headers={"content-type": "text/plain"}, parts=[body.encode()], chunked=False)


def decoded(subject_token: str) -> dict:
    return json.loads(urllib.parse.unquote(subject_token))


def check_signature(request: dict, secret: str, region: str) -> None:
    """SigV4 computed here from the serialized request (AWS's published algorithm), compared with
    the Authorization header the subject token carries."""
    headers = {item["key"].lower(): item["value"] for item in request["headers"]}
    algorithm, _, fields = headers["authorization"].partition(" ")
    parts = dict(part.strip().split("=", 1) for part in fields.split(","))
    assert algorithm == "AWS4-HMAC-SHA256"
    signed = parts["SignedHeaders"].split(";")
    url = urllib.parse.urlsplit(request["url"])
    query = "&".join(sorted(url.query.split("&")))
    canonical = "\n".join(
        [
            request["method"],
            url.path or "/",
            query,
            "".join(f"{name}:{headers[name]}\n" for name in signed),
            parts["SignedHeaders"],
            hashlib.sha256(b"").hexdigest(),
        ]
    )
    stamp = headers["x-amz-date"]
    scope = f"{stamp[:8]}/{region}/sts/aws4_request"
    assert parts["Credential"].endswith("/" + scope)
    to_sign = f"AWS4-HMAC-SHA256\n{stamp}\n{scope}\n{hashlib.sha256(canonical.encode()).hexdigest()}"
    key = ("AWS4" + secret).encode()
    for piece in (stamp[:8], region, "sts", "aws4_request"):
        key = hmac.new(key, piece.encode(), hashlib.sha256).digest()
    assert parts["Signature"] == hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()


async def test_imds_region_and_role_credentials_with_an_imdsv2_session(
    sse, isolated_environment, monkeypatch, tmp_path
):
    path = credentials_file(
        tmp_path, sse.url + "/sts", source(sse.url, imdsv2_session_token_url=sse.url + "/latest/api/token")
    )
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(path))
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "proj-aws")
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "us-central1")
    sse.enqueue(text(IMDS_SESSION), path="/latest/api/token")
    sse.enqueue(text("eu-west-3b"), path="/latest/meta-data/placement/availability-zone")
    sse.enqueue(text("vertex-role"), path=CREDENTIALS_PATH)
    role = {
        "Code": "Success",
        "AccessKeyId": "ASIAROLEKEY",
        "SecretAccessKey": ROLE_SECRET,
        "Token": ROLE_TOKEN,
    }
    sse.enqueue(Reply.json(200, role), path=CREDENTIALS_PATH + "/vertex-role")
    sse.enqueue(Reply.json(200, {"access_token": TOKEN, "expires_in": 3600}), path="/sts")
    sse.enqueue(Reply.from_fixture("google/google_tools.sse"))
    agent = isolated_environment["agent"]
    (agent / "models.json").write_text(json.dumps({"providers": {"google-vertex": {"baseUrl": sse.url}}}))
    registry = ModelRegistry.from_plugins(load_plugins(PluginRequest(cwd=str(agent))).host)
    model = registry.find("google-vertex", "gemini-2.5-flash")
    message = final(
        await collect(registry.stream_fn(model)(model, context(), options(api_key="<authenticated>")))
    )
    assert message.stop_reason == "toolUse", message.error_message
    session, zone, role_name, role_credentials, sts, model_request = sse.requests
    assert session.method == "PUT" and session.headers["x-aws-ec2-metadata-token-ttl-seconds"] == "300"
    for imds in (zone, role_name, role_credentials):
        assert imds.method == "GET" and imds.headers["x-aws-ec2-metadata-token"] == IMDS_SESSION
    assert role_credentials.headers["content-type"] == "application/json"
    form = dict(urllib.parse.parse_qsl(sts.body.decode()))
    assert form["subject_token_type"] == "urn:ietf:params:aws:token-type:aws4_request"
    assert form["audience"] == AUDIENCE
    request = decoded(form["subject_token"])
    assert request["url"] == "https://sts.eu-west-3.amazonaws.com?Action=GetCallerIdentity&Version=2011-06-15"
    assert request["method"] == "POST"
    names = [item["key"] for item in request["headers"]]
    assert names == [
        "Authorization",
        "host",
        "x-amz-date",
        "x-amz-security-token",
        "x-goog-cloud-target-resource",
    ]
    headers = {item["key"]: item["value"] for item in request["headers"]}
    assert headers["host"] == "sts.eu-west-3.amazonaws.com"
    assert headers["x-amz-security-token"] == ROLE_TOKEN
    assert headers["x-goog-cloud-target-resource"] == AUDIENCE
    assert headers["Authorization"].startswith("AWS4-HMAC-SHA256 Credential=ASIAROLEKEY/")
    check_signature(request, ROLE_SECRET, "eu-west-3")
    # google-auth's serialization: compact JSON, keys sorted, then URL-quoted
    assert form["subject_token"] == urllib.parse.quote(
        json.dumps(request, separators=(",", ":"), sort_keys=True)
    )
    assert model_request.headers["authorization"] == f"Bearer {TOKEN}"


def test_environment_region_and_keys_ask_no_metadata_service(sse, monkeypatch):
    monkeypatch.setenv("AWS_REGION", "ap-northeast-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDENVIRONMENT")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    info = {"audience": AUDIENCE}
    token = adc_aws.aws_subject_token(
        info, source(sse.url, imdsv2_session_token_url=sse.url + "/latest/api/token"), CredentialsError
    )
    assert sse.requests == []  # nothing asked: neither the session token nor the metadata
    request = decoded(token)
    names = [item["key"] for item in request["headers"]]
    assert names == ["Authorization", "host", "x-amz-date", "x-goog-cloud-target-resource"]
    check_signature(request, SECRET, "ap-northeast-1")
    # AWS_DEFAULT_REGION serves too; a session token from the environment goes along
    monkeypatch.delenv("AWS_REGION")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "sa-east-1")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "environment-session-token")
    request = decoded(adc_aws.aws_subject_token(info, source(sse.url), CredentialsError))
    headers = {item["key"]: item["value"] for item in request["headers"]}
    assert headers["x-amz-security-token"] == "environment-session-token"
    assert request["url"].startswith("https://sts.sa-east-1.amazonaws.com?")
    check_signature(request, SECRET, "sa-east-1")


def test_imdsv1_without_a_session_url_and_keys_from_the_environment(sse, monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDENVIRONMENT")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    sse.enqueue(text("us-east-2c"), path="/latest/meta-data/placement/availability-zone")
    request = decoded(adc_aws.aws_subject_token({"audience": AUDIENCE}, source(sse.url), CredentialsError))
    (zone,) = sse.requests
    assert "x-aws-ec2-metadata-token" not in zone.headers
    check_signature(request, SECRET, "us-east-2")


def test_refusals_name_the_problem_and_no_secret(sse, monkeypatch):
    info = {"audience": AUDIENCE}
    with pytest.raises(CredentialsError, match="version 2 are not supported"):
        adc_aws.aws_subject_token(info, {**source(sse.url), "environment_id": "aws2"}, CredentialsError)
    with pytest.raises(CredentialsError, match="regional_cred_verification_url"):
        adc_aws.aws_subject_token(info, {"environment_id": "aws1"}, CredentialsError)
    with pytest.raises(CredentialsError, match="AWS_REGION"):
        adc_aws.aws_subject_token(info, {**source(sse.url), "region_url": None}, CredentialsError)
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    sse.enqueue(text("role"), path=CREDENTIALS_PATH)
    sse.enqueue(Reply.json(404, {"Code": "NotFound"}), path=CREDENTIALS_PATH + "/role")
    with pytest.raises(CredentialsError, match="security credentials request at .*/role failed: 404"):
        adc_aws.aws_subject_token(info, source(sse.url), CredentialsError)
    sse.enqueue(text("role"), path=CREDENTIALS_PATH)
    sse.enqueue(Reply.json(200, {"Code": "Success"}), path=CREDENTIALS_PATH + "/role")
    with pytest.raises(CredentialsError, match="answered without credentials"):
        adc_aws.aws_subject_token(info, source(sse.url), CredentialsError)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDENVIRONMENT")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    plain = {**source(sse.url), "regional_cred_verification_url": "http://sts.{region}.amazonaws.com"}
    with pytest.raises(CredentialsError, match="not an https URL") as refused:
        adc_aws.aws_subject_token(info, plain, CredentialsError)
    assert SECRET not in str(refused.value)
